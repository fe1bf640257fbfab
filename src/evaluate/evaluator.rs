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
//! [check]: crate::evaluate::output_check
//! [time]: crate::evaluate::time

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::evaluate::ahead::Ahead;
use crate::evaluate::build::{build, builds};
use crate::evaluate::environment;
use crate::evaluate::interleave::{self, Remeasured, Rounds};
use crate::evaluate::outcome::{ended, Evaluated, Measurement, Status, Step, Stop};
use crate::evaluate::output_check::{check_output, checked_stream, compare_files, References};
use crate::evaluate::prune::Pruner;
use crate::evaluate::reuse::{self, Reuse};
use crate::evaluate::time::{time, ADAPTIVE_FACTOR, ADAPTIVE_FLOOR_S};
use crate::evaluate::variant::{describe_exit, Build, Ran, Rendered, Variant};
use crate::problem::space::Config;
use crate::problem::{CheckMode, Goal, Problem, Stream};
use crate::process::{self, Exit};

pub trait Evaluator {
    /// Builds and runs the reference (once per run directory).
    fn prepare(&mut self, problem: &Problem, run_dir: &Path) -> Result<(), Error>;
    /// Evaluates `config` as evaluation `eval_id`; `ahead`: what the executor did ahead of
    /// its turn (its builds, [`Evaluator::ahead`]; whether later ones are building).
    fn evaluate(
        &mut self,
        problem: &Problem,
        config: &Config,
        eval_id: usize,
        ahead: Ahead,
    ) -> Evaluated;
    /// Learns from an evaluation recorded earlier (a resumed run replays its log).
    fn remember(&mut self, _m: &Measurement, _eval_id: usize) {}
    /// Whether it builds anything (the mock does not): then an executor may build ahead.
    fn builds(&self) -> bool {
        false
    }
    /// Evaluation `eval_id` rendered for its builds to start ahead of its turn
    /// ([`crate::evaluate::ahead`]); `None` when there is nothing to build: a template that
    /// does not render, or a twin of an evaluation already made, which `evaluate` records
    /// without a build.
    fn ahead(&self, _problem: &Problem, _config: &Config, _eval_id: usize) -> Option<Rendered> {
        None
    }
    /// Re-measures `configs` interleaved until `rounds` says enough (see [`interleave`]).
    fn remeasure(
        &mut self,
        problem: &Problem,
        configs: &[Config],
        rounds: &mut dyn Rounds,
    ) -> Result<Vec<Remeasured>, Stop>;
    /// Watches timed runs with `pruner` from now on (a search's evaluations; never the
    /// verification's re-measurements). An evaluator that runs nothing ignores it.
    fn prune_with(&mut self, _pruner: Pruner) {}
}

#[derive(Default)]
pub struct RealEvaluator {
    work_root: PathBuf,
    /// The reference's outputs (`DIR/reference.out`, `DIR/reference.K.out` for check input K),
    /// when the output is checked; empty otherwise.
    references: References,
    pub keep_builds: bool,
    reuse: Reuse,
    /// Wall seconds of one run of the fastest successful variant so far.
    best_wall: Option<f64>,
    /// The best objective so far: a variant that would beat it on noisy samples is timed
    /// again first (see [`time`]).
    incumbent: Option<f64>,
    goal: Goal,
    /// Compile seconds of the variants that built (for the adaptive compile timeout).
    compile_times: Vec<f64>,
    /// Builds at once when re-measuring (`--jobs`; 0 counts as 1).
    pub jobs: usize,
    /// Stops timed runs whose progress is worse than the median (`progress:`).
    pruner: Option<Pruner>,
}

/// Compile timeouts adapt as run timeouts do: once [`COMPILE_SAMPLES`] variants have
/// built, a compile may take at most `COMPILE_FACTOR` × their median compile time, never
/// less than `COMPILE_FLOOR_S` nor more than `timeouts.compile_s` (a Polly build that
/// takes 60× the usual is cut long before the 120 s default).
pub const COMPILE_FACTOR: f64 = 5.0;
pub const COMPILE_FLOOR_S: f64 = 10.0;
pub const COMPILE_SAMPLES: usize = 3;

