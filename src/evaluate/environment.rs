//! The one place that decides whether a failure is the variant's or the machine's.
//!
//! A variant's failure (it does not compile, crashes, prints wrong numbers) is a recorded
//! outcome and the search goes on. A failure of the environment (the disk is full, the
//! run directory became unwritable, too many open files, the compiler vanished) says
//! nothing about the variant: the run stops with [`crate::error::Error::Environment`],
//! nothing is recorded for the evaluation that hit it, and `--resume` redoes it.

use std::io::Write;
use std::path::Path;

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

/// After a failed build or run in `dir`: can the build directory still be written? A
/// program whose output was cut short by a full disk looks like a crash or a wrong output;
/// this tells the two apart.
pub fn probe(dir: &Path) -> Option<String> {
    let path = dir.join(".moldtune-probe");
    let result = std::fs::File::create(&path).and_then(|mut f| {
        f.write_all(&[0u8; PROBE_BYTES])?;
        f.sync_data()
    });
    let _ = std::fs::remove_file(&path);
    result.err().map(|e| describe(dir, &e))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_means_a_load_of_at_least_one_per_core() {
        assert_eq!(busy_at(2.5, 2).as_deref(), Some("load 2.50 on 2 cores"));
        assert_eq!(busy_at(2.0, 2).as_deref(), Some("load 2.00 on 2 cores"));
        assert!(busy_at(1.9, 2).is_none());
    }
}
