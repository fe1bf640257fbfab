//! `work:` and the roofline (issue 41): the declaration's errors at their `file:line:col`,
//! GFLOP/s computed from the work and the time in the summary, `best` and `report`, and the
//! machine's limits measured once and kept (`moldtune machine`, with clang-22).

use std::path::{Path, PathBuf};

use crate::common::*;

/// The toy problem with `work` appended, and its mold, in a temp dir.
fn toy_with(work: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write_toy(tmp.path());
    let yaml = format!("{TOY_YAML}{work}");
    std::fs::write(tmp.path().join("p.yaml"), yaml).unwrap();
    tmp
}

/// `moldtune run p.yaml --mock` in `dir`; its output.
fn mock_run(dir: &Path, extra: &[&str]) -> std::process::Output {
    moldtune("run")
        .arg(dir.join("p.yaml"))
        .mock()
        .out(dir.join("run"))
        .args(extra)
        .cwd(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("MOLDTUNE_MOCK_DELAY_MS")
        .output()
}

#[track_caller]
fn assert_rejected(work: &str, needles: &[&str]) {
    let tmp = toy_with(work);
    let o = mock_run(tmp.path(), &["--max-evals", "3"]);
    assert_code(&o, 2);
    let err = text(&o.stderr);
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
    assert!(
        !tmp.path().join("run").exists(),
        "a run directory for a bad problem"
    );
}

// TOY_YAML has 17 lines: `work:` starts on line 18.

#[test]
fn an_unknown_size_in_a_work_expression_is_refused_at_its_column() {
    let work = "work:\n  sizes: {N: 100}\n  flops: \"2*N*M\"\n";
    // `flops: "2*N*M"`: the quote is at column 10, `M` at 15.
    assert_rejected(
        work,
        &[
            "p.yaml:20:15",
            "`work.flops`",
            "unknown size `M`",
            "the sizes are `N`",
        ],
    );
}

#[test]
fn a_work_amount_that_is_not_positive_is_refused() {
    let work = "work:\n  sizes: {N: 100}\n  flops: \"N - 100\"\n";
    assert_rejected(work, &["p.yaml:20:", "`work.flops` is 0", "at least 1"]);
    let work = "work:\n  flops: 1.0e9\n  bytes: -8\n";
    assert_rejected(work, &["p.yaml:20:", "`work.bytes` is -8"]);
}

/// Absurd amounts (they made `report`'s axes run to infinity and never end), a comparison
/// taken for 1 flop, and a long expression echoed whole: refused at the amount, briefly.
#[test]
fn an_absurd_work_amount_is_refused_and_said_briefly() {
    let work = "work:\n  flops: 1.0e300\n  bytes: 1.0e-300\n";
    assert_rejected(
        work,
        &["p.yaml:19:", "`work.flops` is 1e300", "at most 1e18"],
    );
    let work = "work:\n  flops: 1.0e9\n  bytes: 1.0e-300\n";
    assert_rejected(work, &["p.yaml:20:", "`work.bytes` is 1e-300"]);
    let work = "work:\n  sizes: {N: 100}\n  flops: \"N > 3\"\n";
    assert_rejected(work, &["p.yaml:20:", "a comparison"]);
    let long = format!(
        "work:\n  sizes: {{N: 100}}\n  flops: \"{}M\"\n",
        "N+".repeat(5000)
    );
    let tmp = toy_with(&long);
    let o = mock_run(tmp.path(), &["--max-evals", "3"]);
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("(10001 characters)") && err.len() < 2000,
        "{err}"
    );
}

#[test]
fn work_with_a_metric_that_is_not_a_time_is_refused() {
    let work =
        "metric: {kind: regex, regex: 'acc ([0-9.]+)', goal: maximize}\nwork: {flops: 1.0e9}\n";
    assert_rejected(work, &["p.yaml:19:", "`work:`", "`regex`, not a time"]);
}

/// The number after `key` in `text` ("5.41 GFLOP/s" → 5.41 for key "(").
fn number_before(text: &str, unit: &str) -> f64 {
    let at = text
        .find(unit)
        .unwrap_or_else(|| panic!("no {unit:?} in:\n{text}"));
    let head = text[..at].trim_end();
    let start = head.rfind([' ', '(']).map_or(0, |i| i + 1);
    head[start..]
        .parse()
        .unwrap_or_else(|_| panic!("no number before {unit:?} in:\n{text}"))
}

