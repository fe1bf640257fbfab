//! One variant being evaluated, rendered once ([`Variant::render`]) into plain values: its
//! source text, its compiles (the timed build, the check build), its runs (the check run, the
//! timed runs) with their arguments, environment and directories, the compile timeouts and
//! the keys by which identical builds are recognised. The build, check and timing stages,
//! `moldtune show` and results.json's `commands` all read this one value; nothing renders a
//! template again. [`Variant::execute`] is the one path by which its commands are run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::evaluate::cachegrind;
use crate::evaluate::environment;
use crate::evaluate::outcome::{Commands, Curve, Measurement, Status, Step, Stop};
use crate::evaluate::prune::Pruner;
use crate::problem::space::Config;
use crate::problem::template::{self, Builtins};
use crate::problem::{CheckMode, Problem};
use crate::process::helper;
use crate::process::{self, Command, Exit, Finished};
use crate::rng::hex_hash;

/// The folder of a build directory its compiles use as `TMPDIR`.
pub const BUILD_TMP: &str = "tmp";

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
    /// Why the run was run a second time: its first try timed out while the machine was
    /// busy (`finished` is the second try).
    pub retried: Option<String>,
    /// What a watched run reported as it ran (`progress:`), else empty.
    pub curve: Curve,
}

impl Ran {
    /// The end of stdout, where the metric is looked for.
    pub fn stdout_tail(&self) -> Vec<u8> {
        helper::tail_bytes(&self.stdout, METRIC_TAIL_BYTES)
    }
}

/// One compile of the variant's source, rendered.
#[derive(Debug, Clone)]
pub struct Compile {
    /// Where the source is written (`variant.c`) and the program (`variant`) built.
    pub dir: PathBuf,
    pub argv: Vec<String>,
    /// The problem's syntax check (the compile with `syntax_check` added), run before the
    /// compile; the timed build only (a check build compiles the same source).
    pub syntax: Option<Vec<String>>,
    /// The compile's timeout: `timeouts.compile_s`, or less once compile times are known
    /// (see [`crate::evaluate::evaluator::RealEvaluator::compile_timeout`]).
    pub timeout_s: f64,
    /// `timeouts.compile_s`: an adapted timeout that fires is retried once at this.
    pub full_timeout_s: f64,
}

impl Compile {
    /// The binary the compile command must produce.
    pub fn exe(&self) -> PathBuf {
        self.dir.join("variant")
    }
}

/// A run of a built program, rendered: its arguments, its environment (the problem's `env`,
/// plus `check.env` for the check run) and the directory it runs in.
#[derive(Debug, Clone)]
pub struct Run {
    pub dir: PathBuf,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// A template that does not render for a configuration: the failure it is recorded as.
#[derive(Debug, Clone)]
pub struct Unrendered {
    pub status: Status,
    pub cause: String,
}

impl Unrendered {
    pub fn measurement(self) -> Measurement {
        Measurement::failed(self.status, 0.0, 0.0, self.cause)
    }
}

/// What a variant is rendered into (see the module documentation): plain values, what a
/// build slot running ahead is handed.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The build directory: the variant's source, binary and every child's output.
    pub dir: PathBuf,
    pub source: String,
    /// The timed build.
    pub compile: Compile,
    /// The untimed check build (`check.compile_extra` added, in `check/`), when the problem
    /// has one; else the timed binary is checked itself.
    pub check_build: Option<Compile>,
    /// The check run; `None` when the problem checks no output.
    pub check: Option<Run>,
    /// The timed runs (each gets its own output files, see [`Variant::timed_command`]).
    pub run: Run,
    /// The rendered source, compile and run: equal keys, equal builds and runs.
    pub build_key: String,
    /// The run command and environment, this variant's directory replaced by a placeholder.
    pub run_key: String,
}

/// A rendered variant of a problem: its values, and the problem's settings that are not
/// rendered (check mode and tolerances, metric, repeats, output limit).
pub struct Variant<'a> {
    pub problem: &'a Problem,
    pub r: Rendered,
}

