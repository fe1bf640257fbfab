//! `moldtune importance` from the command line: the numbers behind the ranking (evaluations
//! used, out-of-bag R²), "not enough data" instead of a ranking when they are too weak, and
//! a switch that gets the effect of the conditional parameters it turns on.
//!
//! Run directories come from mock runs (no compiler); where a test needs an objective with a
//! known structure, it rewrites the `objective` column of the run's results.csv.

use crate::common::*;

use std::path::{Path, PathBuf};

/// A boolean switch `TILE` with two tile sizes active only when it is on. The tile sizes are
/// listed first, so a tree split on "tile size inactive?" ties with the split on `TILE` and
/// wins: without crediting, the switch would get nothing.
const SWITCH_YAML: &str = r#"name: switch
mold: m.c
params:
  - name: T1
    type: integer
    low: 1
    high: 64
    when: {TILE: [true]}
  - name: T2
    type: ordinal
    values: [4, 8, 16, 32, 64]
    when: {TILE: [true]}
  - name: TILE
    type: boolean
    default: false
  - name: OPT
    type: categorical
    choices: ["-O1", "-O2", "-O3"]
compile: "cc {{ OPT }} {{ source }} -o {{ exe }}"
run: "{{ exe }}"
"#;

const SWITCH_MOLD: &str = "int t1 = #T1 + 0;\nint t2 = #T2 + 0;\nint tile = #TILE;\n";

/// A mock run of `yaml` with `evals` evaluations in a fresh temp dir; returns the dir (kept
/// alive) and the run directory.
fn mock_run(yaml: &str, mold: &str, evals: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("p.yaml"), yaml).unwrap();
    std::fs::write(tmp.path().join("m.c"), mold).unwrap();
    let out = tmp.path().join("run");
    let o = moldtune("run")
        .arg(tmp.path().join("p.yaml"))
        .mock()
        .quiet()
        .seed(2)
        .max_evals(evals)
        .out(&out)
        .env_remove("MOLDTUNE_MOCK_DELAY_MS")
        .cwd(tmp.path())
        .output();
    assert_code(&o, 0);
    (tmp, out)
}

/// `moldtune importance DIR [--json]`, which must exit 0.
fn importance(dir: &Path, json: bool) -> std::process::Output {
    let mut c = moldtune("importance").arg(dir);
    if json {
        c = c.json();
    }
    let o = c.output();
    assert_code(&o, 0);
    o
}

fn importance_json(dir: &Path) -> serde_json::Value {
    let o = importance(dir, true);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}\n{}", describe(&o)))
}

/// One results.csv row, its cells read and written by column name.
struct Row<'a> {
    csv: &'a Csv,
    cells: Vec<String>,
}

