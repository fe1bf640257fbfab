//! The search loop: owns evaluation, asks the strategy, records every outcome, resumes from
//! the log, stops cleanly on interrupt.
//!
//! Phases of [`run`]: resolve the settings → open the run directory (lock, resume or start
//! the log, run.json) → prepare the evaluator (the reference output) → replay the log into
//! the searcher → loop (ask → evaluate → append → tell) → write the summaries.

use std::path::PathBuf;
use std::time::Instant;

use crate::error::Error;
use crate::evaluate::make_evaluator;
use crate::evaluate::outcome::{Measurement, Source, Status, Stop};
use crate::evaluate::prune::Pruner;
use crate::problem::space::Config;
use crate::problem::Problem;
use crate::process;
use crate::run::causes;
use crate::run::executor::{Executor, Local};
use crate::run::front_ends::FrontEnds;
use crate::run::log::{self, Record};
use crate::run::machine::now_rfc3339;
use crate::run::meta;
use crate::run::meta::{RunMeta, Termination};
use crate::run::observe::{BestSource, Observe, ResultsJson, Seen};
use crate::run::parallel::Parallel;
use crate::run::progress::Progress;
use crate::run::settings::{self, Budget, Resolved, RunOptions, Shared, EXPERIMENT_CAP};
use crate::run::slurm::{self, farm::Farm};
use crate::search::unseen::NoProposal;
use crate::search::{Searcher, Strategy};

/// Why a configuration was evaluated: its source, and the learner that proposed it.
type Origin = (Source, Option<crate::search::Learner>);

/// When this session's search started, and the run's elapsed seconds then.
#[derive(Clone, Copy)]
struct Clock {
    elapsed0: f64,
    t0: Instant,
}

impl Clock {
    /// From now, continuing the elapsed seconds of the log's last row.
    fn start(records: &[Record]) -> Clock {
        Clock {
            elapsed0: records.last().map_or(0.0, |r| r.elapsed_sec),
            t0: Instant::now(),
        }
    }

    /// A row's `elapsed_sec` if recorded now.
    fn elapsed_sec(&self) -> f64 {
        self.elapsed0 + self.t0.elapsed().as_secs_f64()
    }
}

/// Evaluations ended ahead of their turn to be recorded, by id.
type Arrived = std::collections::BTreeMap<usize, (Config, Source, Measurement)>;

/// `moldtune run`: the problem file's search with a learner of [`crate::search`].
pub fn run(opts: RunOptions, fronts: &FrontEnds) -> Result<Summary, Error> {
    let previous = settings::previous_run(&opts.shared)?;
    let prev = previous.as_ref();
    let problem = settings::load_problem(&opts, prev)?.built("run")?;
    let s = settings::resolve(&opts, prev, &problem)?;
    if !s.mock && s.slurm.is_none() {
        crate::evaluate::environment::require_tools(&problem)?; // on a cluster the nodes' PATH is not this one
    }
    let mut searcher = Searcher::new(&problem.space, s.searcher_settings(&problem));
    let recorded = prev.and_then(|m| m.warm_start.as_ref());
    let given = opts.warm_start.as_deref();
    let warm_start = match crate::run::warm::for_run(given, recorded, &problem, fronts)? {
        Some((prior, record)) => {
            searcher.warm_start(prior);
            Some(record)
        }
        None => None,
    };
    let launch = Launch {
        problem: &problem,
        s,
        opts: &opts.shared,
        prev,
        mctree: None,
        warm_start,
    };
    drive(launch, &mut searcher)
}

/// One search to run: the problem, its resolved settings, the command line, the run being
/// resumed and the front end's settings for run.json.
pub struct Launch<'a> {
    pub problem: &'a Problem,
    pub s: Resolved,
    pub opts: &'a Shared,
    pub prev: Option<&'a RunMeta>,
    pub mctree: Option<serde_json::Value>,
    /// What `--warm-start` transferred.
    pub warm_start: Option<crate::run::meta::WarmStart>,
}

/// Runs a search with `strategy` in its run directory: the one loop behind `run` and
/// `mctree` (evaluation, results log, resume, progress, verification).
pub fn drive(l: Launch, strategy: &mut dyn Strategy) -> Result<Summary, Error> {
    let dir = (l.opts.run_dir()).unwrap_or_else(|| default_out(l.problem));
    // Lock first, so that a second run on a busy directory is told so (not "resume it").
    let _lock = log::lock(&dir)?;
    let dir = claim_dir(&dir, l.opts.resuming())?;
    if let Some(settings) = &l.s.slurm {
        // Before the run directory is written.
        slurm::queue::available()?;
        slurm::queue::check(settings)?;
    }
    let mut session = Session::open(&l, dir)?;
    let mut executor = session.executor(l.opts.keep_builds)?;
    session.prepared(executor.prepare(l.problem, &session.dir))?;
    let lag = executor.lag();
    session.replay(strategy, &mut |m, id| executor.remember(m, id), lag);
    let termination = session.search(strategy, executor.as_mut())?;
    let termination = session.verify(termination, &strategy.anchors(), executor.as_mut())?;
    session.finish(termination)
}

