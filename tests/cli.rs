//! Command-line integration tests: fast, deterministic, no compiler.
//!
//! Everything here drives the real `moldtune` binary. Search behaviour is exercised with the
//! hidden `--mock` flag (a synthetic objective instead of compile + run;
//! `MOLDTUNE_MOCK_DELAY_MS` slows each evaluation so that signals can land mid-run). One test
//! makes a real run with a fake compiler written in sh, to check that parameter values never
//! reach a shell.

use crate::common::fake::write_executable;
use crate::common::*;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Fixtures and helpers
// ---------------------------------------------------------------------------------------------

const OWN_COLUMNS: [&str; 11] = [
    "objective",
    "elapsed_sec",
    "eval_id",
    "status",
    "compile_s",
    "run_s",
    "repeats",
    "spread",
    "source",
    "config_hash",
    "learner",
];

/// A temp dir holding `p.yaml` and `m.c`.
struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    fn new(yaml: &str, mold: &str) -> Fixture {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::write(tmp.path().join("p.yaml"), yaml).unwrap();
        std::fs::write(tmp.path().join("m.c"), mold).unwrap();
        Fixture { tmp }
    }
    fn base() -> Fixture {
        Fixture::new(TOY_YAML, TOY_MOLD)
    }
    fn dir(&self) -> &Path {
        self.tmp.path()
    }
    fn yaml(&self) -> PathBuf {
        self.dir().join("p.yaml")
    }
    fn out(&self, name: &str) -> PathBuf {
        self.dir().join(name)
    }
}

/// `moldtune run <p.yaml> --mock --quiet --out <out> <extra…>` in the fixture's directory.
fn mock_run(fx: &Fixture, out: &Path, extra: &[&str]) -> std::process::Output {
    moldtune("run")
        .arg(fx.yaml())
        .mock()
        .quiet()
        .out(out)
        .args(extra)
        .cwd(fx.dir())
        .env_remove("MOLDTUNE_MOCK_DELAY_MS")
        .output()
}

/// serde_json (without `float_roundtrip`) may parse a 17-digit float one ulp off, so numbers
/// read back from JSON are compared with a relative tolerance.
#[track_caller]
fn assert_close(json: Option<f64>, want: f64, what: &str) {
    let got = json.unwrap_or_else(|| panic!("{what}: not a number"));
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1e-300),
        "{what}: {got} != {want}"
    );
}

/// The integrity checks every finished mock run of `n` evaluations must pass.
#[track_caller]
fn assert_complete(dir: &Path, n: usize) -> Csv {
    let csv = Csv::read(dir);
    assert_eq!(csv.rows.len(), n, "rows of {}", dir.display());
    for r in &csv.rows {
        assert_eq!(r.len(), csv.header.len(), "row {r:?}");
    }
    let ids: Vec<usize> = csv
        .column("eval_id")
        .iter()
        .map(|s| s.parse().expect("numeric eval_id"))
        .collect();
    assert_eq!(
        ids,
        (0..n).collect::<Vec<_>>(),
        "eval_ids of {}",
        dir.display()
    );
    let hashes = csv.hashes();
    let unique: HashSet<&String> = hashes.iter().collect();
    assert_eq!(
        unique.len(),
        n,
        "duplicate config_hash in {}: {hashes:?}",
        dir.display()
    );
    csv
}

/// Spawns `moldtune run` (a child it can signal) as [`mock_run`] runs it, each evaluation
/// `delay_ms` long.
fn spawn_run(fx: &Fixture, out: &Path, extra: &[&str], delay_ms: u64) -> Child {
    moldtune("run")
        .arg(fx.yaml())
        .mock()
        .quiet()
        .out(out)
        .args(extra)
        .cwd(fx.dir())
        .env("MOLDTUNE_MOCK_DELAY_MS", delay_ms.to_string())
        .spawn()
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: signalling a child we spawned and have not yet reaped.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(r, 0, "kill({}, {sig}) failed", child.id());
}

