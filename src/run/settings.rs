//! What a run is told, resolved once: each setting comes from the command line, else from the
//! interrupted run's `run.json` (when resuming), else from the problem file's `search:`
//! section, else from the built-in default.

use std::path::PathBuf;

use crate::error::Error;
use crate::problem::{limits, Goal, Problem};
use crate::run::executor_kind::ExecutorKind;
use crate::run::limits::{flag, Limits};
use crate::run::meta::{MoldChange, RunMeta};
use crate::run::slurm::{self, ExecutorFlag};
use crate::run::verification::Plan;
use crate::search::{Acquisition, Design, Learner, Settings};

/// The flags `moldtune run` and `moldtune mctree` share, declared once and flattened into
/// both (None = from run.json when resuming, else the problem's or the built-in default).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Shared {
    /// Evaluations to spend [default: 100 for run, every evaluation counted; 60 for mctree,
    /// valid evaluations only, failures and duplicates counted apart].
    #[arg(long)]
    pub max_evals: Option<usize>,
    /// Seed of every random choice [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run directory [default: results/<name>/<timestamp>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue the run in `--out DIR` (or the DIR given here) after an interruption.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub resume: Option<Option<PathBuf>>,
    /// Timed runs per variant (overrides the problem's `repeats`) [default: 3].
    #[arg(long)]
    pub repeats: Option<u32>,
    /// Compile timeout in seconds (overrides `timeouts.compile_s`) [default: 120].
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub compile_timeout: Option<f64>,
    /// Run timeout in seconds (overrides `timeouts.run_s`) [default for mctree: 30x the
    /// untransformed program, 5 s to 10 min].
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub run_timeout: Option<f64>,
    /// At the end, re-measure the default and the best N interleaved and decide the winner
    /// and its speed-up (with a 95% interval) on those numbers; 0 turns it off [default: 3].
    #[arg(long = "verify", value_name = "N")]
    pub verify_top: Option<usize>,
    /// Interleaved rounds of that re-measurement [default: 10].
    #[arg(long, value_name = "R")]
    pub verify_rounds: Option<usize>,
    #[command(flatten)]
    pub jobs: Jobs,
    /// Keep each variant's build directory under DIR/work.
    #[arg(long)]
    pub keep_builds: bool,
    /// With `--resume`: continue although the mold (or C file) changed since the run started
    /// (the change and the evaluation it happened at are recorded in run.json).
    #[arg(long, requires = "resume")]
    pub accept_changed_mold: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Machine-readable output: the summary as JSON (mctree --list: the loop tree).
    #[arg(long)]
    pub json: bool,
    /// Testing: replace compile+run by a deterministic synthetic objective.
    #[arg(long, hide = true)]
    pub mock: bool,
    /// The command line as given (recorded in run.json).
    #[arg(skip)]
    pub command_line: Vec<String>,
}

impl Shared {
    /// Whether `--resume` was given.
    pub fn resuming(&self) -> bool {
        self.resume.is_some()
    }

    /// The run directory: `--resume DIR`'s, else `--out`'s.
    pub fn run_dir(&self) -> Option<PathBuf> {
        match &self.resume {
            Some(Some(d)) => Some(d.clone()),
            _ => self.out.clone(),
        }
    }
}

