//! The driver of a search: owns evaluation, asks the strategy, records every outcome, resumes
//! from the log, stops cleanly on interrupt.
//!
//! Phases of [`run`]: resolve the settings → open the run directory (lock, resume or start
//! the log, run.json: [`session`]) → prepare the evaluator (the reference output) → replay
//! the log into the searcher → loop (ask → evaluate → append → tell: [`search`]) → verify
//! the best → write the summaries ([`summary`]). A study ([`study`]) drives the same session
//! from a program's requests instead of the loop.

use crate::error::Error;
use crate::run::front_ends::FrontEnds;
use crate::run::settings::{self, RunOptions};
use crate::search::{Searcher, Strategy};

/// `moldtune run`: the problem file's search with a learner of [`crate::search`].
pub fn run(opts: RunOptions, fronts: &FrontEnds) -> Result<Summary, Error> {
    let previous = settings::previous_run(&opts.shared)?;
    let prev = previous.as_ref();
    let problem = settings::load_problem(&opts, prev)?.built("run")?;
    let s = settings::resolve(&opts, prev, &problem)?;
    if !s.mock && s.executor.runs_here() {
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

/// Runs a search with `strategy` in its run directory: the one loop behind `run` and
/// `mctree` (evaluation, results log, resume, progress, verification).
pub fn drive(l: Launch, strategy: &mut dyn Strategy) -> Result<Summary, Error> {
    let dir = (l.opts.run_dir()).unwrap_or_else(|| default_out(l.problem));
    // Lock first, so that a second run on a busy directory is told so (not "resume it").
    let _lock = crate::run::lock::lock(&dir)?;
    let dir = claim_dir(&dir, l.opts.resuming())?;
    l.s.executor.preflight()?; // before the run directory is written
    let mut session = Session::open(&l, dir)?;
    let mut executor = session.executor(l.opts.keep_builds)?;
    session.prepared(executor.prepare(l.problem, &session.dir))?;
    let lag = executor.lag();
    session.replay(strategy, &mut |m, id| executor.remember(m, id), lag);
    let termination = search::search(&mut session, strategy, executor.as_mut())?;
    let termination = session.verify(termination, &strategy.anchors(), executor.as_mut())?;
    let termination = session.finish(termination)?;
    Ok(Summary::of(&session, termination))
}

mod search;
mod session;
mod start;
pub mod study;
mod summary;
pub use session::Launch;
use session::{Arrived, Session};
use start::claim_dir;
pub use start::default_out;
pub use summary::Summary;