/// Waits for `child` for at most `limit`; kills it (and fails) on overrun.
fn wait_with_limit(mut child: Child, limit: Duration) -> std::process::Output {
    let t0 = Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!("moldtune did not finish within {limit:?}\n{}", describe(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn poll_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Number of complete data rows in `dir/results.csv` (0 if absent).
fn rows_on_disk(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("results.csv"))
        .map_or(0, |s| s.matches('\n').count().saturating_sub(1))
}

// ---------------------------------------------------------------------------------------------
// Bad input: exit 2, a located message, no results directory
// ---------------------------------------------------------------------------------------------

/// Runs a mock run of a broken problem and checks: exit code 2, every `needles` in stderr, no
/// results directory (neither `--out` nor the default `results/`).
#[track_caller]
fn assert_rejected(fx: &Fixture, needles: &[&str]) -> String {
    let out = fx.out("run");
    let o = mock_run(fx, &out, &["--max-evals", "5"]);
    assert_code(&o, 2);
    let err = text(&o.stderr);
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
    assert!(
        !out.exists(),
        "a results directory was created for a bad problem:\n{err}"
    );
    assert!(
        !fx.dir().join("results").exists(),
        "a default results directory was created:\n{err}"
    );
    err
}

/// `<problem path>:<line>:` — the start of a `file:line:col` location in the problem file.
fn at(fx: &Fixture, line: u32) -> String {
    format!("{}:{line}:", fx.yaml().display())
}

#[test]
fn bad_unknown_yaml_key() {
    let fx = Fixture::new(
        &TOY_YAML.replace("name: toy\n", "name: toy\nbogus_key: 1\n"),
        TOY_MOLD,
    );
    assert_rejected(&fx, &[&at(&fx, 2), "bogus_key"]);
}

#[test]
fn bad_unknown_key_in_a_parameter() {
    let fx = Fixture::new(
        &TOY_YAML.replace("    high: 100\n", "    high: 100\n    step: 5\n"),
        TOY_MOLD,
    );
    assert_rejected(&fx, &[&at(&fx, 16), "step"]);
}

#[test]
fn bad_wrong_type() {
    let fx = Fixture::new(&format!("{TOY_YAML}repeats: many\n"), TOY_MOLD);
    assert_rejected(&fx, &[&at(&fx, 18)]);
}

#[test]
fn bad_empty_choices() {
    let yaml = TOY_YAML.replace(
        "    choices: [\"a\", \"b\", \"c\"]\n    default: \"a\"\n",
        "    choices: []\n",
    );
    let fx = Fixture::new(&yaml, TOY_MOLD);
    assert_rejected(&fx, &[&at(&fx, 10), "`P1`", "empty"]);
}

#[test]
fn bad_default_not_among_choices() {
    let fx = Fixture::new(
        &TOY_YAML.replace("default: \"a\"", "default: \"zz\""),
        TOY_MOLD,
    );
    assert_rejected(&fx, &[&at(&fx, 11), "`zz`", "`P1`"]);
}

#[test]
fn bad_when_names_unknown_parameter() {
    let fx = Fixture::new(
        &TOY_YAML.replace("    high: 100\n", "    high: 100\n    when: {NOPE: [1]}\n"),
        TOY_MOLD,
    );
    assert_rejected(&fx, &[&at(&fx, 16), "`NOPE`"]);
}

#[test]
fn bad_constraint_names_unknown_parameter() {
    let fx = Fixture::new(
        &format!("{TOY_YAML}constraints:\n  - \"P0 * QQ <= 10\"\n"),
        TOY_MOLD,
    );
    assert_rejected(&fx, &[&at(&fx, 19), "`QQ`"]);
}

#[test]
fn bad_forbidden_names_unknown_parameter() {
    let fx = Fixture::new(&format!("{TOY_YAML}forbidden:\n  - {{QQ: 1}}\n"), TOY_MOLD);
    assert_rejected(&fx, &[&at(&fx, 19), "`QQ`"]);
}

#[test]
fn bad_constraints_exclude_everything() {
    // Satisfiable one by one, contradictory together.
    let fx = Fixture::new(
        &format!("{TOY_YAML}constraints:\n  - \"P0 >= 8\"\n  - \"P0 <= 2\"\n"),
        TOY_MOLD,
    );
    let err = assert_rejected(&fx, &[&at(&fx, 19)]);
    assert!(err.contains("exclude"), "{err}");
}

#[test]
fn bad_mold_does_not_exist() {
    let fx = Fixture::new(&TOY_YAML.replace("mold: m.c", "mold: missing.c"), TOY_MOLD);
    assert_rejected(&fx, &[&at(&fx, 2), "`missing.c`"]);
}

#[test]
fn bad_marker_without_parameter() {
    // `#P7` on line 3, column 4 of the mold.
    let fx = Fixture::new(TOY_YAML, "int p0 = #P0;\n/* #P1 */\nx =#P7 + #P2;\n");
    let mold = fx.dir().join("m.c");
    assert_rejected(&fx, &[&format!("{}:3:4", mold.display()), "`#P7`"]);
}

#[test]
fn bad_parameter_used_nowhere() {
    let fx = Fixture::new(TOY_YAML, "int p0 = #P0;\n/* #P1 */\n");
    assert_rejected(&fx, &[&at(&fx, 12), "`P2`", "used nowhere"]);
}

#[test]
fn bad_template_with_undefined_variable() {
    let fx = Fixture::new(
        &TOY_YAML.replace("-o {{ exe }}", "-o {{ exe }} {{ nope }}"),
        TOY_MOLD,
    );
    assert_rejected(&fx, &[&at(&fx, 16), "nope"]);
}

#[test]
fn bad_problem_file_missing() {
    let fx = Fixture::base();
    std::fs::remove_file(fx.yaml()).unwrap();
    assert_rejected(&fx, &["p.yaml"]);
}

// ---------------------------------------------------------------------------------------------
// A mock run and its outputs
// ---------------------------------------------------------------------------------------------

#[test]
fn mock_run_writes_consistent_results() {
    let fx = Fixture::base();
    let out = fx.out("run");
    // Without the end-of-run verification the best is the CSV minimum (tests/verify.rs
    // covers the verified winner).
    let o = mock_run(
        &fx,
        &out,
        &[
            "--max-evals",
            "30",
            "--seed",
            "1",
            "--initial",
            "6",
            "--verify",
            "0",
        ],
    );
    assert_code(&o, 0);

    let csv = assert_complete(&out, 30);
    mock_columns_sources_and_statuses(&csv);
    let run = mock_run_json_and_results_json(&out, &csv);
    let (id, best_obj) = mock_best_json_is_the_csv_minimum(&out, &csv, &run);
    mock_best_text_and_best_c(&out, &csv, &id, best_obj);
}

/// The columns, the sources in order, the default's values; a known status in every row, an
/// objective exactly for the ok ones.
fn mock_columns_sources_and_statuses(csv: &Csv) {
    let mut expected: Vec<String> = vec!["P0".into(), "P1".into(), "P2".into()];
    expected.extend(OWN_COLUMNS.iter().map(|s| s.to_string()));
    assert_eq!(csv.header, expected);

    let sources = csv.column("source");
    assert_eq!(sources[0], "default");
    assert_eq!(sources.iter().filter(|s| *s == "default").count(), 1);
    assert_eq!(
        sources.iter().filter(|s| *s == "initial").count(),
        6,
        "{sources:?}"
    );
    assert!(
        sources[1..7].iter().all(|s| s == "initial"),
        "the initial design follows the default: {sources:?}"
    );
    assert!(
        sources
            .iter()
            .all(|s| ["default", "initial", "model", "random"].contains(&s.as_str())),
        "{sources:?}"
    );
    // The default configuration's values.
    assert_eq!(
        &csv.rows[0][..3],
        &["4".to_string(), "a".to_string(), "0".to_string()]
    );

    // Every row: a known status; objective present exactly for ok rows.
    let (st, obj) = (csv.col("status"), csv.col("objective"));
    for r in &csv.rows {
        assert!(
            ["ok", "build_error"].contains(&r[st].as_str()),
            "mock status {r:?}"
        );
        assert_eq!(
            r[st] == "ok",
            !r[obj].is_empty(),
            "objective vs status in {r:?}"
        );
    }
}

/// run.json and results.json agree with the CSV; run.json.
fn mock_run_json_and_results_json(out: &Path, csv: &Csv) -> serde_json::Value {
    let st = csv.col("status");
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["termination"], "max_evals");
    assert_eq!(run["evaluations"], 30);
    assert_eq!(run["seed"], 1);
    assert_eq!(run["mock"], true);
    let results = read_json(&out.join("results.json"));
    let evals = results["evaluations"]
        .as_array()
        .expect("evaluations array");
    assert_eq!(evals.len(), 30);
    for (j, row) in evals.iter().zip(&csv.rows) {
        assert_eq!(
            j["config_hash"].as_str(),
            Some(row[csv.col("config_hash")].as_str())
        );
        assert_eq!(j["status"].as_str(), Some(row[st].as_str()));
    }
    run
}

/// `moldtune best --json` and run.json agree with the CSV minimum; the best eval id and
/// objective.
fn mock_best_json_is_the_csv_minimum(
    out: &Path,
    csv: &Csv,
    run: &serde_json::Value,
) -> (String, f64) {
    let (st, obj) = (csv.col("status"), csv.col("objective"));
    // `moldtune best` agrees with the CSV minimum.
    let (best_row, best_obj) = csv.min_ok().expect("some ok row");
    let best_ids: Vec<String> = csv
        .rows
        .iter()
        .filter(|r| r[st] == "ok" && r[obj].parse::<f64>().unwrap() == best_obj)
        .map(|r| r[csv.col("eval_id")].clone())
        .collect();
    assert!(best_ids.contains(&csv.rows[best_row][csv.col("eval_id")]));
    assert_close(
        run["best_objective"].as_f64(),
        best_obj,
        "run.json best_objective",
    );

    let o = moldtune("best").arg(out).json().output();
    assert_code(&o, 0);
    let b: serde_json::Value = serde_json::from_slice(&o.stdout).expect("best --json parses");
    assert_close(b["objective"].as_f64(), best_obj, "best --json objective");
    let id = b["eval_id"].as_u64().expect("eval_id").to_string();
    assert!(
        best_ids.contains(&id),
        "best eval {id} is not a minimum row {best_ids:?}"
    );
    let row = &csv.rows[id.parse::<usize>().unwrap()];
    assert_eq!(
        b["config_hash"].as_str(),
        Some(row[csv.col("config_hash")].as_str())
    );
    assert_eq!(b["evaluations"], 30);
    assert_eq!(
        b["ok"].as_u64(),
        Some(csv.rows.iter().filter(|r| r[st] == "ok").count() as u64)
    );
    (id, best_obj)
}

/// `moldtune best` prints the same; best.c is the mold rendered with the best configuration.
fn mock_best_text_and_best_c(out: &Path, csv: &Csv, id: &str, best_obj: f64) {
    let row = &csv.rows[id.parse::<usize>().unwrap()];
    let o = moldtune("best").arg(out).output();
    assert_code(&o, 0);
    let s = text(&o.stdout);
    let first = s.lines().next().unwrap_or_default();
    let printed: f64 = first
        .strip_prefix("best objective ")
        .and_then(|r| r.split_whitespace().next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("unexpected `best` output:\n{s}"));
    assert_eq!(printed, best_obj, "{s}");
    assert!(first.contains(&format!("eval {id},")), "{s}");

    // best.c is the mold rendered with the best configuration.
    let best_c = std::fs::read_to_string(out.join("best.c")).expect("best.c");
    assert!(
        best_c.contains(&format!("int p0 = {};", row[0])),
        "{best_c}"
    );
    assert!(!best_c.contains("#P"), "{best_c}");
}

#[test]
fn default_initial_is_ten() {
    let fx = Fixture::base();
    let out = fx.out("run");
    assert_code(
        &mock_run(&fx, &out, &["--max-evals", "15", "--seed", "2"]),
        0,
    );
    let csv = assert_complete(&out, 15);
    assert_eq!(
        csv.column("source")
            .iter()
            .filter(|s| *s == "initial")
            .count(),
        10
    );
}

#[test]
fn same_seed_same_sequence_other_seed_other_sequence() {
    let fx = Fixture::base();
    let run = |name: &str, seed: &str| {
        let out = fx.out(name);
        assert_code(
            &mock_run(&fx, &out, &["--max-evals", "25", "--seed", seed]),
            0,
        );
        assert_complete(&out, 25).hashes()
    };
    let a = run("a", "3");
    let b = run("b", "3");
    let c = run("c", "4");
    assert_eq!(a, b, "same seed, different proposals");
    assert_ne!(a, c, "different seeds, same proposals");
    assert_eq!(a[0], c[0], "both start with the default configuration");
}

#[test]
fn small_space_is_exhausted_without_repeats() {
    // 6 × 3 = 18 configurations; asking for 30 must stop at 18 with every one evaluated once.
    let yaml = TOY_YAML.replace("    low: 0\n    high: 100\n", "    low: 0\n    high: 0\n");
    let fx = Fixture::new(&yaml, TOY_MOLD);
    let out = fx.out("run");
    let o = mock_run(&fx, &out, &["--max-evals", "30", "--seed", "5"]);
    assert_code(&o, 0);
    assert_complete(&out, 18);
    assert_eq!(
        read_json(&out.join("run.json"))["termination"],
        "space_exhausted"
    );
}

// ---------------------------------------------------------------------------------------------
// Resume
// ---------------------------------------------------------------------------------------------

/// The config_hash sequence of an uninterrupted 30-evaluation run with `seed`.
fn reference_hashes(fx: &Fixture, seed: &str) -> Vec<String> {
    let out = fx.out(&format!("reference-{seed}"));
    assert_code(
        &mock_run(fx, &out, &["--max-evals", "30", "--seed", seed]),
        0,
    );
    assert_complete(&out, 30).hashes()
}

fn resume(fx: &Fixture, dir: &Path) -> std::process::Output {
    moldtune("run")
        .quiet()
        .arg("--resume")
        .arg(dir)
        .cwd(fx.dir())
        .env_remove("MOLDTUNE_MOCK_DELAY_MS")
        .output()
}

#[test]
fn resume_after_sigkill_is_complete_and_deterministic() {
    let fx = Fixture::base();
    let want = reference_hashes(&fx, "7");
    let mut interrupted_mid_run = 0;
    for (k, delay) in [300u64, 480, 650, 900].into_iter().enumerate() {
        let out = fx.out(&format!("killed-{k}"));
        let child = spawn_run(&fx, &out, &["--max-evals", "30", "--seed", "7"], 40);
        std::thread::sleep(Duration::from_millis(delay));
        signal(&child, libc::SIGKILL);
        let o = wait_with_limit(child, Duration::from_secs(10));
        assert_eq!(o.status.code(), None, "SIGKILL leaves no exit code");
        let done = rows_on_disk(&out);
        eprintln!("killed after {delay} ms with {done} rows logged");
        if done < 30 {
            interrupted_mid_run += 1;
        }
        assert!(
            out.join("run.json").is_file(),
            "killed after {delay} ms before run.json was written (rows {done}); cannot resume"
        );
        let o = resume(&fx, &out);
        assert_code(&o, 0);
        let csv = assert_complete(&out, 30);
        assert_eq!(
            csv.hashes(),
            want,
            "killed after {delay} ms with {done} rows: the resumed run diverged"
        );
        let run = read_json(&out.join("run.json"));
        assert_eq!(run["termination"], "max_evals");
        assert_eq!(run["evaluations"], 30);
        assert_eq!(
            read_json(&out.join("results.json"))["evaluations"]
                .as_array()
                .map(Vec::len),
            Some(30)
        );
    }
    assert!(
        interrupted_mid_run > 0,
        "no kill landed mid-run; the test did not test anything"
    );
}

#[test]
fn resume_drops_a_torn_row_and_extends_a_finished_run() {
    let fx = Fixture::base();
    let want = reference_hashes(&fx, "8");
    let out = fx.out("run");
    assert_code(
        &mock_run(&fx, &out, &["--max-evals", "12", "--seed", "8"]),
        0,
    );
    assert_complete(&out, 12);
    // A row torn by a kill mid-write: no trailing newline.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(out.join("results.csv"))
        .unwrap();
    std::io::Write::write_all(&mut f, b"2,b,6").unwrap();
    drop(f);
    let o = moldtune("run")
        .quiet()
        .max_evals(30)
        .arg("--resume")
        .arg(&out)
        .cwd(fx.dir())
        .output();
    assert_code(&o, 0);
    assert_eq!(assert_complete(&out, 30).hashes(), want);
}

#[test]
fn sigint_stops_cleanly_and_resume_completes() {
    let fx = Fixture::base();
    let want = reference_hashes(&fx, "9");
    let out = fx.out("run");
    let child = spawn_run(&fx, &out, &["--max-evals", "30", "--seed", "9"], 40);
    assert!(
        poll_until(Duration::from_secs(20), || rows_on_disk(&out) >= 3),
        "the run made no progress"
    );
    signal(&child, libc::SIGINT);
    let o = wait_with_limit(child, Duration::from_secs(10));
    assert_code(&o, 130);
    assert!(text(&o.stderr).contains("--resume"), "{}", describe(&o));

    let raw = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(raw.ends_with('\n'), "torn last row after SIGINT:\n{raw}");
    let csv = Csv::read(&out);
    assert!(csv.rows.len() < 30, "SIGINT did not stop the run");
    assert!(csv.rows.iter().all(|r| r.len() == csv.header.len()));
    let n = csv.rows.len();
    assert_eq!(csv.hashes(), want[..n].to_vec());
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["termination"], "interrupted");
    assert_eq!(run["evaluations"].as_u64(), Some(n as u64));

    let o = resume(&fx, &out);
    assert_code(&o, 0);
    assert_eq!(assert_complete(&out, 30).hashes(), want);
    assert_eq!(read_json(&out.join("run.json"))["termination"], "max_evals");
}

