//! What a run is told, resolved once: each setting comes from the command line, else from the
//! interrupted run's `run.json` (when resuming), else from the problem file's `search:`
//! section, else from the built-in default.

use std::path::PathBuf;

use crate::error::Error;
use crate::problem::{limits, Goal, MetricKind, Problem};
use crate::run::log::{MoldChange, RunMeta};
use crate::run::verdict::Plan;
use crate::search::{Acquisition, Design, Learner, Settings};

/// Everything `moldtune run` can be told on the command line (None = from the problem file,
/// or from run.json when resuming, or the built-in default).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub problem: Option<PathBuf>,
    pub learner: Option<Learner>,
    pub max_evals: Option<usize>,
    pub seed: Option<u64>,
    pub out: Option<PathBuf>,
    pub resume: bool,
    pub initial: Option<usize>,
    pub kappa: Option<f64>,
    pub acquisition: Option<Acquisition>,
    pub design: Option<Design>,
    pub no_feasibility: bool,
    pub interleave: Option<usize>,
    pub pool: Option<usize>,
    pub repeats: Option<u32>,
    pub compile_timeout: Option<f64>,
    pub run_timeout: Option<f64>,
    pub mock: bool,
    pub keep_builds: bool,
    pub accept_changed_mold: bool,
    /// Configurations re-measured at the end besides the default (0: no verification).
    pub verify_top: Option<usize>,
    pub verify_rounds: Option<usize>,
    pub quiet: bool,
    pub command_line: Vec<String>,
}

/// The search settings of one run after resolution.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub learner: Learner,
    pub max_evals: usize,
    pub seed: u64,
    pub initial: usize,
    pub kappa: f64,
    pub pool: usize,
    pub mock: bool,
    pub acquisition: Acquisition,
    pub design: Design,
    pub feasibility: bool,
    pub interleave: usize,
    pub verify: Plan,
    pub budget: Budget,
    /// The strategy's name when it is not a learner of `run` (mctree's `greedy`, `mcts`,
    /// `rf`): shown and recorded in run.json's `learner`.
    pub strategy: Option<String>,
}

impl Resolved {
    /// The name run.json records as `learner`.
    pub fn strategy_name(&self) -> &str {
        self.strategy.as_deref().unwrap_or(self.learner.as_str())
    }
}

/// What `--max-evals` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Budget {
    /// Every evaluation (`run`).
    #[default]
    Evaluations,
    /// Only evaluations that were measured and passed the check (mctree): failures and
    /// duplicates are experiments outside the budget, at most [`EXPERIMENT_CAP`] times it.
    Valid,
}

/// With [`Budget::Valid`], a run ends after this many experiments per evaluation of budget.
pub const EXPERIMENT_CAP: usize = 4;

impl Budget {
    /// Whether `r` spends budget.
    pub fn spends(self, r: &crate::run::log::Record) -> bool {
        self == Budget::Evaluations
            || (r.m.status == crate::evaluate::outcome::Status::Ok && r.m.reused_from.is_none())
    }
}

/// The run.json of the run being resumed, if any.
pub fn previous_run(opts: &RunOptions) -> Result<Option<RunMeta>, Error> {
    match (&opts.resume, &opts.out) {
        (true, Some(dir)) => Ok(Some(crate::run::log::read_run_json(dir)?)),
        (true, None) => Err(Error::usage(
            "`--resume` needs the run directory",
            Some("`moldtune run --resume DIR` or `--out DIR --resume`"),
        )),
        _ => Ok(None),
    }
}

/// Loads the problem (named on the command line or recorded in run.json) and applies the
/// repeats and timeout overrides; a resumed run must find its problem file unchanged.
pub fn load_problem(opts: &RunOptions, prev: Option<&RunMeta>) -> Result<Problem, Error> {
    let path = match (&opts.problem, prev) {
        (Some(p), _) => p.clone(),
        (None, Some(m)) => m.problem.clone(),
        (None, None) => {
            return Err(Error::usage(
                "no problem file given",
                Some("`moldtune run PROBLEM.yaml`"),
            ))
        }
    };
    let mut problem = Problem::load(&path)?;
    if let Some(r) = opts.repeats.or(prev.map(|m| m.repeats)) {
        problem.repeats = flag("--repeats", limits::repeats(r as u64))?;
    }
    if let Some(t) = opts.compile_timeout.or(prev.map(|m| m.compile_timeout_s)) {
        problem.compile_timeout_s = flag("--compile-timeout", limits::timeout(t))?;
    }
    if let Some(t) = opts.run_timeout.or(prev.map(|m| m.run_timeout_s)) {
        problem.run_timeout_s = flag("--run-timeout", limits::timeout(t))?;
    }
    Ok(problem)
}

/// A command-line value checked by [`limits`]: a usage error naming the flag.
pub fn flag<T>(name: &str, checked: Result<T, String>) -> Result<T, Error> {
    checked.map_err(|why| Error::usage(format!("`{name}` {why}"), None))
}

