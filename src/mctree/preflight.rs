//! The pre-flight: before a run directory exists, the untransformed program is built and run
//! once; a file that does not build or run, or whose check prints nothing to compare, is a
//! usage error, and this run fixes the metric and the run timeout.

use std::path::Path;

use crate::error::Error;
use crate::evaluate::build::build;
use crate::evaluate::evaluator::reference_outputs;
use crate::evaluate::outcome::Step;
use crate::evaluate::time::parse_kernel_time;
use crate::evaluate::variant::{describe_exit, Variant};
use crate::mctree::setup::{self, Recorded};
use crate::problem::space::Config;
use crate::problem::{CheckMode, MetricKind, Problem};

/// Builds and runs the untransformed program once (before a run directory exists): a file
/// that does not build or run, or whose check run prints nothing to compare, is a usage
/// error; decides the metric (the kernel time the program prints, else wall time) and the
/// run timeout (30× this run, 5 s to 10 min).
pub(super) fn preflight(r: &mut Recorded, problem: &mut Problem, quiet: bool) -> Result<(), Error> {
    if !quiet {
        let run = match r.run_timeout_s > 0.0 {
            true => format!("{} s", r.run_timeout_s),
            false => "600 s; then 30× its time".to_string(),
        };
        eprintln!(
            "mctree: building and running the untransformed `{}` (compile timeout {} s, run timeout {run}) ...",
            r.file.display(),
            r.compile_timeout_s
        );
    }
    let scratch = crate::scratch::Scratch::for_command("mctree")?;
    let dir = scratch.path().to_path_buf();
    let config = setup::root_config(problem);
    problem.run_timeout_s = if r.run_timeout_s > 0.0 {
        r.run_timeout_s
    } else {
        600.0
    };
    let result = probe(problem, &config, &dir).and_then(|timed| {
        if problem.check.mode == CheckMode::Output {
            reference_outputs(problem, &dir.join("reference"), &dir).map_err(|e| match e {
                Error::Reference { message: why, .. } => Error::usage(
                    format!("the output check cannot work on the untransformed program: {why}"),
                    Some(
                        "the check compares what the program prints on stderr with `PB_DUMP=1` \
                          (PolyBench: when built with -DPOLYBENCH_DUMP_ARRAYS); set `check: \
                          {stream, env, build_flags}` in `--config`, or `check: {mode: none}`",
                    ),
                ),
                other => other,
            })?;
        }
        Ok(timed)
    });
    drop(scratch);
    let (wall, kernel) = result?;
    if r.metric == MetricKind::KernelTime && kernel.is_none() {
        r.metric = MetricKind::WallTime;
    }
    if r.run_timeout_s == 0.0 {
        r.run_timeout_s = (30.0 * wall).clamp(5.0, 600.0);
    }
    problem.metric.kind = r.metric;
    problem.run_timeout_s = r.run_timeout_s;
    Ok(())
}

/// One build and run: (wall seconds, the kernel time printed, if any).
pub(super) fn probe(
    problem: &Problem,
    config: &Config,
    dir: &Path,
) -> Result<(f64, Option<f64>), Error> {
    let v = Variant::render(problem, config, dir)
        .map_err(|u| Error::usage(format!("the untransformed program: {}", u.cause), None))?;
    match build(&v, &v.compile) {
        Step::Ok(_) => {}
        Step::Fail(m) => {
            return Err(Error::usage(
                format!("the untransformed program does not build ({}):\n{}", m.status, m.cause.unwrap_or_default()),
                Some("pass what it needs after `--`: include paths, macros, extra sources such as polybench.c"),
            ))
        }
        Step::Stop(s) => return Err(s.into_error(&v.dir)),
    }
    let t0 = std::time::Instant::now();
    let ran = v.run_timed("probe", problem.run_timeout_s);
    let wall = t0.elapsed().as_secs_f64();
    if !ran.finished.success() {
        return Err(Error::usage(
            format!(
                "the untransformed program fails: {}",
                describe_exit(&ran.finished, &ran.stderr, "it")
            ),
            None,
        ));
    }
    // Without its output the kernel time is unknown, not absent: never a silent switch to
    // wall time.
    if !ran.stdout.is_file() {
        return Err(Error::Environment(format!(
            "the untransformed program's output `{}` vanished while it ran (its scratch directory was removed, or the program deleted it)",
            ran.stdout.display()
        )));
    }
    let stdout = String::from_utf8_lossy(&ran.stdout_tail()).to_string();
    Ok((wall, parse_kernel_time(&stdout)))
}
