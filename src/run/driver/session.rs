//! One run in progress: its directory, log, records, budget and best so far — what `run`,
//! `mctree` and a study (ask and tell) share. Opened on a run directory (resumed or new),
//! it records each evaluation (results.csv, then its observers), knows what the budget
//! allows, verifies the best at the end and writes the summaries.

use std::path::PathBuf;

use crate::error::Error;
use crate::evaluate::make_evaluator;
use crate::evaluate::outcome::{Measurement, Source, Status, Stop};
use crate::evaluate::prune::Pruner;
use crate::problem::space::Config;
use crate::problem::Problem;
use crate::run::causes;
use crate::run::executor::Executor;
use crate::run::log::{self, Record};
use crate::run::machine::now_rfc3339;
use crate::run::meta;
use crate::run::meta::{RunMeta, Termination};
use crate::run::observe::{BestSource, Observe, ResultsJson, Seen};
use crate::run::progress::Progress;
use crate::run::settings::{self, Budget, Resolved, Shared, EXPERIMENT_CAP};
use crate::search::Strategy;

use super::start::{budget_warning, new_meta, opening_line, pruning_warning, run_dir_gone};

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

/// Why a configuration was evaluated: its source, and the learner that proposed it.
type Origin = (Source, Option<crate::search::Learner>);

/// Evaluations ended ahead of their turn to be recorded, by id.
pub(super) type Arrived = std::collections::BTreeMap<usize, (Config, Source, Measurement)>;

/// One run in progress: its directory, log, records and the best so far.
pub(super) struct Session<'p> {
    pub(super) problem: &'p Problem,
    pub(super) s: Resolved,
    pub(super) dir: PathBuf,
    pub(super) meta: RunMeta,
    pub(super) log: log::Log,
    pub(super) records: Vec<Record>,
    pub(super) progress: Progress,
    pub(super) best_source: BestSource,
    pub(super) results_json: ResultsJson,
    pub(super) best_id: Option<usize>,
    /// Evaluations that spent budget so far.
    pub(super) spent: usize,
    /// Records the strategy has been told, in order.
    pub(super) told: usize,
    /// With `--parallel N`: the proposal of evaluation k waits for (and sees only) the
    /// outcomes of evaluations up to k − N, whichever finished first ([`Executor::lag`]).
    pub(super) lag: Option<usize>,
}

impl<'p> Session<'p> {
    /// Where the evaluations run: the Slurm farm, `--parallel` workers or this process;
    /// with `progress:`, every evaluator on this machine shares one [`Pruner`].
    pub(super) fn executor(&self, keep_builds: bool) -> Result<Box<dyn Executor>, Error> {
        let (mock, s) = (self.s.mock, &self.s);
        let pruner = (self.problem.progress.as_ref()).map(|p| Pruner::open(p, &self.dir));
        let make = |jobs| {
            let mut e = make_evaluator(mock, keep_builds, jobs);
            if let Some(p) = &pruner {
                e.prune_with(p.clone());
            }
            e
        };
        s.executor.executor(&self.dir, s.jobs, make)
    }

