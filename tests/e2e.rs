//! End-to-end tests with real processes.
//!
//! The first group uses fake compilers and programs written in sh (no C compiler needed) to
//! produce every failure status, timeouts of whole process groups, and interrupts. The last
//! test tunes the example problem `tests/e2e/matmul/matmul.yaml` with clang-22.

use crate::common::fake::*;
use crate::common::*;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Fake compilers and programs
// ---------------------------------------------------------------------------------------------

#[test]
fn every_failure_is_recorded_with_its_status() {
    let modes = [
        "ok",
        "build_fail",
        "no_exe",
        "no_number",
        "exit3",
        "segv",
        "daemon",
    ];
    let p = FakeProblem::new(&modes);
    let o = p.command().max_evals(modes.len()).output();
    assert_code(&o, 0);
    let csv = Csv::read(&p.out());
    assert_eq!(csv.rows.len(), modes.len());
    let rows = by_mode(&csv);
    let causes = causes(&p.out());
    let expect = [
        ("ok", "ok", ""),
        ("build_fail", "build_error", "this variant does not compile"),
        ("no_exe", "build_error", "produced no"),
        ("no_number", "invalid_metric", "time: soon"),
        ("exit3", "run_error", "boom"),
        ("segv", "run_error", "SIGSEGV"),
        ("daemon", "ok", ""),
    ];
    for (mode, status, cause) in expect {
        let r = &rows[mode];
        assert_eq!(csv.get(r, "status"), status, "MODE={mode}: {r:?}");
        let c = &causes[csv.get(r, "eval_id")];
        assert!(
            c.contains(cause),
            "MODE={mode}: cause {c:?} lacks {cause:?}"
        );
        assert_eq!(
            csv.get(r, "objective").is_empty(),
            status != "ok",
            "MODE={mode}: {r:?}"
        );
    }
    assert!(causes[csv.get(&rows["exit3"], "eval_id")].contains("code 3"));
    assert_eq!(csv.get(&rows["ok"], "objective"), "0.25");
    assert_eq!(csv.get(&rows["daemon"], "objective"), "0.5");
    // The daemon's grandchild did not outlive its group.
    assert_no_leftover("sleep 600.0404");

    let b = moldtune("best").arg(p.out()).json().output();
    assert_code(&b, 0);
    let b: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(b["objective"].as_f64(), Some(0.25));
}

#[test]
fn hanging_compile_is_a_build_timeout() {
    let p = FakeProblem::new(&["hang_compile"]);
    let t0 = Instant::now();
    let o = p
        .command()
        .max_evals(1)
        .args(["--compile-timeout", "2"])
        .output();
    let took = t0.elapsed();
    // The only variant failed: "no variant succeeded".
    assert_code(&o, 3);
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(7),
        "took {took:?}"
    );
    let csv = Csv::read(&p.out());
    assert_eq!(csv.rows.len(), 1);
    let r = &csv.rows[0];
    assert_eq!(csv.get(r, "status"), "build_timeout", "{r:?}");
    let compile_s: f64 = csv.get(r, "compile_s").parse().unwrap();
    assert!((1.9..5.0).contains(&compile_s), "compile_s {compile_s}");
    assert!(
        causes(&p.out())["0"].contains("timeout"),
        "{:?}",
        causes(&p.out())
    );
    assert_no_leftover("sleep 600.0101");
}

#[test]
fn program_with_sleeping_grandchild_is_a_run_timeout() {
    let p = FakeProblem::new(&["fork_sleep", "fork_sleep_noterm"]);
    let t0 = Instant::now();
    let o = p
        .command()
        .max_evals(2)
        .args(["--run-timeout", "2"])
        .output();
    let took = t0.elapsed();
    assert_code(&o, 3);
    // Two runs of 2 s, the second with a 0.5 s grace period before SIGKILL.
    assert!(
        took >= Duration::from_secs(4) && took < Duration::from_secs(12),
        "took {took:?}"
    );
    let csv = Csv::read(&p.out());
    assert_eq!(csv.rows.len(), 2);
    for r in &csv.rows {
        assert_eq!(csv.get(r, "status"), "run_timeout", "{r:?}");
        let run_s: f64 = csv.get(r, "run_s").parse().unwrap();
        assert!((1.9..5.0).contains(&run_s), "run_s {run_s} in {r:?}");
    }
    assert_no_leftover("sleep 600.0202");
    assert_no_leftover("sleep 600.0303");
}

