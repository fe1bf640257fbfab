//! The sampling law, through the CLI with the mock evaluator: a switch's values are equally
//! likely whatever the size of the sub-space under it, whether the space is enumerated or only
//! sampled; a constraint that keeps 1 configuration in 10^4 of 10^20 does not end a run early;
//! a space is reported exhausted only when every valid configuration has been evaluated.

use crate::common::*;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A temp dir holding `p.yaml` and a mold with a marker per parameter.
struct Problem {
    tmp: tempfile::TempDir,
}

impl Problem {
    /// `yaml` is the problem file without `name`, `mold`, `compile` and `run`.
    fn new(params: &[&str], rest: &str) -> Problem {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut yaml = String::from("name: sampling\nmold: m.c\nparams:\n");
        for p in params {
            yaml.push_str(&format!("  - {p}\n"));
        }
        yaml.push_str(rest);
        yaml.push_str("compile: \"cc {{ source }} -o {{ exe }}\"\nrun: \"{{ exe }}\"\n");
        let mold: String = params
            .iter()
            .map(|p| {
                let name = p.split("name: ").nth(1).unwrap().split(',').next().unwrap();
                format!("/* #{name} */\n")
            })
            .collect();
        std::fs::write(tmp.path().join("p.yaml"), yaml).unwrap();
        std::fs::write(tmp.path().join("m.c"), mold).unwrap();
        Problem { tmp }
    }