#[test]
fn resume_needs_a_run_directory() {
    let fx = Fixture::base();
    let out = fx.out("nothing-here");
    let o = resume(&fx, &out);
    assert_code(&o, 2);
    assert!(!out.exists());
}

#[test]
fn resume_refuses_a_changed_problem() {
    let fx = Fixture::base();
    let out = fx.out("run");
    assert_code(&mock_run(&fx, &out, &["--max-evals", "5"]), 0);
    std::fs::write(fx.yaml(), TOY_YAML.replace("high: 100", "high: 99")).unwrap();
    let o = resume(&fx, &out);
    assert_code(&o, 2);
    assert!(text(&o.stderr).contains("changed"), "{}", describe(&o));
    assert_complete(&out, 5);
}

// ---------------------------------------------------------------------------------------------
// The run directory is never shared or overwritten
// ---------------------------------------------------------------------------------------------

/// Starts a slow run and waits until it has logged a few rows.
fn start_busy_run(fx: &Fixture, out: &Path) -> Child {
    let child = spawn_run(fx, out, &["--max-evals", "30", "--seed", "1"], 60);
    assert!(
        poll_until(Duration::from_secs(20), || rows_on_disk(out) >= 2),
        "the first run made no progress"
    );
    child
}

#[test]
fn resume_of_a_busy_directory_reports_in_use() {
    let fx = Fixture::base();
    let out = fx.out("run");
    let first = start_busy_run(&fx, &out);
    let o = resume(&fx, &out);
    let first_out = wait_with_limit(first, Duration::from_secs(30));
    assert_code(&o, 2);
    assert!(text(&o.stderr).contains("in use"), "{}", describe(&o));
    assert_code(&first_out, 0);
    assert_complete(&out, 30);
}

