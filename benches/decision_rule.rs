//! The regression gate's decision rule on simulated measurements with this machine's noise
//! (the committed baselines' recorded rounds): false alarms on unchanged code and
//! detection of slowdowns, per baseline and pooled. No compiler needed.
//!
//! Two tables: the recorded noise alone, and the same with a session drift drawn from the
//! changes real checks of the unchanged tree saw (results/check/acceptance.json, written by
//! scripts/check_acceptance.py), when that file exists.
//!
//! `cargo bench --bench decision_rule` writes results/check/decision_rule.{json,md};
//! `DECISION_RULE_TRIALS` sets the trials per baseline and slowdown (default 1000).

use std::path::Path;

use moldtune::check::rule::Rule;
use moldtune::check::simulate::{session_drift, simulate, Source, Tally};

const SLOWDOWNS: [f64; 6] = [1.0, 1.05, 1.10, 1.15, 1.20, 1.30];
const SEED: u64 = 2026;

type Rows = Vec<(String, f64, Tally)>;

fn main() {
    let trials: usize = std::env::var("DECISION_RULE_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut sources = Source::of_folder(Path::new("results/baselines")).expect("results/baselines");
    assert!(!sources.is_empty(), "no baselines in results/baselines");
    let rule = Rule::default();
    let plain = table(&sources, &rule, trials);
    let mut text = markdown(&rule, trials, &plain, "the recorded noise alone");
    let mut json = vec![serde_json::json!({"drift": null, "rows": rows_json(&plain)})];
    if let Some((drift, n)) = session_drift(Path::new("results/check/acceptance.json")) {
        sources
            .iter_mut()
            .for_each(|s| s.drift = Some(drift.clone()));
        let drifting = table(&sources, &rule, trials);
        let what = format!("with a session drift drawn from the {n} changes that real checks of the unchanged tree saw (results/check/acceptance.json)");
        text += &markdown(&rule, trials, &drifting, &what);
        json.push(serde_json::json!({"drift": "acceptance.json", "rows": rows_json(&drifting)}));
    }
    let dir = Path::new("results/check");
    std::fs::create_dir_all(dir).unwrap();
    let doc =
        serde_json::json!({"rule": rule, "trials_per_cell": trials, "seed": SEED, "tables": json});
    let doc = serde_json::to_string_pretty(&doc).unwrap();
    std::fs::write(dir.join("decision_rule.json"), doc + "\n").unwrap();
    let head = "# The check's decision rule on simulated measurements\n\n";
    std::fs::write(dir.join("decision_rule.md"), format!("{head}{text}")).unwrap();
    println!("{text}");
}

fn table(sources: &[Source], rule: &Rule, trials: usize) -> Rows {
    let mut rows = Vec::new();
    for s in sources {
        for &f in &SLOWDOWNS {
            let t = simulate(s, rule, f, trials, SEED);
            eprintln!("{} ×{f:.2}: {t:?}", s.name);
            rows.push((s.name.clone(), f, t));
        }
    }
    rows
}

fn rows_json(rows: &Rows) -> Vec<serde_json::Value> {
    (rows.iter())
        .map(|(n, f, t)| serde_json::json!({"guard": n, "slowdown": f, "tally": t}))
        .collect()
}

fn markdown(rule: &Rule, trials: usize, rows: &Rows, what: &str) -> String {
    let mut s = format!(
        "## Noise: {what}\n\n\
         Produced by `cargo bench --bench decision_rule` ({trials} trials per guard and slowdown, seed {SEED}).\n\
         Each trial draws a recording (the baseline's recorded rounds) and a check session from the committed\n\
         baselines' recorded samples (results/baselines, each divided by its median); the session's tuned\n\
         times are multiplied by the slowdown. Rule: threshold {:.0}%, first decision after {} rounds, {} more\n\
         at a time, cap {}, {} bootstrap resamples (see src/check/rule.rs).\n\n\
         Cells: share of trials called a regression (mean rounds used).\n\n",
        rule.threshold * 100.0,
        rule.first,
        rule.step,
        rule.cap,
        rule.resamples
    );
    s += "| guard |";
    for f in SLOWDOWNS {
        s += &format!(" ×{f:.2} |");
    }
    s += &format!("\n|---|{}\n", "---|".repeat(SLOWDOWNS.len()));
    let mut names: Vec<&String> = rows.iter().map(|r| &r.0).collect();
    names.dedup();
    for n in names {
        s += &format!("| {n} |");
        for (_, _, t) in rows.iter().filter(|r| &r.0 == n) {
            s += &format!(
                " {:.1}% ({:.0}) |",
                100.0 * t.rate(t.regression),
                t.mean_rounds
            );
        }
        s += "\n";
    }
    s + &pooled(rows) + "\n"
}

fn pooled(rows: &Rows) -> String {
    let mut s = "| **pooled** |".to_string();
    for f in SLOWDOWNS {
        let cell: Vec<&Tally> = rows.iter().filter(|r| r.1 == f).map(|r| &r.2).collect();
        let n: usize = cell.iter().map(|t| t.trials).sum();
        let pct = |k: usize| 100.0 * k as f64 / n.max(1) as f64;
        let hit = pct(cell.iter().map(|t| t.regression).sum());
        let undecided = pct(cell.iter().map(|t| t.undecided).sum());
        s += &format!(" **{hit:.2}%** (undecided {undecided:.1}%) |");
    }
    s + "\n"
}
