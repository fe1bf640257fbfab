//! Evaluating one configuration: render → [build] → [check] against the reference → [time].
//!
//! [`Evaluator`] hides the processes so the search, statistics, resume and CLI can be tested
//! with the [mock](crate::evaluate::mock) (selected by the hidden `--mock` flag) fast and
//! deterministically; [`RealEvaluator`] drives the user's compiler and program.
//!
//! Measurement protocol: the check run (untimed) doubles as a warm-up; then `repeats` serial
//! timed runs; the objective is their min or median; `spread` = (max − min) / median.
//!
//! [build]: crate::evaluate::build
//! [check]: crate::evaluate::check
//! [time]: crate::evaluate::time

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::evaluate::build::build;
use crate::evaluate::check::{check_output, checked_stream};
use crate::evaluate::child::Exit;
use crate::evaluate::environment;
use crate::evaluate::outcome::{Measurement, Status, Stop};
use crate::evaluate::reuse::{self, Reuse};
use crate::evaluate::time::{time, ADAPTIVE_FACTOR, ADAPTIVE_FLOOR_S};
use crate::evaluate::variant::{describe_exit, Build, Step, Variant};
use crate::problem::space::Config;
use crate::problem::{CheckMode, Problem, Stream};

/// The result of asking for an evaluation.
#[derive(Debug, Clone)]
pub enum Evaluated {
    Done(Measurement),
    /// Interrupted, or the machine failed, mid-evaluation: nothing is recorded, a resume
    /// redoes it.
    Stopped(Stop),
}

/// A step's product, or the evaluation's result when the step failed or was stopped.
// The large Err is moved once per step of an evaluation that takes seconds: not worth a box.
#[allow(clippy::result_large_err)]
fn ended<T>(step: Step<T>) -> Result<T, Evaluated> {
    match step {
        Step::Ok(t) => Ok(t),
        Step::Fail(m) => Err(Evaluated::Done(m)),
        Step::Stop(s) => Err(Evaluated::Stopped(s)),
    }
}

pub trait Evaluator {
    /// Builds and runs the reference (once per run directory).
    fn prepare(&mut self, problem: &Problem, run_dir: &Path) -> Result<(), Error>;
    fn evaluate(&mut self, problem: &Problem, config: &Config, eval_id: usize) -> Evaluated;
    /// Learns from an evaluation recorded earlier (a resumed run replays its log).
    fn remember(&mut self, _m: &Measurement, _eval_id: usize) {}
}

#[derive(Default)]
pub struct RealEvaluator {
    work_root: PathBuf,
    /// The reference output (`DIR/reference.out`), when the output is checked.
    reference: Option<PathBuf>,
    pub keep_builds: bool,
    reuse: Reuse,
    /// Wall seconds of one run of the fastest successful variant so far.
    best_wall: Option<f64>,
}

impl RealEvaluator {
    pub fn new() -> RealEvaluator {
        RealEvaluator::default()
    }

    /// The timeout of one timed run: adapted to the incumbent (see [`ADAPTIVE_FACTOR`]).
    pub fn run_timeout(&self, problem: &Problem) -> f64 {
        match self.best_wall {
            Some(w) => (ADAPTIVE_FACTOR * w)
                .max(ADAPTIVE_FLOOR_S)
                .min(problem.run_timeout_s),
            None => problem.run_timeout_s,
        }
    }

    /// Build → reuse an identical program's outcome, or check and time it.
    fn build_check_time(&self, v: &Variant, source: &str) -> (Evaluated, Option<String>) {
        let build = match ended(build(v, source)) {
            Ok(b) => b,
            Err(result) => return (result, None),
        };
        let exe = std::fs::read(v.exe()).unwrap_or_default();
        let key = reuse::binary_key(v, &exe);
        if let Some(m) = self.reuse.by_binary(&key, build.compile_s) {
            return (Evaluated::Done(m), Some(key));
        }
        (self.check_and_time(v, &build), Some(key))
    }

    fn check_and_time(&self, v: &Variant, build: &Build) -> Evaluated {
        if let Some(reference) = &self.reference {
            if let Err(result) = ended(check_output(v, build, reference)) {
                return result;
            }
        }
        match ended(time(v, build, self.run_timeout(v.problem))) {
            Ok(m) => Evaluated::Done(m),
            Err(result) => result,
        }
    }
}

