//! Evaluating one configuration: render → compile → check against the reference → time.
//!
//! [`Evaluator`] hides the processes so the search, statistics, resume and CLI can be tested
//! with [`MockEvaluator`] (selected by the hidden `--mock` flag) fast and deterministically;
//! [`RealEvaluator`] drives the user's compiler and program through [`crate::evaluate::child`].
//!
//! Measurement protocol: the check run (untimed) doubles as a warm-up; then `repeats` serial
//! timed runs; the objective is their min or median; `spread` = (max − min) / median.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::Error;
use crate::evaluate::check;
use crate::evaluate::child::{self, Command, Exit, Finished};
use crate::evaluate::outcome::{Measurement, Status};
use crate::problem::space::Config;
use crate::problem::template::{self, Builtins};
use crate::problem::{CheckMode, MetricKind, Problem, Reduce, Stream};

/// The result of asking for an evaluation.
#[derive(Debug, Clone)]
pub enum Evaluated {
    Done(Measurement),
    /// moldtune was interrupted mid-evaluation: nothing is recorded, a resume redoes it.
    Interrupted,
}

pub trait Evaluator {
    /// Builds and runs the reference (once per run directory).
    fn prepare(&mut self, problem: &Problem, run_dir: &Path) -> Result<(), Error>;
    fn evaluate(&mut self, problem: &Problem, config: &Config, eval_id: usize) -> Evaluated;
    /// Learns from an evaluation recorded earlier (a resumed run replays its log).
    fn remember(&mut self, _m: &Measurement, _eval_id: usize) {}
}

/// Run timeouts adapt to the incumbent: a timed run may take at most
/// `ADAPTIVE_FACTOR` × the best variant's run time, but never less than
/// `ADAPTIVE_FLOOR_S` nor more than the problem's `timeouts.run_s`.
pub const ADAPTIVE_FACTOR: f64 = 10.0;
pub const ADAPTIVE_FLOOR_S: f64 = 1.0;

/// The kernel time printed by the program: the last stdout line that is a number alone.
pub fn parse_kernel_time(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .rev()
        .find_map(|l| l.trim().parse::<f64>().ok())
        .filter(|x| x.is_finite())
}

