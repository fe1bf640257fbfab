//! `moldtune measure`: build, check and time one configuration (the default, or one of a
//! run's, with `--set` overrides) outside any search, e.g. to re-measure a tuned result with
//! more repeats.

use std::path::Path;

use crate::error::Error;
use crate::evaluate::outcome::{Status, Stop};
use crate::report::pick;

#[derive(Debug, serde::Serialize)]
pub struct Measured {
    pub config: String,
    pub status: Status,
    pub objective: Option<f64>,
    pub samples: Vec<f64>,
    pub spread: Option<f64>,
    /// The `record:` quantities of the timed runs (their median).
    pub recorded: std::collections::BTreeMap<String, f64>,
    pub cause: Option<String>,
}

/// Builds, checks and times one configuration in a scratch directory.
pub fn measure(
    problem_path: &Path,
    which: &pick::Which,
    limits: crate::run::limits::Limits,
) -> Result<Measured, Error> {
    use crate::evaluate::Evaluated;
    let mut problem = crate::problem::Problem::load(problem_path)?.built("measure")?;
    limits.apply(&mut problem)?;
    problem.run_timeout_given |= limits.run_timeout.is_some();
    let config = pick::configuration(&problem, which)?;
    let dir = crate::scratch::Scratch::for_command("measure")?;
    let scratch = dir.path().to_path_buf();
    let mut ev = crate::evaluate::make_evaluator(false, false, 0);
    let result = ev.prepare(&problem, &scratch).map(|_| {
        ev.evaluate(
            &problem,
            &config,
            0,
            crate::evaluate::ahead::Ahead::default(),
        )
    });
    drop(dir);
    match result? {
        Evaluated::Stopped(Stop::Interrupted) => Err(Error::Interrupted(scratch, "run")),
        Evaluated::Stopped(Stop::Environment(why)) => Err(Error::Environment(why)),
        Evaluated::Done(m) => Ok(Measured {
            config: problem.space.describe(&config),
            status: m.status,
            objective: m.objective,
            samples: m.samples,
            spread: m.spread,
            recorded: m.recorded,
            cause: m.cause,
        }),
    }
}