#[test]
fn second_run_on_a_busy_directory_reports_in_use() {
    let fx = Fixture::base();
    let out = fx.out("run");
    let first = start_busy_run(&fx, &out);
    // The very same command a second time, while the first is still running.
    let o = mock_run(&fx, &out, &["--max-evals", "30", "--seed", "1"]);
    let first_out = wait_with_limit(first, Duration::from_secs(30));
    assert_code(&first_out, 0);
    assert_complete(&out, 30);
    assert_code(&o, 2);
    assert!(text(&o.stderr).contains("in use"), "{}", describe(&o));
}

#[test]
fn existing_results_need_resume() {
    let fx = Fixture::base();
    let out = fx.out("run");
    assert_code(
        &mock_run(&fx, &out, &["--max-evals", "10", "--seed", "1"]),
        0,
    );
    let before = std::fs::read(out.join("results.csv")).unwrap();
    let o = mock_run(&fx, &out, &["--max-evals", "10", "--seed", "2"]);
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("already holds results"),
        "{}",
        describe(&o)
    );
    assert_eq!(
        std::fs::read(out.join("results.csv")).unwrap(),
        before,
        "results.csv was touched"
    );
}

// ---------------------------------------------------------------------------------------------
// No shell: parameter values with metacharacters stay arguments (a real, non-mock run)
// ---------------------------------------------------------------------------------------------

