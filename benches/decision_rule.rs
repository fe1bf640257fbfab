//! The regression gate's decision rule on simulated measurements with this machine's noise
//! (the committed baselines' recorded rounds): false alarms on unchanged code and
//! detection of slowdowns, per baseline and pooled. No compiler needed.
//!
//! With results/check/acceptance.json (written by scripts/check_acceptance.py) it also
//! compares how far real checks of the unchanged tree strayed with what one session's noise
//! explains, and when they strayed further, runs the rule again with that drift added.
//!
//! `cargo bench --bench decision_rule` writes results/check/decision_rule.{json,md};
//! `DECISION_RULE_TRIALS` sets the trials per baseline and slowdown (default 1000).

use std::path::Path;

use moldtune::check::rule::Rule;
use moldtune::check::simulate::{
    between_sessions, observed_changes, simulate, Noise, Source, Tally,
};

const SLOWDOWNS: [f64; 6] = [1.0, 1.05, 1.10, 1.15, 1.20, 1.30];
const SEED: u64 = 2026;
const ACCEPTANCE: &str = "results/check/acceptance.json";

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
    if let Some(observed) = observed_changes(Path::new(ACCEPTANCE)) {
        let (text2, drift) = drift_of(&observed, &plain);
        text += &text2;
        if let Some(drift) = drift {
            sources
                .iter_mut()
                .for_each(|s| s.drift = Some(drift.clone()));
            let drifting = table(&sources, &rule, trials);
            text += &markdown(
                &rule,
                trials,
                &drifting,
                "with the drift between sessions added",
            );
            json.push(serde_json::json!({"drift": ACCEPTANCE, "rows": rows_json(&drifting)}));
        }
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

/// How far real sessions drift beyond one session's own noise, said in words, and that
/// drift (see `simulate::between_sessions`).
fn drift_of(observed: &[f64], plain: &Rows) -> (String, Option<Noise>) {
    let unchanged: Vec<f64> = (plain.iter().filter(|r| r.1 == 1.0))
        .map(|r| r.2.change_log_var)
        .collect();
    let within = unchanged.iter().sum::<f64>() / unchanged.len().max(1) as f64;
    let (seen, drift) = between_sessions(observed, within);
    let (lo, hi) = observed
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let mut s = format!(
        "## Drift between sessions\n\n\
         Real checks of the unchanged tree ({ACCEPTANCE}) saw {} changes between {lo:.3} and {hi:.3}:\n\
         log-variance {seen:.2e} (sd {:.3}). One simulated session's own estimate of the change on\n\
         unchanged code has log-variance {within:.2e} (sd {:.3}, mean over the guards). ",
        observed.len(),
        seen.sqrt(),
        within.sqrt()
    );
    s += match &drift {
        None => "The sessions drift no more than one session's noise explains, so no drift is added.\n\n",
        Some(_) => "The difference is drift between sessions; the next table adds it to every simulated session.\n\n",
    };
    (s, drift)
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
