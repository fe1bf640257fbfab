//! Facts of the machine a run, a baseline or a check records: the time, the CPU, the
//! compiler's version.

use crate::evaluate::roofline::{self, Limits, Roofline};
use crate::problem::Problem;

/// The current time as RFC 3339 in UTC, to the second (`2026-11-22T18:00:20Z`).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// The CPU's model name (`/proc/cpuinfo`).
pub fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
}

/// The first line of the problem's compiler's `--version`.
pub fn compiler_version(problem: &Problem) -> Option<String> {
    version_of(&default_compile_argv(problem)?.into_iter().next()?)
}

/// The first line of a compiler's `--version`.
pub fn version_of(cc: &str) -> Option<String> {
    let argv = [cc.to_string(), "--version".into()];
    let out =
        crate::process::helper::output(&argv, crate::evaluate::reuse::HELPER_TIMEOUT, 1 << 20);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(str::to_string)
}

/// The template context of the default configuration (with placeholder paths).
fn default_context(problem: &Problem) -> tera::Context {
    let source = problem.mold.variant_file();
    let b =
        crate::problem::template::Builtins::placeholder(&problem.dir, &problem.sources, &source);
    crate::problem::template::context(&problem.space, &problem.default_config(), &b)
}

/// The compile command of the default configuration (with placeholder paths).
pub fn default_compile_argv(problem: &Problem) -> Option<Vec<String>> {
    problem.compile.argv(&default_context(problem)).ok()
}

/// The threads a timed run of the problem uses: its `OMP_NUM_THREADS` at the default
/// configuration, else every CPU this process may run on.
pub fn threads(problem: &Problem) -> usize {
    let ctx = default_context(problem);
    let given = (problem.env.iter())
        .find(|(k, _)| k == "OMP_NUM_THREADS")
        .and_then(|(_, t)| t.render(&ctx).ok())
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0);
    given.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// run.json's `roofline`: the problem's work and the machine's limits at its thread count
/// (from the cache, or measured now, once per CPU and compiler). A mock run has no machine
/// to measure; a probe that fails leaves the limits out with a warning.
pub fn roofline(problem: &Problem, mock: bool) -> Option<Roofline> {
    let work = problem.work?;
    let measured = || -> Result<Limits, crate::error::Error> {
        let cc = default_compile_argv(problem)
            .and_then(|a| a.into_iter().next())
            .ok_or_else(|| {
                crate::error::Error::Environment("the problem has no compiler".into())
            })?;
        let cpu = cpu_model().unwrap_or_default();
        let compiler = version_of(&cc).unwrap_or_else(|| cc.clone());
        let threads = threads(problem);
        roofline::limits(&cc, (&cpu, &compiler), threads, false).map(|(l, _)| l)
    };
    let limits = match mock {
        true => None,
        false => measured()
            .map_err(|e| {
                // The run goes on without the roofline: nothing to resume.
                let why = match e {
                    crate::error::Error::Environment(m) => m,
                    other => other.to_string(),
                };
                eprintln!("warning: no roofline for `work:` ({why}); GFLOP/s only");
            })
            .ok(),
    };
    Some(Roofline { work, limits })
}