impl std::ops::Deref for Variant<'_> {
    type Target = Rendered;
    fn deref(&self) -> &Rendered {
        &self.r
    }
}

impl<'a> Variant<'a> {
    /// Renders `config`'s source and commands for the build directory `dir`, once.
    pub fn render(
        problem: &'a Problem,
        config: &Config,
        dir: &Path,
    ) -> Result<Variant<'a>, Unrendered> {
        let source = problem.mold.render(&problem.space, config);
        let ctx = context(problem, config, dir);
        let argv = problem.compile.argv(&ctx).map_err(compile_failed)?;
        let syntax = (problem.syntax_check.as_ref()).map(|args| [&argv[..], args].concat());
        let compile = Compile {
            syntax,
            ..compile(problem, dir, argv)
        };
        let run = rendered_run(problem, &ctx, dir)?;
        let (check_build, check) = check_stages(problem, config, dir, &run)?;
        let run_key = keyed(&run_text(&run), dir);
        let compile_key = keyed(&compile.argv.join(" "), dir);
        let build_key = hex_hash(format!("{source}\0{compile_key}\0{run_key}").as_bytes());
        let r = Rendered {
            dir: dir.to_path_buf(),
            source,
            compile,
            check_build,
            check,
            run,
            build_key,
            run_key,
        };
        Ok(Variant { problem, r })
    }

    /// Both compiles (timed and check build) cut at `timeout_s` (the adapted timeout).
    pub fn with_compile_timeout(mut self, timeout_s: f64) -> Variant<'a> {
        self.r.compile.timeout_s = timeout_s;
        if let Some(c) = &mut self.r.check_build {
            c.timeout_s = timeout_s;
        }
        self
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
    /// build directory).
    pub fn recorded_commands(&self) -> Commands {
        Commands {
            compile: self.shown(&self.compile.argv),
            check_build: self.check_build.as_ref().map(|c| self.shown(&c.argv)),
            check: self.check.as_ref().map(|c| self.shown(&c.argv)),
            run: self.shown(&self.timed_command("run0").argv),
            env: self.run.env.clone(),
        }
    }

    /// The child that runs `argv` in `dir`, its output in `tag.out`/`tag.err` there.
    fn command(&self, dir: &Path, argv: &[String], env: &[(String, String)], tag: &str) -> Command {
        Command {
            argv: argv.to_vec(),
            env: env.to_vec(),
            cwd: dir.to_path_buf(),
            stdout: dir.join(format!("{tag}.out")),
            stderr: dir.join(format!("{tag}.err")),
            max_file_bytes: self.problem.max_output_bytes,
            pausable: false,
        }
    }

    /// The compile `c` (or its syntax check), run with moldtune's own environment but for
    /// `TMPDIR`, a folder of the build's own (clang's temporary objects of a build that is
    /// killed go with the build directory, not into the system's); pausable (a build running
    /// ahead is held stopped while a variant is timed).
    pub fn compile_command(&self, c: &Compile, syntax: bool) -> Command {
        let argv = match (&c.syntax, syntax) {
            (Some(s), true) => s,
            _ => &c.argv,
        };
        let tmp = c.dir.join(BUILD_TMP); // made by the build step (see `build::compile`)
        let env = [("TMPDIR".to_string(), tmp.display().to_string())];
        Command {
            pausable: true,
            ..self.command(&c.dir, argv, &env, "compile")
        }
    }

    /// The check run, output in `check.out`/`check.err`; `None` without an output check.
    pub fn check_command(&self) -> Option<Command> {
        (self.check.as_ref()).map(|r| self.command(&r.dir, &r.argv, &r.env, "check"))
    }

    /// A timed run: the program as it is, output in `tag.out`/`tag.err` (under cachegrind
    /// for a simulated metric, its counts in `tag.cg`).
    pub fn timed_command(&self, tag: &str) -> Command {
        let r = &self.run;
        let mut cmd = self.command(&r.dir, &r.argv, &r.env, tag);
        let kind = self.problem.metric.kind;
        if kind.is_simulated() {
            cmd.argv = cachegrind::wrap(cmd.argv, kind, &self.counts(tag));
        }
        cmd
    }

    /// Where cachegrind writes the counts of the timed run `tag`.
    pub fn counts(&self, tag: &str) -> PathBuf {
        self.run.dir.join(format!("{tag}.cg"))
    }

    /// Runs `cmd` under `timeout_s`: the one child-running path of build, check and time.
    pub fn execute(&self, cmd: &Command, timeout_s: f64) -> Finished {
        self.execute_watched(cmd, timeout_s, &mut || None)
    }

    /// [`Variant::execute`], stopped when `watch` gives a reason (see
    /// [`process::execute_watched`]).
    fn execute_watched(
        &self,
        cmd: &Command,
        timeout_s: f64,
        watch: &mut dyn FnMut() -> Option<String>,
    ) -> Finished {
        process::execute_watched(cmd, Duration::from_secs_f64(timeout_s), watch)
    }

    /// The check run under `timeout_s`; `None` without an output check.
    pub fn run_check(&self, timeout_s: f64) -> Option<Ran> {
        self.run_check_input(0, timeout_s)
    }

    /// The check run on input `k` ([`crate::problem::OutputCheck::input_env`]; 0 is
    /// [`Variant::run_check`]'s), its output in `check.out`/`check.err` (input k ≥ 1:
    /// `checkK.*`).
    pub fn run_check_input(&self, k: usize, timeout_s: f64) -> Option<Ran> {
        let r = self.check.as_ref()?;
        let env = match k {
            0 => r.env.clone(),
            k => overridden(&r.env, &self.problem.check.input_env(k)),
        };
        let tag = match k {
            0 => "check".to_string(),
            k => format!("check{k}"),
        };
        Some(self.run(self.command(&r.dir, &r.argv, &env, &tag), timeout_s))
    }

    /// A timed run with its output in `tag.out`/`tag.err`.
    pub fn run_timed(&self, tag: &str, timeout_s: f64) -> Ran {
        self.run(self.timed_command(tag), timeout_s)
    }

    /// A timed run watched by `pruner` as it runs (stopped when it reports a value worse
    /// than the median, see [`Pruner`]); `Ran::curve` holds what it reported.
    pub fn run_pruned(&self, tag: &str, timeout_s: f64, pruner: &Pruner) -> Ran {
        self.run_as(self.timed_command(tag), timeout_s, Some(pruner))
    }

    fn run(&self, cmd: Command, timeout_s: f64) -> Ran {
        self.run_as(cmd, timeout_s, None)
    }

    /// Runs `cmd`, watched by `pruner` if there is one; a run that times out while the
    /// machine is busy is run once more (the load, not the program, may have made it slow),
    /// and the retry is recorded.
    fn run_as(&self, cmd: Command, timeout_s: f64, pruner: Option<&Pruner>) -> Ran {
        let once = || match pruner {
            None => (self.execute(&cmd, timeout_s), Vec::new()),
            Some(p) => {
                let mut w = p.watch(&cmd.stdout);
                let finished = self.execute_watched(&cmd, timeout_s, &mut || w.poll());
                if !matches!(finished.exit, Exit::Stopped(_)) {
                    w.rest(); // every line printed before it ended (the last megabyte too)
                }
                (finished, w.curve)
            }
        };
        let (mut finished, mut curve) = once();
        let mut retried = None;
        if matches!(finished.exit, Exit::Timeout) {
            if let Some(busy) = environment::busy() {
                retried = Some(format!(
                    "its first try timed out while the machine was busy ({busy})"
                ));
                (finished, curve) = once();
            }
        }
        Ran {
            finished,
            stdout: cmd.stdout,
            stderr: cmd.stderr,
            retried,
            curve,
        }
    }
}

