//! The driver's second loop, for `--executor slurm`: every evaluation a Slurm job, recorded
//! in evaluation order as the jobs arrive. (Issue 27 merges it with the local loop behind
//! one executor seam.)

use super::*;

/// Evaluations ended ahead of their turn to be recorded, by id.
type Arrived =
    std::collections::BTreeMap<usize, (Config, Origin, crate::evaluate::outcome::Measurement)>;

/// [`drive`] with every evaluation a Slurm job (`--executor slurm`): the reference, the
/// search's evaluations (`workers` at once) and the verification each run on a node.
pub(super) fn drive_farm(
    mut session: Session,
    strategy: &mut dyn Strategy,
    settings: slurm::Settings,
) -> Result<Summary, Error> {
    let mut farm = Farm::new(&session.dir, settings)?;
    session.prepared(farm.reference(session.problem))?;
    session.replay(strategy, None);
    let termination = session.search_farm(strategy, &mut farm)?;
    let anchors = strategy.anchors();
    let termination = session.verify(termination, &anchors, |_, _, plan, anchors| {
        farm.verify(plan, anchors)
    })?;
    session.finish(termination)
}

impl Session<'_> {
    /// The search with evaluations as Slurm jobs: `workers` in flight, the searcher told of
    /// each as it arrives, rows appended in evaluation order. However it ends (Ctrl-C, an
    /// error), no job of the run is left running.
    fn search_farm(
        &mut self,
        searcher: &mut dyn Strategy,
        farm: &mut Farm,
    ) -> Result<Termination, Error> {
        let result = self.farm_loop(searcher, farm);
        farm.cancel();
        self.progress.finish();
        result
    }

    fn farm_loop(
        &mut self,
        searcher: &mut dyn Strategy,
        farm: &mut Farm,
    ) -> Result<Termination, Error> {
        let clock = Clock::start(&self.records);
        for (_, config, source) in farm.recover(self.problem, self.records.len())? {
            searcher.pending(&config, source);
        }
        let mut next_id = farm.next_id(self.records.len());
        let mut arrived = Arrived::new();
        let mut lost_streak = 0;
        loop {
            if process::interrupted() {
                return Ok(Termination::Interrupted);
            }
            if let Some(end) = self.fill(searcher, farm, &mut next_id, arrived.len())? {
                return Ok(end);
            }
            if farm.in_flight() == 0 {
                return Ok(Termination::MaxEvals);
            }
            match farm.wait() {
                Ok(done) => {
                    for (id, config, source, m) in done {
                        searcher.tell(&config, &m, source);
                        let origin = (source, searcher.proposer(&config));
                        arrived.insert(id, (config, origin, m));
                    }
                }
                Err(Stop::Interrupted) => return Ok(Termination::Interrupted),
                Err(Stop::Environment(why)) => return Err(self.abandon(why)),
            }
            lost_streak = self.record_arrived(&mut arrived, farm, clock, lost_streak)?;
        }
    }

    /// Records the evaluations that arrived, in id order, as far as none is missing;
    /// `streak` counts the lost ones in a row: after max(4, 2 × workers) the run stops (they
    /// spend no budget, so a cluster that loses every job would be fed for ever).
    fn record_arrived(
        &mut self,
        arrived: &mut Arrived,
        farm: &Farm,
        clock: Clock,
        mut streak: usize,
    ) -> Result<usize, Error> {
        let limit = (2 * farm.workers()).max(4);
        while let Some((config, origin, m)) = arrived.remove(&self.records.len()) {
            streak = if m.status == Status::Lost {
                streak + 1
            } else {
                0
            };
            let cause = m.cause.clone().unwrap_or_default();
            self.record_or_abandon(config, origin, m, clock.elapsed_sec())?;
            farm.recorded(self.records.len() - 1);
            if streak >= limit {
                let why = format!("the last {limit} evaluations were all lost by the cluster, the last one: {cause}; fix that (a `--time` too short? nodes down?) and `--resume`");
                return Err(self.abandon(why));
            }
        }
        Ok(streak)
    }

    /// Submits proposals while workers are free and the budget allows (`unrecorded`
    /// evaluations have ended but wait for an earlier one); why the search must end, if it
    /// must: the searcher ran dry with nothing in flight, or an interrupt.
    fn fill(
        &mut self,
        searcher: &mut dyn Strategy,
        farm: &mut Farm,
        next_id: &mut usize,
        unrecorded: usize,
    ) -> Result<Option<Termination>, Error> {
        while farm.in_flight() < farm.workers()
            && self.spent() + farm.in_flight() + unrecorded < self.s.max_evals
        {
            match searcher.ask(*next_id) {
                Ok((config, source)) => {
                    searcher.pending(&config, source);
                    match farm.start(self.problem, *next_id, &config, source) {
                        Ok(()) => {}
                        Err(Error::Interrupted(_)) => return Ok(Some(Termination::Interrupted)),
                        Err(e) => return Err(self.abandon(e.to_string())),
                    }
                    *next_id += 1;
                }
                Err(_) if farm.in_flight() + unrecorded > 0 => break, // ask again after
                Err(NoProposal::Exhausted) => return Ok(Some(Termination::SpaceExhausted)),
                Err(NoProposal::NotFound) => return Ok(Some(Termination::NoConfigFound)),
            }
        }
        Ok(None)
    }
}
