//! What a run does before its first evaluation: its directory (made up, or claimed and
//! cleaned of what a SIGKILLed moldtune left), its evaluator, the run.json it starts with,
//! and the warnings its settings deserve.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::problem::Problem;
use crate::process;
use crate::run::log;
use crate::run::machine::{compiler_version, cpu_model, now_rfc3339};
use crate::run::meta::{self, RunMeta, Termination};
use crate::run::settings::{self, Budget, Resolved, Shared};

/// `results/<name>/<yyyymmdd-hhmmss>`, with a suffix if that exists already.
pub fn default_out(problem: &Problem) -> PathBuf {
    let stamp = now_rfc3339()
        .replace([':', '-'], "")
        .replace('T', "-")
        .trim_end_matches('Z')
        .to_string();
    let base = PathBuf::from("results").join(&problem.name);
    let mut dir = base.join(&stamp);
    let mut k = 1;
    while dir.exists() {
        k += 1;
        dir = base.join(format!("{stamp}-{k}"));
    }
    dir
}

/// Resolves the (locked) directory to an absolute path — compiles and runs happen in build
/// directories below it — refuses one that holds results unless resuming, and kills what a
/// SIGKILLed moldtune left running there.
pub(super) fn claim_dir(dir: &Path, resume: bool) -> Result<PathBuf, Error> {
    let dir = std::fs::canonicalize(dir).map_err(|e| {
        Error::usage(
            format!("cannot use `{}` as the run directory: {e}", dir.display()),
            None,
        )
    })?;
    if !resume && log::has_rows(&dir) {
        return Err(Error::usage(
            format!("`{}` already holds results", dir.display()),
            Some("continue it with `--resume`, or choose another `--out`"),
        ));
    }
    // A file of the run replaced by something else is refused now, not after evaluations
    // that could then not be written down.
    use crate::run::meta::{RESULTS_CSV, RESULTS_JSON, RUN_JSON};
    let files = [
        RUN_JSON,
        RESULTS_CSV,
        RESULTS_JSON,
        crate::evaluate::prune::PROGRESS_JSONL,
        crate::run::meta::ASKED_JSONL,
    ];
    for name in files {
        let p = dir.join(name);
        if std::fs::symlink_metadata(&p).is_ok_and(|m| !m.is_file()) {
            return Err(Error::usage(
                format!("`{}` is not a file: the run directory is damaged", p.display()),
                Some("move it away (a finished run's results.json is written again at the end), or start another run with `--out`"),
            ));
        }
    }
    // A previous moldtune killed with SIGKILL cannot have killed its child's group itself:
    // finish that job now (only processes of that group that work inside this directory).
    process::reap_stale_group(&dir);
    process::track_children_in(&dir);
    Ok(dir)
}

/// The line a run opens with: the problem, the search, how much is done, where it runs and
/// where its results go.
pub(super) fn opening_line(problem: &Problem, s: &Resolved, spent: usize, dir: &Path) -> String {
    let what = match s.budget {
        Budget::Evaluations => "evaluations",
        Budget::Valid => "valid evaluations",
    };
    let by = if s.strategy.is_some() {
        "strategy"
    } else {
        "learner"
    };
    format!(
        "moldtune: {} — {by} {}, seed {}, {spent} of {} {what} done{}, results in {}",
        problem.name,
        s.strategy_name(),
        s.seed,
        s.max_evals,
        s.executor.describe(),
        dir.display()
    )
}

/// Fewer than this many model-chosen evaluations make a learner's result mostly its
/// initial design.
const MIN_MODEL_EVALS: usize = 10;

/// A warning when the budget leaves the model fewer than [`MIN_MODEL_EVALS`] evaluations
/// after the default and the initial design (a learner comparison there compares random
/// designs).
pub(super) fn budget_warning(s: &Resolved) -> Option<String> {
    let model = s.max_evals.saturating_sub(1 + s.initial);
    let learns = s.learner != crate::search::Learner::Random;
    (learns && model < MIN_MODEL_EVALS).then(|| {
        format!(
            "warning: `--max-evals {}` leaves the {} model {model} evaluations after the default and {} initial points; \
             give it at least {} (or fewer `--initial`) for the learner to matter",
            s.max_evals,
            s.learner.as_str(),
            s.initial,
            1 + s.initial + MIN_MODEL_EVALS
        )
    })
}

/// A warning when the problem asks for pruning where it is not applied: on a Slurm farm
/// each evaluation runs on a node of its own, without the other runs' progress.
pub(super) fn pruning_warning(problem: &Problem, s: &Resolved) -> Option<String> {
    (problem.progress.is_some() && !s.executor.runs_here()).then(|| {
        "warning: `progress:` is not applied with `--executor slurm`: every evaluation runs to its end (its progress is still recorded)".to_string()
    })
}

/// run.json of a run that is starting (or resuming: its start time is kept).
pub(super) fn new_meta(
    problem: &Problem,
    opts: &Shared,
    prev: Option<&RunMeta>,
    s: &Resolved,
    evaluations: usize,
) -> RunMeta {
    RunMeta {
        format_version: meta::FORMAT_VERSION,
        moldtune_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: opts.command_line.clone(),
        problem: problem.path.clone(),
        problem_name: problem.name.clone(),
        problem_hash: problem.hash.clone(),
        mold_hash: settings::mold_hash(problem),
        seed: s.seed,
        learner: s.strategy_name().into(),
        acquisition: s.acquisition,
        design: s.design,
        feasibility: s.feasibility,
        interleave: Some(s.interleave),
        max_evals: s.max_evals,
        initial: s.initial,
        kappa: s.kappa,
        pool: s.pool,
        repeats: problem.repeats,
        reduce: problem.reduce,
        metric: problem.metric.kind,
        goal: problem.metric.goal,
        compile_timeout_s: problem.compile_timeout_s,
        run_timeout_s: problem.run_timeout_s,
        mock: s.mock,
        compiler_version: (!s.mock).then(|| compiler_version(problem)).flatten(),
        cpu_model: cpu_model(),
        started_at: prev.map_or_else(now_rfc3339, |m| m.started_at.clone()),
        updated_at: now_rfc3339(),
        termination: Termination::Running,
        evaluations,
        best_objective: None,
        best_eval_id: None,
        mold_changes: vec![],
        verify: Some(s.verify),
        jobs: Some(s.jobs),
        parallel: s.executor.parallel(),
        slurm: s.executor.slurm().cloned(),
        verification: None,
        mctree: None,
        warm_start: None,
        roofline: match prev.and_then(|m| m.roofline) {
            Some(r) if Some(r.work) == problem.work => Some(r),
            _ => crate::run::machine::roofline(problem, s.mock),
        },
    }
}

/// The run directory was deleted (or emptied) under the run, while `what`: nothing is left to
/// resume. A variant that removes files outside its build directory does this.
pub(super) fn run_dir_gone(dir: &Path, what: &str) -> Error {
    Error::usage(
        format!("the run directory `{}` was deleted (or emptied) while {what}: its results are lost", dir.display()),
        Some("a variant that removes files outside its own build directory does this; fix it, and start a new run with another `--out`"),
    )
}