/// The template context of `config` built in `dir`.
fn context(problem: &Problem, config: &Config, dir: &Path) -> tera::Context {
    let builtins = Builtins {
        source: problem.mold.variant_file(),
        exe: dir.join("variant").display().to_string(),
        sources: problem.sources.clone(),
        problem_dir: problem.dir.clone(),
        work_dir: dir.to_path_buf(),
    };
    template::context(&problem.space, config, &builtins)
}

fn compile(problem: &Problem, dir: &Path, argv: Vec<String>) -> Compile {
    Compile {
        dir: dir.to_path_buf(),
        argv,
        syntax: None,
        timeout_s: problem.compile_timeout_s,
        full_timeout_s: problem.compile_timeout_s,
    }
}

fn compile_failed(e: String) -> Unrendered {
    Unrendered {
        status: Status::BuildError,
        cause: format!("compile template: {e}"),
    }
}

/// The run command and the problem's `env`, rendered in `ctx`.
fn rendered_run(problem: &Problem, ctx: &tera::Context, dir: &Path) -> Result<Run, Unrendered> {
    let failed = |what: &str, e: String| Unrendered {
        status: Status::RunError,
        cause: format!("{what} template: {e}"),
    };
    let argv = problem.run.argv(ctx).map_err(|e| failed("run", e))?;
    let mut env = Vec::with_capacity(problem.env.len());
    for (k, t) in &problem.env {
        env.push((k.clone(), t.render(ctx).map_err(|e| failed("env", e))?));
    }
    Ok(Run {
        dir: dir.to_path_buf(),
        argv,
        env,
    })
}

