//! `--learner auto` and `--warm-start` through the command line, with the mock executor:
//! what the log records of who proposed what, that a resumed `auto` run proposes what the
//! uninterrupted one did, and what a warm start takes from an earlier run (and refuses).

use std::path::Path;

use crate::common::{assert_code, moldtune, text, write_toy, Csv, TOY_YAML};

fn run(dir: &Path, out: &str, extra: &[&str]) -> std::process::Output {
    moldtune("run")
        .arg("p.yaml")
        .mock()
        .quiet()
        .out(out)
        .args(extra)
        .cwd(dir)
        .output()
}

fn resume(dir: &Path, out: &str, max_evals: &str) -> std::process::Output {
    moldtune("run")
        .quiet()
        .args(["--resume", out])
        .max_evals(max_evals)
        .cwd(dir)
        .output()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn auto_records_its_learners_and_a_resumed_run_proposes_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_toy(dir);
    let whole = run(dir, "whole", &["--learner", "auto", "--max-evals", "40"]);
    assert_code(&whole, 0);
    assert!(
        text(&whole.stdout).contains("proposed by (--learner auto): "),
        "{}",
        text(&whole.stdout)
    );
    let csv = Csv::read(&dir.join("whole"));
    let (sources, learners) = (csv.column("source"), csv.column("learner"));
    for (s, l) in sources.iter().zip(&learners) {
        match s.as_str() {
            "default" | "initial" | "explore" => assert_eq!(l, "", "{s} rows have no learner"),
            _ => assert!(
                ["gp", "rf", "gbrt", "et", "random"].contains(&l.as_str()),
                "{s} row proposed by `{l}`"
            ),
        }
    }
    assert!(learners.iter().any(|l| l == "gp"), "{learners:?}");

    assert_code(
        &run(dir, "parts", &["--learner", "auto", "--max-evals", "22"]),
        0,
    );
    assert_code(&resume(dir, "parts", "40"), 0);
    let parts = Csv::read(&dir.join("parts"));
    assert_eq!(parts.hashes(), csv.hashes(), "the resumed run diverged");
    assert_eq!(parts.column("learner"), learners);
}

#[test]
fn a_log_from_before_the_learner_column_is_resumed_and_given_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_toy(dir);
    assert_code(
        &run(dir, "old", &["--learner", "rf", "--max-evals", "14"]),
        0,
    );
    // The log as moldtune wrote it before the column existed.
    let path = dir.join("old/results.csv");
    let csv = Csv::read(&dir.join("old"));
    let mut w = csv::Writer::from_path(&path).unwrap();
    let cut = |r: &[String]| r[..r.len() - 1].to_vec();
    w.write_record(cut(&csv.header)).unwrap();
    for r in &csv.rows {
        w.write_record(cut(r)).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    assert_code(&moldtune("best").arg("old").cwd(dir).output(), 0);
    assert_code(&resume(dir, "old", "18"), 0);
    let after = Csv::read(&dir.join("old"));
    assert_eq!(after.header.last().map(String::as_str), Some("learner"));
    assert_eq!(after.rows.len(), 18);
    assert_eq!(after.hashes()[..14], csv.hashes()[..]);
    assert!(after.column("learner")[..14].iter().all(String::is_empty));
    assert_eq!(after.column("learner")[17], "rf");
}

#[test]
fn a_warm_start_tries_the_earlier_best_first_and_copies_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_toy(dir);
    let prior = ["--learner", "random", "--max-evals", "40", "--seed", "5"];
    assert_code(&run(dir, "small", &prior), 0);
    let small = Csv::read(&dir.join("small"));
    let mut ranked: Vec<(f64, String)> = (small.column("objective").iter())
        .zip(small.hashes())
        .filter_map(|(y, h)| Some((y.parse().ok()?, h)))
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let best5: Vec<String> = ranked.iter().take(5).map(|r| r.1.clone()).collect();

    let o = run(dir, "big", &["--warm-start", "small", "--max-evals", "20"]);
    assert_code(&o, 0);
    let big = Csv::read(&dir.join("big"));
    assert_eq!(big.rows.len(), 20, "nothing of the prior is copied in");
    let prior_rows: Vec<String> = (big.column("source").iter().zip(big.hashes()))
        .filter(|(s, _)| *s == "prior")
        .map(|(_, h)| h)
        .collect();
    assert_eq!(prior_rows, best5, "the earlier run's five best, best first");
    assert_eq!(big.column("source")[1], "prior");
    let ws = &json(&dir.join("big/run.json"))["warm_start"];
    assert_eq!(ws["from"], "small");
    assert_eq!(ws["evaluations"], 40);
    assert!(ws["successes"].as_u64().unwrap() > 0, "{ws}");
}

