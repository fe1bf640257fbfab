//! One run directory loaded for the reports (`moldtune report`, `curve.svg`): its run.json,
//! problem and evaluations, and the names the reports give it (problem, strategy, metric).

use std::path::{Path, PathBuf};

use crate::error::{exit, Error};
use crate::evaluate::outcome::Status;
use crate::problem::{Goal, MetricKind, Problem};
use crate::run::log::{self, Record};
use crate::run::meta;
use crate::run::meta::RunMeta;

/// A run directory of `moldtune run` or `moldtune mctree`, read.
pub struct RunDir {
    pub dir: PathBuf,
    pub meta: RunMeta,
    pub problem: Problem,
    pub records: Vec<Record>,
}

impl RunDir {
    /// Reads the run in `dir`. A directory that is not a run, or whose files cannot be read
    /// as one, is a usage error naming it.
    pub fn load(dir: &Path) -> Result<RunDir, Error> {
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
        let meta = meta::read_run_json(dir).map_err(named)?;
        let (problem, records) = super::load_run(dir).map_err(named)?;
        Ok(RunDir {
            dir: dir.to_path_buf(),
            meta,
            problem,
            records,
        })
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

    /// The default configuration's evaluation (the baseline), when there is one.
    pub fn default_record(&self) -> Option<&Record> {
        crate::run::log::default_record(&self.records)
    }

    /// The run's best as `moldtune best` reports it: the verified winner, else the search's
    /// best (the earliest of equals).
    pub fn best_record(&self) -> Option<&Record> {
        let verified = self.meta.verification.as_ref();
        let chosen = verified.and_then(|v| v.winner_eval_id);
        chosen
            .and_then(|id| self.records.iter().find(|r| r.eval_id == id))
            .filter(|r| r.m.objective.is_some())
            .or_else(|| log::best(&self.records, self.meta.goal))
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
