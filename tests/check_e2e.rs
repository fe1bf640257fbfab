//! `moldtune check` with clang-22 on the example matmul problem: the committed baseline
//! (configurations only matter; its samples are recorded again here, on this machine) passes,
//! a configuration forced slower fails with the regression code, a wrong one with the
//! broken code. One test, so nothing else runs while it times.

mod common;

use std::path::Path;
use std::process::Output;

use common::{assert_code, describe, have_clang, text};

fn moldtune(args: &[&str], cwd: &Path) -> Output {
    common::moldtune_in(cwd, args)
}

fn set_guard(file: &Path, param: &str, value: &str) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["guards"][0]["config"][param] = value.into();
    std::fs::write(file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn the_gate_passes_unchanged_code_and_fails_slow_and_wrong_variants() {
    if !have_clang() {
        eprintln!("SKIPPED: clang-22 not found (run scripts/setup.sh)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/matmul");
    for f in ["matmul.yaml", "matmul.mold.c", "matmul.baseline.json"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let b = tmp.path().join("matmul.baseline.json");
    let o = moldtune(
        &[
            "check",
            "--update",
            "matmul.baseline.json",
            "--rounds",
            "30",
        ],
        tmp.path(),
    );
    assert_code(&o, 0);
    let o = moldtune(
        &["check", "matmul.baseline.json", "--junit", "j.xml"],
        tmp.path(),
    );
    assert_code(&o, 0);
    assert!(
        text(&o.stdout).contains("matmul    tuned  ok"),
        "{}",
        describe(&o)
    );

    // Another compiler version: checked, with a warning that names both.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    v["recorded"]["compiler"] = "clang version 21.1.0".into();
    std::fs::write(&b, v.to_string()).unwrap();
    let o = moldtune(&["check", "matmul.baseline.json"], tmp.path());
    assert_code(&o, 0);
    let err = text(&o.stderr);
    assert!(
        err.contains("warning: matmul: recorded with `clang version 21.1.0`, checked with `"),
        "{}",
        describe(&o)
    );

    // -O1 instead of -O3: the guarded speed-up is lost.
    set_guard(&b, "OPT", "-O1");
    let o = moldtune(
        &["check", "matmul.baseline.json", "--junit", "j.xml"],
        tmp.path(),
    );
    assert_code(&o, 4);
    assert!(text(&o.stdout).contains("regression"), "{}", describe(&o));
    let xml = std::fs::read_to_string(tmp.path().join("j.xml")).unwrap();
    assert!(xml.contains("<failure type=\"regression\""), "{xml}");

    // P3=1 makes the kernel wrong: the output check fails it before any timing.
    set_guard(&b, "OPT", "-O3");
    set_guard(&b, "P3", "1");
    let o = moldtune(&["check", "matmul.baseline.json"], tmp.path());
    assert_code(&o, 6);
    assert!(text(&o.stdout).contains("wrong output"), "{}", describe(&o));
    assert!(text(&o.stderr).contains("wrong_output"), "{}", describe(&o));
}