impl Row<'_> {
    fn get(&self, name: &str) -> &str {
        &self.cells[self.csv.col(name)]
    }
    fn set(&mut self, name: &str, value: impl ToString) {
        let i = self.csv.col(name);
        self.cells[i] = value.to_string();
    }
    /// A deterministic number in [0, 1) from the row's eval_id and `salt` (reproducible
    /// "noise").
    fn jitter(&self, salt: u64) -> f64 {
        let id: u64 = self.get("eval_id").parse().unwrap();
        let h = (id + 1)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(salt)
            .wrapping_mul(0xbf58_476d_1ce4_e5b9);
        (h >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Rewrites every `ok` row of results.csv with `edit` (configuration cells and objective
/// alike), keeping the other rows: a synthetic table on a real run directory.
fn rewrite_ok_rows(dir: &Path, edit: impl Fn(&mut Row)) {
    let csv = Csv::read(dir);
    // Edited values get their config_hash recomputed: moldtune refuses rows whose hash
    // does not match their values.
    let meta = read_json(&dir.join("run.json"));
    let problem =
        moldtune::problem::Problem::load(&dir.join(meta["problem"].as_str().unwrap())).unwrap();
    let np = problem.space.params.len();
    let mut w = csv::Writer::from_path(dir.join("results.csv")).unwrap();
    w.write_record(&csv.header).unwrap();
    for cells in &csv.rows {
        let mut row = Row {
            csv: &csv,
            cells: cells.clone(),
        };
        if row.get("status") == "ok" {
            edit(&mut row);
            let values: Vec<&str> = row.cells[..np].iter().map(String::as_str).collect();
            let config = problem.space.parse_cells(&values).unwrap();
            row.set("config_hash", problem.space.hash(&config));
        }
        w.write_record(&row.cells).unwrap();
    }
    w.flush().unwrap();
}

fn ok_rows(dir: &Path) -> usize {
    Csv::read(dir)
        .column("status")
        .iter()
        .filter(|s| *s == "ok")
        .count()
}

#[test]
fn text_reports_evaluations_used_oob_r2_and_the_method() {
    let (_tmp, run) = mock_run(TOY_YAML, TOY_MOLD, 40);
    let ok = ok_rows(&run);
    let out = text(&importance(&run, false).stdout);
    let lines: Vec<&str> = out.lines().collect();
    let head = format!(
        "parameter importance: {ok} of 40 evaluations used (the successes), out-of-bag R² 0."
    );
    assert!(lines[0].starts_with(&head), "{out}");
    assert!(
        lines[1].contains("100-tree random forest (Breiman 2001) on log objective;"),
        "{out}"
    );
    assert!(
        lines[2].contains("credited to the parent that switches it"),
        "{out}"
    );
    let ranked: Vec<&str> = lines[3..]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let mut sorted = ranked.clone();
    sorted.sort();
    assert_eq!(sorted, ["P0", "P1", "P2"], "{out}");
}

#[test]
fn json_carries_the_same_numbers_and_the_ranking() {
    let (_tmp, run) = mock_run(TOY_YAML, TOY_MOLD, 40);
    let v = importance_json(&run);
    assert_eq!(v["evaluations"], 40);
    assert_eq!(v["successes"].as_u64().unwrap() as usize, ok_rows(&run));
    assert_eq!(v["target"], "log objective");
    let r2 = v["oob_r2"].as_f64().unwrap();
    assert!(r2 >= v["min_oob_r2"].as_f64().unwrap() && r2 <= 1.0, "{v}");
    assert_eq!(v["min_successes"], 10);
    assert_eq!(v["enough_data"], true);
    assert!(v["reason"].is_null(), "{v}");
    assert!(v["method"].as_str().unwrap().contains("Breiman 2001"));
    let rows = v["ranking"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let total: f64 = rows.iter().map(|r| r["importance"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-9, "{v}");
    for r in rows {
        assert_eq!(r["from_children"], 0.0, "{v}");
        assert_eq!(r["children"], serde_json::json!([]), "{v}");
    }
}

#[test]
fn too_few_successes_give_no_ranking_and_exit_0() {
    let (_tmp, run) = mock_run(TOY_YAML, TOY_MOLD, 6);
    let ok = ok_rows(&run);
    let out = text(&importance(&run, false).stdout);
    let head = format!("not enough data to rank parameters: {ok} of 6 evaluations used (the successes), out-of-bag R² -");
    assert!(out.starts_with(&head), "{out}");
    assert!(out.contains("at least 10 are needed"), "{out}");
    assert!(!out.contains('%'), "no ranking: {out}");
    let v = importance_json(&run);
    assert_eq!(v["enough_data"], false);
    assert!(v["ranking"].is_null() && v["oob_r2"].is_null(), "{v}");
    assert!(v["reason"].as_str().unwrap().contains("at least 10"), "{v}");
}

#[test]
fn noise_gives_a_low_oob_r2_and_no_ranking() {
    let (_tmp, run) = mock_run(TOY_YAML, TOY_MOLD, 50);
    rewrite_ok_rows(&run, |r| r.set("objective", 1.0 + r.jitter(0)));
    let v = importance_json(&run);
    let r2 = v["oob_r2"].as_f64().unwrap();
    assert!(r2 < 0.1, "{v}");
    assert_eq!(v["enough_data"], false);
    assert!(v["ranking"].is_null(), "{v}");
    let out = text(&importance(&run, false).stdout);
    assert!(
        out.starts_with("not enough data to rank parameters: "),
        "{out}"
    );
    assert!(out.contains(&format!("out-of-bag R² {r2:.2}")), "{out}");
    assert!(out.contains("hardly better than their mean"), "{out}");
}

#[test]
fn a_constant_objective_gives_no_ranking() {
    let (_tmp, run) = mock_run(TOY_YAML, TOY_MOLD, 20);
    rewrite_ok_rows(&run, |r| r.set("objective", 0.5));
    let v = importance_json(&run);
    assert!(v["oob_r2"].is_null() && v["ranking"].is_null(), "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("the same in every"),
        "{v}"
    );
}

#[test]
fn a_switch_that_alone_matters_ranks_first() {
    // The search itself keeps TILE on almost always (the mock objective punishes inactive
    // tile sizes), so the table is made synthetic: TILE on in every other success, random
    // tile sizes when on, and an objective that only TILE's on/off decides (up to 1% noise).
    let (_tmp, run) = mock_run(SWITCH_YAML, SWITCH_MOLD, 60);
    switch_table(&run, |id| id % 2 == 0);
    let v = importance_json(&run);
    assert_eq!(v["enough_data"], true, "{v}");
    let top = &v["ranking"][0];
    assert_eq!(top["parameter"], "TILE", "{v}");
    assert!(top["importance"].as_f64().unwrap() > 0.9, "{v}");
    assert!(top["from_children"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(top["children"], serde_json::json!(["T1", "T2"]), "{v}");
    let out = text(&importance(&run, false).stdout);
    let tile = out
        .lines()
        .find(|l| l.trim_start().starts_with("TILE"))
        .unwrap();
    assert!(tile.contains("switching T1, T2"), "{out}");
}

/// Rewrites the run's successes into a synthetic table: TILE on where `on(eval_id)`, random
/// tile sizes when on, and an objective that only TILE's on/off decides (up to 1% noise).
fn switch_table(run: &Path, on: impl Fn(u64) -> bool) {
    rewrite_ok_rows(run, |r| {
        let on = on(r.get("eval_id").parse::<u64>().unwrap());
        let (t1, t2) = (
            1 + (r.jitter(1) * 64.0) as u64,
            4 << (r.jitter(2) * 5.0) as u32,
        );
        r.set("TILE", on);
        r.set("T1", if on { t1.to_string() } else { String::new() });
        r.set("T2", if on { t2.to_string() } else { String::new() });
        let base = if on { 1.0 } else { 2.0 };
        r.set("objective", base * (1.0 + 0.01 * r.jitter(3)));
    });
}

#[test]
fn a_switch_the_search_never_turned_off_is_not_enough_data() {
    // A table where TILE is off only in the default configuration: an objective decided by
    // TILE alone cannot be learnt from it, and the report says so.
    let (_tmp, run) = mock_run(SWITCH_YAML, SWITCH_MOLD, 60);
    switch_table(&run, |id| id != 0);
    let v = importance_json(&run);
    assert_eq!(v["enough_data"], false, "{v}");
    assert!(v["oob_r2"].as_f64().unwrap() < 0.1, "{v}");
}
