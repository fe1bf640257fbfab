//! run.json: what a run directory says of its run (the problem, the settings, how it ended,
//! what was transferred to it), written atomically and read back with the problem's path
//! made absolute; the names of the run directory's files.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;

pub const FORMAT_VERSION: u32 = 1;
pub const RESULTS_CSV: &str = "results.csv";
pub const RESULTS_JSON: &str = "results.json";
/// A study's journal (`moldtune serve`, `ask`, `tell`): evaluations in flight.
pub const ASKED_JSONL: &str = "asked.jsonl";
pub const RUN_JSON: &str = "run.json";
/// What `moldtune mctree` found in its file, kept in its run directory (see `mctree::kept`).
pub const MCTREE_JSON: &str = "mctree.json";

/// run.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunMeta {
    pub format_version: u32,
    pub moldtune_version: String,
    pub command_line: Vec<String>,
    pub problem: PathBuf,
    pub problem_name: String,
    pub problem_hash: String,
    pub mold_hash: String,
    pub seed: u64,
    pub learner: String,
    #[serde(default)]
    pub acquisition: crate::search::Acquisition,
    #[serde(default)]
    pub design: crate::search::Design,
    #[serde(default = "yes")]
    pub feasibility: bool,
    #[serde(default)]
    pub interleave: Option<usize>,
    pub max_evals: usize,
    pub initial: usize,
    pub kappa: f64,
    pub pool: usize,
    pub repeats: u32,
    pub reduce: crate::problem::Reduce,
    pub metric: crate::problem::MetricKind,
    pub goal: crate::problem::Goal,
    pub compile_timeout_s: f64,
    pub run_timeout_s: f64,
    pub mock: bool,
    pub compiler_version: Option<String>,
    pub cpu_model: Option<String>,
    pub started_at: String,
    pub updated_at: String,
    pub termination: Termination,
    pub evaluations: usize,
    pub best_objective: Option<f64>,
    pub best_eval_id: Option<usize>,
    /// Mold edits accepted on resume (`--accept-changed-mold`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mold_changes: Vec<MoldChange>,
    /// Builds run at once ahead of the timed runs (`--jobs`).
    #[serde(default)]
    pub jobs: Option<usize>,
    /// Evaluations run at once (`--parallel`; absent: one at a time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<usize>,
    /// With `--executor slurm`: how its jobs are submitted (absent: evaluations ran here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm: Option<crate::run::slurm::Settings>,
    /// The end-of-run verification plan (`--verify`, `--verify-rounds`).
    #[serde(default)]
    pub verify: Option<crate::run::verification::Plan>,
    /// Its verdict: the re-measured candidates, the winner, the speed-up and its interval.
    #[serde(default)]
    pub verification: Option<crate::run::verification::Verification>,
    /// The settings of the front end that made the problem (`moldtune mctree`: the file,
    /// kernel, flags and tree options), from which a resumed run rebuilds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mctree: Option<serde_json::Value>,
    /// The run given to `--warm-start`, and what of it became the prior.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_start: Option<WarmStart>,
    /// The problem's `work:` and the machine's limits at its thread count (GFLOP/s and the
    /// roofline fraction of `best`, `report` and the summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofline: Option<crate::evaluate::roofline::Roofline>,
}

impl RunMeta {
    /// The configuration the run's verification chose (its eval id), when it chose one.
    pub fn winner(&self) -> Option<usize> {
        self.verification.as_ref()?.winner_eval_id
    }

    /// The command that continues this run with a budget of `n` evaluations: `mctree` and
    /// `run` resume, a study driven by a program (`serve`, `ask`, `tell`) is served again.
    pub fn continued_by(&self, dir: &std::path::Path, n: &str) -> String {
        let verb = self.command_line.get(1).map_or("", String::as_str);
        let dir = dir.display();
        match verb {
            "serve" | "ask" | "tell" => format!("moldtune serve {dir} --max-evals {n}"),
            _ if self.mctree.is_some() => format!("moldtune mctree --resume {dir} --max-evals {n}"),
            _ => format!("moldtune run --resume {dir} --max-evals {n}"),
        }
    }
}

