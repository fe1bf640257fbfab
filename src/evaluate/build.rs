//! Building a variant: write the rendered source into its build directory and run the
//! compile command (plus the variant's extra arguments: those of the check build) under the
//! compile timeout.

use crate::evaluate::child::Exit;
use crate::evaluate::environment;
use crate::evaluate::outcome::{Measurement, Status, Stop};
use crate::evaluate::variant::{describe_exit, Build, Step, Variant};

/// Writes `source` as `variant.c` and compiles it → a [`Build`], `build_error` or
/// `build_timeout`.
pub fn build(v: &Variant, source: &str) -> Step<Build> {
    let written = std::fs::create_dir_all(&v.dir)
        .and_then(|_| std::fs::write(v.dir.join("variant.c"), source));
    if let Err(e) = written {
        return Step::Stop(Stop::Environment(environment::describe(&v.dir, &e)));
    }
    // The problem's syntax check first (timed builds only: a check build compiles the same
    // source), then the compile.
    let checked_s = match &v.problem.syntax_check {
        Some(args) if v.compile_extra.is_empty() => {
            let syntax = Variant {
                compile_extra: args.clone(),
                ..Variant::new(v.problem, v.config, &v.dir)
            };
            match compile(&syntax, true) {
                Step::Ok(b) => b.compile_s,
                other => return other,
            }
        }
        _ => 0.0,
    };
    match compile(v, false) {
        Step::Ok(b) => Step::Ok(Build {
            compile_s: b.compile_s + checked_s,
            ..b
        }),
        Step::Fail(mut m) => {
            m.compile_s += checked_s;
            Step::Fail(m)
        }
        stop => stop,
    }
}

/// Runs `v`'s compile command (a syntax check produces no program).
fn compile(v: &Variant, syntax_only: bool) -> Step<Build> {
    let fail = |status, compile_s, cause: String| {
        Step::Fail(Measurement::failed(status, compile_s, 0.0, cause))
    };
    let cmd = match v.compile_command() {
        Ok(c) => c,
        Err(e) => return fail(Status::BuildError, 0.0, format!("compile template: {e}")),
    };
    let (timeout_s, full_s) = (v.compile_timeout_s, v.problem.compile_timeout_s);
    let mut f = v.execute(&cmd, timeout_s);
    let mut retried_s = None;
    if matches!(f.exit, Exit::Timeout) && timeout_s < full_s {
        // The adapted timeout may fire only because the machine is busy (a 1–3 s Polly
        // build cut at the 10 s floor under load): one retry at the configured limit
        // before a timeout is recorded and learnt as infeasible.
        retried_s = Some(f.wall_s);
        f = v.execute(&cmd, full_s);
    }
    let wall_s = f.wall_s + retried_s.unwrap_or(0.0);
    match &f.exit {
        Exit::Interrupted => Step::Stop(Stop::Interrupted),
        // The compiler could not be started (vanished, too many open files, ...).
        Exit::SpawnError(m) => Step::Stop(Stop::Environment(m.clone())),
        Exit::Timeout => fail(
            Status::BuildTimeout,
            wall_s,
            format!(
                "the compile exceeded {}; command: {}",
                match retried_s {
                    Some(_) => format!("the timeout adapted to the compiles so far, {timeout_s} s, and, retried, the configured `timeouts.compile_s` of {full_s} s"),
                    None => format!("its timeout of {timeout_s} s"),
                },
                v.shown(&cmd.argv).join(" ")
            ),
        ),
        _ if !f.success() => fail(
            Status::BuildError,
            wall_s,
            describe_exit(
                &f,
                &cmd.stderr,
                if syntax_only {
                    "the syntax check"
                } else {
                    "the compiler"
                },
            ),
        ),
        _ if !syntax_only && !v.exe().is_file() => fail(
            Status::BuildError,
            wall_s,
            format!("the compile command produced no `{}`", v.exe().display()),
        ),
        _ => Step::Ok(Build {
            dir: v.dir.clone(),
            compile_s: wall_s,
        }),
    }
}