impl RealEvaluator {
    pub fn new() -> RealEvaluator {
        RealEvaluator::default()
    }

    /// The compile timeout: adapted to the compiles so far (see [`COMPILE_FACTOR`]).
    pub fn compile_timeout(&self, problem: &Problem) -> f64 {
        adaptive_compile_timeout(&self.compile_times, problem.compile_timeout_s)
    }

    /// The timeout of one timed run: adapted to the incumbent (see [`ADAPTIVE_FACTOR`])
    /// where the problem lets it adapt.
    pub fn run_timeout(&self, problem: &Problem) -> f64 {
        match self.best_wall.filter(|_| problem.adapts_run_timeout()) {
            Some(w) => (ADAPTIVE_FACTOR * w)
                .max(ADAPTIVE_FLOOR_S)
                .min(problem.run_timeout_s),
            None => problem.run_timeout_s,
        }
    }

    /// After the builds: reuse the outcome of identical programs, or check and time them.
    fn check_time(
        &self,
        v: &Variant,
        built: Result<Build, Evaluated>,
        hold: bool,
    ) -> (Evaluated, Option<String>) {
        let timed = match built {
            Ok(b) => b,
            Err(result) => return (result, None),
        };
        let mut exe = std::fs::read(v.compile.exe()).unwrap_or_default();
        if let Some(c) = &v.check_build {
            exe.extend(std::fs::read(c.exe()).unwrap_or_default());
        }
        let key =
            (reuse::code_key(v, &v.compile.exe())).unwrap_or_else(|| reuse::binary_key(v, &exe));
        if let Some(m) = self.reuse.by_binary(&key, timed.compile_s) {
            return (Evaluated::Done(m), Some(key));
        }
        (self.check_and_time(v, &timed, hold), Some(key))
    }

    /// The output check (when there is a reference) and the timed runs of a built variant;
    /// with `hold`, the builds running ahead are held stopped while it is timed (only then:
    /// `--parallel` workers' own builds are pausable too, and must go on).
    fn check_and_time(&self, v: &Variant, timed: &Build, hold: bool) -> Evaluated {
        if !self.references.is_empty() {
            if let Err(result) = ended(check_output(v, timed, &self.references)) {
                return result;
            }
        }
        let _paused = hold.then(process::pause);
        let timeout = (self.run_timeout(v.problem), self.pruner.as_ref());
        match ended(time(v, timed, timeout, self.incumbent)) {
            Ok(m) => Evaluated::Done(m),
            Err(result) => result,
        }
    }
}

/// The reference output a run's evaluations are checked against, in the run directory (on
/// check input K ≥ 1: `reference.K.out`, see [`saved_reference`]); written last.
pub const REFERENCE_OUT: &str = "reference.out";

/// Where a run directory keeps the reference's output on check input `k`.
pub fn saved_reference(run_dir: &Path, k: usize) -> PathBuf {
    match k {
        0 => run_dir.join(REFERENCE_OUT),
        k => run_dir.join(format!("reference.{k}.out")),
    }
}

/// The references a run directory holds (input 0 once it is complete).
fn saved_references(problem: &Problem, run_dir: &Path) -> References {
    let inputs = 0..=problem.check.variations.len();
    (inputs.map(|k| (k, saved_reference(run_dir, k))))
        .filter(|(_, p)| p.is_file())
        .collect()
}

/// Removes the references a run directory holds (the mold changed).
pub fn remove_references(problem: &Problem, run_dir: &Path) {
    for k in 0..=problem.check.variations.len() {
        let _ = std::fs::remove_file(saved_reference(run_dir, k));
    }
}