    /// Opens the run directory: continues the log when resuming (else starts it) and writes
    /// run.json as `running`.
    pub(super) fn open(l: &Launch<'p>, dir: PathBuf) -> Result<Session<'p>, Error> {
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
            results_json: ResultsJson::default(),
            best_id,
            spent,
            told: 0,
            lag: None,
        })
    }

    /// How building the reference went; if it failed, run.json says why before the error
    /// is returned.
    pub(super) fn prepared(&mut self, built: Result<(), Error>) -> Result<(), Error> {
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
    pub(super) fn replay(
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
            self.progress.replayed(self.problem, r);
        }
        self.told = seen.min(next);
    }

    /// Tells the strategy the records it has not been told, up to `upto` (exclusive).
    pub(super) fn tell_due(&mut self, searcher: &mut dyn Strategy, upto: usize) {
        for r in &self.records[self.told..upto.min(self.records.len())] {
            searcher.tell(&r.config, &r.m, r.source);
            self.told = r.eval_id + 1;
        }
    }

    /// Why the search ends when nothing is in flight, if the budget ends it (or every
    /// evaluation so far failed for one cause, [`crate::run::causes::one_failure`]).
    pub(super) fn budget_spent(&self) -> Option<Termination> {
        if causes::one_failure(&self.records).is_some() {
            return Some(Termination::AllFailed);
        }
        if self.spent >= self.s.max_evals {
            return Some(Termination::MaxEvals);
        }
        let cap = EXPERIMENT_CAP * self.s.max_evals;
        (self.s.budget == Budget::Valid && self.records.len() >= cap)
            .then_some(Termination::ExperimentCap)
    }

    /// Whether `more` evaluations beyond those recorded may be under way: each may spend
    /// budget, and mctree's experiments are capped.
    pub(super) fn budget_allows(&self, more: usize) -> bool {
        let cap = EXPERIMENT_CAP * self.s.max_evals;
        causes::one_failure(&self.records).is_none()
            && self.spent + more < self.s.max_evals
            && (self.s.budget != Budget::Valid || self.records.len() + more < cap)
    }

    /// Records the next evaluation and tells the searcher its outcome (with a `lag`, when a
    /// proposal is due to see it: the loop's `fill`).
    pub(super) fn record_next(
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
    pub(super) fn record_or_abandon(
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
        self.spent += usize::from(self.s.budget.spends(&rec));
        if let Some((id, y)) = log::succeeded(&rec) {
            // The earliest of equals stays the best.
            let goal = self.problem.metric.goal;
            if (self.best_objective()).is_none_or(|b| goal.order(y, b).is_lt()) {
                self.best_id = Some(id);
            }
        }
        self.records.push(rec);
        self.update_meta();
        self.tell_observers(false)
    }

    /// Tells every observer of the loop what the run is now ([`crate::run::observe`]): after
    /// an evaluation was logged, or at the end.
    fn tell_observers(&mut self, end: bool) -> Result<(), Error> {
        let spent = self.spent;
        let seen = Seen {
            problem: self.problem,
            dir: &self.dir,
            meta: &self.meta,
            records: &self.records,
            best: self.best_id,
            spent,
        };
        let observers: [&mut dyn Observe; 3] = [
            &mut self.progress,
            &mut self.best_source,
            &mut self.results_json,
        ];
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
    pub(super) fn abandon(&mut self, why: String) -> Error {
        self.progress.finish();
        if !self.dir.join(meta::RESULTS_CSV).is_file() {
            // Nothing left to resume: say what happened instead of "fix the machine".
            return run_dir_gone(&self.dir, &format!("the run worked in it ({why})"));
        }
        self.meta.termination = Termination::Environment;
        self.meta.updated_at = now_rfc3339();
        self.update_meta();
        let _ = meta::write_run_json(&self.dir, &self.meta);
        let _ = crate::run::results_json::write(&self.dir, self.problem, &self.meta, &self.records);
        Error::Environment(why)
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
    pub(super) fn verify(
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
    /// best itself); an interrupt or a run without a success is the command's error.
    pub(super) fn finish(&mut self, termination: Termination) -> Result<Termination, Error> {
        self.conclude(termination)?;
        if termination == Termination::Interrupted {
            return Err(Error::Interrupted(self.dir.clone(), "run"));
        }
        let records = &self.records;
        if !records.is_empty() && records.iter().all(|r| r.m.status != Status::Ok) {
            return Err(Error::NoSuccess {
                evaluations: records.len(),
                cause: causes::common_cause(records),
                early: termination == Termination::AllFailed,
            });
        }
        Ok(termination)
    }

    /// Writes run.json with `termination`, then results.json and best.c.
    pub(super) fn conclude(&mut self, termination: Termination) -> Result<(), Error> {
        self.meta.termination = termination;
        self.meta.updated_at = now_rfc3339();
        self.update_meta();
        meta::write_run_json(&self.dir, &self.meta)?;
        self.tell_observers(true)
    }
}
