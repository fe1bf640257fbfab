//! Re-measuring several configurations *interleaved*: each is built (and its output
//! checked) once, then timed in rounds, one run of each per round, the order rotating from
//! round to round (A B C, B C A, C A B, …). A load spike or a slow drift of the machine
//! then hits all of them alike, so their ratios hold where separately measured absolute
//! times do not. The end-of-run verification, `moldtune best --verify` and `moldtune
//! check` use it; how many rounds is a [`Rounds`] rule: a fixed count, or as many as a
//! statistical decision needs.

use std::path::Path;

use crate::evaluate::build::build;
use crate::evaluate::outcome::Step;
use crate::evaluate::outcome::{Status, Stop};
use crate::evaluate::output_check::{check_output, References};
use crate::evaluate::time::sample;
use crate::evaluate::variant::{Build, Compile, Variant};
use crate::problem::space::Config;
use crate::problem::Problem;

/// What became of one configuration: its samples, or why it could not be re-measured.
pub type Remeasured = Result<Vec<f64>, Failed>;

/// A configuration that failed to build, check or run when re-measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    pub status: Status,
    pub cause: String,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.status, self.cause)
    }
}

/// When to stop adding rounds.
pub trait Rounds {
    /// Called after each round with the samples so far (`done` rounds): true stops.
    fn enough(&mut self, done: usize, so_far: &[Remeasured]) -> bool;

    /// Whether a configuration with these samples needs no more runs (its value does not
    /// vary): later rounds leave it out. None is, unless the rule says so.
    fn settled(&self, samples: &[f64]) -> bool {
        let _ = samples;
        false
    }
}

/// A fixed number of rounds.
impl Rounds for usize {
    fn enough(&mut self, done: usize, _: &[Remeasured]) -> bool {
        done >= *self
    }
}

/// Builds and checks each of `configs` under `work/verify-K`, `jobs` at once (nothing is
/// timed yet), then times them in interleaved rounds until `rounds` says enough. A
/// configuration that fails is left out of later rounds with its cause; an interrupt or a
/// fault of the machine stops it all.
pub fn remeasure(
    problem: &Problem,
    work: &Path,
    references: &References,
    configs: &[Config],
    rounds: &mut dyn Rounds,
    jobs: usize,
) -> Result<Vec<Remeasured>, Stop> {
    let dirs: Vec<_> = (0..configs.len())
        .map(|k| work.join(format!("verify-{k}")))
        .collect();
    let variants: Vec<_> = (configs.iter().zip(&dirs))
        .map(|(c, d)| Variant::render(problem, c, d))
        .collect();
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    let mut out: Vec<Remeasured> = Vec::with_capacity(configs.len());
    for batch in variants.chunks(jobs.max(1)) {
        let prepared: Vec<_> = std::thread::scope(|s| {
            let started: Vec<_> = (batch.iter())
                .map(|v| {
                    s.spawn(move || match v {
                        Ok(v) => prepare(v, references).map(|r| r.map(|()| Vec::new())),
                        Err(u) => Ok(Err(cause(u.clone().measurement()))),
                    })
                })
                .collect();
            let joined = started.into_iter().map(|h| h.join());
            joined
                .map(|j| {
                    j.unwrap_or_else(|_| Err(Stop::Environment("a build thread panicked".into())))
                })
                .collect()
        });
        for p in prepared {
            out.push(p?);
        }
    }
    let mut round = 0;
    while !rounds.enough(round, &out) && out.iter().any(Result::is_ok) {
        for i in 0..variants.len() {
            let k = (i + round) % variants.len();
            let Ok(samples) = &mut out[k] else { continue };
            let Ok(v) = &variants[k] else { continue };
            if rounds.settled(samples) {
                continue;
            }
            match one_run(v, round)? {
                Ok(x) => samples.push(x),
                Err(why) => out[k] = Err(why),
            }
        }
        round += 1;
    }
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    Ok(out)
}

/// Builds a variant (and its check build, when it has one) and checks the output.
fn prepare(v: &Variant, references: &References) -> Result<Result<(), Failed>, Stop> {
    let timed = match built(v, &v.compile)? {
        Ok(b) => b,
        Err(why) => return Ok(Err(why)),
    };
    if references.is_empty() {
        return Ok(Ok(()));
    }
    let checked = match &v.check_build {
        None => check_output(v, &timed, references),
        Some(c) => match built(v, c)? {
            Ok(cb) => check_output(v, &cb, references),
            Err(why) => return Ok(Err(why)),
        },
    };
    outcome(checked)
}

fn built(v: &Variant, c: &Compile) -> Result<Result<Build, Failed>, Stop> {
    outcome(build(v, c))
}

/// A step as (stopped) or (failed with its cause / produced).
fn outcome<T>(step: Step<T>) -> Result<Result<T, Failed>, Stop> {
    match step {
        Step::Ok(t) => Ok(Ok(t)),
        Step::Fail(m) => Ok(Err(cause(m))),
        Step::Stop(s) => Err(s),
    }
}

/// One timed run of round `round`: its metric.
fn one_run(v: &Variant, round: usize) -> Result<Result<f64, Failed>, Stop> {
    let timed = sample(v, &format!("verify{round}"), v.problem.run_timeout_s, None);
    Ok(outcome(timed)?.map(|s| s.x))
}

fn cause(m: crate::evaluate::outcome::Measurement) -> Failed {
    Failed {
        status: m.status,
        cause: m.cause.unwrap_or_default(),
    }
}