#[test]
fn sigint_during_a_compile_stops_at_once() {
    let p = FakeProblem::new(&["hang_compile_b"]);
    let mut child = p.command().max_evals(1).spawn();
    let t0 = Instant::now();
    while processes_matching("sleep 600.0606").is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the compile never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let the compile get going, then interrupt.
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let t1 = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t1.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("moldtune ignored SIGINT for 5 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 130);
    assert_no_leftover("sleep 600.0606");
    let run = read_json(&p.out().join("run.json"));
    assert_eq!(run["termination"], "interrupted");
    // The interrupted evaluation is not recorded: a resume redoes it.
    assert_eq!(Csv::read(&p.out()).rows.len(), 0);
}

/// moldtune's direct child dies with it (PR_SET_PDEATHSIG), but a grandchild does not: after
/// `kill -9 moldtune` during a compile whose driver (`sh`) started `sleep`, the sleep lives on.
/// A SIGKILLed moldtune cannot clean up; the grandchild of its compile is left until the
/// next moldtune on that directory (`--resume`) kills the recorded group.
#[test]
fn sigkill_of_moldtune_then_resume_leaves_no_grandchild() {
    let p = FakeProblem::new(&["hang_compile_c"]);
    let mut child = p
        .command()
        .max_evals(1)
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while processes_matching("sleep 600.0707").is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the compile never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let o = moldtune("run")
        .arg("--resume")
        .arg(p.out())
        .args(["--compile-timeout", "1"])
        .quiet()
        .output();
    assert_code(&o, 3);
    assert_no_leftover("sleep 600.0707");
}

// ---------------------------------------------------------------------------------------------
// The example problem, with clang-22
// ---------------------------------------------------------------------------------------------

#[test]
fn matmul_with_clang() {
    require_clang!();
    let problem = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/matmul/matmul.yaml");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = moldtune("run")
        .arg(&problem)
        .learner("rf")
        .max_evals(40)
        .seed(1)
        .quiet()
        .out(&out)
        .cwd(tmp.path())
        .output();
    assert_code(&o, 0);

    let csv = Csv::read(&out);
    let summary = matmul_rows_are_distinct(&csv, &o);
    let best_obj = matmul_checks_catch_the_broken_and_the_search_gains(&csv, &summary);
    let id = matmul_best_is_the_verified_winner(&out, &csv, best_obj);
    matmul_run_json_and_best_c(&out, &csv, id);
}

/// 40 rows, in order, no configuration twice; one line per row for the messages.
fn matmul_rows_are_distinct(csv: &Csv, o: &std::process::Output) -> String {
    assert_eq!(csv.rows.len(), 40, "{}", describe(o));
    let ids: Vec<String> = csv
        .rows
        .iter()
        .map(|r| csv.get(r, "eval_id").to_string())
        .collect();
    assert_eq!(ids, (0..40).map(|i| i.to_string()).collect::<Vec<_>>());
    let mut hashes: Vec<&str> = csv.rows.iter().map(|r| csv.get(r, "config_hash")).collect();
    hashes.sort();
    hashes.dedup();
    assert_eq!(hashes.len(), 40, "a configuration was evaluated twice");

    let summary: Vec<String> = csv
        .rows
        .iter()
        .map(|r| {
            format!(
                "{} P0={} P1={} P2={:?} P3={} {} -> {} {}",
                csv.get(r, "eval_id"),
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                csv.get(r, "status"),
                csv.get(r, "objective")
            )
        })
        .collect();
    summary.join("\n")
}

/// The default first and ok, every broken variant caught, something faster than the
/// default found; the best objective.
fn matmul_checks_catch_the_broken_and_the_search_gains(csv: &Csv, summary: &str) -> f64 {
    // The default configuration is first, checked against itself, and succeeds.
    let default = &csv.rows[0];
    assert_eq!(csv.get(default, "source"), "default");
    assert_eq!(csv.get(default, "status"), "ok", "{summary}");
    assert_eq!(csv.get(default, "repeats"), "3", "repeats as the YAML says");
    let default_obj: f64 = csv.get(default, "objective").parse().unwrap();

    // The check catches every broken variant (P3 = 1) and nothing else.
    let mut broken = 0;
    for r in &csv.rows {
        let status = csv.get(r, "status");
        if csv.get(r, "P3") == "1" {
            broken += 1;
            assert_eq!(
                status, "wrong_output",
                "a P3=1 variant passed the check:\n{summary}"
            );
        } else {
            assert_eq!(status, "ok", "a correct variant failed:\n{summary}");
            // 3 as the YAML says, or 3 + 6 when a noisy new best was timed again.
            let repeats = csv.get(r, "repeats");
            assert!(repeats == "3" || repeats == "9", "repeats {repeats}");
        }
    }
    if broken > 0 {
        assert!(csv
            .rows
            .iter()
            .any(|r| csv.get(r, "status") == "wrong_output"));
    }

    // The search found something faster than the default.
    let (st, ob) = (csv.col("status"), csv.col("objective"));
    let best_obj = csv
        .rows
        .iter()
        .filter(|r| r[st] == "ok")
        .map(|r| r[ob].parse::<f64>().unwrap())
        .min_by(f64::total_cmp)
        .unwrap();
    assert!(
        best_obj < default_obj,
        "best {best_obj} is not below the default {default_obj}:\n{summary}"
    );
    best_obj
}

/// `moldtune best` agrees with the CSV and claims the verified winner; its eval id.
fn matmul_best_is_the_verified_winner(out: &Path, csv: &Csv, best_obj: f64) -> usize {
    let (st, ob) = (csv.col("status"), csv.col("objective"));
    // `moldtune best` agrees with the CSV.
    let b = moldtune("best").arg(out).json().output();
    assert_code(&b, 0);
    let b: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    let got = b["objective"].as_f64().unwrap();
    let id = b["eval_id"].as_u64().unwrap() as usize;
    assert_eq!(csv.rows[id][ob].parse::<f64>().unwrap(), got);
    // The claim is the verified winner: one of the re-measured candidates, the best of
    // them when re-measured; without a verification it would be the CSV minimum.
    let run = read_json(&out.join("run.json"));
    let v = &run["verification"];
    assert_eq!(v["winner_eval_id"].as_u64(), Some(id as u64), "{v}");
    assert_eq!(v["default_eval_id"], 0, "{v}");
    let cands = v["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 4, "the default and the best 3: {v}");
    let best_csv_id = csv
        .rows
        .iter()
        .position(|r| r[st] == "ok" && r[ob].parse::<f64>().unwrap() == best_obj)
        .unwrap();
    assert!(
        cands.iter().any(|c| c["eval_id"] == best_csv_id as u64),
        "the search's best was re-measured"
    );
    matmul_winner_has_the_lowest_upper_quartile(v, id);
    id
}

/// The winner's times are the best in three rounds of four: the lowest upper quartile.
fn matmul_winner_has_the_lowest_upper_quartile(v: &serde_json::Value, id: usize) {
    let cands = v["candidates"].as_array().unwrap();
    let upper_quartile = |c: &serde_json::Value| {
        let mut s: Vec<f64> = (c["samples"].as_array().unwrap().iter())
            .map(|x| x.as_f64().unwrap())
            .collect();
        s.sort_by(f64::total_cmp);
        let at = 0.75 * (s.len() - 1) as f64;
        let lo = at.floor() as usize;
        s[lo] + (at - lo as f64) * (s[at.ceil() as usize] - s[lo])
    };
    let winner = upper_quartile(cands.iter().find(|c| c["eval_id"] == id as u64).unwrap());
    if v["indistinct"].is_null() {
        assert!(cands.iter().all(|c| winner <= upper_quartile(c)), "{v}");
    } else {
        // The fastest could not be told from the default (a loaded machine): the default stays.
        assert_eq!(v["winner_eval_id"], v["default_eval_id"], "{v}");
    }
    let s = &v["speedup"];
    assert!(
        s["low"].as_f64().unwrap() <= s["ratio"].as_f64().unwrap()
            && s["ratio"].as_f64().unwrap() <= s["high"].as_f64().unwrap(),
        "{v}"
    );
}

/// run.json describes the run; best.c is the best variant's source.
fn matmul_run_json_and_best_c(out: &Path, csv: &Csv, id: usize) {
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["termination"], "max_evals");
    assert_eq!(run["evaluations"], 40);
    assert_eq!(run["mock"], false);
    assert!(
        run["compiler_version"]
            .as_str()
            .is_some_and(|v| v.contains("clang")),
        "{run}"
    );
    let best_c = std::fs::read_to_string(out.join("best.c")).unwrap();
    let row = &csv.rows[id];
    assert!(
        best_c.contains(&format!("#pragma omp tile sizes({}, {})", row[0], row[1])),
        "{best_c}"
    );
    assert!(
        best_c.contains(&format!("int skip = {};", row[3])),
        "{best_c}"
    );
    assert!(out.join("reference.out").is_file());
    assert!(
        !out.join("work").join("eval-0").exists(),
        "build directories are removed without --keep-builds"
    );
}

/// Flags that change nothing produce byte-identical programs: only the first is timed, the
/// others carry its outcome (`reused_from`) and cost no run time.
#[test]
fn identical_machine_code_is_not_timed_twice() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("k.c"),
        "#include <stdio.h>\nint main(void) { volatile double s = 0; for (int i = 0; i < 1000; i++) s += i; printf(\"0.001\\n\"); fprintf(stderr, \"%g\\n\", s); return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("p.yaml"),
        "mold: k.c\nparams:\n  - {name: FLAG, type: categorical, choices: [\"\", \"-Wall\", \"-Wextra\"], default: \"\"}\n\
         compile: \"clang-22 -O2 {{ FLAG }} {{ source }} -o {{ exe }}\"\nrun: \"{{ exe }}\"\nrepeats: 2\n",
    )
    .unwrap();
    // A relative --out (and problem path): builds happen below it, in other directories.
    let out = tmp.path().join("run");
    let o = moldtune("run")
        .arg("p.yaml")
        .quiet()
        .max_evals(3)
        .out("run")
        .cwd(tmp.path())
        .output();
    assert_code(&o, 0);
    let v = read_json(&out.join("results.json"));
    let evals = v["evaluations"].as_array().unwrap();
    assert_eq!(evals.len(), 3);
    let reused: Vec<&serde_json::Value> = evals
        .iter()
        .filter(|e| !e["reused_from"].is_null())
        .collect();
    assert_eq!(reused.len(), 2, "{evals:#?}");
    for e in reused {
        assert_eq!(e["reused_from"], 0);
        assert_eq!(e["run_s"], 0.0);
        assert_eq!(e["status"], "ok");
        assert!(e["cause"].as_str().unwrap().contains("machine code"), "{e}");
    }
}

