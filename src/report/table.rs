//! The comparison table of `moldtune report`, in the layout of the paper's Table 1: one row
//! per run with its default and best objective and the speed-up between them.
//!
//! The gain is the run's verification when it has one — the default and the best
//! re-measured interleaved, with a 95% bootstrap interval ([`crate::run::verification`]) — and
//! otherwise the search's own numbers, which the row says are not re-measured. Either is
//! oriented by the goal ([`crate::problem::objective`]): a speed-up for a time, a difference
//! in the metric's units for a score.

use serde::Serialize;

use super::format;
use crate::problem::objective::{Gain, Objective};
use crate::report::run_dir::RunView;

/// One run's row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub problem: String,
    /// The learner, or `mctree` and its tree search.
    pub strategy: String,
    pub seed: u64,
    /// The objective and its unit.
    pub metric: String,
    /// The default configuration's objective as the search measured it.
    pub default: String,
    /// The reported best's objective as the search measured it, and its evaluation.
    pub best: String,
    pub best_eval: Option<usize>,
    pub speedup: Speedup,
    pub evaluations: usize,
    /// "ok 62, wrong_output 2".
    pub outcomes: String,
    /// How long the search ran.
    pub wall: String,
    pub termination: String,
}

/// The best's gain over the default and what it rests on.
#[derive(Debug, Clone, Serialize)]
pub struct Speedup {
    /// "2.26x faster", "0.083 higher", or "–" when there is nothing to compare.
    pub ratio: String,
    /// The 95% interval, "2.22–2.33" (a ratio) or "+0.07 to +0.09", when verified.
    pub interval: Option<String>,
    /// `verified` (re-measured interleaved), `search` (the search's own numbers) or `none`.
    pub basis: &'static str,
}

/// The row of `run`.
pub fn row(run: &RunView) -> Row {
    let default = run.default_record().and_then(|r| r.m.objective);
    let best = run.best_record();
    let objective = |v: Option<f64>| v.map_or("–".into(), format::objective);
    Row {
        problem: run.meta.problem_name.clone(),
        strategy: run.strategy(),
        seed: run.meta.seed,
        metric: run.metric_label(),
        default: objective(default),
        best: objective(best.and_then(|r| r.m.objective)),
        best_eval: best.map(|r| r.eval_id),
        speedup: speedup(run, default, best.and_then(|r| r.m.objective)),
        evaluations: run.records.len(),
        outcomes: run.counts_text(),
        wall: format::duration(run.wall_s()),
        termination: run.meta.termination.to_string(),
    }
}

/// The verified gain when the run has one, else the search's.
fn speedup(run: &RunView, default: Option<f64>, best: Option<f64>) -> Speedup {
    let verified = run
        .meta
        .verification
        .as_ref()
        .and_then(|v| v.speedup.as_ref());
    if let Some(g) = verified {
        return Speedup {
            ratio: g.describe(),
            interval: Some(g.interval()),
            basis: "verified",
        };
    }
    let objective = Objective::new(run.meta.metric, run.meta.goal);
    let gain = default.zip(best).and_then(|(d, b)| objective.gain_of(b, d));
    Speedup {
        ratio: gain.as_ref().map_or("–".into(), Gain::describe),
        interval: None,
        basis: if gain.is_some() { "search" } else { "none" },
    }
}