    fn out(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// `moldtune run p.yaml --mock --quiet --out DIR extra…`; asserts exit 0.
    fn run(&self, out: &Path, extra: &[&str]) -> Csv {
        let o = moldtune("run")
            .arg(self.tmp.path().join("p.yaml"))
            .mock()
            .quiet()
            .out(out)
            .args(extra)
            .cwd(self.tmp.path())
            .env_remove("MOLDTUNE_MOCK_DELAY_MS")
            .output();
        assert_code(&o, 0);
        Csv::read(out)
    }
}

fn termination(out: &Path) -> String {
    read_json(&out.join("run.json"))["termination"]
        .as_str()
        .unwrap()
        .to_string()
}

#[track_caller]
fn assert_distinct(csv: &Csv) {
    let hashes = csv.hashes();
    let unique: HashSet<&String> = hashes.iter().collect();
    assert_eq!(
        unique.len(),
        hashes.len(),
        "a configuration was proposed twice"
    );
}

// ---------------------------------------------------------------------------------------------
// A switch over a large sub-space
// ---------------------------------------------------------------------------------------------

const TILE_SIZES: &str = "[4, 8, 16, 20, 32, 50, 64, 80, 96, 128]";

/// TILE with 1,000 tile combinations under `TILE = true` and 24 configurations of UNROLL ×
/// THREADS beside it: 48,000 raw points (enumerated), times `N`'s 100 values when `sampled`
/// (4.8 million: only ever sampled).
fn switch_problem(sampled: bool) -> Problem {
    let tile = |t: &str| {
        format!("{{name: {t}, type: ordinal, values: {TILE_SIZES}, default: 32, when: {{TILE: [true]}}}}")
    };
    let mut params = vec![
        "{name: TILE, type: boolean, default: false}".to_string(),
        "{name: UNROLL, type: ordinal, values: [1, 2, 4, 8, 16, 32], default: 1}".into(),
        "{name: THREADS, type: ordinal, values: [1, 2, 4, 8], default: 1}".into(),
        tile("T1"),
        tile("T2"),
        tile("T3"),
    ];
    if sampled {
        params.push("{name: N, type: integer, low: 1, high: 100, default: 1}".into());
    }
    let refs: Vec<&str> = params.iter().map(String::as_str).collect();
    Problem::new(&refs, "")
}

/// Over seeds 0..20, how many of the 10 initial points have the switch off.
fn untiled_initial_points(p: &Problem) -> usize {
    let mut untiled = 0;
    for seed in 0..20 {
        let out = p.out(&format!("seed-{seed}"));
        let csv = p.run(&out, &["--max-evals", "11", "--seed", &seed.to_string()]);
        let initial: Vec<&Vec<String>> = csv
            .rows
            .iter()
            .filter(|r| csv.get(r, "source") == "initial")
            .collect();
        assert_eq!(initial.len(), 10);
        untiled += initial
            .iter()
            .filter(|r| csv.get(r, "TILE") == "false")
            .count();
    }
    untiled
}

#[test]
fn a_switch_is_off_in_about_half_the_initial_points_of_an_enumerated_space() {
    // Uniform over whole configurations would give 24 in 24,024: none of 200.
    let n = untiled_initial_points(&switch_problem(false));
    eprintln!("enumerated: {n} of 200 initial points untiled");
    assert!((70..=130).contains(&n), "{n} of 200 initial points untiled");
}

#[test]
fn a_switch_is_off_in_about_half_the_initial_points_of_a_sampled_space() {
    let n = untiled_initial_points(&switch_problem(true));
    eprintln!("sampled: {n} of 200 initial points untiled");
    assert!((70..=130).contains(&n), "{n} of 200 initial points untiled");
}

// ---------------------------------------------------------------------------------------------
// Tight constraints in huge spaces
// ---------------------------------------------------------------------------------------------

/// Ten integers 1..=100 (10^20 configurations) under `constraint`.
///
/// Runs on it pass `--pool 1000`: a pool of 10,000 such draws takes ~0.2 s in a release build
/// but seconds in the debug build the tests use, and the pool size does not change whether
/// a run reaches its budget.
fn ten_integers(constraint: &str) -> Problem {
    let params: Vec<String> = (0..10)
        .map(|i| format!("{{name: P{i}, type: integer, low: 1, high: 100, default: 1}}"))
        .collect();
    let refs: Vec<&str> = params.iter().map(String::as_str).collect();
    Problem::new(&refs, &format!("constraints: [\"{constraint}\"]\n"))
}

fn values(csv: &Csv, row: &[String]) -> Vec<f64> {
    (0..10)
        .map(|i| csv.get(row, &format!("P{i}")).parse().unwrap())
        .collect()
}

#[test]
fn a_sum_constraint_keeping_one_in_ten_thousand_runs_the_whole_budget() {
    // 7.6e-5 of 10^20 have P0 + … + P9 <= 180, 1.3e-4 at <= 190: about 1e-4 at 185.
    let sum: Vec<String> = (0..10).map(|i| format!("P{i}")).collect();
    let p = ten_integers(&format!("{} <= 185", sum.join(" + ")));
    let out = p.out("run");
    let csv = p.run(
        &out,
        &["--max-evals", "40", "--seed", "1", "--pool", "1000"],
    );
    assert_eq!(csv.rows.len(), 40, "ended with {}", termination(&out));
    assert_eq!(termination(&out), "max_evals");
    assert_distinct(&csv);
    for r in &csv.rows {
        assert!(values(&csv, r).iter().sum::<f64>() <= 185.0, "{r:?}");
    }
}

#[test]
fn product_constraints_keeping_one_in_thirteen_thousand_run_the_whole_budget() {
    // Each pair: 87 of 10^4 have a product <= 25; both: 7.6e-5.
    let p = ten_integers("P0 * P1 <= 25 and P2 * P3 <= 25");
    let out = p.out("run");
    let csv = p.run(
        &out,
        &[
            "--max-evals",
            "40",
            "--seed",
            "2",
            "--pool",
            "1000",
            "--learner",
            "gbrt",
        ],
    );
    assert_eq!(csv.rows.len(), 40, "ended with {}", termination(&out));
    assert_distinct(&csv);
    for r in &csv.rows {
        let v = values(&csv, r);
        assert!(v[0] * v[1] <= 25.0 && v[2] * v[3] <= 25.0, "{r:?}");
    }
}

#[test]
fn a_constrained_sampled_space_resumes_as_if_never_stopped() {
    let sum: Vec<String> = (0..10).map(|i| format!("P{i}")).collect();
    let p = ten_integers(&format!("{} <= 185", sum.join(" + ")));
    let args = |n: &'static str| ["--max-evals", n, "--seed", "4", "--pool", "1000"];
    let whole = p.run(&p.out("whole"), &args("30"));
    let out = p.out("parts");
    p.run(&out, &args("14"));
    let o = moldtune("run")
        .quiet()
        .max_evals(30)
        .arg("--resume")
        .arg(&out)
        .cwd(p.tmp.path())
        .output();
    assert_code(&o, 0);
    assert_eq!(Csv::read(&out).hashes(), whole.hashes());
}

// ---------------------------------------------------------------------------------------------
// Exhaustion
// ---------------------------------------------------------------------------------------------

#[test]
fn a_tiny_sampled_space_ends_exhausted_once_every_valid_configuration_is_evaluated() {
    // 10^8 raw points (never enumerated), 15 valid ones.
    let params: Vec<String> = (0..4)
        .map(|i| format!("{{name: P{i}, type: integer, low: 1, high: 100, default: 1}}"))
        .collect();
    let refs: Vec<&str> = params.iter().map(String::as_str).collect();
    let p = Problem::new(&refs, "constraints: [\"P0 + P1 + P2 + P3 <= 6\"]\n");
    let out = p.out("run");
    let csv = p.run(&out, &["--max-evals", "40", "--seed", "3"]);
    assert_eq!(csv.rows.len(), 15);
    assert_distinct(&csv);
    assert_eq!(termination(&out), "space_exhausted");
}

#[test]
fn a_tiny_enumerated_space_ends_exhausted_once_every_valid_configuration_is_evaluated() {
    // P0 <= 2 (2 × 3 configurations) or P1 == "a" (4 more): 10 of 18.
    let p = Problem::new(
        &[
            "{name: P0, type: ordinal, values: [1, 2, 4, 8, 16, 32], default: 4}",
            "{name: P1, type: categorical, choices: [a, b, c], default: a}",
        ],
        "constraints: [\"P0 <= 2 or P1 == 'a'\"]\n",
    );
    let out = p.out("run");
    let csv = p.run(&out, &["--max-evals", "30", "--seed", "5"]);
    assert_eq!(csv.rows.len(), 10);
    assert_distinct(&csv);
    assert_eq!(termination(&out), "space_exhausted");
}

#[test]
fn a_forbidden_entry_with_lists_forbids_any_of_its_values() {
    // {P0: [a, b], P1: z} forbids (a, z) and (b, z): 6 − 2 = 4 configurations remain.
    let p = Problem::new(
        &[
            "{name: P0, type: categorical, choices: [a, b, c], default: c}",
            "{name: P1, type: categorical, choices: [x, z], default: x}",
        ],
        "forbidden:\n  - {P0: [a, b], P1: z}\n",
    );
    let out = p.out("run");
    let csv = p.run(&out, &["--max-evals", "10", "--verify", "0"]);
    assert_eq!(csv.rows.len(), 4, "{:?}", csv.rows);
    for r in &csv.rows {
        let (p0, p1) = (csv.get(r, "P0"), csv.get(r, "P1"));
        assert!(!(p1 == "z" && (p0 == "a" || p0 == "b")), "{r:?}");
    }
    assert_eq!(termination(&out), "space_exhausted");
}