#[test]
fn a_check_build_keeps_the_dump_code_out_of_the_timed_binary() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_dump_problem(d);
    let out = d.join("run");
    let o = moldtune("run")
        .arg("p.yaml")
        .quiet()
        .learner("random")
        .max_evals(4)
        .arg("--keep-builds")
        .out(&out)
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let csv = Csv::read(&out);
    for r in &csv.rows {
        let want = if csv.get(r, "WRONG") == "1" {
            "wrong_output"
        } else {
            "ok"
        };
        assert_eq!(csv.get(r, "status"), want, "{r:?}");
    }
    let marker = b"==BEGIN DUMP_ARRAYS==";
    let contains = |p: &Path| {
        let bytes = std::fs::read(p).unwrap();
        bytes.windows(marker.len()).any(|w| w == marker)
    };
    let timed = out.join("work/eval-0/variant");
    assert!(!contains(&timed), "the timed binary holds the dump code");
    assert!(contains(&out.join("work/eval-0/check/variant")));
    let reference = std::fs::read_to_string(out.join("reference.out")).unwrap();
    assert!(reference.starts_with("==BEGIN DUMP_ARRAYS=="));

    check_build_commands_are_relative(&out, d);
}

/// A problem whose mold dumps its array only under `-DDUMP_ARRAYS`, the check's extra flag;
/// `WRONG=1` changes the output.
fn write_dump_problem(d: &Path) {
    // PolyBench's layout: dumping the arrays is a compile-time switch.
    let mold = r#"#include <stdio.h>
#include <time.h>
#define N 200
static double a[N][N];
int main(void) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      a[i][j] = (i * j) % 7 + #WRONG;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (a[N / 2][N / 3] < 0) return 1; /* keeps the stores in the timed binary */
  printf("%0.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
#ifdef DUMP_ARRAYS
  fprintf(stderr, "==BEGIN DUMP_ARRAYS==\n");
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) fprintf(stderr, "%0.2f ", a[i][j]);
#endif
  return 0;
}
"#;
    std::fs::write(d.join("k.c"), mold).unwrap();
    let yaml = r#"name: dumpk
