//! `moldtune check` with clang-22 on the example matmul problem: the committed baseline
//! (configurations only matter; its samples are recorded again here, on this machine) passes,
//! a configuration forced slower fails with the regression code, a wrong one and a mold
//! that no longer compiles with the broken code. One test, so nothing else runs while it times.

use std::path::Path;

use crate::common::{assert_code, describe, edit_json, moldtune, text};

fn set_guard(file: &Path, param: &str, value: &str) {
    edit_json(file, |v| v["guards"][0]["config"][param] = value.into());
}

#[test]
fn the_gate_passes_unchanged_code_and_fails_slow_and_wrong_variants() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/matmul");
    for f in ["matmul.yaml", "matmul.mold.c", "matmul.baseline.json"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let b = tmp.path().join("matmul.baseline.json");
    let check = |extra: &[&str]| gate(tmp.path(), extra);
    let o = check(&["--update", "matmul.baseline.json"]);
    assert_code(&o, 0);
    let o = check(&["matmul.baseline.json", "--junit", "j.xml"]);
    assert_code(&o, 0);
    assert!(
        text(&o.stdout).contains("matmul    tuned  ok"),
        "{}",
        describe(&o)
    );

    gate_warns_of_another_compiler(tmp.path(), &b);
    gate_fails_slow_wrong_and_broken_variants(tmp.path(), &b);
}

/// `moldtune check` in `dir`.
///
/// This machine is shared: a recording or a session can be ±20% noisy, which a 10%
/// threshold rightly leaves undecided (exit 7). The gate's logic is what is tested here,
/// so the threshold is 25%; the -O1 variant below is several times slower, far beyond it.
fn gate(dir: &Path, extra: &[&str]) -> std::process::Output {
    moldtune("check")
        .args(["--threshold", "25%"])
        .args(extra)
        .cwd(dir)
        .output()
}

/// Another compiler version: checked, with a warning that names both.
fn gate_warns_of_another_compiler(dir: &Path, b: &Path) {
    edit_json(b, |v| {
        v["recorded"]["compiler"] = "clang version 21.1.0".into()
    });
    let o = gate(dir, &["matmul.baseline.json"]);
    assert_code(&o, 0);
    let err = text(&o.stderr);
    assert!(
        err.contains("warning: matmul: recorded with `clang version 21.1.0`, checked with `"),
        "{}",
        describe(&o)
    );
}

/// -O1 instead of -O3, P3=1, a mold that no longer compiles: a regression, a wrong output,
/// a build failure.
fn gate_fails_slow_wrong_and_broken_variants(dir: &Path, b: &Path) {
    // -O1 instead of -O3: the guarded speed-up is lost.
    set_guard(b, "OPT", "-O1");
    let o = gate(dir, &["matmul.baseline.json", "--junit", "j.xml"]);
    assert_code(&o, 4);
    assert!(text(&o.stdout).contains("regression"), "{}", describe(&o));
    let xml = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    assert!(xml.contains("<failure type=\"regression\""), "{xml}");

    // P3=1 makes the kernel wrong: the output check fails it before any timing.
    set_guard(b, "OPT", "-O3");
    set_guard(b, "P3", "1");
    let o = moldtune("check")
        .arg("matmul.baseline.json")
        .cwd(dir)
        .output();
    assert_code(&o, 6);
    assert!(text(&o.stdout).contains("wrong output"), "{}", describe(&o));
    assert!(text(&o.stderr).contains("wrong_output"), "{}", describe(&o));

    // A mold that no longer compiles: the reference itself is a build failure.
    set_guard(b, "P3", "0");
    let mold = dir.join("matmul.mold.c");
    let text_of = std::fs::read_to_string(&mold).unwrap();
    std::fs::write(&mold, format!("#error broken on purpose\n{text_of}")).unwrap();
    let o = moldtune("check")
        .arg("matmul.baseline.json")
        .json()
        .cwd(dir)
        .output();
    assert_code(&o, 6);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        j["guarded"][0]["verdict"],
        "build_failure",
        "{}",
        describe(&o)
    );
    let cause = j["guarded"][0]["cause"].as_str().unwrap_or_default();
    assert!(cause.starts_with("the reference: build_error"), "{cause}");
}