/// One run in progress: its directory, log, records and the best so far.
struct Session<'p> {
    problem: &'p Problem,
    s: Resolved,
    dir: PathBuf,
    meta: RunMeta,
    log: log::Log,
    records: Vec<Record>,
    progress: Progress,
    best_source: BestSource,
    best_id: Option<usize>,
    /// Records the strategy has been told, in order.
    told: usize,
    /// With `--parallel N`: the proposal of evaluation k waits for (and sees only) the
    /// outcomes of evaluations up to k − N, whichever finished first ([`Executor::lag`]).
    lag: Option<usize>,
}

impl<'p> Session<'p> {
    /// Where the evaluations run: the Slurm farm, `--parallel` workers or this process;
    /// with `progress:`, every evaluator on this machine shares one [`Pruner`].
    fn executor(&self, keep_builds: bool) -> Result<Box<dyn Executor>, Error> {
        let (mock, s) = (self.s.mock, &self.s);
        let pruner = (self.problem.progress.as_ref()).map(|p| Pruner::open(p, &self.dir));
        let make = || {
            let mut e = make_evaluator(mock, keep_builds, 0);
            if let Some(p) = &pruner {
                e.prune_with(p.clone());
            }
            e
        };
        Ok(match s.slurm.clone() {
            Some(settings) => Box::new(Farm::new(&self.dir, settings)?),
            None if s.parallel > 1 => Box::new(Parallel::new(s.parallel, make)),
            None => Box::new(Local::new(make(), s.jobs)),
        })
    }