/// Everything `moldtune run` can be told on the command line.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RunOptions {
    /// The problem file (YAML). Optional with `--resume DIR`.
    pub problem: Option<PathBuf>,
    /// Search strategy [default: gp, or the problem's `search.learner`].
    #[arg(long, value_enum)]
    pub learner: Option<Learner>,
    /// Number of random initial configurations after the default one [default: 10].
    #[arg(long)]
    pub initial: Option<usize>,
    /// Exploration weight of LCB = mean − kappa·std [default: 1.96].
    #[arg(long, allow_negative_numbers = true)]
    pub kappa: Option<f64>,
    /// Acquisition function [default: lcb].
    #[arg(long = "acq", value_enum)]
    pub acquisition: Option<Acquisition>,
    /// Initial design [default: random].
    #[arg(long = "initial-design", value_enum)]
    pub design: Option<Design>,
    /// Do not learn which configurations fail (failures then get the worst successful value).
    #[arg(long)]
    pub no_feasibility: bool,
    /// Start from what an earlier run of the same space found (another dataset size or
    /// machine): its best configurations are tried first and its results, rescaled, guide
    /// the model until this run's own outweigh them. Nothing of it is copied into this run's
    /// results.
    #[arg(long, value_name = "DIR")]
    pub warm_start: Option<PathBuf>,
    /// Every N-th proposal after the initial design is random; 0 never [default: 3 for
    /// rf/et/gbrt, 0 for gp and auto].
    #[arg(long, value_name = "N")]
    pub interleave: Option<usize>,
    /// Candidate pool size per model step [default: 10000].
    #[arg(long)]
    pub pool: Option<usize>,
    /// Run N evaluations at once, each built, checked and run on its own (for a metric that
    /// is not a time: an accuracy, a score, a count; refused for a time, which programs
    /// running together would distort) [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub parallel: Option<u16>,
    #[command(flatten)]
    pub executor: ExecutorFlags,
    #[command(flatten)]
    pub shared: Shared,
}

/// Where the evaluations run, declared once for `run` and `mctree`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ExecutorFlags {
    /// Where evaluations run: `local` (this machine), or `slurm` (each evaluation one Slurm
    /// job with a node to itself, `--workers` at once) [default: local].
    #[arg(long, value_enum)]
    pub executor: Option<ExecutorFlag>,
    /// With `--executor slurm`: evaluations in flight at once [default: 2].
    #[arg(long, value_name = "K")]
    pub workers: Option<usize>,
    /// With `--executor slurm`: the partition the jobs go to [default: Slurm's].
    #[arg(long)]
    pub partition: Option<String>,
    /// With `--executor slurm`: each job's time limit, as Slurm writes it (`10:00`,
    /// `1-00:00:00`) [default: the partition's].
    #[arg(long, value_name = "T")]
    pub time: Option<String>,
    /// With `--executor slurm`: the account the jobs are charged to.
    #[arg(long)]
    pub account: Option<String>,
}

/// The settings `run` and `mctree` resolve alike: each from its flag, else run.json, else
/// the given fallback (the problem's or the mctree config's, else the default).
#[derive(Debug, Clone, Copy)]
pub struct Common {
    pub max_evals: usize,
    pub seed: u64,
    pub mock: bool,
    pub verify: Plan,
    pub jobs: usize,
}

/// Resolves [`Common`]; a flag's value is checked here (a file's when it was loaded).
pub fn common(
    o: &Shared,
    prev: Option<&RunMeta>,
    max_evals: usize,
    seed: u64,
    file_plan: FilePlan,
) -> Result<Common, Error> {
    if let Some(n) = o.max_evals {
        flag("--max-evals", limits::at_least(n, 1))?;
    }
    Ok(Common {
        jobs: o.jobs.or(prev.and_then(|m| m.jobs)),
        max_evals: (o.max_evals.or(prev.map(|m| m.max_evals))).unwrap_or(max_evals),
        seed: o.seed.or(prev.map(|m| m.seed)).unwrap_or(seed),
        mock: o.mock || prev.is_some_and(|m| m.mock),
        verify: resolve_plan(o, prev, file_plan)?,
    })
}

/// `--jobs N`, declared once for every command that builds variants (`run`, `mctree`,
/// `check`, `baseline`).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Jobs {
    /// Builds (and check builds) run at once ahead of the timed runs, which stay exclusive:
    /// builds in flight are held stopped while a variant is timed [default: the number of
    /// cores, at most 4].
    #[arg(long = "jobs", value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub n: Option<u16>,
}

impl Jobs {
    /// The flag, else what the run recorded, else [`default_jobs`].
    pub fn or(self, recorded: Option<usize>) -> usize {
        (self.n.map(usize::from).or(recorded)).unwrap_or_else(default_jobs)
    }
}

