//! The loop of a search over its session: ask → start → wait → record (in evaluation
//! order) → tell, until the budget, the space or an interrupt ends it.

use std::time::Instant;

use crate::error::Error;
use crate::evaluate::outcome::{Status, Stop};
use crate::process;
use crate::run::executor::Executor;
use crate::run::log::Record;
use crate::run::meta::Termination;
use crate::search::unseen::NoProposal;
use crate::search::Strategy;

use super::session::{Arrived, Session};

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

/// Runs the search of `session` with `strategy` on `executor`. However it ends, nothing the
/// executor started is left running, and the strategy knows every outcome (its anchors,
/// mctree's tree).
pub(super) fn search(
    session: &mut Session,
    strategy: &mut dyn Strategy,
    executor: &mut dyn Executor,
) -> Result<Termination, Error> {
    let result = Loop::start(session, strategy, executor).and_then(|mut l| l.run());
    session.tell_due(strategy, session.records.len());
    executor.cancel();
    session.progress.finish();
    result
}

/// The loop's state: what is under way, what ended ahead of its turn, the next id.
struct Loop<'a, 'p> {
    session: &'a mut Session<'p>,
    strategy: &'a mut dyn Strategy,
    executor: &'a mut dyn Executor,
    arrived: Arrived,
    next_id: usize,
    /// Evaluations the cluster lost in a row.
    lost_streak: usize,
    clock: Clock,
}

impl<'a, 'p> Loop<'a, 'p> {
    /// Takes back what the executor still has under way from an interrupted run.
    fn start(
        session: &'a mut Session<'p>,
        strategy: &'a mut dyn Strategy,
        executor: &'a mut dyn Executor,
    ) -> Result<Loop<'a, 'p>, Error> {
        let recorded = session.records.len();
        let clock = Clock::start(&session.records);
        let recovered = executor.recover(session.problem, recorded)?;
        let next_id = (recovered.iter().map(|r| r.0 + 1).max()).unwrap_or(recorded);
        for (_, config, source) in recovered {
            strategy.pending(&config, source);
        }
        Ok(Loop {
            clock,
            session,
            strategy,
            executor,
            arrived: Arrived::new(),
            next_id,
            lost_streak: 0,
        })
    }

    fn run(&mut self) -> Result<Termination, Error> {
        loop {
            if self.executor.in_flight() + self.arrived.len() == 0 {
                if let Some(end) = self.session.budget_spent() {
                    return Ok(end);
                }
            }
            if process::interrupted() {
                return Ok(Termination::Interrupted);
            }
            if let Some(end) = self.fill()? {
                return Ok(end);
            }
            if self.executor.in_flight() == 0 {
                // Nothing could start and nothing is under way: only the budget stops that.
                return Ok(self.session.budget_spent().unwrap_or(Termination::MaxEvals));
            }
            match self.executor.wait(self.session.problem) {
                Ok(done) => {
                    (self.arrived).extend(done.into_iter().map(|(id, c, s, m)| (id, (c, s, m))))
                }
                Err(Stop::Interrupted) => return Ok(Termination::Interrupted),
                Err(Stop::Environment(why)) => return Err(self.session.abandon(why)),
            }
            self.record_arrived()?;
        }
    }

    /// Starts proposals while the executor has room and the budget allows (the arrived
    /// evaluations wait for an earlier one); why the search must end, if it must: the
    /// strategy ran dry with nothing under way, or an interrupt. The strategy is told each
    /// proposal is pending, so that the next ones differ from it.
    fn fill(&mut self) -> Result<Option<Termination>, Error> {
        let waiting = self.arrived.len();
        while self.executor.in_flight() < self.executor.capacity()
            && self
                .session
                .budget_allows(self.executor.in_flight() + waiting)
        {
            let under_way = self.executor.in_flight() + waiting;
            let recorded = self.session.records.len();
            let seen = match self.session.lag {
                Some(n) => (self.next_id + 1).saturating_sub(n),
                None => recorded,
            };
            if seen > recorded {
                break; // waits for the outcome `lag` evaluations back
            }
            self.session.tell_due(self.strategy, seen);
            let (config, source) = match self.strategy.ask(self.next_id) {
                Ok(proposal) => proposal,
                Err(_) if under_way > 0 => break, // ask again after an outcome
                Err(NoProposal::Exhausted) => return Ok(Some(Termination::SpaceExhausted)),
                Err(NoProposal::NotFound) => return Ok(Some(Termination::NoConfigFound)),
            };
            self.strategy.pending(&config, source);
            match (self.executor).start(self.session.problem, self.next_id, &config, source) {
                Ok(()) => self.next_id += 1,
                Err(Error::Interrupted(..)) => return Ok(Some(Termination::Interrupted)),
                Err(e) => return Err(self.session.abandon(e.to_string())),
            }
        }
        Ok(None)
    }

    /// Records the evaluations that arrived, in id order as far as none is missing, each
    /// told to the strategy once recorded (with a `lag`, when a proposal is due to see it:
    /// [`Loop::fill`]). After max(4, 2 × capacity) lost ones in a row the run stops (they
    /// spend no budget, so a cluster that loses every job would be fed for ever).
    fn record_arrived(&mut self) -> Result<(), Error> {
        let limit = (2 * self.executor.capacity()).max(4);
        while let Some((config, source, m)) = self.arrived.remove(&self.session.records.len()) {
            self.lost_streak = match m.status {
                Status::Lost => self.lost_streak + 1,
                _ => 0,
            };
            let cause = m.cause.clone().unwrap_or_default();
            let learner = self.strategy.proposer(&config);
            let elapsed_sec = self.clock.elapsed_sec();
            let record = (config, source, m);
            let r = (self.session).record_next(record, learner, self.strategy, elapsed_sec)?;
            self.executor.recorded(r.eval_id);
            if self.lost_streak >= limit {
                let why = format!("the last {limit} evaluations were all lost by the cluster, the last one: {cause}; fix that (a `--time` too short? nodes down?) and `--resume`");
                return Err(self.session.abandon(why));
            }
        }
        Ok(())
    }
}