mold: k.c
params:
  - name: WRONG
    type: ordinal
    values: [0, 1]
    default: 0
  - name: OPT
    type: categorical
    choices: ["-O1", "-O2"]
compile: "clang-22 {{ OPT }} {{ source }} -o {{ exe }}"
run: "{{ exe }}"
check:
  stream: stderr
  compile_extra: "-DDUMP_ARRAYS"
repeats: 2
"#;
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
}

/// results.json records the exact commands, relative to the build directory.
fn check_build_commands_are_relative(out: &Path, d: &Path) {
    let results = read_json(&out.join("results.json"));
    let c = &results["evaluations"][0]["commands"];
    let args = |k: &str| -> Vec<String> {
        c[k].as_array()
            .unwrap_or_else(|| panic!("no `{k}` in {c}"))
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(args("compile")[0], "clang-22", "{c}");
    assert!(args("compile").contains(&"./variant".to_string()), "{c}");
    assert!(
        !args("compile").contains(&"-DDUMP_ARRAYS".to_string()),
        "{c}"
    );
    assert_eq!(
        args("check_build").last().map(String::as_str),
        Some("-DDUMP_ARRAYS"),
        "{c}"
    );
    assert_eq!(args("check"), ["./check/variant"], "{c}");
    assert_eq!(args("run"), ["./variant"], "{c}");
    let tmp_path = d.display().to_string();
    assert!(
        !c.to_string().contains(&tmp_path),
        "an absolute path in {c}"
    );
}

#[test]
fn a_noisy_would_be_best_is_timed_again_before_it_is_accepted() {
    // The default ("ok", 0.25) is the incumbent; "noisy" gives 0.1, 0.3, 0.1: it would win,
    // with a spread of 2, so it gets 2 × 3 more runs before its objective is taken.
    let keys = "check: {mode: none}\nrepeats: 3\ntimeouts: {run_s: 20}\n";
    let p = FakeProblem::with(&["ok", "noisy"], 1, keys);
    let o = p.command().max_evals(2).args(["--verify", "0"]).output();
    assert_code(&o, 0);
    let csv = Csv::read(&p.out());
    let rows = by_mode(&csv);
    assert_eq!(csv.get(&rows["ok"], "repeats"), "3");
    assert_eq!(
        csv.get(&rows["noisy"], "repeats"),
        "9",
        "{:?}",
        rows["noisy"]
    );
    // 9 samples alternating 0.1 / 0.3: five of 0.1, so the median is 0.1.
    assert_eq!(csv.get(&rows["noisy"], "objective"), "0.1");
}

// ---------------------------------------------------------------------------------------------
// Simulated metrics (clang-22 and valgrind)
// ---------------------------------------------------------------------------------------------

/// `moldtune measure` of the saxpy problem with `REPS=reps` and its metric kind replaced by
/// `kind`: the samples.
fn counted(dir: &Path, kind: &str, reps: &str) -> Vec<f64> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/instructions");
    for f in ["saxpy.mold.c", "saxpy.yaml"] {
        let text = std::fs::read_to_string(src.join(f)).unwrap();
        std::fs::write(
            dir.join(f),
            text.replace("kind: instructions", &format!("kind: {kind}")),
        )
        .unwrap();
    }
    let o = moldtune("measure")
        .args(["saxpy.yaml", "--repeats", "3"])
        .json()
        .arg("--set")
        .arg(format!("REPS={reps}"))
        .cwd(dir)
        .output();
    assert_code(&o, 0);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["status"], "ok", "{j}");
    (j["samples"].as_array().unwrap().iter())
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn instructions_in_the_kernel_are_counted_the_same_run_after_run() {
    if !have_clang() || !have_valgrind() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let once = counted(tmp.path(), "instructions", "1");
    assert!(
        once.iter().all(|&x| x == once[0]),
        "deterministic: {once:?}"
    );
    // Only `kernel` counts (main's initialisation of 8192 doubles does not): twice the
    // work, twice the instructions, within the loop's set-up.
    let twice = counted(tmp.path(), "instructions", "2");
    let ratio = twice[0] / once[0];
    assert!((1.95..2.05).contains(&ratio), "{once:?} {twice:?}");
    let cycles = counted(tmp.path(), "cycles", "1");
    assert!(
        cycles[0] > once[0],
        "cycles weigh the misses: {cycles:?} vs {once:?}"
    );
}