impl Evaluator for RealEvaluator {
    fn prepare(&mut self, problem: &Problem, run_dir: &Path) -> Result<(), Error> {
        self.work_root = run_dir.join("work");
        self.goal = problem.metric.goal;
        crate::evaluate::cachegrind::available(problem.metric.kind)?;
        if problem.check.mode == CheckMode::None {
            return Ok(());
        }
        if !run_dir.join(REFERENCE_OUT).is_file() {
            let dir = self.work_root.join("reference");
            let _ = std::fs::remove_dir_all(&dir);
            let got = reference_outputs(problem, &dir, run_dir)?;
            // Input 0 last: its file says the set is whole.
            for (k, path) in got.iter().rev() {
                std::fs::rename(path, saved_reference(run_dir, *k))
                    .map_err(|e| Error::io("cannot save the reference's output", e))?;
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
        self.references = saved_references(problem, run_dir);
        Ok(())
    }

    #[allow(clippy::result_large_err)] // see `ended`
    fn evaluate(
        &mut self,
        problem: &Problem,
        config: &Config,
        eval_id: usize,
        ahead: Ahead,
    ) -> Evaluated {
        let (v, built) = match ahead.built {
            Some(b) => (Variant { problem, r: b.r }, Some(b.build)),
            None => match self.rendered(problem, config, eval_id) {
                Ok(v) => (v, None),
                Err(failed) => return failed,
            },
        };
        let dir = v.dir.clone();
        let build_key = v.build_key.clone();
        if let Some(mut m) = self.reuse.by_build(&build_key) {
            let _ = std::fs::remove_dir_all(&dir); // built ahead, before the twin was known
            m.build_hash = Some(build_key);
            m.commands = Some(v.recorded_commands());
            return Evaluated::Done(m);
        }
        let built = built.unwrap_or_else(|| builds(&v));
        let (result, binary_key) = self.check_time(&v, built, ahead.others_building);
        // What a failed variant's directory held, before it is removed (see `blame`).
        let held = failed(&result).then(|| environment::bytes_in(&dir));
        if !self.keep_builds {
            let _ = std::fs::remove_dir_all(&dir);
        }
        // Probed after the build directory is gone: what the variant itself wrote (a
        // runaway's gigabyte) must not make the disk look full.
        let result = blame(result, &self.work_root, held);
        let Evaluated::Done(mut m) = result else {
            return result;
        };
        m.build_hash = Some(build_key);
        m.binary_hash = binary_key;
        m.commands = Some(v.recorded_commands());
        self.remember(&m, eval_id);
        Evaluated::Done(m)
    }

    fn builds(&self) -> bool {
        true
    }

    fn ahead(&self, problem: &Problem, config: &Config, eval_id: usize) -> Option<Rendered> {
        let v = self.rendered(problem, config, eval_id).ok()?;
        self.reuse.by_build(&v.build_key).is_none().then_some(v.r)
    }

    fn remeasure(
        &mut self,
        problem: &Problem,
        configs: &[Config],
        rounds: &mut dyn Rounds,
    ) -> Result<Vec<Remeasured>, Stop> {
        interleave::remeasure(
            problem,
            &self.work_root,
            &self.references,
            configs,
            rounds,
            self.jobs,
        )
    }

    fn remember(&mut self, m: &Measurement, eval_id: usize) {
        if m.status == Status::Ok && m.repeats > 0 && m.run_s > 0.0 {
            let w = m.run_s / m.repeats as f64;
            self.best_wall = Some(self.best_wall.map_or(w, |b: f64| b.min(w)));
        }
        self.update_incumbent(m);
        let built = !matches!(m.status, Status::BuildError | Status::BuildTimeout);
        if built && m.reused_from.is_none() && m.compile_s > 0.0 {
            self.compile_times.push(m.compile_s);
        }
        self.reuse.remember(m, eval_id);
        if let Some(p) = &self.pruner {
            p.remember(m, eval_id);
        }
    }

    fn prune_with(&mut self, pruner: Pruner) {
        self.pruner = Some(pruner);
    }
}

impl RealEvaluator {
    /// Evaluation `eval_id` rendered into its (emptied) build directory, compiles cut at the
    /// adapted timeout; a template that does not render is the evaluation's failure.
    #[allow(clippy::result_large_err)] // see `ended`
    fn rendered<'p>(
        &self,
        problem: &'p Problem,
        config: &Config,
        eval_id: usize,
    ) -> Result<Variant<'p>, Evaluated> {
        let dir = self.work_root.join(format!("eval-{eval_id}"));
        let _ = std::fs::remove_dir_all(&dir);
        match Variant::render(problem, config, &dir) {
            Ok(v) => Ok(v.with_compile_timeout(self.compile_timeout(problem))),
            Err(unrendered) => Err(Evaluated::Done(unrendered.measurement())),
        }
    }

