//! The one place that decides whether a failure is the variant's or the machine's.
//!
//! A variant's failure (it does not compile, crashes, prints wrong numbers) is a recorded
//! outcome and the search goes on. A failure of the environment (the disk is full, the
//! run directory became unwritable, too many open files, the compiler vanished) says
//! nothing about the variant: the run stops with [`crate::error::Error::Environment`],
//! nothing is recorded for the evaluation that hit it, and `--resume` redoes it.

use std::io::Write;
use std::path::Path;

use crate::error::Error;
use crate::problem::Problem;

/// Whether the machine is busy enough that a run's timeout may be its fault rather than the
/// program's: the one-minute load average at least the number of cores (`Some`: "load 2.31
/// on 2 cores").
/// `MOLDTUNE_LOADAVG`, when set, is the load average believed instead of the machine's (for
/// tests: a busy machine cannot be made on demand).
pub fn busy() -> Option<String> {
    let text = std::env::var("MOLDTUNE_LOADAVG")
        .or_else(|_| std::fs::read_to_string("/proc/loadavg"))
        .ok()?;
    let load: f64 = text.split_whitespace().next()?.parse().ok()?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    busy_at(load, cores)
}

fn busy_at(load: f64, cores: usize) -> Option<String> {
    (load >= cores as f64).then(|| format!("load {load:.2} on {cores} cores"))
}

/// Bytes the probe writes: a file system that cannot take this much is full.
const PROBE_BYTES: usize = 64 * 1024;

/// After a failed build or run whose build directory held `held` bytes (removed by now,
/// unless builds are kept): is the work root `dir` still writable, with room for another
/// such variant? A program whose
/// output was cut short by a full disk looks like a crash or a wrong output; this tells the
/// two apart. Removing the variant's files frees what it wrote, so a disk that another
/// process filled has just that much room again: room for less than the variant held (and
/// the probe) is a full disk, while a variant that wrote much on a roomy disk (a runaway,
/// stopped by the output limit) is the variant's failure.
pub fn probe(dir: &Path, held: u64) -> Option<String> {
    let path = dir.join(".moldtune-probe");
    let result = std::fs::File::create(&path).and_then(|mut f| {
        f.write_all(&[0u8; PROBE_BYTES])?;
        f.sync_data()
    });
    let _ = std::fs::remove_file(&path);
    if let Err(e) = result {
        return Some(describe(dir, &e));
    }
    let free = free_bytes(dir)?;
    let needed = held + PROBE_BYTES as u64;
    (free < needed).then(|| {
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        format!(
            "{} ({} KiB free, the last variant needed {} KiB)",
            describe(dir, &e),
            free / 1024,
            held / 1024
        )
    })
}

/// Bytes an unprivileged writer may still use on `dir`'s file system.
fn free_bytes(dir: &Path) -> Option<u64> {
    let st = nix::sys::statvfs::statvfs(dir).ok()?;
    Some(st.blocks_available() as u64 * st.fragment_size() as u64)
}

/// Bytes the files under `dir` occupy on disk (0 when it cannot be read).
pub fn bytes_in(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    (entries.flatten())
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => bytes_in(&e.path()),
            _ => e.metadata().map_or(0, |m| m.blocks() * 512),
        })
        .sum()
}

/// "cannot write in `DIR`: No space left on device (os error 28)" plus what to do.
pub fn describe(dir: &Path, e: &std::io::Error) -> String {
    let hint = match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => "free some space",
        Some(libc::EMFILE | libc::ENFILE) => "raise the open-file limit (ulimit -n)",
        Some(libc::EACCES | libc::EPERM | libc::EROFS) => "make the run directory writable",
        _ => "fix the machine",
    };
    format!("cannot write in `{}`: {e}; {hint}", dir.display())
}

/// Refuses, before anything is made, a compile command whose program cannot be found (at the
/// default configuration: on `PATH`, or as the absolute path it is), and a simulated metric
/// without valgrind.
pub fn require_tools(problem: &Problem) -> Result<(), Error> {
    crate::evaluate::cachegrind::available(problem.metric.kind)?;
    let compile = problem.compile_program().filter(|p| !findable(p));
    if let Some(program) = compile {
        let message = format!(
            "the compile command's program `{program}` is not found (on PATH or as a path)"
        );
        let hint = "install it (clang-22: `bash scripts/setup.sh`), or fix the name in `compile:`";
        return Err(at(&problem.compile_at, message, hint));
    }
    if let Some(program) = problem.run_program().filter(|p| !findable(p)) {
        let message =
            format!("the run command's program `{program}` is not found (on PATH or as a path)");
        let hint = "install it, or fix the name in `run:`";
        return Err(at(&problem.run_at, message, hint));
    }
    Ok(())
}

/// A problem-file error at `span`, when known.
fn at(span: &Option<crate::error::Span>, message: String, hint: &str) -> Error {
    match span {
        Some(span) => Error::Config {
            span: span.clone(),
            message,
            hint: Some(hint.to_string()),
        },
        None => Error::usage(message, Some(hint)),
    }
}

/// Whether `program` names an executable: an absolute path that is one, a relative path with a
/// `/` (relative to where the compile runs: not checked), or a name found on `PATH`.
fn findable(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return !Path::new(program).is_absolute() || executable(Path::new(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| executable(&d.join(program)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_means_a_load_of_at_least_one_per_core() {
        assert_eq!(busy_at(2.5, 2).as_deref(), Some("load 2.50 on 2 cores"));
        assert_eq!(busy_at(2.0, 2).as_deref(), Some("load 2.00 on 2 cores"));
        assert!(busy_at(1.9, 2).is_none());
    }

    #[test]
    fn a_disk_without_room_for_what_the_variant_held_is_full() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), vec![1u8; 10_000]).unwrap();
        assert!(bytes_in(dir.path()) >= 10_000);
        assert_eq!(probe(dir.path(), 0), None);
        // A variant that held more than the whole disk offers: the disk is full.
        let why = probe(dir.path(), u64::MAX / 4).expect("no room");
        assert!(
            why.contains("No space left") && why.contains("free some space"),
            "{why}"
        );
    }
}