#[test]
fn shell_metacharacters_in_values_are_not_interpreted() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let hacked = d.join("HACKED");
    let h = hacked.display();
    let payloads = [
        format!("; touch {h}"),
        format!("$(touch {h})"),
        format!("`touch {h}`"),
        format!("&& touch {h}"),
        format!("| touch {h}"),
        format!("\\n touch {h} #"),
    ];
    let choices = write_shell_problem(d, &payloads);
    let out = d.join("run");
    let o = moldtune("run")
        .arg("p.yaml")
        .quiet()
        .learner("random")
        .seed(1)
        .max_evals(choices.len())
        .out(&out)
        .cwd(d)
        .output();
    assert_code(&o, 0);
    assert!(!hacked.exists(), "a parameter value reached a shell");
    let csv = assert_complete(&out, choices.len());
    let st = csv.col("status");
    assert!(
        csv.rows.iter().all(|r| r[st] == "ok"),
        "every variant builds and runs: {:?}",
        csv.rows
    );
    let mut seen: Vec<String> = csv.column("P1");
    seen.sort();
    let mut want = choices.clone();
    want.sort();
    assert_eq!(seen, want, "results.csv keeps the values verbatim");
    // The values arrived as plain (whitespace-split) arguments.
    let log = std::fs::read_to_string(d.join("args.log")).unwrap();
    for token in [";", "$(touch", "`touch", "&&", "|"] {
        assert!(
            log.lines().any(|l| l == token),
            "argument {token:?} missing from:\n{log}"
        );
    }
    assert!(!hacked.exists());
}