/// `moldtune run` of the slow-once problem (1 evaluation) with `MOLDTUNE_LOADAVG` as the
/// machine's load: the first evaluation's status and its results.json record.
fn slow_once(load: &str) -> (String, serde_json::Value) {
    let problem = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/slow_once/slow_once.yaml");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = moldtune("run")
        .arg(&problem)
        .max_evals(1)
        .quiet()
        .out(&out)
        .env("SLOW_ONCE", tmp.path().join("ran-once"))
        .env("MOLDTUNE_LOADAVG", load)
        .output();
    assert!(out.join("results.json").is_file(), "{}", describe(&o));
    let csv = Csv::read(&out);
    let status = csv.get(&csv.rows[0], "status").to_string();
    let results = read_json(&out.join("results.json"));
    (status, results["evaluations"][0].clone())
}

#[test]
fn a_run_timeout_on_a_busy_machine_is_retried_once_and_recorded() {
    require_clang!();
    let (status, eval) = slow_once("8.00 4.00 2.00 1/100 1");
    assert_eq!(status, "ok", "{eval}");
    let retried = eval["retried"].as_str().unwrap_or("");
    assert!(retried.contains("busy (load 8.00 on"), "{eval}");
    // On a quiet machine the timeout stands: it is the program's.
    let (status, eval) = slow_once("0.00 0.00 0.00 1/100 1");
    assert_eq!(status, "run_timeout", "{eval}");
    assert!(eval.get("retried").is_none(), "{eval}");
}

