//! One variant being evaluated: its configuration, its build directory, the template
//! context both are rendered into, its commands (compile, check run, timed runs: what
//! `moldtune show` prints is built here too) and the one path by which they are run
//! ([`Variant::execute`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::evaluate::cachegrind;
use crate::evaluate::child::{self, Command, Exit, Finished};
use crate::evaluate::outcome::{Commands, Measurement, Status, Stop};
use crate::problem::space::Config;
use crate::problem::template::{self, Builtins, Template};
use crate::problem::Problem;

/// How one step of an evaluation ended: it produced a `T`, the variant failed (a recorded
/// outcome), or the evaluation was stopped (interrupted, or the machine failed: nothing is
/// recorded).
// One per step of an evaluation (seconds of work): the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Step<T> {
    Ok(T),
    Fail(Measurement),
    Stop(Stop),
}

/// How many bytes at the end of a timed run's stdout are read for the metric.
pub const METRIC_TAIL_BYTES: u64 = 64 * 1024;

/// A built variant: where it lives and how long the compile took.
pub struct Build {
    pub dir: PathBuf,
    pub compile_s: f64,
}

/// A finished child and the files holding its output (never read whole: a variant may
/// write gigabytes).
pub struct Ran {
    pub finished: Finished,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

impl Ran {
    /// The end of stdout, where the metric is looked for.
    pub fn stdout_tail(&self) -> Vec<u8> {
        child::tail_bytes(&self.stdout, METRIC_TAIL_BYTES)
    }
}

pub struct Variant<'a> {
    pub problem: &'a Problem,
    pub config: &'a Config,
    /// The build directory: the variant's source, binary and every child's output.
    pub dir: PathBuf,
    /// Arguments appended to the compile command (`check.compile_extra` for the check
    /// build; none for the timed one).
    pub compile_extra: Vec<String>,
    /// The compile's timeout: `timeouts.compile_s`, or less once compile times are known
    /// (see [`crate::evaluate::evaluator::RealEvaluator::compile_timeout`]).
    pub compile_timeout_s: f64,
}