#[test]
fn a_mock_run_states_gflops_from_the_declared_work_and_its_times() {
    // 2·N³ operations over 3·N² doubles, N = 500: 2.5e8 operations, intensity 41.67 FLOP/B.
    let tmp = toy_with("work:\n  sizes: {N: 500}\n  flops: \"2*N*N*N\"\n  bytes: \"8*3*N*N\"\n");
    let o = mock_run(tmp.path(), &["--max-evals", "4"]);
    assert_code(&o, 0);
    let out = text(&o.stdout);
    let line = (out.lines())
        .find(|l| l.starts_with("best: "))
        .expect("a best line");
    let objective: f64 = line["best: ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let gflops = number_before(line, "GFLOP/s");
    assert!((gflops - 0.25 / objective).abs() < 0.006, "{line}");
    assert!(line.contains("intensity 41.67 FLOP/B"), "{line}");
    // A mock run has no machine to measure: no roofline bound, and nothing cached.
    assert!(!out.contains("roofline bound"), "{out}");
    assert!(!tmp.path().join("cache").exists());
    // `best --json` computes the same from run.json and results.csv, at full precision.
    let o = moldtune("best").arg(tmp.path().join("run")).json().output();
    assert_code(&o, 0);
    let b: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let objective = b["objective"].as_f64().unwrap();
    let reach = b["reach"]["gflops"].as_f64().unwrap();
    assert!(
        (reach - 2.5e8 / objective / 1e9).abs() <= 1e-9 * reach,
        "{b}"
    );
    assert!(b["default_reach"]["gflops"].as_f64().is_some(), "{b}");
    // `show --json` states the work as evaluated (scripts/reach.py reads it there).
    let o = moldtune("show")
        .arg(tmp.path().join("p.yaml"))
        .json()
        .output();
    assert_code(&o, 0);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        s["work"],
        serde_json::json!({"flops": 2.5e8, "bytes": 6.0e6}),
        "{s}"
    );
}

/// The example matmul problem (N = 320, C += A·B) with its work declared, in a temp dir.
fn matmul_with_work(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/matmul");
    for f in ["matmul.mold.c", "matmul.baseline.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let yaml = std::fs::read_to_string(src.join("matmul.yaml")).unwrap();
    let work = "work:\n  sizes: {N: 320}\n  flops: \"2*N*N*N\"\n  bytes: \"8*3*N*N\"\n";
    let p = dir.join("matmul.yaml");
    std::fs::write(&p, format!("{yaml}{work}")).unwrap();
    p
}

#[test]
fn a_real_run_measures_the_machine_once_and_states_its_roofline_fraction() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let (problem, cache) = (matmul_with_work(tmp.path()), tmp.path().join("cache"));
    let run = |out: &str| {
        let o = moldtune("run")
            .arg(&problem)
            .out(tmp.path().join(out))
            .max_evals(2)
            .args(["--verify", "0"])
            .env("XDG_CACHE_HOME", &cache)
            .output();
        assert_code(&o, 0);
        text(&o.stdout)
    };
    let out = run("a");
    let line = (out.lines())
        .find(|l| l.starts_with("default configuration: "))
        .unwrap();
    assert!(
        line.contains("% of the roofline bound (") && line.contains("at 1 thread)"),
        "{line}"
    );
    let bound = number_before(&line[line.find("bound (").unwrap()..], "GFLOP/s at");
    let file = cache.join("moldtune/machine.json");
    let kept = std::fs::read_to_string(&file).expect("the limits are kept");
    // The second run reads them: the cache is not rewritten, the bound is the same.
    let out = run("b");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), kept);
    assert!(
        out.contains(&format!("({bound:.1} GFLOP/s at 1 thread)")),
        "{out}"
    );
    machine_and_report_show_the_roofline(tmp.path(), &cache, &kept);
    check_states_the_reach_on_the_roofline(tmp.path(), &cache);
}

/// `moldtune machine` shows the kept figures without measuring; the report draws the
/// roofline.
fn machine_and_report_show_the_roofline(dir: &Path, cache: &Path, kept: &str) {
    let file = cache.join("moldtune/machine.json");
    // `moldtune machine` shows the kept figures without measuring.
    let o = moldtune("machine")
        .args(["--threads", "1", "--json"])
        .env("XDG_CACHE_HOME", cache)
        .output();
    assert_code(&o, 0);
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let peak = m["limits"][0]["peak_gflops"].as_f64().unwrap();
    assert!(kept.contains(&format!("{peak}")), "{m}\n{kept}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), kept);
    // The report draws the roofline.
    let report = dir.join("report");
    let o = moldtune("report").arg(dir.join("a")).out(&report).output();
    assert_code(&o, 0);
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        md.contains("- roofline: best ") && md.contains("-roofline.svg)"),
        "{md}"
    );
}