/// `--jobs` unless told: the number of cores, at most [`MAX_DEFAULT_JOBS`].
pub fn default_jobs() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    cores.min(MAX_DEFAULT_JOBS)
}

/// More builds at once than this need asking for (`--jobs`): memory, and the fan of a laptop.
pub const MAX_DEFAULT_JOBS: usize = 4;

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
    /// Builds at once (`--jobs`).
    pub jobs: usize,
    /// Where the evaluations run: here, `--parallel` workers, or Slurm jobs.
    pub executor: ExecutorKind,
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
        use crate::evaluate::outcome::Status;
        match self {
            Budget::Evaluations => r.m.status != Status::Lost,
            Budget::Valid => r.m.status == Status::Ok && r.m.reused_from.is_none(),
        }
    }
}

/// The run.json of the run being resumed, if any.
pub fn previous_run(opts: &Shared) -> Result<Option<RunMeta>, Error> {
    match (opts.resuming(), opts.run_dir()) {
        (true, Some(dir)) => Ok(Some(crate::run::dir::read_meta(&dir)?)),
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
    let o = &opts.shared;
    let limits = Limits {
        repeats: o.repeats.or(prev.map(|m| m.repeats)),
        compile_timeout: o.compile_timeout.or(prev.map(|m| m.compile_timeout_s)),
        run_timeout: o.run_timeout.or(prev.map(|m| m.run_timeout_s)),
    };
    limits.apply(&mut problem)?;
    problem.run_timeout_given |= o.run_timeout.is_some();
    Ok(problem)
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
    if let Some(n) = opts.pool {
        flag("--pool", limits::at_least(n, 1))?;
    }
    let kappa = (opts.kappa.or(prev.map(|m| m.kappa)).or(ds.kappa)).unwrap_or(1.96);
    guard_same_problem(prev, problem)?;
    let slurm_flag = opts.executor.executor == Some(ExecutorFlag::Slurm);
    let c = common(
        &opts.shared,
        prev,
        ds.max_evals.unwrap_or(100),
        ds.seed.unwrap_or(0),
        (ds.verify, ds.verify_rounds),
    )?;
    Ok(Resolved {
        learner,
        max_evals: c.max_evals,
        seed: c.seed,
        initial: pick(opts.initial, prev.map(|m| m.initial), ds.initial, 10),
        kappa,
        pool: pick(opts.pool, prev.map(|m| m.pool), ds.pool, 10_000).max(1),
        mock: c.mock,
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
        verify: c.verify,
        jobs: c.jobs,
        executor: ExecutorKind::of(
            crate::run::parallel::resolve(opts.parallel, prev, slurm_flag, problem)?,
            resolve_executor(&opts.executor, prev, Some(problem))?,
        ),
        budget: Budget::Evaluations,
        strategy: None,
    })
}

/// The Slurm settings with `--executor slurm` (or a resumed Slurm run, or the problem's
/// `search.executor: slurm`): flags, else run.json's, else the problem's `slurm:` section
/// (`file`; mctree has none), else the defaults; Slurm's flags without it are refused.
pub fn resolve_executor(
    opts: &ExecutorFlags,
    prev: Option<&RunMeta>,
    file: Option<&Problem>,
) -> Result<Option<slurm::Settings>, Error> {
    let recorded = prev.and_then(|m| m.slurm.clone());
    let kind = match (opts.executor, prev) {
        (Some(k), _) => k,
        (None, Some(_)) if recorded.is_some() => ExecutorFlag::Slurm,
        (None, Some(_)) => ExecutorFlag::Local,
        (None, None) => file.map_or(Ok(ExecutorFlag::Local), file_executor)?,
    };
    let given = [
        ("--workers", opts.workers.is_some()),
        ("--partition", opts.partition.is_some()),
        ("--time", opts.time.is_some()),
        ("--account", opts.account.is_some()),
    ];
    if kind == ExecutorFlag::Local {
        return match given.iter().find(|g| g.1) {
            Some((name, _)) => Err(Error::usage(
                format!("`{name}` is a setting of the Slurm executor"),
                Some("add `--executor slurm`, or leave it out to run here"),
            )),
            None => Ok(None),
        };
    }
    if let Some(w) = opts.workers {
        flag("--workers", limits::at_least(w, 1))?;
    }
    let section = file.map(|p| p.search.slurm.clone()).unwrap_or_default();
    let base = recorded.unwrap_or_else(|| slurm::Settings {
        workers: section.workers.unwrap_or(slurm::DEFAULT_WORKERS),
        partition: section.partition,
        time: section.time,
        account: section.account,
        allocation: None,
    });
    Ok(Some(slurm::Settings {
        workers: opts.workers.unwrap_or(base.workers),
        partition: opts.partition.clone().or(base.partition),
        time: opts.time.clone().or(base.time),
        account: opts.account.clone().or(base.account),
        allocation: slurm::queue::allocation(),
    }))
}

/// The problem file's `search.executor`, local when it says nothing.
fn file_executor(problem: &Problem) -> Result<ExecutorFlag, Error> {
    let Some((name, span)) = &problem.search.executor else {
        return Ok(ExecutorFlag::Local);
    };
    match name.as_str() {
        "local" => Ok(ExecutorFlag::Local),
        "slurm" => Ok(ExecutorFlag::Slurm),
        _ => Err(Error::Config {
            span: span.clone(),
            message: format!("unknown executor `{name}` in `search.executor`"),
            hint: Some("use local or slurm".into()),
        }),
    }
}

/// The verification plan: flags, else run.json, else the problem file's `search.verify` /
/// `search.verify_rounds` (`file`), else the default (top 3, 10 rounds).
fn resolve_plan(opts: &Shared, prev: Option<&RunMeta>, file: FilePlan) -> Result<Plan, Error> {
    let default = Plan::default();
    let recorded = prev.and_then(|m| m.verify);
    let rounds = match opts.verify_rounds {
        Some(r) => flag("--verify-rounds", limits::at_least(r, 2))?,
        None => (recorded.map(|p| p.rounds).or(file.1)).unwrap_or(default.rounds),
    };
    let top = (opts.verify_top.or(recorded.map(|p| p.top)).or(file.0)).unwrap_or(default.top);
    Ok(Plan { top, rounds })
}

/// A problem file's verification settings: (`search.verify`, `search.verify_rounds`).
pub type FilePlan = (Option<usize>, Option<usize>);

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
        return Ok(Learner::Gp);
    };
    Learner::parse(name).ok_or_else(|| Error::Config {
        span: span.clone(),
        message: format!("unknown learner `{name}` in `search.learner`"),
        hint: Some("use rf, et, gbrt, gp, random or auto".into()),
    })
}