impl<'a> Variant<'a> {
    pub fn new(problem: &'a Problem, config: &'a Config, dir: &Path) -> Variant<'a> {
        Variant {
            problem,
            config,
            dir: dir.to_path_buf(),
            compile_extra: vec![],
            compile_timeout_s: problem.compile_timeout_s,
        }
    }

    /// The untimed *check build* of this variant, in `check/` below its directory: the
    /// same source compiled with `check.compile_extra` added; `None` when the problem has
    /// no check build (the timed binary is checked itself).
    pub fn check_build(&self) -> Option<Variant<'a>> {
        let check = &self.problem.check;
        let extra = &check.compile_extra;
        let wanted = check.mode != crate::problem::CheckMode::None && !extra.is_empty();
        wanted.then(|| Variant {
            compile_extra: extra.clone(),
            compile_timeout_s: self.compile_timeout_s,
            ..Variant::new(self.problem, self.config, &self.dir.join("check"))
        })
    }

    pub fn builtins(&self) -> Builtins {
        Builtins {
            source: "variant.c".into(),
            exe: self.exe().display().to_string(),
            sources: self.problem.sources.clone(),
            problem_dir: self.problem.dir.clone(),
            work_dir: self.dir.clone(),
        }
    }

    /// The binary the compile command must produce.
    pub fn exe(&self) -> PathBuf {
        self.dir.join("variant")
    }

    pub fn context(&self) -> tera::Context {
        template::context(&self.problem.space, self.config, &self.builtins())
    }

    /// Renders `t` with this variant's context, this evaluation's directory replaced by a
    /// placeholder (so that equal variants in different directories give equal keys).
    pub fn render_key(&self, t: &Template, ctx: &tera::Context) -> String {
        let text = t.render(ctx).unwrap_or_default();
        text.replace(&self.dir.display().to_string(), "{work_dir}")
    }

    /// A command line as a record shows it: relative to the build directory it ran in (the
    /// directory itself `.`, the problem's directory by a relative path), so that run files
    /// name no directory of the machine that made them.
    pub fn shown(&self, argv: &[String]) -> Vec<String> {
        let problem_dir = pathdiff::diff_paths(&self.problem.dir, &self.dir).map_or_else(
            || self.problem.dir.display().to_string(),
            |p| p.display().to_string(),
        );
        let (build, problem) = (
            self.dir.display().to_string(),
            self.problem.dir.display().to_string(),
        );
        argv.iter()
            .map(|a| a.replace(&build, ".").replace(&problem, &problem_dir))
            .collect()
    }

    /// The commands of this variant as results.json records them (paths relative to the
    /// build directory); `None` when a template does not render for it.
    pub fn recorded_commands(&self) -> Option<Commands> {
        let args = |c: Command| self.shown(&c.argv);
        let run = self.timed_command(0).ok()?;
        let env = run.env.clone();
        let cv = self.check_build();
        let checked = cv.as_ref().unwrap_or(self);
        let check = (self.problem.check.mode != crate::problem::CheckMode::None)
            .then(|| checked.check_command().ok().map(args))
            .flatten();
        Some(Commands {
            compile: args(self.compile_command().ok()?),
            check_build: cv.and_then(|c| c.compile_command().ok()).map(args),
            check,
            run: args(run),
            env,
        })
    }

    /// The program's environment: the problem's `env` templates plus `extra`, which wins
    /// where both name a variable.
    pub fn env(
        &self,
        ctx: &tera::Context,
        extra: &[(String, String)],
    ) -> Result<Vec<(String, String)>, String> {
        let mut env = Vec::new();
        for (k, t) in &self.problem.env {
            if !extra.iter().any(|(e, _)| e == k) {
                env.push((k.clone(), t.render(ctx)?));
            }
        }
        env.extend(extra.iter().cloned());
        Ok(env)
    }

    /// The child that runs `argv` in the build directory, its output in `tag.out`/`tag.err`.
    pub fn command(&self, argv: Vec<String>, env: Vec<(String, String)>, tag: &str) -> Command {
        Command {
            argv,
            env,
            cwd: self.dir.clone(),
            stdout: self.dir.join(format!("{tag}.out")),
            stderr: self.dir.join(format!("{tag}.err")),
            max_file_bytes: self.problem.max_output_bytes,
        }
    }

    /// The compile command, run in the build directory with moldtune's own environment.
    pub fn compile_command(&self) -> Result<Command, String> {
        let mut argv = self.problem.compile.argv(&self.context())?;
        argv.extend(self.compile_extra.iter().cloned());
        Ok(self.command(argv, vec![], "compile"))
    }

    /// A run of the program with `extra_env` added, its output in `tag.out`/`tag.err`.
    fn run_command(&self, extra_env: &[(String, String)], tag: &str) -> Result<Command, String> {
        let ctx = self.context();
        let argv = self.problem.run.argv(&ctx)?;
        let env = self.env(&ctx, extra_env)?;
        Ok(self.command(argv, env, tag))
    }

    /// The check run: the program with `check.env` added, output in `check.out`/`check.err`.
    pub fn check_command(&self) -> Result<Command, String> {
        self.run_command(&self.problem.check.env, "check")
    }

    /// Timed run `r` (from 0): the program as it is, output in `run{r}.out`/`run{r}.err`
    /// (under cachegrind for a simulated metric, its counts in `run{r}.cg`).
    pub fn timed_command(&self, r: u32) -> Result<Command, String> {
        self.timed(&format!("run{r}"))
    }

    fn timed(&self, tag: &str) -> Result<Command, String> {
        let mut cmd = self.run_command(&[], tag)?;
        let kind = self.problem.metric.kind;
        if cachegrind::simulated(kind) {
            cmd.argv = cachegrind::wrap(cmd.argv, kind, &self.counts(tag));
        }
        Ok(cmd)
    }

    /// Where cachegrind writes the counts of the timed run `tag`.
    pub fn counts(&self, tag: &str) -> PathBuf {
        self.dir.join(format!("{tag}.cg"))
    }

    /// Runs `cmd` under `timeout_s`: the one child-running path of build, check and time.
    pub fn execute(&self, cmd: &Command, timeout_s: f64) -> Finished {
        child::execute(cmd, Duration::from_secs_f64(timeout_s))
    }

    /// The check run under `timeout_s`.
    pub fn run_check(&self, timeout_s: f64) -> Result<Ran, String> {
        Ok(self.run(self.check_command()?, timeout_s))
    }

    /// A timed-style run (the program as it is) with its output in `tag.out`/`tag.err`.
    pub fn run_tagged(&self, tag: &str, timeout_s: f64) -> Result<Ran, String> {
        Ok(self.run(self.timed(tag)?, timeout_s))
    }

    fn run(&self, cmd: Command, timeout_s: f64) -> Ran {
        Ran {
            finished: self.execute(&cmd, timeout_s),
            stdout: cmd.stdout,
            stderr: cmd.stderr,
        }
    }
}

/// "the program exited with code 3; stderr tail: …" for a child that did not succeed.
pub fn describe_exit(f: &Finished, stderr: &Path, what: &str) -> String {
    let how = match &f.exit {
        Exit::Code(c) => format!("{what} exited with code {c}"),
        Exit::Signal(libc::SIGXFSZ) => format!(
            "{what} wrote more to one file than the output limit allows (`max_output_mb`; killed by SIGXFSZ)"
        ),
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

/// The failure a run of the program that did not succeed is recorded as.
pub fn run_failure<T>(ran: &Ran, compile_s: f64, run_s: f64, timeout_s: f64) -> Step<T> {
    match &ran.finished.exit {
        Exit::Interrupted => Step::Stop(Stop::Interrupted),
        Exit::SpawnError(m) => Step::Stop(Stop::Environment(m.clone())),
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
            describe_exit(&ran.finished, &ran.stderr, "the program"),
        )),
    }
}
