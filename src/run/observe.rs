//! The views of a run directory kept up to date while the run goes — the terminal's
//! progress, `best.c`, results.json — as observers of the driver's loop (argmin's
//! `Observe`). The loop appends each evaluation to results.csv itself (the checkpoint resume
//! replays), then tells every observer; at the end it tells them once more.

use std::path::Path;

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

/// results.json: every evaluation with typed values, rewritten after each one.
pub struct ResultsJson;

impl Observe for ResultsJson {
    fn logged(&mut self, seen: &Seen) -> Result<(), Error> {
        crate::run::results_json::write(seen.dir, seen.problem, seen.meta, seen.records)
    }

    fn finished(&mut self, seen: &Seen) -> Result<(), Error> {
        self.logged(seen)
    }
}