/// A problem whose one parameter's values are `plain` and the payloads, reaching the
/// compile command split into words, the run command and the environment; the fake compiler
/// logs its arguments to `args.log`. The values.
fn write_shell_problem(d: &Path, payloads: &[String]) -> Vec<String> {
    // The fake compiler logs its arguments (one per line) and "builds" the program by copying.
    // `| words` splits the value into arguments (a value is otherwise one argument): the
    // shell's own separators then arrive as arguments of their own.
    write_executable(
        &d.join("fakecc.sh"),
        "#!/bin/sh\nexe=\"$1\"; shift\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$(dirname \"$0\")/args.log\"\ncp \"$(dirname \"$0\")/prog.sh\" \"$exe\"\nchmod +x \"$exe\"\n",
    );
    write_executable(&d.join("prog.sh"), "#!/bin/sh\necho 0.5\n");
    std::fs::write(d.join("m.c"), "int x = 0;\n").unwrap();
    let choices: Vec<String> = std::iter::once("plain".to_string())
        .chain(payloads.iter().cloned())
        .collect();
    let yaml = format!(
        "name: shell\nmold: m.c\nparams:\n  - name: P1\n    type: categorical\n    choices: {}\n    default: plain\n\
         compile: \"sh {{{{ problem_dir }}}}/fakecc.sh {{{{ exe }}}} {{{{ P1 | words }}}}\"\n\
         run: \"{{{{ exe }}}} {{{{ P1 }}}}\"\nenv: {{MT_VALUE: \"{{{{ P1 }}}}\"}}\n\
         metric: {{kind: wall_time}}\ncheck: {{mode: none}}\nrepeats: 1\n",
        serde_json::to_string(&choices).unwrap()
    );
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    choices
}

// ---------------------------------------------------------------------------------------------
// Learners, importance, replay
// ---------------------------------------------------------------------------------------------

#[test]
fn every_learner_and_acquisition_completes_without_repeats() {
    let fx = Fixture::base();
    for (i, extra) in [
        &["--learner", "et"][..],
        &["--learner", "gbrt", "--acq", "ei"][..],
        &["--learner", "gp", "--acq", "pi", "--initial-design", "lhs"][..],
        &["--learner", "rf", "--no-feasibility"][..],
    ]
    .iter()
    .enumerate()
    {
        let out = fx.out(&format!("l{i}"));
        let mut args = vec!["--max-evals", "25", "--seed", "3"];
        args.extend_from_slice(extra);
        let o = mock_run(&fx, &out, &args);
        assert_code(&o, 0);
        assert_complete(&out, 25);
        let run: serde_json::Value = read_json(&out.join("run.json"));
        assert_eq!(run["learner"], extra[1], "{extra:?}");
    }
}

