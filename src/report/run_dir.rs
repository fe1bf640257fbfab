//! A run as the reports show it (`moldtune report`, `curve.svg`): a [`RunDir`] opened with
//! errors naming the directory, and the labels a page gives it — title, strategy, metric,
//! counts, the best so far.

use std::path::Path;

use crate::error::{exit, Error};
use crate::evaluate::outcome::Status;
use crate::problem::{Goal, MetricKind};
use crate::run::meta;

use crate::run::dir::RunDir;
use crate::run::front_ends::FrontEnds;

/// A run directory in a report: the run ([`RunDir`], which it dereferences to) and its
/// labels.
pub struct RunView(RunDir);

impl std::ops::Deref for RunView {
    type Target = RunDir;

    fn deref(&self) -> &RunDir {
        &self.0
    }
}

impl RunView {
    /// Reads the run in `dir`. A directory that is not a run, or whose files cannot be read
    /// as one, is a usage error naming it.
    pub fn load(dir: &Path, fronts: &FrontEnds) -> Result<RunView, Error> {
        if !dir.join(meta::RUN_JSON).is_file() {
            return Err(Error::usage(
                format!(
                    "`{}` is not a moldtune run directory (it holds no {})",
                    dir.display(),
                    meta::RUN_JSON
                ),
                Some("give directories that `moldtune run` or `moldtune mctree` wrote"),
            ));
        }
        let named = |e: Error| match e.code() {
            exit::USAGE => Error::usage(format!("run directory `{}`: {e}", dir.display()), None),
            _ => e,
        };
        RunDir::open(dir, fronts).map(RunView).map_err(named)
    }

    /// The search that made the run: the learner (`rf`), or `mctree` and its tree search.
    pub fn strategy(&self) -> String {
        match self
            .meta
            .mctree
            .as_ref()
            .and_then(|m| m["strategy"].as_str())
        {
            Some(s) => format!("mctree {s}"),
            None => self.meta.learner.clone(),
        }
    }

    /// "gemm-medium — rf, seed 1".
    pub fn title(&self) -> String {
        format!(
            "{} — {}, seed {}",
            self.meta.problem_name,
            self.strategy(),
            self.meta.seed
        )
    }

    /// What the objective is, with its unit: "kernel time (s)".
    pub fn metric_label(&self) -> String {
        let what = match self.meta.metric {
            MetricKind::KernelTime => "kernel time (s)",
            MetricKind::WallTime => "wall time (s)",
            MetricKind::CpuTime => "CPU time (s)",
            MetricKind::Regex => "objective (the number the metric's regex reads)",
            MetricKind::Instructions => "instructions (cachegrind)",
            MetricKind::Cycles => "estimated cycles (cachegrind)",
        };
        match self.meta.goal {
            Goal::Minimize => what.to_string(),
            Goal::Maximize => format!("{what}, higher is better"),
        }
    }

    /// How many evaluations ended with each status, in [`Status::ALL`]'s order, zeros left out.
    pub fn counts(&self) -> Vec<(Status, usize)> {
        Status::ALL
            .into_iter()
            .map(|s| (s, self.records.iter().filter(|r| r.m.status == s).count()))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// "ok 62, wrong_output 2".
    pub fn counts_text(&self) -> String {
        let parts: Vec<String> = (self.counts().iter())
            .map(|(s, n)| format!("{s} {n}"))
            .collect();
        parts.join(", ")
    }

    /// Seconds the search ran (the last evaluation's `elapsed_sec`, which a resumed run
    /// continues, so the time between an interruption and its resumption is not counted).
    pub fn wall_s(&self) -> f64 {
        self.records.last().map_or(0.0, |r| r.elapsed_sec)
    }

    /// The best objective after each evaluation (`None` before the first success).
    pub fn best_so_far(&self) -> Vec<Option<f64>> {
        let goal = self.meta.goal;
        let mut best: Option<f64> = None;
        (self.records.iter())
            .map(|r| {
                if let Some(v) = r.m.objective.filter(|_| r.m.status == Status::Ok) {
                    best = Some(best.map_or(v, |b| if goal.better(v, b) { v } else { b }));
                }
                best
            })
            .collect()
    }
}