impl Evaluator for RealEvaluator {
    fn prepare(&mut self, problem: &Problem, run_dir: &Path) -> Result<(), Error> {
        self.work_root = run_dir.join("work");
        if problem.check.mode == CheckMode::None {
            return Ok(());
        }
        let saved = run_dir.join("reference.out");
        if !saved.is_file() {
            let dir = self.work_root.join("reference");
            let _ = std::fs::remove_dir_all(&dir);
            let got = reference_output(problem, &dir, run_dir)?;
            std::fs::rename(&got, &saved).map_err(|e| Error::io("cannot save reference.out", e))?;
            let _ = std::fs::remove_dir_all(&dir);
        }
        self.reference = Some(saved);
        Ok(())
    }

    fn evaluate(&mut self, problem: &Problem, config: &Config, eval_id: usize) -> Evaluated {
        let dir = self.work_root.join(format!("eval-{eval_id}"));
        let _ = std::fs::remove_dir_all(&dir);
        let v = Variant::new(problem, config, &dir);
        let source = problem.mold.render(&problem.space, config);
        let build_key = reuse::build_key(&v, &source);
        if let Some(mut m) = self.reuse.by_build(&build_key) {
            m.build_hash = Some(build_key);
            return Evaluated::Done(m);
        }
        let (result, binary_key) = self.build_check_time(&v, &source);
        let result = blame(result, &dir);
        if !self.keep_builds {
            let _ = std::fs::remove_dir_all(&dir);
        }
        let Evaluated::Done(mut m) = result else {
            return result;
        };
        m.build_hash = Some(build_key);
        m.binary_hash = binary_key;
        self.remember(&m, eval_id);
        Evaluated::Done(m)
    }

    fn remember(&mut self, m: &Measurement, eval_id: usize) {
        if m.status == Status::Ok && m.repeats > 0 && m.run_s > 0.0 {
            let w = m.run_s / m.repeats as f64;
            self.best_wall = Some(self.best_wall.map_or(w, |b: f64| b.min(w)));
        }
        self.reuse.remember(m, eval_id);
    }
}

/// A failure that a full or unwritable build directory explains is the environment's, not
/// the variant's (timeouts are not: a full disk does not make a program slow).
fn blame(result: Evaluated, dir: &Path) -> Evaluated {
    match &result {
        Evaluated::Done(m)
            if !matches!(
                m.status,
                Status::Ok | Status::BuildTimeout | Status::RunTimeout
            ) =>
        {
            match environment::probe(dir) {
                Some(why) => Evaluated::Stopped(Stop::Environment(why)),
                None => result,
            }
        }
        _ => result,
    }
}

/// Builds the reference (the mold at its default configuration, or `check.reference`) in
/// `dir` and returns the file holding the output of its check run; every failure is an
/// [`Error::Reference`].
fn reference_output(problem: &Problem, dir: &Path, run_dir: &Path) -> Result<PathBuf, Error> {
    let config = problem.default_config();
    let (source, what) = match &problem.check.reference {
        Some(p) => (
            std::fs::read_to_string(p)
                .map_err(|e| Error::io(format!("cannot read `{}`", p.display()), e))?,
            format!("`{}`", p.display()),
        ),
        None => (
            problem.mold.render(&problem.space, &config),
            "the mold at its default configuration".to_string(),
        ),
    };
    let v = Variant::new(problem, &config, dir);
    match build(&v, &source) {
        Step::Ok(_) => {}
        Step::Fail(m) => {
            return Err(Error::Reference(format!(
                "{what} did not build ({}): {}",
                m.status,
                m.cause.unwrap_or_default()
            )))
        }
        Step::Stop(s) => return Err(stopped(s, run_dir)),
    }
    let ran = v
        .run_check(problem.run_timeout_s)
        .map_err(Error::Reference)?;
    match &ran.finished.exit {
        Exit::Interrupted => return Err(stopped(Stop::Interrupted, run_dir)),
        Exit::SpawnError(m) => return Err(stopped(Stop::Environment(m.clone()), run_dir)),
        _ if !ran.finished.success() => {
            return Err(Error::Reference(format!(
                "{what} failed to run: {}",
                describe_exit(&ran.finished, &ran.stderr, "the program")
            )))
        }
        _ => {}
    }
    let got = checked_stream(&v, &ran).to_path_buf();
    if std::fs::metadata(&got).map_or(0, |m| m.len()) == 0 {
        let stream = match problem.check.stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        return Err(Error::Reference(format!(
            "{what} printed nothing on {stream} in the check run, so no variant could be checked"
        )));
    }
    Ok(got)
}

fn stopped(s: Stop, run_dir: &Path) -> Error {
    match s {
        Stop::Interrupted => Error::Interrupted(run_dir.to_path_buf()),
        Stop::Environment(why) => Error::Environment(why),
    }
}