#[test]
fn importance_ranks_parameters() {
    let fx = Fixture::base();
    let out = fx.out("imp");
    assert_code(
        &mock_run(&fx, &out, &["--max-evals", "30", "--seed", "1"]),
        0,
    );
    let o = moldtune("importance").arg(&out).json().output();
    assert_code(&o, 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The ranking sits beside the numbers behind it (see tests/importance.rs).
    let rows = v["ranking"].as_array().unwrap();
    assert!(!rows.is_empty());
    let total: f64 = rows.iter().map(|r| r["importance"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-9, "importances sum to {total}");
    let sorted = rows
        .windows(2)
        .all(|w| w[0]["importance"].as_f64() >= w[1]["importance"].as_f64());
    assert!(sorted, "{rows:?}");
}

#[test]
fn replay_reports_every_learner_on_a_recorded_run_and_synthetic_tables() {
    let fx = Fixture::base();
    let out = fx.out("table");
    assert_code(
        &mock_run(
            &fx,
            &out,
            &["--max-evals", "40", "--learner", "random", "--seed", "2"],
        ),
        0,
    );
    let report = fx.out("report.md");
    let o = moldtune("replay")
        .args(["--synthetic", "--seeds", "2", "--budget", "20", "--report"])
        .arg(&report)
        .arg(&out)
        .output();
    assert_code(&o, 0);
    let text = std::fs::read_to_string(&report).unwrap();
    for l in [
        "| rf |",
        "| et |",
        "| gbrt |",
        "| gp |",
        "| random |",
        "branin",
        "tiles",
        "no feasibility model",
        "simulated s to 5% (median)",
    ] {
        assert!(text.contains(l), "missing `{l}` in\n{text}");
    }
}

/// A run with no success has nothing to replay: refused (exit 2), as `--warm-start` refuses it,
/// not a report of NaN.
#[test]
fn replay_refuses_a_run_with_no_successful_evaluation() {
    let fx = Fixture::base();
    let out = fx.out("empty");
    assert_code(&mock_run(&fx, &out, &["--max-evals", "3"]), 0);
    let csv = out.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(&csv, format!("{}\n", text.lines().next().unwrap())).unwrap();
    let _ = std::fs::remove_file(out.join("results.json"));
    let o = moldtune("replay").arg(&out).output();
    assert_code(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("holds no successful evaluation"), "{err}");
}

/// A problem file past the parser's budget is refused in words, not the parser's struct.
#[test]
fn a_huge_problem_file_is_refused_in_words() {
    let fx = Fixture::base();
    let values: Vec<String> = (0..260_000).map(|k| k.to_string()).collect();
    let yaml = format!(
        "name: big\nmold: m.c\nparams:\n  - {{name: P0, type: categorical, choices: [{}]}}\n",
        values.join(", ")
    );
    let p = fx.out("big.yaml");
    std::fs::write(&p, yaml).unwrap();
    let o = moldtune("show").arg(&p).output();
    assert_code(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("values (YAML nodes) is past the limit"),
        "{err}"
    );
    assert!(!err.contains("Nodes {"), "{err}");
}

/// `replay --kappa` is checked as `run --kappa` is.
#[test]
fn replay_refuses_a_kappa_run_refuses() {
    let fx = Fixture::base();
    let out = fx.out("k");
    assert_code(&mock_run(&fx, &out, &["--max-evals", "5"]), 0);
    for bad in ["nan", "-1"] {
        let o = moldtune("replay")
            .arg(format!("--kappa={bad}"))
            .arg(&out)
            .output();
        assert_code(&o, 2);
        assert!(String::from_utf8_lossy(&o.stderr).contains("--kappa"));
    }
}

/// An `ok` row whose objective cannot be a time is refused by every reader with one rule
/// (exit 2 naming results.csv and the row), as is an empty results.csv.
#[test]
fn an_ok_row_whose_objective_cannot_be_a_time_is_refused_by_every_reader() {
    let fx = Fixture::base();
    let out = fx.out("garbage");
    assert_code(&mock_run(&fx, &out, &["--max-evals", "4"]), 0);
    let csv = out.join("results.csv");
    let good = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = good.lines().next().unwrap().split(',').collect();
    let (obj, status) = (
        header.iter().position(|h| *h == "objective").unwrap(),
        header.iter().position(|h| *h == "status").unwrap(),
    );
    for bad in ["nan", "-inf", "-0.5", "fast"] {
        let mut lines: Vec<String> = good.lines().map(String::from).collect();
        let k = (1..lines.len())
            .find(|&k| lines[k].split(',').nth(status) == Some("ok"))
            .unwrap();
        let mut cells: Vec<String> = lines[k].split(',').map(String::from).collect();
        cells[obj] = bad.into();
        lines[k] = cells.join(",");
        std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
        for args in [
            vec!["best"],
            vec!["replay"],
            vec!["run", "--max-evals", "6", "--resume"],
        ] {
            let o = moldtune(args[0]).args(&args[1..]).arg(&out).output();
            assert_code(&o, 2);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("results.csv") && err.contains(&format!("row {}", k + 1)),
                "{args:?} {bad}: {err}"
            );
        }
    }
    std::fs::write(&csv, "").unwrap();
    let o = moldtune("best").arg(&out).output();
    assert_code(&o, 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("results.csv"));
    // One reader, one rule: a row short of cells in the middle is refused by `best` as by
    // `--resume` (before, `best` skipped it and went on); a directory in its place too.
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    lines[2] = lines[2].split(',').take(3).collect::<Vec<_>>().join(",");
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    for args in [vec!["best"], vec!["run", "--max-evals", "6", "--resume"]] {
        let o = moldtune(args[0]).args(&args[1..]).arg(&out).output();
        assert_code(&o, 2);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("row 3: 3 cells"), "{args:?}: {err}");
    }
    std::fs::remove_file(&csv).unwrap();
    std::fs::create_dir(&csv).unwrap();
    let o = moldtune("best").arg(&out).output();
    assert_code(&o, 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("is a directory"));
}

// ---------------------------------------------------------------------------------------------
// Values the space or the run cannot hold: refused at their position, nothing created
// ---------------------------------------------------------------------------------------------

#[test]
fn bad_values_are_refused_at_their_position() {
    let cases = bad_number_and_name_cases()
        .into_iter()
        .chain(bad_section_cases());
    for (yaml, line, needle) in cases {
        let fx = Fixture::new(&yaml, TOY_MOLD);
        assert_rejected(&fx, &[&at(&fx, line), needle]);
    }
}

