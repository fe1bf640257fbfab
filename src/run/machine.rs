//! Facts of the machine a run, a baseline or a check records: the time, the CPU, the
//! compiler's version.

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
    let cc = default_compile_argv(problem)?.into_iter().next()?;
    let argv = [cc, "--version".into()];
    let out =
        crate::process::helper::output(&argv, crate::evaluate::reuse::HELPER_TIMEOUT, 1 << 20);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(str::to_string)
}

/// The compile command of the default configuration (with placeholder paths).
pub fn default_compile_argv(problem: &Problem) -> Option<Vec<String>> {
    let source = problem.mold.variant_file();
    let b =
        crate::problem::template::Builtins::placeholder(&problem.dir, &problem.sources, &source);
    let ctx = crate::problem::template::context(&problem.space, &problem.default_config(), &b);
    problem.compile.argv(&ctx).ok()
}