/// `check`'s Markdown states both programs' reach from the medians of its rounds.
fn check_states_the_reach_on_the_roofline(dir: &Path, cache: &Path) {
    let check = |extra: &[&str]| {
        (moldtune("check").args(["--threshold", "25%"]).args(extra))
            .env("XDG_CACHE_HOME", cache)
            .cwd(dir)
            .output()
    };
    assert_code(&check(&["--update", "matmul.baseline.json"]), 0);
    let o = check(&["matmul.baseline.json", "--markdown", "c.md"]);
    assert!(
        matches!(o.status.code(), Some(0 | 4 | 7)),
        "{}",
        describe(&o)
    );
    let md = std::fs::read_to_string(dir.join("c.md")).unwrap();
    let line = (md.lines())
        .find(|l| l.contains("on the roofline"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        line.contains("% of the roofline bound") && line.contains("; the reference "),
        "{line}"
    );
}

/// The probe counts `vector_doubles` per FMA: the compiler must emit FMAs that wide. clang
/// tunes the AVX-512 Xeons for 256-bit vectors and split the probe's 512-bit chains in two,
/// which halved the peak stated there (43 instead of 81-85 GFLOP/s per thread).
#[test]
#[cfg(target_arch = "x86_64")]
fn the_probe_emits_its_fmas_at_the_width_it_counts() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    // The probe as `moldtune machine` builds it: its source, its flags.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/evaluate/roofline_probe.c");
    let cc = |extra: &[&str]| {
        let o = std::process::Command::new("clang-22")
            .args(moldtune::evaluate::roofline::PROBE_FLAGS)
            .args(extra)
            .arg(&src)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let macros = cc(&["-dM", "-E"]);
    let has = |m: &str| {
        macros
            .lines()
            .any(|l| l.starts_with(&format!("#define {m} ")))
    };
    let reg = match (has("__AVX512F__"), has("__AVX__")) {
        (true, _) => "zmm",
        (false, true) => "ymm",
        _ => "xmm",
    };
    let asm = cc(&["-S", "-o", "-"]);
    let packed = |r: &str| {
        (asm.lines())
            .filter(|l| l.trim_start().starts_with("vfmadd") && l.contains("pd") && l.contains(r))
            .count()
    };
    assert!(
        packed(reg) >= 12,
        "the probe counts {reg}-wide FMAs but emits {} of them ({} ymm, {} xmm)",
        packed(reg),
        packed("ymm"),
        packed("xmm")
    );
}

/// scripts/reach/counted.hpp counts a PolyBench/C kernel's floating-point operations (the
/// roofline of mctree's PolyBench/C bests in results/reach rests on it): a kernel whose count
/// is known, with work before and after the timer that must not count.
#[test]
fn the_flop_counter_counts_only_the_timed_operations() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let kernel = tmp.path().join("k.c");
    std::fs::write(
        &kernel,
        "static double x[100], y[100];\n\
         int main(void) {\n\
           double *a = (double *)polybench_alloc_data(100, sizeof(double));\n\
           for (int i = 0; i < 100; i++) x[i] = i * 0.5;\n\
           double s = 0.0;\n\
           polybench_timer_start();\n\
           for (int i = 0; i < 100; i++) { y[i] = 2.0 * x[i] + 1; s += y[i]; }\n\
           s = sqrt(s) / 3;\n\
           if (s > 1.0) s = -s;\n\
           a[0] = s;\n\
           polybench_timer_stop();\n\
           float f = 2.0f; f = f * f + a[0];\n\
           polybench_timer_print();\n\
           return f > 0;\n\
         }\n",
    )
    .unwrap();
    let header = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/reach/counted.hpp");
    let exe = tmp.path().join("k");
    let o = std::process::Command::new("clang++-22")
        .args(["-x", "c++", "-std=c++17", "-O1", "-w", "-include"])
        .arg(&header)
        .arg(&kernel)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = std::process::Command::new(&exe).output().unwrap();
    // 100 × (a multiply and two adds), then a square root and a division; the comparison,
    // the negation and the work outside the timer do not count.
    assert_eq!(text(&o.stdout), "flops 302\nelements 100\n");
}

/// A probe that cannot be built leaves the run without its roofline, with a warning that
/// says why and does not send the user to `--resume` (the run goes on: nothing to resume).
#[test]
fn a_failed_probe_is_a_warning_without_a_resume_hint() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let p = matmul_with_work(tmp.path());
    // A compiler that builds the mold's variants and refuses the probe.
    let cc = tmp.path().join("cc.sh");
    crate::common::fake::write_executable(
        &cc,
        "#!/bin/sh\ncase \"$*\" in *probe.c*) echo 'no probe here' >&2; exit 1 ;; esac\nexec clang-22 \"$@\"\n",
    );
    let yaml = std::fs::read_to_string(&p)
        .unwrap()
        .replace("\"clang-22 ", &format!("\"{} ", cc.display()));
    std::fs::write(&p, yaml).unwrap();
    let o = moldtune("run")
        .arg(&p)
        .args(["--max-evals", "1", "--verify", "0", "--repeats", "1"])
        .out(tmp.path().join("run"))
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .output();
    assert_code(&o, 0);
    let err = text(&o.stderr);
    assert!(err.contains("warning: no roofline for `work:`"), "{err}");
    assert!(!err.contains("--resume"), "{err}");
}