pub fn parse_regex(re: &regex::Regex, stdout: &str) -> Option<f64> {
    let caps = re.captures_iter(stdout).last()?;
    let m = caps.get(1).or(caps.get(0))?;
    m.as_str()
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

/// Reduces timed samples; returns (objective, spread).
pub fn reduce(samples: &[f64], how: Reduce) -> (f64, Option<f64>) {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let obj = match how {
        Reduce::Min => s[0],
        Reduce::Median => median,
    };
    let spread = (n >= 2 && median > 0.0).then(|| (s[n - 1] - s[0]) / median);
    (obj, spread)
}

pub struct RealEvaluator {
    work_root: PathBuf,
    reference: Option<Vec<u8>>,
    pub keep_builds: bool,
    /// Earlier outcomes by build hash and by binary hash: never measure the same thing twice.
    by_build: HashMap<String, (usize, Measurement)>,
    by_binary: HashMap<String, (usize, Measurement)>,
    /// Wall seconds of one run of the fastest successful variant so far.
    best_wall: Option<f64>,
}

impl RealEvaluator {
    pub fn new() -> RealEvaluator {
        RealEvaluator {
            work_root: PathBuf::new(),
            reference: None,
            keep_builds: false,
            by_build: HashMap::new(),
            by_binary: HashMap::new(),
            best_wall: None,
        }
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

    /// Hash of everything that determines a build and its runs: the rendered source, the
    /// compile command and [`RealEvaluator::run_key`], with this evaluation's paths replaced.
    fn build_key(&self, problem: &Problem, config: &Config, source: &str, dir: &Path) -> String {
        let ctx = template::context(&problem.space, config, &self.builtins(problem, dir));
        let compile = problem.compile.render(&ctx).unwrap_or_default();
        let compile = compile.replace(&dir.display().to_string(), "{work_dir}");
        let run = self.run_key(problem, config, dir);
        crate::rng::hex_hash(format!("{source}\0{compile}\0{run}").as_bytes())
    }

    /// The run command and environment of this evaluation, paths replaced by placeholders.
    fn run_key(&self, problem: &Problem, config: &Config, dir: &Path) -> String {
        let b = self.builtins(problem, dir);
        let ctx = template::context(&problem.space, config, &b);
        let mut text = problem.run.render(&ctx).unwrap_or_default();
        for (k, t) in &problem.env {
            text.push_str(&format!("\0{k}={}", t.render(&ctx).unwrap_or_default()));
        }
        text.replace(&dir.display().to_string(), "{work_dir}")
    }

    fn reuse(&self, hit: &(usize, Measurement), compile_s: f64, what: &str) -> Measurement {
        let (id, m) = hit;
        let mut m = m.clone();
        m.compile_s = compile_s;
        m.run_s = 0.0;
        m.reused_from = Some(*id);
        let note =
            format!("{what} identical to eval {id}: its outcome is reused, not measured again");
        m.cause = Some(match m.cause {
            Some(c) => format!("{note}; {c}"),
            None => note,
        });
        m
    }
}

impl Default for RealEvaluator {
    fn default() -> Self {
        Self::new()
    }
}

fn describe_exit(f: &Finished, stderr: &Path, what: &str) -> String {
    let how = match &f.exit {
        Exit::Code(c) => format!("{what} exited with code {c}"),
        Exit::Signal(s) => format!("{what} was killed by {}", child::signal_name(*s)),
        Exit::Timeout => format!("{what} timed out"),
        Exit::SpawnError(m) => m.clone(),
        Exit::Interrupted => "interrupted".into(),
    };
    let t = child::tail(stderr, 12);
    if t.trim().is_empty() {
        how
    } else {
        format!("{how}; stderr tail:\n{t}")
    }
}

/// The outputs of building and running one source.
struct Build {
    dir: PathBuf,
    compile_s: f64,
}

enum Step<T> {
    Ok(T),
    Fail(Measurement),
    Interrupted,
}

impl RealEvaluator {
    fn builtins(&self, problem: &Problem, dir: &Path) -> Builtins {
        Builtins {
            source: "variant.c".into(),
            exe: dir.join("variant").display().to_string(),
            sources: problem.sources.clone(),
            problem_dir: problem.dir.clone(),
            work_dir: dir.to_path_buf(),
        }
    }

    fn command(
        &self,
        argv: Vec<String>,
        env: Vec<(String, String)>,
        dir: &Path,
        tag: &str,
    ) -> Command {
        Command {
            argv,
            env,
            cwd: dir.to_path_buf(),
            stdout: dir.join(format!("{tag}.out")),
            stderr: dir.join(format!("{tag}.err")),
        }
    }

    fn env(
        problem: &Problem,
        ctx: &tera::Context,
        extra: &[(String, String)],
    ) -> Result<Vec<(String, String)>, String> {
        let mut env = Vec::new();
        for (k, t) in &problem.env {
            env.push((k.clone(), t.render(ctx)?));
        }
        env.extend(extra.iter().cloned());
        Ok(env)
    }

    fn build(&self, problem: &Problem, config: &Config, source: &str, dir: &Path) -> Step<Build> {
        let fail = |status, compile_s, cause: String| {
            Step::Fail(Measurement::failed(status, compile_s, 0.0, cause))
        };
        if let Err(e) =
            std::fs::create_dir_all(dir).and_then(|_| std::fs::write(dir.join("variant.c"), source))
        {
            return fail(
                Status::BuildError,
                0.0,
                format!("cannot write the variant: {e}"),
            );
        }
        let b = self.builtins(problem, dir);
        let ctx = template::context(&problem.space, config, &b);
        let argv = match problem.compile.argv(&ctx) {
            Ok(a) => a,
            Err(e) => return fail(Status::BuildError, 0.0, format!("compile template: {e}")),
        };
        let cmd = self.command(argv, vec![], dir, "compile");
        let f = child::execute(&cmd, Duration::from_secs_f64(problem.compile_timeout_s));
        match f.exit {
            Exit::Interrupted => Step::Interrupted,
            Exit::Timeout => fail(
                Status::BuildTimeout,
                f.wall_s,
                format!(
                    "the compile exceeded its timeout of {} s; command: {}",
                    problem.compile_timeout_s,
                    cmd.argv.join(" ")
                ),
            ),
            _ if !f.success() => fail(
                Status::BuildError,
                f.wall_s,
                describe_exit(&f, &cmd.stderr, "the compiler"),
            ),
            _ => {
                let exe = PathBuf::from(&b.exe);
                if !exe.is_file() {
                    return fail(
                        Status::BuildError,
                        f.wall_s,
                        format!("the compile command produced no `{}`", exe.display()),
                    );
                }
                Step::Ok(Build {
                    dir: dir.to_path_buf(),
                    compile_s: f.wall_s,
                })
            }
        }
    }

    /// One run of the program; returns the finished process and its stdout/stderr.
    fn run_once(
        &self,
        problem: &Problem,
        config: &Config,
        build: &Build,
        extra_env: &[(String, String)],
        tag: &str,
        timeout_s: f64,
    ) -> Result<(Finished, Vec<u8>, Vec<u8>), String> {
        let b = self.builtins(problem, &build.dir);
        let ctx = template::context(&problem.space, config, &b);
        let argv = problem.run.argv(&ctx)?;
        let env = Self::env(problem, &ctx, extra_env)?;
        let cmd = self.command(argv, env, &build.dir, tag);
        let f = child::execute(&cmd, Duration::from_secs_f64(timeout_s));
        let out = std::fs::read(&cmd.stdout).unwrap_or_default();
        let err = std::fs::read(&cmd.stderr).unwrap_or_default();
        Ok((f, out, err))
    }

    fn run_failure(
        f: &Finished,
        dir: &Path,
        tag: &str,
        compile_s: f64,
        run_s: f64,
        timeout_s: f64,
    ) -> Step<()> {
        match f.exit {
            Exit::Interrupted => Step::Interrupted,
            Exit::Timeout => Step::Fail(Measurement::failed(
                Status::RunTimeout,
                compile_s,
                run_s,
                format!("the run exceeded its timeout of {timeout_s} s"),
            )),
            _ => Step::Fail(Measurement::failed(
                Status::RunError,
                compile_s,
                run_s,
                describe_exit(f, &dir.join(format!("{tag}.err")), "the program"),
            )),
        }
    }

    fn check_output(&self, problem: &Problem, config: &Config, build: &Build) -> Step<()> {
        if problem.check.mode == CheckMode::None {
            return Step::Ok(());
        }
        let (f, out, err) = match self.run_once(
            problem,
            config,
            build,
            &problem.check.env,
            "check",
            problem.run_timeout_s,
        ) {
            Ok(v) => v,
            Err(e) => {
                return Step::Fail(Measurement::failed(
                    Status::RunError,
                    build.compile_s,
                    0.0,
                    e,
                ))
            }
        };
        if !f.success() {
            return Self::run_failure(
                &f,
                &build.dir,
                "check",
                build.compile_s,
                f.wall_s,
                problem.run_timeout_s,
            );
        }
        let got = if problem.check.stream == Stream::Stdout {
            out
        } else {
            err
        };
        let reference = self.reference.as_deref().unwrap_or_default();
        match check::compare(reference, &got, problem.check.rtol, problem.check.atol) {
            Ok(()) => Step::Ok(()),
            Err(why) => Step::Fail(Measurement::failed(
                Status::WrongOutput,
                build.compile_s,
                f.wall_s,
                why,
            )),
        }
    }

    fn time(&self, problem: &Problem, config: &Config, build: &Build) -> Step<Measurement> {
        let mut samples = Vec::new();
        let mut run_s = 0.0;
        let timeout_s = self.run_timeout(problem);
        for r in 0..problem.repeats {
            let tag = format!("run{r}");
            let (f, out, _) = match self.run_once(problem, config, build, &[], &tag, timeout_s) {
                Ok(v) => v,
                Err(e) => {
                    return Step::Fail(Measurement::failed(
                        Status::RunError,
                        build.compile_s,
                        run_s,
                        e,
                    ))
                }
            };
            run_s += f.wall_s;
            if !f.success() {
                return match Self::run_failure(
                    &f,
                    &build.dir,
                    &tag,
                    build.compile_s,
                    run_s,
                    problem.run_timeout_s,
                ) {
                    Step::Fail(m) => Step::Fail(m),
                    _ => Step::Interrupted,
                };
            }
            let stdout = String::from_utf8_lossy(&out);
            let value = match problem.metric.kind {
                MetricKind::KernelTime => parse_kernel_time(&stdout),
                MetricKind::WallTime => Some(f.wall_s),
                MetricKind::CpuTime => Some(f.cpu_s),
                MetricKind::Regex => {
                    parse_regex(problem.metric.regex.as_ref().expect("validated"), &stdout)
                }
            };
            match value {
                Some(v) => samples.push(v),
                None => {
                    let tail: String = stdout.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
                    return Step::Fail(Measurement::failed(
                        Status::InvalidMetric,
                        build.compile_s,
                        run_s,
                        format!("no metric in the program's stdout (last lines: `{tail}`)"),
                    ));
                }
            }
        }
        let (objective, spread) = reduce(&samples, problem.reduce);
        Step::Ok(Measurement {
            status: Status::Ok,
            objective: Some(objective),
            compile_s: build.compile_s,
            run_s,
            repeats: problem.repeats,
            spread,
            samples,
            cause: None,
            build_hash: None,
            binary_hash: None,
            reused_from: None,
        })
    }
}

impl Evaluator for RealEvaluator {
    fn prepare(&mut self, problem: &Problem, run_dir: &Path) -> Result<(), Error> {
        self.work_root = run_dir.join("work");
        if problem.check.mode == CheckMode::None {
            return Ok(());
        }
        let saved = run_dir.join("reference.out");
        if let Ok(bytes) = std::fs::read(&saved) {
            self.reference = Some(bytes);
            return Ok(());
        }
        let config = problem.default_config();
        let source = match &problem.check.reference {
            Some(p) => std::fs::read_to_string(p)
                .map_err(|e| Error::io(format!("cannot read `{}`", p.display()), e))?,
            None => problem.mold.render(&problem.space, &config),
        };
        let what = match &problem.check.reference {
            Some(p) => format!("`{}`", p.display()),
            None => "the mold at its default configuration".to_string(),
        };
        let dir = self.work_root.join("reference");
        let _ = std::fs::remove_dir_all(&dir);
        let build = match self.build(problem, &config, &source, &dir) {
            Step::Ok(b) => b,
            Step::Fail(m) => {
                return Err(Error::Reference(format!(
                    "{what} did not build ({}): {}",
                    m.status,
                    m.cause.unwrap_or_default()
                )))
            }
            Step::Interrupted => return Err(Error::Interrupted(run_dir.to_path_buf())),
        };
        let (f, out, err) = self
            .run_once(
                problem,
                &config,
                &build,
                &problem.check.env,
                "check",
                problem.run_timeout_s,
            )
            .map_err(Error::Reference)?;
        if f.exit == Exit::Interrupted {
            return Err(Error::Interrupted(run_dir.to_path_buf()));
        }
        if !f.success() {
            return Err(Error::Reference(format!(
                "{what} failed to run: {}",
                describe_exit(&f, &dir.join("check.err"), "the program")
            )));
        }
        let got = if problem.check.stream == Stream::Stdout {
            out
        } else {
            err
        };
        if got.is_empty() {
            return Err(Error::Reference(format!(
                "{what} printed nothing on {} in the check run, so no variant could be checked",
                if problem.check.stream == Stream::Stdout {
                    "stdout"
                } else {
                    "stderr"
                }
            )));
        }
        std::fs::write(&saved, &got).map_err(|e| Error::io("cannot save reference.out", e))?;
        let _ = std::fs::remove_dir_all(&dir);
        self.reference = Some(got);
        Ok(())
    }

    fn evaluate(&mut self, problem: &Problem, config: &Config, eval_id: usize) -> Evaluated {
        let dir = self.work_root.join(format!("eval-{eval_id}"));
        let _ = std::fs::remove_dir_all(&dir);
        let source = problem.mold.render(&problem.space, config);
        let build_key = self.build_key(problem, config, &source, &dir);
        if let Some(hit) = self.by_build.get(&build_key) {
            let mut m = self.reuse(hit, 0.0, "the rendered source and commands are");
            m.build_hash = Some(build_key);
            return Evaluated::Done(m);
        }
        let mut binary_key = None;
        let result = match self.build(problem, config, &source, &dir) {
            Step::Interrupted => Evaluated::Interrupted,
            Step::Fail(m) => Evaluated::Done(m),
            Step::Ok(build) => {
                let exe = std::fs::read(build.dir.join("variant")).unwrap_or_default();
                // The program's bytes plus how it is run: equal keys, equal behaviour.
                let key = crate::rng::hex_hash(
                    format!(
                        "{}{}",
                        crate::rng::hex_hash(&exe),
                        self.run_key(problem, config, &dir)
                    )
                    .as_bytes(),
                );
                binary_key = Some(key.clone());
                if let Some(hit) = self.by_binary.get(&key) {
                    Evaluated::Done(self.reuse(
                        hit,
                        build.compile_s,
                        "the built program (machine code) is",
                    ))
                } else {
                    match self.check_output(problem, config, &build) {
                        Step::Interrupted => Evaluated::Interrupted,
                        Step::Fail(m) => Evaluated::Done(m),
                        Step::Ok(()) => match self.time(problem, config, &build) {
                            Step::Interrupted => Evaluated::Interrupted,
                            Step::Fail(m) | Step::Ok(m) => Evaluated::Done(m),
                        },
                    }
                }
            }
        };
        if !self.keep_builds {
            let _ = std::fs::remove_dir_all(&dir);
        }
        match result {
            Evaluated::Done(mut m) => {
                m.build_hash = Some(build_key);
                m.binary_hash = binary_key;
                self.remember(&m, eval_id);
                Evaluated::Done(m)
            }
            other => other,
        }
    }

    fn remember(&mut self, m: &Measurement, eval_id: usize) {
        if m.status == Status::Ok && m.repeats > 0 && m.run_s > 0.0 {
            let w = m.run_s / m.repeats as f64;
            self.best_wall = Some(self.best_wall.map_or(w, |b: f64| b.min(w)));
        }
        // Timeouts depend on the (adaptive) timeout, not only on the program: not reused.
        if matches!(m.status, Status::BuildTimeout | Status::RunTimeout) || m.reused_from.is_some()
        {
            return;
        }
        if let Some(k) = &m.build_hash {
            self.by_build
                .entry(k.clone())
                .or_insert((eval_id, m.clone()));
        }
        if let Some(k) = &m.binary_hash {
            self.by_binary
                .entry(k.clone())
                .or_insert((eval_id, m.clone()));
        }
    }
}

/// A deterministic stand-in for compile + run: a smooth function of the encoded configuration
/// with a few build failures, optionally slowed by `MOLDTUNE_MOCK_DELAY_MS` per evaluation.
pub struct MockEvaluator {
    delay: Duration,
}

impl MockEvaluator {
    pub fn new() -> MockEvaluator {
        let ms = std::env::var("MOLDTUNE_MOCK_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        MockEvaluator {
            delay: Duration::from_millis(ms),
        }
    }

    /// The mock's objective: 0.1 + Σ (x_i − c_i)² over encoded features with per-name centres.
    pub fn objective(problem: &Problem, config: &Config) -> f64 {
        let x = problem.space.encode(config);
        let mut f = 0.1;
        for (p, xi) in problem.space.params.iter().zip(x) {
            let c = (crate::rng::fnv1a(p.name.as_bytes()) % 1000) as f64 / 1000.0;
            f += (xi - c).powi(2);
        }
        f
    }
}

impl Default for MockEvaluator {
    fn default() -> Self {
        Self::new()
    }
}

impl Evaluator for MockEvaluator {
    fn prepare(&mut self, _problem: &Problem, _run_dir: &Path) -> Result<(), Error> {
        Ok(())
    }

    fn evaluate(&mut self, problem: &Problem, config: &Config, _eval_id: usize) -> Evaluated {
        let until = std::time::Instant::now() + self.delay;
        while std::time::Instant::now() < until {
            if child::interrupted() {
                return Evaluated::Interrupted;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let h = crate::rng::fnv1a(problem.space.hash(config).as_bytes());
        if h % 13 == 0 && *config != problem.default_config() {
            return Evaluated::Done(Measurement::failed(
                Status::BuildError,
                0.01,
                0.0,
                "mock: this configuration does not compile".into(),
            ));
        }
        let y = Self::objective(problem, config);
        Evaluated::Done(Measurement {
            status: Status::Ok,
            objective: Some(y),
            compile_s: 0.01,
            run_s: y * problem.repeats as f64,
            repeats: problem.repeats,
            spread: Some(0.0),
            samples: vec![y; problem.repeats as usize],
            cause: None,
            build_hash: None,
            binary_hash: None,
            reused_from: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_time_is_the_last_number_line() {
        assert_eq!(parse_kernel_time("hello\n0.25\n"), Some(0.25));
        assert_eq!(parse_kernel_time("0.1\ntime 3\n"), Some(0.1));
        assert_eq!(parse_kernel_time("nothing here\n"), None);
        assert_eq!(parse_kernel_time("inf\n"), None);
    }

    #[test]
    fn reduce_min_median_spread() {
        let (m, s) = reduce(&[3.0, 1.0, 2.0], Reduce::Median);
        assert_eq!(m, 2.0);
        assert_eq!(s, Some(1.0));
        assert_eq!(reduce(&[3.0, 1.0, 2.0, 4.0], Reduce::Min).0, 1.0);
        assert_eq!(reduce(&[3.0, 1.0, 2.0, 4.0], Reduce::Median).0, 2.5);
        assert_eq!(reduce(&[5.0], Reduce::Median).1, None);
    }

    #[test]
    fn regex_metric_takes_group_one_of_last_match() {
        let re = regex::Regex::new(r"gflops=([0-9.]+)").unwrap();
        assert_eq!(parse_regex(&re, "gflops=1.5\ngflops=2.5\n"), Some(2.5));
        assert_eq!(parse_regex(&re, "none"), None);
    }
}
