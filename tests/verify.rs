//! Verify before claiming, with the mock evaluator: the end-of-run re-measurement, its
//! record in run.json, `moldtune best` reporting the verified winner, and `best --verify`.

mod common;
use common::fake::BIN;
use common::*;

use std::path::Path;
use std::process::Command;

fn mock_run(dir: &Path, extra: &[&str]) -> std::process::Output {
    let yaml = "name: toy\nmold: m.c\nparams:\n  - name: P0\n    type: ordinal\n    values: [1, 2, 4, 8, 16, 32]\n  - name: T\n    type: boolean\n  - name: P2\n    type: integer\n    low: 0\n    high: 100\n    when: {T: [true]}\ncompile: \"cc {{ source }} -o {{ exe }}\"\nrun: \"{{ exe }}\"\n";
    std::fs::write(dir.join("p.yaml"), yaml).unwrap();
    std::fs::write(dir.join("m.c"), "int a = #P0, t = #T, b = #P2;\n").unwrap();
    Command::new(BIN)
        .current_dir(dir)
        .args([
            "run",
            "p.yaml",
            "--mock",
            "--quiet",
            "--max-evals",
            "15",
            "--out",
            "run",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn the_run_ends_by_re_measuring_the_default_and_the_best_interleaved() {
    let tmp = tempfile::tempdir().unwrap();
    let o = mock_run(tmp.path(), &["--verify", "2", "--verify-rounds", "6"]);
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
    let results = read_json(&tmp.path().join("run/results.json"));
    assert_eq!(results["run"]["verification"]["winner_eval_id"], winner);

    let b = Command::new(BIN)
        .args(["best", "--json"])
        .arg(tmp.path().join("run"))
        .output()
        .unwrap();
    assert_code(&b, 0);
    let b: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(b["eval_id"].as_u64(), Some(winner));
    assert!(b["config"].is_object(), "{b}");
}

#[test]
fn best_names_inactive_parameters_and_can_verify_again() {
    let tmp = tempfile::tempdir().unwrap();
    assert_code(&mock_run(tmp.path(), &["--verify", "0"]), 0);
    let run = read_json(&tmp.path().join("run/run.json"));
    assert!(run["verification"].is_null(), "{run}");
    let b = Command::new(BIN)
        .arg("best")
        .arg(tmp.path().join("run"))
        .output()
        .unwrap();
    assert_code(&b, 0);
    let text_out = text(&b.stdout);
    assert!(
        !text_out.contains("= \n") && !text_out.ends_with("= "),
        "{text_out}"
    );
    let v = Command::new(BIN)
        .args(["best", "--verify", "--top", "2", "--rounds", "4"])
        .arg(tmp.path().join("run"))
        .output()
        .unwrap();
    assert_code(&v, 0);
    assert!(text(&v.stdout).contains("verified: "), "{}", describe(&v));
    let run = read_json(&tmp.path().join("run/run.json"));
    assert_eq!(run["verification"]["rounds"], 4);
}