/// Resolves the search settings (flag, else run.json, else problem file, else default).
pub fn resolve(
    opts: &RunOptions,
    prev: Option<&RunMeta>,
    problem: &Problem,
) -> Result<Resolved, Error> {
    let ds = &problem.search;
    let learner = resolve_learner(opts, prev, problem)?;
    let pick = |flag: Option<usize>, recorded: Option<usize>, file: Option<usize>, default| {
        flag.or(recorded).or(file).unwrap_or(default)
    };
    // The problem file's values were checked when it was loaded; a flag's are checked here.
    if let Some(k) = opts.kappa {
        flag("--kappa", limits::non_negative(k))?;
    }
    if let Some(n) = opts.max_evals {
        flag("--max-evals", limits::at_least(n, 1))?;
    }
    if let Some(n) = opts.pool {
        flag("--pool", limits::at_least(n, 1))?;
    }
    let kappa = opts
        .kappa
        .or(prev.map(|m| m.kappa))
        .or(ds.kappa)
        .unwrap_or(1.96);
    check_same_problem(prev, problem)?;
    Ok(Resolved {
        learner,
        max_evals: pick(opts.max_evals, prev.map(|m| m.max_evals), ds.max_evals, 100),
        seed: opts.seed.or(prev.map(|m| m.seed)).or(ds.seed).unwrap_or(0),
        initial: pick(opts.initial, prev.map(|m| m.initial), ds.initial, 10),
        kappa,
        pool: pick(opts.pool, prev.map(|m| m.pool), ds.pool, 10_000).max(1),
        mock: opts.mock || prev.is_some_and(|m| m.mock),
        acquisition: opts
            .acquisition
            .or(prev.map(|m| m.acquisition))
            .unwrap_or_default(),
        design: opts.design.or(prev.map(|m| m.design)).unwrap_or_default(),
        feasibility: !opts.no_feasibility && prev.is_none_or(|m| m.feasibility),
        interleave: opts
            .interleave
            .or(prev.and_then(|m| m.interleave))
            .unwrap_or(Settings::default_interleave(learner)),
        verify: resolve_plan(opts, prev)?,
        budget: Budget::Evaluations,
        strategy: None,
    })
}

/// The verification plan: flags, else run.json, else the default (top 3, 10 rounds).
fn resolve_plan(opts: &RunOptions, prev: Option<&RunMeta>) -> Result<Plan, Error> {
    let recorded = prev.and_then(|m| m.verify).unwrap_or_default();
    let rounds = match opts.verify_rounds {
        Some(r) => flag("--verify-rounds", limits::at_least(r, 2))?,
        None => recorded.rounds,
    };
    Ok(Plan {
        top: opts.verify_top.unwrap_or(recorded.top),
        rounds,
    })
}

fn resolve_learner(
    opts: &RunOptions,
    prev: Option<&RunMeta>,
    problem: &Problem,
) -> Result<Learner, Error> {
    if let Some(l) = opts.learner {
        return Ok(l);
    }
    if let Some(m) = prev {
        return Learner::parse(&m.learner).ok_or_else(|| {
            Error::usage(
                format!("run.json names an unknown learner `{}`", m.learner),
                None,
            )
        });
    }
    let Some((name, span)) = &problem.search.learner else {
        return Ok(Learner::Rf);
    };
    Learner::parse(name).ok_or_else(|| Error::Config {
        span: span.clone(),
        message: format!("unknown learner `{name}` in `search.learner`"),
        hint: Some("use rf, et, gbrt, gp or random".into()),
    })
}

/// A resumed run must use the problem file it started with.
fn check_same_problem(prev: Option<&RunMeta>, problem: &Problem) -> Result<(), Error> {
    match prev {
        Some(m) if m.problem_hash != problem.hash => Err(Error::usage(
            format!(
                "the problem file `{}` changed since this run started",
                problem.path.display()
            ),
            Some("a resumed run must use the same problem; start a new run with another `--out`"),
        )),
        _ => Ok(()),
    }
}

/// A resumed run continues with the mold its rows came from, unless the user accepts the
/// change knowingly (`--accept-changed-mold`); the accepted change is recorded.
pub fn check_same_mold(
    prev: Option<&RunMeta>,
    problem: &Problem,
    accept: bool,
    evaluations: usize,
) -> Result<Vec<MoldChange>, Error> {
    let Some(m) = prev else { return Ok(vec![]) };
    let mut changes = m.mold_changes.clone();
    let now = mold_hash(problem);
    if now == m.mold_hash {
        return Ok(changes);
    }
    if !accept {
        return Err(Error::usage(
            format!(
                "the mold `{}` changed since this run started (hash {} → {now}): its {evaluations} recorded evaluations came from the old one",
                problem.mold.path.display(),
                m.mold_hash
            ),
            Some("start a new run with another `--out`, or continue knowingly with `--accept-changed-mold` (recorded in run.json)"),
        ));
    }
    changes.push(MoldChange {
        from_eval: evaluations,
        old_hash: m.mold_hash.clone(),
        new_hash: now,
    });
    Ok(changes)
}

/// The hash of the mold's text recorded in run.json.
pub fn mold_hash(problem: &Problem) -> String {
    crate::rng::hex_hash(problem.mold.text.as_bytes())
}

impl Resolved {
    /// The searcher's settings for this run.
    pub fn searcher_settings(&self, problem: &Problem) -> Settings {
        let timed = matches!(
            problem.metric.kind,
            MetricKind::KernelTime
                | MetricKind::WallTime
                | MetricKind::CpuTime
                | MetricKind::Instructions
                | MetricKind::Cycles
        );
        Settings {
            initial: self.initial,
            kappa: self.kappa,
            pool: self.pool,
            acquisition: self.acquisition,
            design: self.design,
            feasibility: self.feasibility,
            interleave: self.interleave,
            censor_timeouts: problem.metric.goal == Goal::Minimize && timed,
            ..Settings::new(self.learner, self.seed, problem.metric.goal)
        }
    }
}