    /// Opens the run directory: continues the log when resuming (else starts it) and writes
    /// run.json as `running`.
    fn open(l: &Launch<'p>, dir: PathBuf) -> Result<Session<'p>, Error> {
        let (problem, opts, prev, s) = (l.problem, l.opts, l.prev, l.s.clone());
        let continuing = opts.resuming() && dir.join(meta::RESULTS_CSV).exists();
        let records = if continuing {
            log::read_records(&dir, problem)?
        } else {
            Vec::new()
        };
        let changes =
            settings::guard_same_mold(prev, problem, opts.accept_changed_mold, records.len())?;
        if changes.len() != prev.map_or(0, |m| m.mold_changes.len()) {
            // The reference is what the mold computes: made again from the edited one, or the
            // one an undone edit went back to (the evaluations it serves from on are
            // run.json's `mold_changes[].from_eval`).
            crate::evaluate::evaluator::remove_references(problem, &dir);
        }
        let mut meta = new_meta(problem, opts, prev, &s, records.len());
        meta.mold_changes = changes;
        meta.mctree = l.mctree.clone();
        meta.warm_start = l.warm_start.clone();
        meta::write_run_json(&dir, &meta)?;
        let log = if continuing {
            log::Log::append_to(&dir, problem)?
        } else {
            log::Log::create(&dir, problem)?
        };
        let spent = records.iter().filter(|r| s.budget.spends(r)).count();
        let progress = Progress::new(s.max_evals, spent, opts.quiet);
        progress.message(&opening_line(problem, &s, spent, &dir));
        let marks = problem.mold.unnamed_markers(&problem.space);
        let marks = marks.into_iter().map(|m| format!("warning: {m}"));
        // A warning is shown even with --quiet: it questions the run's result (once: not
        // again by each request of a study).
        let warnings = budget_warning(&s)
            .into_iter()
            .chain(pruning_warning(problem, &s));
        let again = problem.told && prev.is_some();
        for w in warnings.chain(marks).filter(|_| !again) {
            eprintln!("{w}");
        }
        let best_id = log::best(&records, problem.metric.goal).map(|r| r.eval_id);
        Ok(Session {
            problem,
            s,
            dir,
            meta,
            log,
            records,
            progress,
            best_source: BestSource::default(),
            best_id,
            told: 0,
            lag: None,
        })
    }

    /// How building the reference went; if it failed, run.json says why before the error
    /// is returned.
    fn prepared(&mut self, built: Result<(), Error>) -> Result<(), Error> {
        let Err(e) = built else {
            return Ok(());
        };
        self.meta.termination = match e {
            Error::Interrupted(..) => Termination::Interrupted,
            Error::Environment(_) => Termination::Environment,
            _ => Termination::ReferenceFailed,
        };
        meta::write_run_json(&self.dir, &self.meta)?;
        Err(e)
    }

    /// Tells the searcher and `remember` (the executor's) what the log already holds (a
    /// resumed run).
    /// With a `lag`, the last ones are pending until the proposal that would have seen them
    /// (as in the run that was interrupted).
    fn replay(
        &mut self,
        searcher: &mut dyn Strategy,
        remember: &mut dyn FnMut(&Measurement, usize),
        lag: Option<usize>,
    ) {
        self.lag = lag;
        let next = self.records.len();
        let seen = lag.map_or(next, |n| (next + 1).saturating_sub(n));
        for r in &self.records {
            if let Some(l) = r.learner {
                searcher.recall(&r.config, l);
            }
            match r.eval_id < seen {
                true => searcher.tell(&r.config, &r.m, r.source),
                false => searcher.pending(&r.config, r.source),
            }
            remember(&r.m, r.eval_id);
            self.progress.count(r);
        }
        self.told = seen.min(next);
    }

    /// Tells the strategy the records it has not been told, up to `upto` (exclusive).
    fn tell_due(&mut self, searcher: &mut dyn Strategy, upto: usize) {
        for r in &self.records[self.told..upto.min(self.records.len())] {
            searcher.tell(&r.config, &r.m, r.source);
            self.told = r.eval_id + 1;
        }
    }

    /// Ask → start → wait → record (in id order) → tell, until the budget, the space or an
    /// interrupt ends it. However it ends, nothing the executor started is left running.
    fn search(
        &mut self,
        searcher: &mut dyn Strategy,
        executor: &mut dyn Executor,
    ) -> Result<Termination, Error> {
        let result = self.search_loop(searcher, executor);
        // The strategy knows every outcome at the end (its anchors, mctree's tree).
        self.tell_due(searcher, self.records.len());
        executor.cancel();
        self.progress.finish();
        result
    }

    fn search_loop(
        &mut self,
        searcher: &mut dyn Strategy,
        executor: &mut dyn Executor,
    ) -> Result<Termination, Error> {
        let clock = Clock::start(&self.records);
        let recovered = executor.recover(self.problem, self.records.len())?;
        let mut next_id = (recovered.iter().map(|r| r.0 + 1).max()).unwrap_or(self.records.len());
        for (_, config, source) in recovered {
            searcher.pending(&config, source);
        }
        let mut arrived = Arrived::new();
        let mut lost_streak = 0;
        loop {
            if executor.in_flight() + arrived.len() == 0 {
                if let Some(end) = self.budget_spent() {
                    return Ok(end);
                }
            }
            if process::interrupted() {
                return Ok(Termination::Interrupted);
            }
            let waiting = arrived.len();
            if let Some(end) = self.fill(searcher, executor, &mut next_id, waiting)? {
                return Ok(end);
            }
            if executor.in_flight() == 0 {
                // Nothing could start and nothing is under way: only the budget stops that.
                return Ok(self.budget_spent().unwrap_or(Termination::MaxEvals));
            }
            match executor.wait(self.problem) {
                Ok(done) => arrived.extend(done.into_iter().map(|(id, c, s, m)| (id, (c, s, m)))),
                Err(Stop::Interrupted) => return Ok(Termination::Interrupted),
                Err(Stop::Environment(why)) => return Err(self.abandon(why)),
            }
            lost_streak =
                self.record_arrived(&mut arrived, searcher, executor, clock, lost_streak)?;
        }
    }

    /// Why the search ends when nothing is in flight, if the budget ends it (or every
    /// evaluation so far failed for one cause, [`crate::run::causes::one_failure`]).
    fn budget_spent(&self) -> Option<Termination> {
        if causes::one_failure(&self.records).is_some() {
            return Some(Termination::AllFailed);
        }
        if self.spent() >= self.s.max_evals {
            return Some(Termination::MaxEvals);
        }
        let cap = EXPERIMENT_CAP * self.s.max_evals;
        (self.s.budget == Budget::Valid && self.records.len() >= cap)
            .then_some(Termination::ExperimentCap)
    }

    /// Whether `more` evaluations beyond those recorded may be under way: each may spend
    /// budget, and mctree's experiments are capped.
    fn budget_allows(&self, more: usize) -> bool {
        let cap = EXPERIMENT_CAP * self.s.max_evals;
        causes::one_failure(&self.records).is_none()
            && self.spent() + more < self.s.max_evals
            && (self.s.budget != Budget::Valid || self.records.len() + more < cap)
    }

    /// Starts proposals while the executor has room and the budget allows (`waiting`
    /// evaluations have ended but wait for an earlier one); why the search must end, if it
    /// must: the searcher ran dry with nothing under way, or an interrupt. The strategy is
    /// told each proposal is pending, so that the next ones differ from it.
    fn fill(
        &mut self,
        searcher: &mut dyn Strategy,
        executor: &mut dyn Executor,
        next_id: &mut usize,
        waiting: usize,
    ) -> Result<Option<Termination>, Error> {
        while executor.in_flight() < executor.capacity()
            && self.budget_allows(executor.in_flight() + waiting)
        {
            let under_way = executor.in_flight() + waiting;
            let seen = match self.lag {
                Some(n) => (*next_id + 1).saturating_sub(n),
                None => self.records.len(),
            };
            if seen > self.records.len() {
                break; // waits for the outcome `lag` evaluations back
            }
            self.tell_due(searcher, seen);
            let (config, source) = match searcher.ask(*next_id) {
                Ok(proposal) => proposal,
                Err(_) if under_way > 0 => break, // ask again after an outcome
                Err(NoProposal::Exhausted) => return Ok(Some(Termination::SpaceExhausted)),
                Err(NoProposal::NotFound) => return Ok(Some(Termination::NoConfigFound)),
            };
            searcher.pending(&config, source);
            match executor.start(self.problem, *next_id, &config, source) {
                Ok(()) => *next_id += 1,
                Err(Error::Interrupted(..)) => return Ok(Some(Termination::Interrupted)),
                Err(e) => return Err(self.abandon(e.to_string())),
            }
        }
        Ok(None)
    }

    /// Records the evaluations that arrived, in id order as far as none is missing, each
    /// told to the searcher once recorded; `streak` counts the lost ones in a row: after
    /// max(4, 2 × capacity) the run stops (they spend no budget, so a cluster that loses
    /// every job would be fed for ever).
    fn record_arrived(
        &mut self,
        arrived: &mut Arrived,
        searcher: &mut dyn Strategy,
        executor: &mut dyn Executor,
        clock: Clock,
        mut streak: usize,
    ) -> Result<usize, Error> {
        let limit = (2 * executor.capacity()).max(4);
        while let Some((config, source, m)) = arrived.remove(&self.records.len()) {
            streak = if m.status == Status::Lost {
                streak + 1
            } else {
                0
            };
            let cause = m.cause.clone().unwrap_or_default();
            let learner = searcher.proposer(&config);
            let r =
                self.record_next((config, source, m), learner, searcher, clock.elapsed_sec())?;
            executor.recorded(r.eval_id);
            if streak >= limit {
                let why = format!("the last {limit} evaluations were all lost by the cluster, the last one: {cause}; fix that (a `--time` too short? nodes down?) and `--resume`");
                return Err(self.abandon(why));
            }
        }
        Ok(streak)
    }

    /// Records the next evaluation and tells the searcher its outcome (with a `lag`, when a
    /// proposal is due to see it: [`Session::fill`]).
    fn record_next(
        &mut self,
        (config, source, m): (Config, Source, Measurement),
        learner: Option<crate::search::Learner>,
        searcher: &mut dyn Strategy,
        elapsed_sec: f64,
    ) -> Result<&Record, Error> {
        self.record_or_abandon(config, (source, learner), m, elapsed_sec)?;
        if self.lag.is_none() {
            self.tell_due(searcher, self.records.len());
        }
        Ok(self.records.last().expect("just recorded"))
    }

    /// Records the next evaluation; a machine that fails to record it ends the run.
    fn record_or_abandon(
        &mut self,
        config: Config,
        (source, learner): Origin,
        m: crate::evaluate::outcome::Measurement,
        elapsed_sec: f64,
    ) -> Result<(), Error> {
        let rec = Record {
            eval_id: self.records.len(),
            config_hash: self.problem.space.hash(&config),
            config,
            m,
            elapsed_sec,
            source,
            learner,
        };
        self.record(rec).map_err(|e| match e.code() {
            crate::error::exit::ENVIRONMENT => self.abandon(e.to_string()),
            _ => e,
        })
    }

    /// Appends one evaluation to the log, then updates best.c, progress and results.json.
    fn record(&mut self, rec: Record) -> Result<(), Error> {
        if !self.dir.join(meta::RESULTS_CSV).is_file() {
            // Appending to the open log would write into a deleted file: results lost.
            return Err(run_dir_gone(
                &self.dir,
                &format!("eval {} ran", rec.eval_id),
            ));
        }
        self.log.append(self.problem, &rec)?;
        self.records.push(rec);
        self.best_id = log::best(&self.records, self.problem.metric.goal).map(|r| r.eval_id);
        self.update_meta();
        self.tell_observers(false)
    }

    /// Tells every observer of the loop what the run is now ([`crate::run::observe`]): after
    /// an evaluation was logged, or at the end.
    fn tell_observers(&mut self, end: bool) -> Result<(), Error> {
        let spent = self.spent();
        let seen = Seen {
            problem: self.problem,
            dir: &self.dir,
            meta: &self.meta,
            records: &self.records,
            best: self.best_id,
            spent,
        };
        let observers: [&mut dyn Observe; 3] =
            [&mut self.progress, &mut self.best_source, &mut ResultsJson];
        for o in observers {
            if end {
                o.finished(&seen)?;
            } else {
                o.logged(&seen)?;
            }
        }
        Ok(())
    }

    /// The machine failed: nothing is recorded for the evaluation in progress; run.json says
    /// so if it still can be written (the disk may be full).
    fn abandon(&mut self, why: String) -> Error {
        self.progress.finish();
        if !self.dir.join(meta::RESULTS_CSV).is_file() {
            // Nothing left to resume: say what happened instead of "fix the machine".
            return run_dir_gone(&self.dir, &format!("the run worked in it ({why})"));
        }
        self.meta.termination = Termination::Environment;
        self.meta.updated_at = now_rfc3339();
        let _ = meta::write_run_json(&self.dir, &self.meta);
        Error::Environment(why)
    }

    /// Evaluations that spent budget so far.
    fn spent(&self) -> usize {
        let b = self.s.budget;
        self.records.iter().filter(|r| b.spends(r)).count()
    }

    fn best_objective(&self) -> Option<f64> {
        self.best_id.and_then(|i| self.records[i].m.objective)
    }

    fn update_meta(&mut self) {
        self.meta.evaluations = self.records.len();
        self.meta.best_eval_id = self.best_id;
        self.meta.best_objective = self.best_objective();
    }

    /// After a search that ran to its end: re-measure the default and the best few
    /// interleaved and decide the winner on those numbers ([`crate::run::verify`]); the
    /// winner becomes the run's best. Returns the (possibly changed) termination.
    fn verify(
        &mut self,
        termination: Termination,
        anchors: &[usize],
        executor: &mut dyn Executor,
    ) -> Result<Termination, Error> {
        let plan = self.s.verify;
        if !termination.ran_to_end() || plan.top == 0 || self.best_id.is_none() {
            return Ok(termination);
        }
        let what = match anchors.len() {
            0 => format!("the default and the best {}", plan.top),
            n => format!(
                "the default, the best {} and the search's {n} starting points",
                plan.top
            ),
        };
        self.progress.message(&format!(
            "verifying: {what} re-measured in {} interleaved rounds",
            plan.rounds
        ));
        match executor.verify(self.problem, &self.records, plan, anchors) {
            Ok(v) => {
                if let Some(w) = v.as_ref().and_then(|v| v.winner_eval_id) {
                    self.best_id = Some(w);
                }
                self.meta.verification = v;
                Ok(termination)
            }
            Err(Stop::Interrupted) => Ok(Termination::Interrupted),
            Err(Stop::Environment(why)) => Err(self.abandon(why)),
        }
    }

    /// Writes run.json, results.json and best.c (a resumed run may not have found a new
    /// best itself), then turns the termination into the command's result.
    fn finish(mut self, termination: Termination) -> Result<Summary, Error> {
        self.conclude(termination)?;
        if termination == Termination::Interrupted {
            return Err(Error::Interrupted(self.dir, "run"));
        }
        let records = &self.records;
        if !records.is_empty() && records.iter().all(|r| r.m.status != Status::Ok) {
            return Err(Error::NoSuccess {
                evaluations: records.len(),
                cause: causes::common_cause(records),
                early: termination == Termination::AllFailed,
            });
        }
        Ok(Summary::of(&self, termination))
    }

    /// Writes run.json with `termination`, then results.json and best.c.
    fn conclude(&mut self, termination: Termination) -> Result<(), Error> {
        self.meta.termination = termination;
        self.meta.updated_at = now_rfc3339();
        self.update_meta();
        meta::write_run_json(&self.dir, &self.meta)?;
        self.tell_observers(true)
    }
}

mod start;
pub mod study;
mod summary;
pub use start::default_out;
use start::{budget_warning, claim_dir, new_meta, opening_line, pruning_warning, run_dir_gone};
pub use summary::Summary;