/// The check build (when `check.compile_extra` asks for one: the compile in `check/` with
/// those arguments added) and the check run (of its program, else of the timed one's), with
/// `check.env` added to the environment.
fn check_stages(
    problem: &Problem,
    config: &Config,
    dir: &Path,
    run: &Run,
) -> Result<(Option<Compile>, Option<Run>), Unrendered> {
    let check = &problem.check;
    let with_check_env = |r: Run| Run {
        env: overridden(&r.env, &check.env),
        ..r
    };
    if check.mode == CheckMode::None {
        return Ok((None, None));
    }
    if check.compile_extra.is_empty() {
        return Ok((None, Some(with_check_env(run.clone()))));
    }
    let dir = dir.join("check");
    let ctx = context(problem, config, &dir);
    let mut argv = problem.compile.argv(&ctx).map_err(compile_failed)?;
    argv.extend(check.compile_extra.iter().cloned());
    let run = rendered_run(problem, &ctx, &dir)?;
    Ok((
        Some(compile(problem, &dir, argv)),
        Some(with_check_env(run)),
    ))
}

/// `env` with the variables `extra` names replaced by `extra`'s values.
fn overridden(env: &[(String, String)], extra: &[(String, String)]) -> Vec<(String, String)> {
    let kept = env
        .iter()
        .filter(|(k, _)| !extra.iter().any(|(e, _)| e == k));
    kept.chain(extra).cloned().collect()
}

/// The run command and its environment as one text.
fn run_text(run: &Run) -> String {
    let mut text = run.argv.join(" ");
    for (k, v) in &run.env {
        text.push_str(&format!("\0{k}={v}"));
    }
    text
}

/// `text` with the build directory `dir` replaced by a placeholder (so that equal variants
/// in different directories give equal keys).
fn keyed(text: &str, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "{work_dir}")
}