/// A compile command whose program does not exist is the problem file's error (exit 2 at
/// `compile:`'s position), found before any run directory is made: once the name is fixed,
/// the run starts afresh (before: exit 5 "the machine failed", a run directory, and a
/// `--resume` that then refused the fixed problem).
#[test]
fn a_compiler_that_does_not_exist_is_refused_before_anything_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    write_toy(tmp.path());
    let yaml = std::fs::read_to_string(tmp.path().join("p.yaml")).unwrap();
    let typo = yaml.replace("compile: \"cc ", "compile: \"clang-2x-nope ");
    assert_ne!(typo, yaml);
    std::fs::write(tmp.path().join("p.yaml"), typo).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .quiet()
        .max_evals(2)
        .out("run")
        .cwd(tmp.path())
        .output();
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("p.yaml:") && err.contains("`clang-2x-nope` is not found"),
        "{err}"
    );
    assert!(!tmp.path().join("run").exists(), "nothing made");
}

/// Without valgrind, a run counting instructions is refused before anything is written:
/// `--resume` of a finished run keeps its termination, `baseline` makes no folder, `check`
/// builds nothing (exit 2 each, naming valgrind).
#[test]
fn a_missing_valgrind_is_found_before_anything_is_written() {
    if !have_valgrind() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("m.c"),
        "int main(void) { volatile int s = 0; for (int i = 0; i < #P0 * 1000; i++) s += i; return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        d.join("p.yaml"),
        "name: vg\nmold: m.c\nparams:\n  - {name: P0, type: ordinal, values: [1, 2, 4]}\n\
         compile: \"cc {{ source }} -o {{ exe }}\"\nrun: \"{{ exe }}\"\n\
         metric: {kind: instructions}\ncheck: {mode: none}\n",
    )
    .unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .quiet()
        .max_evals(2)
        .out("run")
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let termination = || read_json(&d.join("run/run.json"))["termination"].clone();
    let before = termination();
    // A PATH with the compiler and without valgrind.
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let cc = which("cc");
    std::os::unix::fs::symlink(cc, bin.join("cc")).unwrap();
    let without = |c: Moldtune| {
        let o = c.cwd(d).env("PATH", &bin).output();
        assert_code(&o, 2);
        assert!(text(&o.stderr).contains("valgrind"), "{}", text(&o.stderr));
    };
    without(
        moldtune("run")
            .args(["--resume", "run"])
            .quiet()
            .max_evals(3),
    );
    assert_eq!(termination(), before);
    let baseline = || moldtune("baseline").arg("run").out("bl").rounds(5);
    without(baseline());
    assert!(!d.join("bl").exists(), "baseline made its folder");
    assert_code(&baseline().cwd(d).output(), 0);
    without(moldtune("check").arg("bl"));
}

fn which(program: &str) -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap();
    (std::env::split_paths(&path).map(|p| p.join(program)))
        .find(|p| p.exists())
        .unwrap()
}