#[test]
fn a_warm_start_from_another_space_is_refused_naming_the_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_toy(dir);
    assert_code(&run(dir, "small", &["--max-evals", "12"]), 0);
    let other = TOY_YAML.replace("[1, 2, 4, 8, 16, 32]", "[1, 2, 4, 8, 16, 64]");
    std::fs::write(dir.join("q.yaml"), other).unwrap();
    let o = moldtune("run")
        .arg("q.yaml")
        .mock()
        .quiet()
        .out("big")
        .args(["--warm-start", "small"])
        .cwd(dir)
        .output();
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("`P0`") && err.contains("32") && err.contains("64"),
        "{err}"
    );
    assert!(
        !dir.join("big").exists(),
        "nothing written for a refused run"
    );

    let o = run(
        dir,
        "big",
        &["--warm-start", "nowhere", "--max-evals", "12"],
    );
    assert_code(&o, 2);
    assert!(text(&o.stderr).contains("nowhere"), "{}", text(&o.stderr));
}

/// A warm-started run keeps what its prior contributed (run.json `warm_start.prior`): resumed
/// after the earlier run moved, from another directory, it still resumes; naming the moved
/// prior again is accepted (the same successes), naming another is refused.
#[test]
fn a_warm_started_run_resumes_after_its_prior_moved() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_toy(dir);
    assert_code(&run(dir, "small", &["--max-evals", "12", "--seed", "5"]), 0);
    assert_code(&run(dir, "other", &["--max-evals", "12", "--seed", "6"]), 0);
    assert_code(
        &run(dir, "big", &["--warm-start", "small", "--max-evals", "14"]),
        0,
    );
    let ws = &json(&dir.join("big/run.json"))["warm_start"];
    assert_eq!(
        ws["prior"].as_array().unwrap().len() as u64,
        ws["successes"].as_u64().unwrap(),
        "{ws}"
    );
    std::fs::rename(dir.join("small"), dir.join("moved")).unwrap();
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let resume = |extra: &[&str]| {
        moldtune("run")
            .args(["--resume", "../big"])
            .quiet()
            .max_evals(16)
            .args(extra)
            .cwd(&sub)
            .output()
    };
    assert_code(&resume(&[]), 0);
    assert_code(&resume(&["--warm-start", "../moved"]), 0);
    let o = resume(&["--warm-start", "../other"]);
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("holds others"),
        "{}",
        text(&o.stderr)
    );
}

/// A prior copied alone (without the problem file its run.json names) is read with this run's
/// problem: the warm start works, and says so; a refusal carries no `--resume` hint.
#[test]
fn a_prior_copied_without_its_problem_file_warm_starts_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_toy(dir);
    assert_code(&run(dir, "small", &["--max-evals", "12", "--seed", "5"]), 0);
    let elsewhere = tempfile::tempdir().unwrap();
    let alone = elsewhere.path().join("small");
    std::fs::create_dir(&alone).unwrap();
    for f in ["run.json", "results.csv", "results.json"] {
        std::fs::copy(dir.join("small").join(f), alone.join(f)).unwrap();
    }
    let from = alone.to_str().unwrap();
    let o = run(dir, "big", &["--warm-start", from, "--max-evals", "14"]);
    assert_code(&o, 0);
    assert!(
        text(&o.stderr).contains("is not there"),
        "{}",
        text(&o.stderr)
    );
    let ws = &json(&dir.join("big/run.json"))["warm_start"];
    assert!(ws["successes"].as_u64().unwrap() > 0, "{ws}");
    let o = run(
        dir,
        "big2",
        &["--warm-start", "nowhere", "--max-evals", "12"],
    );
    assert_code(&o, 2);
    assert!(!text(&o.stderr).contains("--resume"), "{}", text(&o.stderr));
}
