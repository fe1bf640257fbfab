//! The regression gate's decision rule on simulated measurements with this machine's noise
//! (the committed baselines' recorded rounds): false alarms on unchanged code and
//! detection of slowdowns, per baseline and pooled. No compiler needed.
//!
//! `cargo bench --bench decision_rule` writes results/check/decision_rule.{json,md};
//! `DECISION_RULE_TRIALS` sets the trials per baseline and slowdown (default 1000).

use std::path::Path;

use moldtune::check::rule::Rule;
use moldtune::check::simulate::{simulate, Source, Tally};

const SLOWDOWNS: [f64; 6] = [1.0, 1.05, 1.10, 1.15, 1.20, 1.30];
const SEED: u64 = 2026;

fn main() {
    let trials: usize = std::env::var("DECISION_RULE_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let sources = Source::of_folder(Path::new("results/baselines")).expect("results/baselines");
    assert!(!sources.is_empty(), "no baselines in results/baselines");
    let rule = Rule::default();
    let mut rows = Vec::new();
    for s in &sources {
        for &f in &SLOWDOWNS {
            let t = simulate(s, &rule, f, trials, SEED);
            eprintln!("{} ×{f:.2}: {t:?}", s.name);
            rows.push((s.name.clone(), f, t));
        }
    }
    write(&rule, trials, &rows);
}

fn write(rule: &Rule, trials: usize, rows: &[(String, f64, Tally)]) {
    let dir = Path::new("results/check");
    std::fs::create_dir_all(dir).unwrap();
    let json = serde_json::json!({
        "rule": rule,
        "trials_per_cell": trials,
        "seed": SEED,
        "noise": "the committed baselines' recorded rounds (results/baselines), each divided by its median",
        "rows": rows.iter().map(|(n, f, t)| serde_json::json!({"guard": n, "slowdown": f, "tally": t})).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&json).unwrap();
    std::fs::write(dir.join("decision_rule.json"), text + "\n").unwrap();
    std::fs::write(dir.join("decision_rule.md"), markdown(rule, trials, rows)).unwrap();
    println!("{}", markdown(rule, trials, rows));
}

fn markdown(rule: &Rule, trials: usize, rows: &[(String, f64, Tally)]) -> String {
    let mut s = format!(
        "# The check's decision rule on simulated measurements\n\n\
         Produced by `cargo bench --bench decision_rule` ({trials} trials per guard and slowdown, seed {SEED}).\n\
         Noise: each trial draws a recording ({{recorded rounds}}) and a check session from the committed\n\
         baselines' recorded samples (results/baselines, each divided by its median); the session's tuned\n\
         times are multiplied by the slowdown. Rule: threshold {:.0}%, first decision after {} rounds, {} more\n\
         at a time, cap {}, {} bootstrap resamples (see src/check/rule.rs).\n\n\
         Cells: share of trials called a regression (mean rounds used).\n\n",
        rule.threshold * 100.0, rule.first, rule.step, rule.cap, rule.resamples
    );
    s += "| guard |";
    for f in SLOWDOWNS {
        s += &format!(" ×{f:.2} |");
    }
    s += "\n|---|";
    s += &"---|".repeat(SLOWDOWNS.len());
    s += "\n";
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
    s += "| **pooled** |";
    for f in SLOWDOWNS {
        let cell: Vec<&Tally> = rows.iter().filter(|r| r.1 == f).map(|r| &r.2).collect();
        let (hit, n): (usize, usize) = (
            cell.iter().map(|t| t.regression).sum(),
            cell.iter().map(|t| t.trials).sum(),
        );
        let undecided: usize = cell.iter().map(|t| t.undecided).sum();
        s += &format!(
            " **{:.2}%** (undecided {:.1}%) |",
            100.0 * hit as f64 / n as f64,
            100.0 * undecided as f64 / n as f64
        );
    }
    s + "\n"
}
