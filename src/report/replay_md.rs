//! The replay's report: one Markdown section per table — every variant's best-so-far at the
//! checkpoints, its evaluations to 5% with their interval, and rf with and without the
//! feasibility model seed by seed.

use crate::report::replay::{describe, LearnerReport, Protocol, SeedOutcome, Table, Variant};
use crate::search::settings::{Mechanism, Without};
use crate::search::Learner;

/// Markdown section for one table: every variant's best-so-far at the checkpoints and its
/// evaluations to 5%.
pub fn report_table(table: &Table, reports: &[LearnerReport], pr: &Protocol) -> String {
    let (seeds, budget) = (pr.seeds, pr.budget);
    let checkpoints = [10, 25, 50, 100, 200];
    let mut out = format!(
        "## {}\n\n{}; {}; {seeds} seeds, budget {budget} evaluations (the default configuration, {} random initial points, then the learner; acquisition {:?}, kappa {}). Simulated seconds: each evaluation's recorded compile_s + run_s (a failure what it cost) plus the learner's own ask and tell, timed in this replay (a synthetic table records no cost: there they are the learner's alone). Evaluations and seconds to 5% are lower medians over seeds (the 10th smallest of 20): a seed that never got there counts as never, so when exactly half got there both say when that half did. The last column is the seed-to-seed spread: a 95% bootstrap interval of that median (a difference of medians inside it is not told apart by these seeds).\n\n",
        table.name,
        describe(table),
        pr.rules.describe(),
        pr.initial,
        pr.acquisition,
        pr.kappa
    );
    let cps: Vec<usize> = checkpoints
        .iter()
        .copied()
        .filter(|&k| k <= budget)
        .collect();
    out.push_str(&table_header(&cps));
    for r in reports {
        out.push_str(&table_row(r, &cps, budget));
    }
    out.push('\n');
    if let Some(pairs) = feasibility_pairs(reports) {
        out.push_str(&pairs);
    }
    out
}

/// Seed by seed, rf with the feasibility model against rf without it (a seed draws the same
/// initial design and random steps in both), when both were replayed: a paragraph.
fn feasibility_pairs(reports: &[LearnerReport]) -> Option<String> {
    let no_classifier = Without::default().and(Mechanism::Classifier);
    let find = |w: Without| {
        let label = Variant::without(Learner::Rf, w).label();
        reports.iter().find(|r| r.label == label)
    };
    let (with, without) = (find(Without::default())?, find(no_classifier)?);
    let signs = |field: fn(&SeedOutcome) -> f64| {
        let (mut fewer, mut more, mut same) = (0, 0, 0);
        for (a, b) in with.per_seed.iter().zip(&without.per_seed) {
            match field(a).total_cmp(&field(b)) {
                std::cmp::Ordering::Less => fewer += 1,
                std::cmp::Ordering::Greater => more += 1,
                std::cmp::Ordering::Equal => same += 1,
            }
        }
        format!("fewer in {fewer} seeds, more in {more}, as many in {same}")
    };
    Some(format!(
        "Seed by seed, rf with the feasibility model against rf without it: evaluations to 5% {}; failed evaluations {}.\n\n",
        signs(|p| p.evals),
        signs(|p| p.failures)
    ))
}

/// The header of the learners' table, with a column per checkpoint in `cps`.
fn table_header(cps: &[usize]) -> String {
    let mut out = String::from("| learner |");
    for k in cps {
        out.push_str(&format!(" best@{k} median [q25, q75] |"));
    }
    out.push_str(" evals to within 5% of optimum (median) | simulated s to 5% (median) | seeds within 5% | failed evals (median) | evals to 5%: 95% interval of the median | answered by another row (median) | repeated rows (median) |\n|---|");
    for _ in cps {
        out.push_str("---|");
    }
    out.push_str("---|---|---|---|---|---|---|\n");
    out
}

/// One learner's row of the table.
fn table_row(r: &LearnerReport, cps: &[usize], budget: usize) -> String {
    let mut out = format!("| {} |", r.label);
    for (_, q1, med, q3) in cps.iter().filter_map(|&k| r.curve.get(k - 1)) {
        out.push_str(&format!(" {med:.5} [{q1:.5}, {q3:.5}] |"));
    }
    let evals = |n: f64| match n > budget as f64 {
        true => format!("> {budget}"),
        false => format!("{n:.0}"),
    };
    let to = evals(r.to_5pct);
    let interval = r.to_5pct_interval.map_or("–".into(), |(lo, hi)| {
        format!("[{}, {}]", evals(lo), evals(hi))
    });
    let secs = match r.seconds_to_5pct.is_finite() {
        true => crate::number::sig(r.seconds_to_5pct, 3),
        false => "–".into(),
    };
    out.push_str(&format!(
        " {to} | {secs} | {}/{} | {:.0} | {interval} | {:.0} | {:.0} |\n",
        r.reached, r.seeds, r.failures_median, r.outside_median, r.repeats_median
    ));
    out
}