/// Why a run ended (run.json's `termination`; `running` while it runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    Running,
    /// The budget (`--max-evals`) is spent.
    MaxEvals,
    /// mctree: [`crate::run::settings::EXPERIMENT_CAP`] experiments per evaluation of budget.
    ExperimentCap,
    /// Every configuration of the space was evaluated.
    SpaceExhausted,
    /// The searcher found no configuration it had not tried.
    NoConfigFound,
    Interrupted,
    /// The machine failed (disk full, compiler vanished, ...).
    Environment,
    /// The reference output could not be built or run.
    ReferenceFailed,
    /// The default and the evaluations after it all failed for the same cause
    /// ([`crate::run::causes::one_failure`]): the rest of the budget would fail the same way.
    AllFailed,
}

impl Termination {
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::Running => "running",
            Termination::MaxEvals => "max_evals",
            Termination::ExperimentCap => "experiment_cap",
            Termination::SpaceExhausted => "space_exhausted",
            Termination::NoConfigFound => "no_config_found",
            Termination::Interrupted => "interrupted",
            Termination::Environment => "environment",
            Termination::ReferenceFailed => "reference_failed",
            Termination::AllFailed => "all_failed",
        }
    }

    /// Whether the search ran to its end (and the end-of-run verification may follow).
    pub fn ran_to_end(self) -> bool {
        matches!(
            self,
            Termination::MaxEvals | Termination::SpaceExhausted | Termination::ExperimentCap
        )
    }
}

impl std::fmt::Display for Termination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mold edit a resumed run accepted: evaluations from `from_eval` on used the new mold.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MoldChange {
    pub from_eval: usize,
    pub old_hash: String,
    pub new_hash: String,
}

fn yes() -> bool {
    true
}

/// What run.json records of a warm start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarmStart {
    /// The earlier run's directory, as given.
    pub from: PathBuf,
    /// Its problem's name.
    pub problem_name: String,
    /// Its evaluations, and the successes that became the prior.
    pub evaluations: usize,
    pub successes: usize,
    /// What the prior is: each success's coordinates (null: an inactive parameter) and
    /// objective. A resumed run rebuilds its prior from these, wherever the earlier run lies
    /// by then (empty in runs recorded before it was kept: those read the directory again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prior: Vec<(Vec<Option<f64>>, f64)>,
}

/// The best variant's copy in run directory `dir` (`best.c`, or the mold's suffix), if any.
pub fn best_file_in(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = (std::fs::read_dir(dir).ok()?.flatten())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().to_string());
            name.is_some_and(|n| n.starts_with("best.") && n.len() > 5)
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// Writes `bytes` to `path` atomically (temp file in the same directory + rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = path.with_extension("tmp");
    let io = |e| Error::io(format!("cannot write `{}`", path.display()), e);
    let mut f = File::create(&tmp).map_err(io)?;
    // No fsync: the rename makes the update atomic for readers and across a kill of
    // moldtune; the results log (results.csv) is the checkpoint, not these summaries.
    f.write_all(bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

pub fn write_run_json(dir: &Path, meta: &RunMeta) -> Result<(), Error> {
    write_atomic(
        &dir.join(RUN_JSON),
        serde_json::to_string_pretty(&portable(meta, dir))
            .expect("serializable")
            .as_bytes(),
    )
}

/// run.json as written: the problem's path relative to the run directory, so that the
/// files name no directory of the machine that made them and a moved tree still resumes.
pub(crate) fn portable(meta: &RunMeta, dir: &Path) -> RunMeta {
    let mut m = meta.clone();
    if let Some(rel) = relative_to(&meta.problem, dir) {
        m.problem = rel;
    }
    m
}

/// `path` relative to the run directory `dir` (both resolved first), as the run directory's
/// files record the paths they name.
pub(crate) fn relative_to(path: &Path, dir: &Path) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| absolute(dir));
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| absolute(path));
    pathdiff::diff_paths(&path, &dir)
}

/// `path` made absolute against the current directory (unchanged if that cannot be had).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