/// "the program exited with code 3; stderr tail: …" for a child that did not succeed.
pub fn describe_exit(f: &Finished, stderr: &Path, what: &str) -> String {
    let how = match &f.exit {
        Exit::Code(c) => format!("{what} exited with code {c}"),
        Exit::Signal(libc::SIGXFSZ) => format!(
            "{what} wrote more to one file than the output limit allows (`max_output_mb`; killed by SIGXFSZ)"
        ),
        Exit::Signal(s) => format!("{what} was killed by {}", process::signal_name(*s)),
        Exit::Timeout => format!("{what} timed out"),
        Exit::SpawnError(m) => m.clone(),
        Exit::Interrupted => "interrupted".into(),
        Exit::Stopped(why) => format!("{what} was stopped: {why}"),
    };
    let t = helper::tail(stderr, 12);
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
        Exit::Stopped(why) => Step::Fail(Measurement::failed(
            Status::Pruned,
            compile_s,
            run_s,
            why.clone(),
        )),
        Exit::Timeout => Step::Fail(Measurement::failed(
            Status::RunTimeout,
            compile_s,
            run_s,
            match &ran.retried {
                Some(why) => format!("the run exceeded its timeout of {timeout_s} s twice ({why})"),
                None => format!("the run exceeded its timeout of {timeout_s} s"),
            },
        )),
        _ => Step::Fail(Measurement::failed(
            Status::RunError,
            compile_s,
            run_s,
            describe_exit(&ran.finished, &ran.stderr, "the program"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROBLEM: &str = r#"name: t
mold: t.mold.c
params:
  - {name: OPT, type: categorical, choices: ["-O1", "-O2"], default: "-O1"}
compile: "cc {{ OPT }} {{ source }} -o {{ exe }}"
run: "{{ exe }} {{ OPT }}"
env: {A: "{{ OPT }}", B: "b"}
check: {mode: output, env: {B: "checked"}, compile_extra: ["-DDUMP"]}
"#;

    fn problem(dir: &Path) -> Problem {
        std::fs::write(dir.join("t.mold.c"), "int main(void) { return 0; }\n").unwrap();
        std::fs::write(dir.join("t.yaml"), PROBLEM).unwrap();
        Problem::load(&dir.join("t.yaml")).unwrap()
    }

    #[test]
    fn a_variant_is_rendered_once_into_every_command_it_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let p = problem(tmp.path());
        let dir = tmp.path().join("eval-3");
        let v = Variant::render(&p, &p.default_config(), &dir).unwrap();
        let exe = dir.join("variant").display().to_string();
        assert_eq!(v.compile.argv, ["cc", "-O1", "variant.c", "-o", &exe]);
        let check = v
            .check_build
            .as_ref()
            .expect("compile_extra asks for a check build");
        assert_eq!(check.dir, dir.join("check"));
        assert_eq!(check.argv.last().map(String::as_str), Some("-DDUMP"));
        let run = v.check.as_ref().expect("an output check");
        assert_eq!(run.argv[0], dir.join("check/variant").display().to_string());
        let env = |r: &Run| {
            r.env
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(env(run), ["A=-O1", "B=checked"], "check.env wins");
        assert_eq!(env(&v.run), ["A=-O1", "B=b"]);
        assert_eq!(v.timed_command("run2").stdout, dir.join("run2.out"));
        let shown = v.recorded_commands();
        assert_eq!(shown.run, ["./variant", "-O1"]);
        assert_eq!(
            shown.check,
            Some(vec!["./check/variant".into(), "-O1".into()])
        );
    }

    #[test]
    fn equal_variants_in_other_directories_have_equal_keys_and_others_do_not() {
        let tmp = tempfile::tempdir().unwrap();
        let p = problem(tmp.path());
        let c = p.default_config();
        let a = Variant::render(&p, &c, &tmp.path().join("eval-0")).unwrap();
        let b = Variant::render(&p, &c, &tmp.path().join("eval-1")).unwrap();
        assert_eq!((&a.build_key, &a.run_key), (&b.build_key, &b.run_key));
        let mut other = c.clone();
        other.0[0] = 1.0;
        let o = Variant::render(&p, &other, &tmp.path().join("eval-0")).unwrap();
        assert_ne!(a.build_key, o.build_key);
        assert_ne!(a.run_key, o.run_key, "the run command and env differ too");
    }
}