/// Problem files with a bad command, number, value list or name: (the file, the line the
/// error points at, what it says).
fn bad_number_and_name_cases() -> Vec<(String, u32, &'static str)> {
    vec![
        (
            TOY_YAML.replace("compile: \"cc {{ source }} -o {{ exe }}\"", "compile: \"\""),
            16,
            "command is empty",
        ),
        (
            format!("{TOY_YAML}timeouts: {{compile_s: 9223372036854775807}}\n"),
            18,
            "timeouts.compile_s",
        ),
        (
            format!("{TOY_YAML}timeouts: {{run_s: .nan}}\n"),
            18,
            "timeouts.run_s",
        ),
        (
            TOY_YAML.replace("    low: 0\n", "    low: -1e19\n"),
            14,
            "whole number",
        ),
        (
            TOY_YAML.replace("[1, 2, 4, 8, 16, 32]", "[1, 2, 2.0, 4]"),
            6,
            "twice",
        ),
        (
            TOY_YAML.replace("[\"a\", \"b\", \"c\"]", "[\"a\", \"b\", \"a\"]"),
            10,
            "twice",
        ),
        (
            TOY_YAML.replace("name: toy", "name: ../../escaped"),
            1,
            "not a usable name",
        ),
    ]
}

/// Problem files with a bad `search:`, `metric:`, `check:` or `constraints:` section.
fn bad_section_cases() -> Vec<(String, u32, &'static str)> {
    vec![
        (
            format!("{TOY_YAML}search: {{kappa: -1}}\n"),
            18,
            "search.kappa",
        ),
        (
            format!("{TOY_YAML}metric: {{kind: regex}}\n"),
            18,
            "metric.regex",
        ),
        // A number read by a regex may be an accuracy or a loss: it was minimised silently.
        (
            format!("{TOY_YAML}metric: {{regex: 'v: ([0-9]+)'}}\n"),
            18,
            "`metric.goal` is missing",
        ),
        (
            format!("{TOY_YAML}metric: {{kind: kernel_time, function: kernel}}\n"),
            18,
            "needs `kind: instructions`",
        ),
        (
            format!("{TOY_YAML}metric: {{kind: cycles, function: \"kernel(\"}}\n"),
            18,
            "metric.function",
        ),
        (format!("{TOY_YAML}check: {{rtol: -1}}\n"), 18, "check.rtol"),
        (
            format!("{TOY_YAML}constraints: [\"P1 * 2 <= 8\"]\n"),
            18,
            "cannot be evaluated",
        ),
        (
            format!(
                "{TOY_YAML}constraints: [\"{}P0{} < 3\"]\n",
                "(".repeat(7000),
                ")".repeat(7000)
            ),
            18,
            "longer than",
        ),
    ]
}

#[test]
fn bad_flag_values_name_the_flag() {
    let fx = Fixture::base();
    for (flag, value) in [
        ("--compile-timeout", "nan"),
        ("--compile-timeout", "inf"),
        ("--run-timeout", "1e30"),
        ("--kappa", "-1"),
        ("--max-evals", "0"),
        ("--pool", "0"),
        ("--verify-rounds", "1"),
    ] {
        let out = fx.out("run");
        let o = mock_run(&fx, &out, &[flag, value]);
        assert_code(&o, 2);
        let err = text(&o.stderr);
        assert!(err.contains(&format!("`{flag}`")), "{flag} {value}: {err}");
        assert!(!out.exists(), "{flag} {value}: a run directory was created");
    }
}

// ---------------------------------------------------------------------------------------------
// The Slurm executor's settings (the executor itself: tests/slurm.rs, with real daemons)
// ---------------------------------------------------------------------------------------------

#[test]
fn slurm_settings_are_checked_before_anything_runs() {
    let yaml = format!("{TOY_YAML}search: {{executor: slurmy}}\n");
    let fx = Fixture::new(&yaml, TOY_MOLD);
    let o = mock_run(&fx, &fx.out("a"), &["--max-evals", "2"]);
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("p.yaml:18:") && err.contains("`slurmy`"),
        "{err}"
    );
    assert!(err.contains("use local or slurm"), "{err}");

    let fx = Fixture::base();
    let o = mock_run(
        &fx,
        &fx.out("b"),
        &["--max-evals", "2", "--partition", "gpu"],
    );
    assert_code(&o, 2);
    assert!(text(&o.stderr).contains("`--partition` is a setting of the Slurm executor"));
    let o = mock_run(
        &fx,
        &fx.out("c"),
        &["--executor", "slurm", "--workers", "0"],
    );
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("`--workers`"),
        "{}",
        text(&o.stderr)
    );

    // No Slurm here (an empty PATH): refused up front, the run directory left empty.
    let empty = tempfile::tempdir().unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .mock()
        .quiet()
        .args(["--executor", "slurm"])
        .out("d")
        .env("PATH", empty.path())
        .cwd(fx.dir())
        .output();
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("needs Slurm's commands") && err.contains("--executor local"),
        "{err}"
    );
    assert!(!fx.out("d").join("run.json").exists());
}
