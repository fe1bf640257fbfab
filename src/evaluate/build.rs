//! Building a variant: write its source into a compile's directory and run the compile
//! (the timed build, or the check build) under its timeout.

use crate::evaluate::environment;
use crate::evaluate::outcome::{ended, Evaluated, Measurement, Status, Step, Stop};
use crate::evaluate::variant::{describe_exit, Build, Compile, Variant};
use crate::process::Exit;

/// Writes the variant's source into `c`'s directory (`variant.c`, or the mold's own suffix:
/// [`crate::problem::mold::variant_file`]) and compiles it (after
/// the syntax check, when `c` has one) → a [`Build`], `build_error` or `build_timeout`.
pub fn build(v: &Variant, c: &Compile) -> Step<Build> {
    let written = std::fs::create_dir_all(&c.dir)
        .and_then(|_| std::fs::write(c.dir.join(v.problem.mold.variant_file()), &v.source));
    if let Err(e) = written {
        return Step::Stop(Stop::Environment(environment::describe(&c.dir, &e)));
    }
    if c.argv.is_empty() {
        return as_rendered(v, c);
    }
    let checked_s = match &c.syntax {
        Some(_) => match compile(v, c, true) {
            Step::Ok(b) => b.compile_s,
            other => return other,
        },
        None => 0.0,
    };
    match compile(v, c, false) {
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

/// A problem without a `compile:` command: the rendered source is the program (`exe` is a
/// copy of it, executable), built in no time.
fn as_rendered(v: &Variant, c: &Compile) -> Step<Build> {
    use std::os::unix::fs::PermissionsExt;
    let exe = c.exe();
    let made = std::fs::copy(c.dir.join(v.problem.mold.variant_file()), &exe)
        .and_then(|_| std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)));
    match made {
        Ok(()) => Step::Ok(Build {
            dir: c.dir.clone(),
            compile_s: 0.0,
        }),
        Err(e) => Step::Stop(Stop::Environment(environment::describe(&c.dir, &e))),
    }
}

/// Runs the compile `c` of `v` (its syntax check, which produces no program).
fn compile(v: &Variant, c: &Compile, syntax_only: bool) -> Step<Build> {
    let fail = |status, compile_s, cause: String| {
        Step::Fail(Measurement::failed(status, compile_s, 0.0, cause))
    };
    let cmd = v.compile_command(c, syntax_only);
    // Its TMPDIR (else the compiler says why it cannot write there).
    let _ = std::fs::create_dir_all(c.dir.join(crate::evaluate::variant::BUILD_TMP));
    let (timeout_s, full_s) = (c.timeout_s, c.full_timeout_s);
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
        _ if !syntax_only && !c.exe().is_file() => fail(
            Status::BuildError,
            wall_s,
            format!("the compile command produced no `{}`", c.exe().display()),
        ),
        _ => Step::Ok(Build {
            dir: c.dir.clone(),
            compile_s: wall_s,
        }),
    }
}

/// The timed build, then the check build if there is one (its compile time added: part of
/// the evaluation's cost); a failure is the evaluation's outcome.
#[allow(clippy::result_large_err)] // see `ended`
pub fn builds(v: &Variant) -> Result<Build, Evaluated> {
    let mut timed = ended(build(v, &v.compile))?;
    if let Some(c) = &v.check_build {
        match ended(build(v, c)) {
            Ok(cb) => timed.compile_s += cb.compile_s,
            Err(r) => return Err(check_build_failed(r, timed.compile_s)),
        }
    }
    Ok(timed)
}

/// A failed check build: recorded as a build failure of the variant, saying which build.
fn check_build_failed(result: Evaluated, timed_compile_s: f64) -> Evaluated {
    match result {
        Evaluated::Done(mut m) => {
            m.compile_s += timed_compile_s;
            let cause = m.cause.take().unwrap_or_default();
            m.cause = Some(format!(
                "the check build (with `check.compile_extra`) failed: {cause}"
            ));
            Evaluated::Done(m)
        }
        stopped => stopped,
    }
}
