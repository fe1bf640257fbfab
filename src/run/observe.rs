//! The views of a run directory kept up to date while the run goes — the terminal's
//! progress, `best.c`, results.json — as observers of the driver's loop (argmin's
//! `Observe`). The loop appends each evaluation to results.csv itself (the checkpoint resume
//! replays), then tells every observer; at the end it tells them once more.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::problem::Problem;
use crate::run::log::Record;
use crate::run::meta::{self, RunMeta};

/// The run so far, as the observers see it.
pub struct Seen<'a> {
    pub problem: &'a Problem,
    pub dir: &'a Path,
    pub meta: &'a RunMeta,
    pub records: &'a [Record],
    /// The run's best: the search's so far, the verification's winner at the end.
    pub best: Option<usize>,
    /// Evaluations that spent budget.
    pub spent: usize,
}

pub trait Observe {
    /// After the last of `seen.records` was appended to results.csv.
    fn logged(&mut self, seen: &Seen) -> Result<(), Error>;
    /// At the end of the run (after its verification); nothing by default.
    fn finished(&mut self, _seen: &Seen) -> Result<(), Error> {
        Ok(())
    }
}

/// `best.c` (the mold's best file): the best's source, rewritten when the best changes and at
/// the end (a resumed run may not find a new best itself). None for a problem whose
/// evaluations are told: it has no source.
#[derive(Default)]
pub struct BestSource {
    written: Option<usize>,
}

impl BestSource {
    fn write(&mut self, seen: &Seen) -> Result<(), Error> {
        let Some(b) = seen.best.filter(|_| !seen.problem.told) else {
            return Ok(());
        };
        let mold = &seen.problem.mold;
        let source = mold.render(&seen.problem.space, &seen.records[b].config);
        meta::write_atomic(&seen.dir.join(mold.best_file()), source.as_bytes())?;
        self.written = Some(b);
        Ok(())
    }
}

impl Observe for BestSource {
    fn logged(&mut self, seen: &Seen) -> Result<(), Error> {
        if seen.best == self.written {
            return Ok(());
        }
        self.write(seen)
    }

    fn finished(&mut self, seen: &Seen) -> Result<(), Error> {
        self.write(seen)
    }
}

/// results.json: every evaluation with typed values. Rewriting it costs time in proportion to
/// the run, so it is rewritten after an evaluation only once a tenth more of the run has been
/// logged since the last time, or two seconds (at least ten times the last rewrite) have passed;
/// and always at the end, on an interrupt and when the machine fails. results.csv, appended
/// after every evaluation, is the checkpoint.
#[derive(Default)]
pub struct ResultsJson {
    /// Evaluations in the last file written, when, and how long writing it took.
    written: Option<(usize, Instant, Duration)>,
}

impl ResultsJson {
    /// Whether a file of `n` evaluations is due, `since` the last one was written.
    fn due(&self, n: usize, since: impl Fn(Instant) -> Duration) -> bool {
        let Some((written, at, took)) = self.written else {
            return true;
        };
        n > written + written / 10 || since(at) >= (10 * took).max(Duration::from_secs(2))
    }
}

impl Observe for ResultsJson {
    fn logged(&mut self, seen: &Seen) -> Result<(), Error> {
        match self.due(seen.records.len(), |at| at.elapsed()) {
            true => self.finished(seen),
            false => Ok(()),
        }
    }

    fn finished(&mut self, seen: &Seen) -> Result<(), Error> {
        let t0 = Instant::now();
        crate::run::results_json::write(seen.dir, seen.problem, seen.meta, seen.records)?;
        self.written = Some((seen.records.len(), Instant::now(), t0.elapsed()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::ResultsJson;

    /// results.json is written first, then once a tenth more of the run is logged or two
    /// seconds (ten times a slow write) have passed: a bounded share of the run's time.
    #[test]
    fn results_json_is_rewritten_as_the_run_grows_by_a_tenth_or_after_two_seconds() {
        let fresh = |_: Instant| Duration::ZERO;
        let mut r = ResultsJson::default();
        assert!(r.due(1, fresh));
        r.written = Some((1, Instant::now(), Duration::from_millis(1)));
        assert!(r.due(2, fresh));
        r.written = Some((1000, Instant::now(), Duration::from_millis(1)));
        assert!(!r.due(1001, fresh) && !r.due(1100, fresh) && r.due(1101, fresh));
        assert!(r.due(1001, |_| Duration::from_secs(2)));
        r.written = Some((1000, Instant::now(), Duration::from_millis(500)));
        assert!(!r.due(1001, |_| Duration::from_secs(4)));
        assert!(r.due(1001, |_| Duration::from_secs(5)));
    }
}
