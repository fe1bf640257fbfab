//! The outcome of one evaluation. A failing variant is data, never an error: every status
//! below is recorded with its cause and the search goes on.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    BuildError,
    BuildTimeout,
    RunError,
    RunTimeout,
    WrongOutput,
    InvalidMetric,
    /// The environment lost the evaluation, not the variant: its Slurm job was cancelled,
    /// hit the time limit, or its node failed. Not learnt from, and it spends no budget.
    Lost,
    /// Stopped early: a value it reported while running was worse than the median of the
    /// configurations that completed (`progress:`, see [`crate::evaluate::prune`]). Not a
    /// failure of the variant: the search learns it as likely no better than the median.
    Pruned,
}

impl Status {
    pub const ALL: [Status; 9] = [
        Status::Ok,
        Status::BuildError,
        Status::BuildTimeout,
        Status::RunError,
        Status::RunTimeout,
        Status::WrongOutput,
        Status::InvalidMetric,
        Status::Lost,
        Status::Pruned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::BuildError => "build_error",
            Status::BuildTimeout => "build_timeout",
            Status::RunError => "run_error",
            Status::RunTimeout => "run_timeout",
            Status::WrongOutput => "wrong_output",
            Status::InvalidMetric => "invalid_metric",
            Status::Lost => "lost",
            Status::Pruned => "pruned",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an evaluation ended without an outcome: nothing is recorded for it and a resumed
/// run redoes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// moldtune was interrupted (SIGINT/SIGTERM).
    Interrupted,
    /// The machine failed, not the variant (see [`crate::evaluate::environment`]).
    Environment(String),
}

impl Stop {
    /// The error where there is nothing to resume (`moldtune check`): an interrupt says
    /// `what` it left undone.
    pub fn into_cancelled(self, what: &str) -> crate::error::Error {
        match self {
            Stop::Interrupted => crate::error::Error::Cancelled(what.into()),
            Stop::Environment(why) => crate::error::Error::Environment(why),
        }
    }

    /// The command's error for a stop while working in `dir`.
    pub fn into_error(self, dir: &std::path::Path) -> crate::error::Error {
        match self {
            Stop::Interrupted => crate::error::Error::Interrupted(dir.to_path_buf(), "run"),
            Stop::Environment(why) => crate::error::Error::Environment(why),
        }
    }
}

/// Why a configuration was proposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The problem's default configuration (also the baseline).
    Default,
    /// The initial design (random, valid, distinct).
    Initial,
    /// Chosen by the surrogate model's acquisition.
    Model,
    /// Random search, or a model step with too few successes to fit.
    Random,
    /// A node of mctree's tree chosen by its best-first or Monte-Carlo expansion.
    Tree,
    /// One of the best configurations of the run given to `--warm-start`, first in the
    /// initial design.
    Prior,
    /// A deliberate re-test of a parameter value that had only ever failed
    /// ([`crate::search::condemned`]).
    Explore,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::Initial => "initial",
            Source::Model => "model",
            Source::Random => "random",
            Source::Tree => "tree",
            Source::Prior => "prior",
            Source::Explore => "explore",
        }
    }
    pub fn parse(s: &str) -> Option<Source> {
        [
            Source::Default,
            Source::Initial,
            Source::Model,
            Source::Random,
            Source::Tree,
            Source::Prior,
            Source::Explore,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

/// What a watched run reported as it ran (`progress:`): (step, value), in the order printed.
pub type Curve = Vec<(f64, f64)>;

/// What evaluating one variant produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub status: Status,
    /// The reduced metric (only for `ok`).
    pub objective: Option<f64>,
    pub compile_s: f64,
    /// Wall time of all timed runs.
    pub run_s: f64,
    pub repeats: u32,
    /// (max − min) / median of the samples, when there are at least two.
    pub spread: Option<f64>,
    pub samples: Vec<f64>,
    /// Why it failed: exit code or signal and the stderr tail, the timeout, the mismatch.
    pub cause: Option<String>,
    /// Hash of the rendered source + compile and run commands + environment.
    #[serde(default)]
    pub build_hash: Option<String>,
    /// Hash of the built program + run command + environment: equal hashes, equal behaviour.
    #[serde(default)]
    pub binary_hash: Option<String>,
    /// This evaluation was not measured: it is identical to `reused_from`, whose measurement
    /// it carries.
    #[serde(default)]
    pub reused_from: Option<usize>,
    /// The exact commands of this evaluation, relative to its build directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<Commands>,
    /// The node it was built and timed on, when it ran elsewhere (`--executor slurm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Why a timed run was run twice (its first try timed out while the machine was busy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried: Option<String>,
    /// The problem's `record:` quantities, each the median over the timed runs that
    /// printed it.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub recorded: std::collections::BTreeMap<String, f64>,
    /// What the last timed run reported as it ran (`progress:`; kept in progress.jsonl,
    /// not in results.json).
    #[serde(skip)]
    pub curve: Curve,
}

/// What an evaluation ran: argv (and the environment moldtune added) of each child, with
/// the build directory shown as `.` (see `Variant::shown`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Commands {
    pub compile: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_build: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<Vec<String>>,
    pub run: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
}

impl Measurement {
    /// A success measured by one sample whose run took `y` seconds (simulations, tests).
    pub fn single(y: f64) -> Measurement {
        Measurement::ok(y, 0.0, 1)
    }

    /// A success of `repeats` samples all equal to `y`, each run taking `y` seconds.
    pub fn ok(y: f64, compile_s: f64, repeats: u32) -> Measurement {
        Measurement {
            objective: Some(y),
            run_s: y * repeats as f64,
            repeats,
            spread: (repeats > 1).then_some(0.0),
            samples: vec![y; repeats as usize],
            ..Measurement::failed(Status::Ok, compile_s, 0.0, String::new())
        }
        .without_cause()
    }

    fn without_cause(mut self) -> Measurement {
        self.cause = None;
        self
    }

    pub fn failed(status: Status, compile_s: f64, run_s: f64, cause: String) -> Measurement {
        Measurement {
            status,
            objective: None,
            compile_s,
            run_s,
            repeats: 0,
            spread: None,
            samples: vec![],
            cause: Some(cause),
            build_hash: None,
            binary_hash: None,
            reused_from: None,
            commands: None,
            node: None,
            retried: None,
            recorded: Default::default(),
            curve: Vec::new(),
        }
    }
}

/// How one step of an evaluation ended: it produced a `T`, the variant failed (a recorded
/// outcome), or the evaluation was stopped (interrupted, or the machine failed: nothing is
/// recorded).
// One per step of an evaluation (seconds of work): the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Step<T> {
    Ok(T),
    Fail(Measurement),
    Stop(Stop),
}

/// The result of asking for an evaluation.
// One per evaluation (seconds of work): the size difference between variants is irrelevant.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Evaluated {
    Done(Measurement),
    /// Interrupted, or the machine failed, mid-evaluation: nothing is recorded, a resume
    /// redoes it.
    Stopped(Stop),
}

/// A step's product, or the evaluation's result when the step failed or was stopped.
// The large Err is moved once per step of an evaluation that takes seconds: not worth a box.
#[allow(clippy::result_large_err)]
pub(crate) fn ended<T>(step: Step<T>) -> Result<T, Evaluated> {
    match step {
        Step::Ok(t) => Ok(t),
        Step::Fail(m) => Err(Evaluated::Done(m)),
        Step::Stop(s) => Err(Evaluated::Stopped(s)),
    }
}
