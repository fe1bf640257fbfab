//! Where a run's evaluations happen, as one value resolved once: here, `--parallel`
//! workers, or Slurm jobs. Callers ask it instead of testing the flags again.

use std::path::Path;

use crate::error::Error;
use crate::evaluate::Evaluator;
use crate::run::executor::{Executor, Local};
use crate::run::parallel::Parallel;
use crate::run::slurm::{self, farm::Farm};

/// Where a run's evaluations happen, resolved from the flags, run.json and the problem file
/// ([`crate::run::settings`]), and asked what its callers need: whether this machine's tools
/// are, what to check before the run directory is written, how the opening line says it,
/// how many run at once, and the [`Executor`] itself. Another executor is one more arm here
/// and a file of its own.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecutorKind {
    /// This process: evaluations one at a time, `--jobs` builds ahead.
    Here,
    /// `--parallel N`: N evaluations at once, each in a process of its own, on this machine.
    Parallel(usize),
    /// `--executor slurm`: each evaluation a Slurm job (or a step of an allocation).
    Slurm(slurm::Settings),
    /// A study (`serve`, `ask`, `tell`): the program evaluates, with up to N asks in flight.
    Told(usize),
}

impl ExecutorKind {
    /// From `--parallel` (1: one at a time) and the Slurm settings, if the run has them.
    pub fn of(parallel: usize, slurm: Option<slurm::Settings>) -> ExecutorKind {
        match slurm {
            Some(settings) => ExecutorKind::Slurm(settings),
            None if parallel > 1 => ExecutorKind::Parallel(parallel),
            None => ExecutorKind::Here,
        }
    }

    /// Whether the evaluations run on this machine (with its compiler and tools, and a
    /// pruner that sees every run's progress); a cluster's nodes have their own.
    pub fn runs_here(&self) -> bool {
        !matches!(self, ExecutorKind::Slurm(_))
    }

    /// What must hold before the run directory is written: Slurm's commands answer and
    /// know the partition and account.
    pub fn preflight(&self) -> Result<(), Error> {
        if let ExecutorKind::Slurm(settings) = self {
            slurm::queue::available()?;
            slurm::queue::check(settings)?;
        }
        Ok(())
    }

    /// Where the evaluations run, for the opening line: nothing when here.
    pub fn describe(&self) -> String {
        match self {
            ExecutorKind::Here => String::new(),
            ExecutorKind::Parallel(n) => format!(", {n} at once"),
            ExecutorKind::Told(_) => String::new(),
            ExecutorKind::Slurm(sl) => match &sl.allocation {
                Some(a) => format!(
                    ", as steps of Slurm allocation {a} ({} at once)",
                    sl.workers
                ),
                None => format!(", as Slurm jobs ({} at once)", sl.workers),
            },
        }
    }

    /// Evaluations under way at most (a study's asks in flight).
    pub fn at_once(&self) -> usize {
        match self {
            ExecutorKind::Here => 1,
            ExecutorKind::Parallel(n) | ExecutorKind::Told(n) => *n,
            ExecutorKind::Slurm(sl) => sl.workers,
        }
    }

    /// `--parallel` as run.json records it (`None`: one at a time).
    pub fn parallel(&self) -> Option<usize> {
        match self {
            ExecutorKind::Parallel(n) => Some(*n),
            ExecutorKind::Told(n) => (*n > 1).then_some(*n),
            _ => None,
        }
    }

    /// The Slurm settings run.json records.
    pub fn slurm(&self) -> Option<&slurm::Settings> {
        match self {
            ExecutorKind::Slurm(settings) => Some(settings),
            _ => None,
        }
    }

    /// The executor of run directory `dir`: `make(jobs)` gives each evaluator on this
    /// machine, building `jobs` variants at once (here: ahead of their turn and when
    /// re-measuring; a `--parallel` worker builds its own only).
    pub fn executor(
        &self,
        dir: &Path,
        jobs: usize,
        make: impl Fn(usize) -> Box<dyn Evaluator + Send>,
    ) -> Result<Box<dyn Executor>, Error> {
        Ok(match self {
            ExecutorKind::Here => Box::new(Local::new(make(jobs), jobs)),
            ExecutorKind::Parallel(n) => Box::new(Parallel::new(*n, || make(0))),
            ExecutorKind::Slurm(settings) => Box::new(Farm::new(dir, settings.clone())?),
            ExecutorKind::Told(_) => {
                let why = "a study's evaluations are told by its program: nothing runs here";
                return Err(Error::Internal(why.into()));
            }
        })
    }
}
