//! Verify before claiming, with the mock evaluator: the end-of-run re-measurement, its
//! record in run.json, `moldtune best` reporting the verified winner, and `best --verify`.

use crate::common::*;

use std::path::Path;

/// A mock run of `evals` evaluations in `dir/run`; `T` is off by default, so the default
/// configuration has `P2` inactive.
fn mock_run(dir: &Path, evals: &str, extra: &[&str]) -> std::process::Output {
    let yaml = "name: toy\nmold: m.c\nparams:\n  - name: P0\n    type: ordinal\n    values: [1, 2, 4, 8, 16, 32]\n  - name: T\n    type: boolean\n  - name: P2\n    type: integer\n    low: 0\n    high: 100\n    when: {T: [true]}\ncompile: \"cc {{ source }} -o {{ exe }}\"\nrun: \"{{ exe }}\"\n";
    std::fs::write(dir.join("p.yaml"), yaml).unwrap();
    std::fs::write(dir.join("m.c"), "int a = #P0, t = #T, b = #P2;\n").unwrap();
    let c = moldtune("run")
        .arg("p.yaml")
        .mock()
        .quiet()
        .max_evals(evals);
    c.out("run").args(extra).cwd(dir).output()
}

#[test]
fn the_run_ends_by_re_measuring_the_default_and_the_best_interleaved() {
    let tmp = tempfile::tempdir().unwrap();
    let o = mock_run(tmp.path(), "15", &["--verify", "2", "--verify-rounds", "6"]);
    assert_code(&o, 0);
    let out = text(&o.stdout);
    assert!(out.contains("verified: eval "), "{out}");
    assert!(out.contains("95% CI"), "{out}");
    let run = read_json(&tmp.path().join("run/run.json"));
    let v = &run["verification"];
    assert_eq!(v["rounds"], 6);
    assert_eq!(v["candidates"].as_array().unwrap().len(), 3, "{v}");
    for c in v["candidates"].as_array().unwrap() {
        assert_eq!(c["samples"].as_array().unwrap().len(), 6, "{c}");
    }
    let winner = v["winner_eval_id"].as_u64().unwrap();
    assert_eq!(run["best_eval_id"].as_u64(), Some(winner));
    // The winner is decided on the re-measured medians, not the search's numbers: the
    // fastest, unless it is not faster than the default beyond its interval.
    let cands = v["candidates"].as_array().unwrap();
    let median = |c: &serde_json::Value| c["median"].as_f64().unwrap();
    let fastest = v["indistinct"]["eval_id"].as_u64().unwrap_or(winner);
    let f = cands.iter().find(|c| c["eval_id"] == fastest).unwrap();
    assert!(cands.iter().all(|c| median(f) <= median(c)), "{v}");
    assert!(
        v["indistinct"].is_null() || v["default_eval_id"] == winner,
        "{v}"
    );
    let results = read_json(&tmp.path().join("run/results.json"));
    assert_eq!(results["run"]["verification"]["winner_eval_id"], winner);

    let b = moldtune("best").json().arg(tmp.path().join("run")).output();
    assert_code(&b, 0);
    let b: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(b["eval_id"].as_u64(), Some(winner));
    assert!(b["config"].is_object(), "{b}");
}

#[test]
fn best_names_inactive_parameters_as_inactive() {
    // One evaluation: the default, whose `P2` is inactive (`T` is off).
    let tmp = tempfile::tempdir().unwrap();
    assert_code(&mock_run(tmp.path(), "1", &["--verify", "0"]), 0);
    let best = |json: bool| {
        let mut c = moldtune("best").arg(tmp.path().join("run"));
        if json {
            c = c.json();
        }
        let o = c.output();
        assert_code(&o, 0);
        o
    };
    let out = text(&best(false).stdout);
    assert!(out.contains("  P2 (inactive)"), "{out}");
    assert!(!out.contains("P2 ="), "{out}");
    let b: serde_json::Value = serde_json::from_slice(&best(true).stdout).unwrap();
    assert_eq!(b["inactive"], serde_json::json!(["P2"]), "{b}");
    assert_eq!(b["config"]["T"], false, "{b}");
    assert!(b["config"].get("P2").is_none(), "{b}");
}