    /// Keeps the best objective so far up to date.
    fn update_incumbent(&mut self, m: &Measurement) {
        let (Status::Ok, Some(y)) = (m.status, m.objective) else {
            return;
        };
        if self.incumbent.is_none_or(|b| self.goal.better(y, b)) {
            self.incumbent = Some(y);
        }
    }
}

/// `configured` until [`COMPILE_SAMPLES`] compiles are known, then [`COMPILE_FACTOR`] ×
/// their median, within [`COMPILE_FLOOR_S`]..=`configured`.
fn adaptive_compile_timeout(compile_times: &[f64], configured: f64) -> f64 {
    if compile_times.len() < COMPILE_SAMPLES {
        return configured;
    }
    let median = crate::stats::median(compile_times).unwrap_or(0.0);
    (COMPILE_FACTOR * median)
        .max(COMPILE_FLOOR_S)
        .min(configured)
}

/// Whether `result` is a failure a full or unwritable disk could explain (timeouts are not:
/// a full disk does not make a program slow).
fn failed(result: &Evaluated) -> bool {
    let Evaluated::Done(m) = result else {
        return false;
    };
    !matches!(
        m.status,
        Status::Ok | Status::BuildTimeout | Status::RunTimeout
    )
}

/// A failure that a full or unwritable work root explains is the environment's, not the
/// variant's (see [`environment::probe`]). `held`: for a failure, the bytes its build
/// directory held; `None` for an outcome no disk explains.
fn blame(result: Evaluated, dir: &Path, held: Option<u64>) -> Evaluated {
    let Some(held) = held else {
        return result;
    };
    match environment::probe(dir, held) {
        Some(why) => Evaluated::Stopped(Stop::Environment(why)),
        None => result,
    }
}

/// Builds the reference (the mold at its default configuration, or `check.reference`) in
/// `dir` and returns the files holding the output of its check run on each check input (the
/// inputs on which it prints what it prints on input 0 left out); every failure is an
/// [`Error::Reference`].
pub fn reference_outputs(
    problem: &Problem,
    dir: &Path,
    run_dir: &Path,
) -> Result<References, Error> {
    let config = problem.default_config();
    let (source, what) = match &problem.check.reference {
        Some(p) => (
            std::fs::read_to_string(p)
                .map_err(|e| Error::io(format!("cannot read `{}`", p.display()), e))?,
            format!("`{}`", p.display()),
        ),
        None => (
            problem.mold.render(&problem.space, &config),
            (problem.check.reference_name.clone())
                .unwrap_or_else(|| "the mold at its default configuration".into()),
        ),
    };
    let mut v = Variant::render(problem, &config, dir).map_err(|u| Error::Reference {
        message: format!("{what}: {}", u.cause),
        built: false,
    })?;
    v.r.source = source;
    reference_built(&v, &what, run_dir)?;
    let mut out: References = vec![];
    for k in 0..=problem.check.variations.len() {
        let got = reference_on(&v, k, &what, run_dir)?;
        let same =
            |(_, first): &(usize, PathBuf)| std::fs::read(first).ok() == std::fs::read(&got).ok();
        if k == 0 || !out.first().is_some_and(same) {
            out.push((k, got));
        }
    }
    Ok(out)
}

/// The reference's output on check input `k`, kept apart from the other inputs' and checked
/// to be the same on a second run.
fn reference_on(v: &Variant, k: usize, what: &str, run_dir: &Path) -> Result<PathBuf, Error> {
    let failed = |message| Error::Reference {
        message,
        built: true,
    };
    let what = match v.problem.check.input_name(k) {
        Some(on) => format!("{what} (on the check's input {on})"),
        None => what.to_string(),
    };
    let ran = reference_ran(v, k, &what, run_dir)?;
    let got = checked_stream(v, &ran).with_extension(format!("{k}.reference"));
    std::fs::rename(checked_stream(v, &ran), &got)
        .map_err(|e| Error::io("cannot keep the reference's output", e))?;
    if std::fs::metadata(&got).map_or(0, |m| m.len()) == 0 {
        let stream = match v.problem.check.stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        return Err(failed(format!(
            "{what} printed nothing on {stream} in the check run, so no variant could be checked"
        )));
    }
    same_twice(v, k, &got, &what).map_err(failed)?;
    Ok(got)
}