/// A resumed run must use the problem file it started with.
fn guard_same_problem(prev: Option<&RunMeta>, problem: &Problem) -> Result<(), Error> {
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
pub fn guard_same_mold(
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
    // Back to the mold of before the last change, which no evaluation used (it did not
    // build, or the run was stopped first): the change is undone, nothing to accept.
    if (changes.last()).is_some_and(|c| c.from_eval == evaluations && c.old_hash == now) {
        changes.pop();
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
        use crate::problem::objective::{Objective, Sense};
        use crate::search::settings::{Mechanism, Without};
        use crate::search::Timeouts;
        let objective = Objective::of(&problem.metric);
        Settings {
            initial: self.initial,
            kappa: self.kappa,
            pool: self.pool,
            acquisition: self.acquisition,
            design: self.design,
            without: Without::default().and_if(Mechanism::Classifier, !self.feasibility),
            interleave: self.interleave,
            timeouts: match (objective.sense, objective.goal) {
                (Sense::Score, _) => Timeouts::Unscored,
                (_, Goal::Minimize) => Timeouts::Censored,
                (_, Goal::Maximize) => Timeouts::Worst,
            },
            progress_is_objective: (problem.progress.as_ref())
                .is_some_and(|p| p.goal == problem.metric.goal),
            ..Settings::new(self.learner, self.seed, problem.metric.goal)
        }
    }
}