#[test]
fn best_verify_re_measures_a_finished_run_and_records_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    assert_code(&mock_run(tmp.path(), "15", &["--verify", "0"]), 0);
    let run = read_json(&tmp.path().join("run/run.json"));
    assert!(run["verification"].is_null(), "{run}");
    let v = moldtune("best")
        .args(["--verify", "--top", "2"])
        .rounds(4)
        .arg(tmp.path().join("run"))
        .output();
    assert_code(&v, 0);
    assert!(text(&v.stdout).contains("verified: "), "{}", describe(&v));
    let run = read_json(&tmp.path().join("run/run.json"));
    assert_eq!(run["verification"]["rounds"], 4);
    assert_eq!(
        run["verification"]["candidates"].as_array().unwrap().len(),
        3
    );
    assert_eq!(run["best_eval_id"], run["verification"]["winner_eval_id"]);
}

/// A log-likelihood, maximised: every objective negative (the mock's values shifted by −5).
/// The verification keeps the search's best (it was "0.22x" of the default and lost to it),
/// and says how much higher it is in the metric's own units.
#[test]
fn a_run_whose_objectives_are_all_negative_reports_the_search_s_best() {
    let tmp = tempfile::tempdir().unwrap();
    let yaml = "name: ll\nmold: m.c\nparams:\n  - name: P0\n    type: ordinal\n    values: [1, 2, 4, 8, 16, 32]\n    default: 1\n  - name: P2\n    type: integer\n    low: 0\n    high: 100\n    default: 0\ncompile: \"cc {{ source }} -o {{ exe }}\"\nrun: \"{{ exe }}\"\nmetric: {kind: regex, regex: 'll: (\\S+)', goal: maximize}\n";
    std::fs::write(tmp.path().join("p.yaml"), yaml).unwrap();
    std::fs::write(tmp.path().join("m.c"), "int a = #P0, b = #P2;\n").unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .mock()
        .max_evals(15)
        .out("run")
        .args(["--verify", "2", "--verify-rounds", "6"])
        .env("MOLDTUNE_MOCK_SHIFT", "5")
        .cwd(tmp.path())
        .output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    let run = read_json(&tmp.path().join("run/run.json"));
    let v = &run["verification"];
    let medians: Vec<(u64, f64)> = (v["candidates"].as_array().unwrap().iter())
        .map(|c| {
            (
                c["eval_id"].as_u64().unwrap(),
                c["median"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(medians.iter().all(|m| m.1 < 0.0), "{v}");
    let highest = medians.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert_eq!(v["winner_eval_id"].as_u64(), Some(highest.0), "{out}");
    assert_ne!(v["winner_eval_id"], v["default_eval_id"], "{out}");
    assert_eq!(run["best_eval_id"].as_u64(), Some(highest.0));
    assert!(v["speedup"]["difference"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["speedup"].get("ratio").is_none(), "{v}");
    assert!(out.contains("higher than the default"), "{out}");
    assert!(!out.contains("x better"), "{out}");
}

/// The verification is set in the problem file (`search.verify`, `search.verify_rounds`);
/// candidates whose samples do not vary (a deterministic score: the mock without noise) are
/// run three times, not every round, and the summary says so.
#[test]
fn the_problem_file_sets_the_verification_and_steady_values_are_not_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let run = |search: &str, noise: &str| {
        let _ = std::fs::remove_dir_all(d.join("run"));
        let yaml = format!("name: toy\nmold: m.c\nparams:\n  - name: P0\n    type: ordinal\n    values: [1, 2, 4, 8, 16, 32]\n  - name: P2\n    type: integer\n    low: 0\n    high: 100\ncompile: \"cc {{{{ source }}}} -o {{{{ exe }}}}\"\nrun: \"{{{{ exe }}}}\"\nsearch: {search}\n");
        std::fs::write(d.join("p.yaml"), yaml).unwrap();
        std::fs::write(d.join("m.c"), "int a = #P0, b = #P2;\n").unwrap();
        let o = moldtune("run")
            .arg("p.yaml")
            .mock()
            .max_evals(12)
            .out("run")
            .env("MOLDTUNE_MOCK_NOISE", noise)
            .cwd(d)
            .output();
        assert_code(&o, 0);
        (text(&o.stdout), read_json(&d.join("run/run.json")))
    };
    let (_, j) = run("{verify: 0}", "0.04");
    assert!(j["verification"].is_null(), "{j}");
    let (out, j) = run("{verify: 2, verify_rounds: 8}", "0.04");
    let v = &j["verification"];
    assert_eq!(v["rounds"], 8, "{v}");
    assert_eq!(v["candidates"].as_array().unwrap().len(), 3, "{v}");
    assert!(!out.contains("gave the same value"), "{out}");
    let (out, j) = run("{verify: 2, verify_rounds: 8}", "0");
    for c in j["verification"]["candidates"].as_array().unwrap() {
        assert_eq!(c["samples"].as_array().unwrap().len(), 3, "{c}");
    }
    assert!(out.contains("gave the same value every time"), "{out}");
}
