//! Where a run's evaluations happen, behind one seam for the driver's one loop: [`Local`]
//! (this machine's evaluator: builds ahead, timed runs one at a time) and the Slurm farm
//! ([`crate::run::slurm::farm::Farm`]: every evaluation a job, `--workers` in flight). The
//! driver asks, starts, waits, records in id order and tells the searcher; an executor only
//! evaluates.

use std::collections::VecDeque;
use std::path::Path;

use crate::error::Error;
use crate::evaluate::ahead::{Ahead, Slots};
use crate::evaluate::outcome::{Measurement, Source, Stop};
use crate::evaluate::{Evaluated, Evaluator};
use crate::problem::space::Config;
use crate::problem::Problem;
use crate::run::log::Record;
use crate::run::verification::{Plan, Verification};
use crate::run::verify;

/// An evaluation that ended: its id, configuration, why it was proposed and its outcome.
pub type Ended = (usize, Config, Source, Measurement);

/// What a run's evaluations run on.
pub trait Executor {
    /// Makes the reference output (unless the run directory holds it) and whatever the
    /// evaluations need first; an error ends the run before its search.
    fn prepare(&mut self, problem: &Problem, dir: &Path) -> Result<(), Error>;
    /// An evaluation the log already holds (a resumed run).
    fn remember(&mut self, _m: &Measurement, _eval_id: usize) {}
    /// Evaluations an earlier session started and did not record (ids from `recorded` on),
    /// in id order: their outcomes come through [`Executor::wait`].
    fn recover(
        &mut self,
        _problem: &Problem,
        _recorded: usize,
    ) -> Result<Vec<(usize, Config, Source)>, Error> {
        Ok(Vec::new())
    }
    /// Evaluations that may be in flight at once.
    fn capacity(&self) -> usize;
    /// When evaluations end in an order that depends on timing (`--parallel`): the
    /// proposal of evaluation k then waits for, and sees only, the outcomes of evaluations
    /// up to k − lag, so that the same seed proposes the same configurations run to run.
    /// `None`: outcomes arrive in id order anyway (one at a time), or the executor's
    /// timing is the cluster's (Slurm: a proposal sees what has ended).
    fn lag(&self) -> Option<usize> {
        None
    }
    /// Evaluations started and not yet returned by [`Executor::wait`].
    fn in_flight(&self) -> usize;
    /// Starts evaluation `eval_id` of `config`.
    fn start(
        &mut self,
        problem: &Problem,
        eval_id: usize,
        config: &Config,
        source: Source,
    ) -> Result<(), Error>;
    /// Waits until at least one evaluation in flight has ended; those that have, in any order.
    fn wait(&mut self, problem: &Problem) -> Result<Vec<Ended>, Stop>;
    /// Evaluation `eval_id` is in the log.
    fn recorded(&mut self, _eval_id: usize) {}
    /// Re-measures the default, the best few and `anchors` for the run's verdict.
    fn verify(
        &mut self,
        problem: &Problem,
        records: &[Record],
        plan: Plan,
        anchors: &[usize],
    ) -> Result<Option<Verification>, Stop>;
    /// Drops whatever is in flight (a search that ended, an interrupt, an error).
    fn cancel(&mut self);
}

/// This machine: evaluations one at a time in id order, the builds of up to `jobs` later
/// ones running ahead ([`Slots`]; held stopped while a variant is timed).
pub struct Local {
    evaluator: Box<dyn Evaluator>,
    jobs: usize,
    /// Builds running ahead of their evaluation's turn.
    slots: Slots,
    /// Proposals in the evaluator's queue: `jobs` + 1 with builds ahead, else 1.
    depth: usize,
    queue: VecDeque<(usize, Config, Source)>,
}

impl Local {
    pub fn new(evaluator: Box<dyn Evaluator>, jobs: usize) -> Local {
        Local {
            evaluator,
            jobs,
            slots: Slots::default(),
            depth: 1,
            queue: VecDeque::new(),
        }
    }
}

impl Executor for Local {
    fn prepare(&mut self, problem: &Problem, dir: &Path) -> Result<(), Error> {
        self.evaluator.prepare(problem, dir)?;
        let ahead = self.evaluator.builds() && self.jobs > 1;
        if ahead {
            self.slots.share(problem, self.jobs);
        }
        self.depth = if ahead { self.jobs + 1 } else { 1 };
        Ok(())
    }

    fn remember(&mut self, m: &Measurement, eval_id: usize) {
        self.evaluator.remember(m, eval_id);
    }

    fn capacity(&self) -> usize {
        self.depth
    }

    fn in_flight(&self) -> usize {
        self.queue.len()
    }

    fn start(
        &mut self,
        problem: &Problem,
        eval_id: usize,
        config: &Config,
        source: Source,
    ) -> Result<(), Error> {
        if self.depth > 1 {
            if let Some(r) = self.evaluator.ahead(problem, config, eval_id) {
                self.slots.start(eval_id, r);
            }
        }
        self.queue.push_back((eval_id, config.clone(), source));
        Ok(())
    }

    /// Evaluates the oldest proposal (its builds may be done already).
    fn wait(&mut self, problem: &Problem) -> Result<Vec<Ended>, Stop> {
        let Some((id, config, source)) = self.queue.pop_front() else {
            return Ok(Vec::new());
        };
        let built = match self.slots.take(id) {
            Some(Ok(built)) => Some(built),
            Some(Err(Evaluated::Stopped(stop))) => return Err(stop),
            Some(Err(Evaluated::Done(m))) => return Ok(vec![(id, config, source, m)]),
            None => None,
        };
        let others_building = self.slots.busy();
        let ahead = Ahead {
            built,
            others_building,
        };
        match self.evaluator.evaluate(problem, &config, id, ahead) {
            Evaluated::Done(m) => Ok(vec![(id, config, source, m)]),
            Evaluated::Stopped(stop) => Err(stop),
        }
    }

    fn verify(
        &mut self,
        problem: &Problem,
        records: &[Record],
        plan: Plan,
        anchors: &[usize],
    ) -> Result<Option<Verification>, Stop> {
        verify::verify(problem, records, self.evaluator.as_mut(), plan, anchors)
    }

    fn cancel(&mut self) {
        self.queue.clear();
        self.slots.cancel();
    }
}