/// The reference built (from its check build when there is one): one that does not build is
/// [`Error::Reference`].
fn reference_built(v: &Variant, what: &str, run_dir: &Path) -> Result<(), Error> {
    match build(v, v.check_build.as_ref().unwrap_or(&v.compile)) {
        Step::Ok(_) => Ok(()),
        Step::Fail(m) => {
            let cause = m.cause.unwrap_or_default();
            Err(Error::Reference {
                message: format!("{what} did not build ({}): {cause}", m.status),
                built: false,
            })
        }
        Step::Stop(s) => Err(s.into_error(run_dir)),
    }
}

/// The built reference run once on check input `k` for its output: one that does not run is
/// [`Error::Reference`].
fn reference_ran(v: &Variant, k: usize, what: &str, run_dir: &Path) -> Result<Ran, Error> {
    let failed = |message| Error::Reference {
        message,
        built: true,
    };
    let Some(ran) = v.run_check_input(k, v.problem.run_timeout_s) else {
        return Err(failed(format!("{what}: the problem checks no output")));
    };
    match &ran.finished.exit {
        Exit::Interrupted => Err(Stop::Interrupted.into_error(run_dir)),
        Exit::SpawnError(m) => Err(Stop::Environment(m.clone()).into_error(run_dir)),
        _ if !ran.finished.success() => Err(failed(format!(
            "{what} failed to run: {}",
            describe_exit(&ran.finished, &ran.stderr, "the program")
        ))),
        _ => Ok(ran),
    }
}

/// Runs the reference's check a second time: an output that differs between two runs of one
/// program (a printed time, an address) would fail every variant, the reference included.
fn same_twice(v: &Variant, k: usize, got: &Path, what: &str) -> Result<(), String> {
    let first = got.to_path_buf();
    let problem = v.problem;
    let Some(again) = v.run_check_input(k, problem.run_timeout_s) else {
        return Ok(());
    };
    if !again.finished.success() {
        let why = describe_exit(&again.finished, &again.stderr, "the program");
        return Err(format!("{what} failed on its second run: {why}"));
    }
    let (rtol, atol) = (problem.check.rtol, problem.check.atol);
    match compare_files(&first, checked_stream(v, &again), rtol, atol) {
        Ok(()) => Ok(()),
        Err(why) => Err(format!(
            "{what} prints a different output each time it runs ({why}{}), so no variant can be checked against it; print what varies (a time, an address) on the other stream, or turn the output check off",
            first_difference(&first, checked_stream(v, &again))
        )),
    }
}

/// `; first at line N: `a` then `b`` for two texts that differ.
fn first_difference(a: &Path, b: &Path) -> String {
    let (Ok(a), Ok(b)) = (std::fs::read(a), std::fs::read(b)) else {
        return String::new();
    };
    let (a, b) = (String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
    let clip = |s: &str| s.chars().take(80).collect::<String>();
    let mut lines = a.lines().zip(b.lines()).enumerate();
    match lines.find(|(_, (x, y))| x != y) {
        Some((n, (x, y))) => format!(
            "; first at line {}: `{}` then `{}`",
            n + 1,
            clip(x),
            clip(y)
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_timeouts_adapt_to_the_median_within_floor_and_limit() {
        assert_eq!(
            adaptive_compile_timeout(&[1.0, 2.0], 120.0),
            120.0,
            "too few compiles"
        );
        assert_eq!(
            adaptive_compile_timeout(&[1.0, 1.0, 1.0], 120.0),
            10.0,
            "the floor"
        );
        assert_eq!(
            adaptive_compile_timeout(&[4.0, 3.0, 5.0, 90.0], 120.0),
            22.5
        );
        assert_eq!(
            adaptive_compile_timeout(&[40.0, 50.0, 60.0], 120.0),
            120.0,
            "the limit"
        );
    }
}
