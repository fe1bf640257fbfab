//! The machine's limits and how close a kernel comes to them (the roofline model, Williams
//! et al. 2009): the peak floating-point rate, measured by a generated kernel of independent
//! FMA chains at the widest vector width the compiler emits, and the memory bandwidth, by a
//! STREAM-like triad — each for a number of threads, measured once per CPU and compiler and
//! kept in the user's cache ([`limits`], `moldtune machine`).
//!
//! A kernel doing `flops` operations over at least `bytes` of traffic in `t` seconds runs at
//! `flops / t`; the roof over it is `min(peak, intensity × bandwidth)` with intensity
//! `flops / bytes`, and its reach is the fraction of that roof it attains.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::problem::work::Work;

/// The probe: independent FMA chains per thread, then a triad over arrays far larger than
/// the caches. Prints the vector width, the best FLOP/s and the best bytes/s of 5 rounds.
const PROBE_C: &str = include_str!("roofline_probe.c");
/// The flags the probe is built with, after the compiler (its FMAs at the widest vector width
/// the compiler targets on this CPU, contracted, threaded by OpenMP).
pub const PROBE_FLAGS: [&str; 4] = ["-O3", "-march=native", "-ffp-contract=fast", "-fopenmp"];
/// How long the probe may take (it runs for about a second).
const PROBE_TIMEOUT: Duration = Duration::from_secs(120);

/// The limits measured for one thread count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub threads: usize,
    /// Doubles per vector of the FMA probe (its widest width).
    pub vector_doubles: usize,
    pub peak_gflops: f64,
    pub bandwidth_gbs: f64,
}

impl Limits {
    /// Whether the figures can be a machine's: counts of at least 1, rates finite and
    /// positive.
    pub fn sane(&self) -> bool {
        let rate = |x: f64| x.is_finite() && x > 0.0;
        self.threads >= 1
            && self.vector_doubles >= 1
            && rate(self.peak_gflops)
            && rate(self.bandwidth_gbs)
    }
}

/// One entry of the cache: the limits of a CPU and compiler at a thread count, measured by
/// one version of the probe (a changed probe measures again).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Cached {
    cpu: String,
    compiler: String,
    #[serde(default)]
    probe: String,
    measured_at: String,
    limits: Limits,
}

/// Where the limits are kept: `$XDG_CACHE_HOME/moldtune/machine.json`, else under
/// `~/.cache`.
pub fn cache_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("moldtune").join("machine.json"))
}

/// The entries of the cache whose figures can be limits (finite, positive; a file edited
/// by hand may hold others: those are measured again).
fn read_cache(file: &Path) -> Vec<Cached> {
    let all: Vec<Cached> = std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    all.into_iter().filter(|c| c.limits.sane()).collect()
}

/// Adds `entry` to the cache in `file` (replacing the entry of its CPU, compiler and thread
/// count), under a lock and by an atomic rename: probes at once keep every entry.
fn keep(file: &Path, entry: Cached) -> Result<(), String> {
    use std::os::unix::io::AsRawFd;
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let lock = std::fs::File::create(file.with_extension("lock"))
        .map_err(|e| format!("cannot lock `{}`: {e}", file.display()))?;
    // SAFETY: flock on a file descriptor we own; released when `lock` is closed.
    unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) };
    let mut cache = read_cache(file);
    let same = |c: &Cached| {
        c.cpu == entry.cpu
            && c.compiler == entry.compiler
            && c.limits.threads == entry.limits.threads
    };
    cache.retain(|c| !same(c));
    cache.push(entry);
    let tmp = file.with_extension(format!("tmp.{}", std::process::id()));
    let bytes = serde_json::to_vec_pretty(&cache).unwrap_or_default();
    let written = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, file));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write `{}`: {e}", file.display())
    })
}

/// The limits of this CPU (`cpu`) with compiler `cc` (its `--version` line `compiler`) at
/// `threads` threads: the cached ones, else measured now and kept (`remeasure`: measured
/// regardless); with them, whether the cache holds them (else why not: the next run
/// measures again).
pub fn limits(
    cc: &str,
    (cpu, compiler): (&str, &str),
    threads: usize,
    remeasure: bool,
) -> Result<(Limits, Result<PathBuf, String>), Error> {
    let file = cache_file();
    let cache = file.as_deref().map(read_cache).unwrap_or_default();
    let probe = probe_version();
    let same = |c: &Cached| {
        c.cpu == cpu && c.compiler == compiler && c.limits.threads == threads && c.probe == probe
    };
    let no_home = || "neither XDG_CACHE_HOME nor HOME is set".to_string();
    if let Some(c) = cache.iter().find(|c| same(c)).filter(|_| !remeasure) {
        return Ok((c.limits, file.ok_or_else(no_home)));
    }
    let limits = measure(cc, threads)?;
    let entry = Cached {
        cpu: cpu.to_string(),
        compiler: compiler.to_string(),
        probe,
        measured_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        limits,
    };
    let kept = match file {
        Some(f) => keep(&f, entry).map(|_| f),
        None => Err(no_home()),
    };
    Ok((limits, kept))
}

/// The probe's version: a hash of its source and its build flags.
fn probe_version() -> String {
    let probe = format!("{PROBE_C}\n{}", PROBE_FLAGS.join(" "));
    format!("{:016x}", crate::rng::fnv1a(probe.as_bytes()))
}

/// Compiles the probe with `cc` and runs it at `threads` threads.
pub fn measure(cc: &str, threads: usize) -> Result<Limits, Error> {
    let dir = crate::scratch::Scratch::new("roofline")
        .map_err(|e| Error::Environment(format!("cannot create a scratch directory: {e}")))?;
    let src = dir.path().join("probe.c");
    let exe = dir.path().join("probe");
    std::fs::write(&src, PROBE_C)
        .map_err(|e| Error::Environment(format!("cannot write {}: {e}", src.display())))?;
    let path = |p: &Path| p.display().to_string();
    let build: Vec<String> = std::iter::once(cc)
        .chain(PROBE_FLAGS)
        .map(|s| s.to_string())
        .chain([path(&src), "-o".into(), path(&exe)])
        .collect();
    run_probe(&build, "compile")?;
    let out = run_probe(&[path(&exe), threads.to_string()], "run")?;
    parse_probe(&out, threads)
}

/// Runs one step of the probe; its standard output.
fn run_probe(argv: &[String], what: &str) -> Result<String, Error> {
    let out = crate::process::helper::output(argv, PROBE_TIMEOUT, 1 << 20);
    if !out.finished.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Environment(format!(
            "the roofline probe failed to {what} (`{}`): {}",
            argv.join(" "),
            err.lines().next().unwrap_or("no message")
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The probe's `vector_doubles N`, `flops_per_s X`, `bytes_per_s Y` lines.
fn parse_probe(out: &str, threads: usize) -> Result<Limits, Error> {
    let get = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key)?.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or_else(|| {
                Error::Environment(format!("the roofline probe printed no `{key}`: {out:?}"))
            })
    };
    Ok(Limits {
        threads,
        vector_doubles: get("vector_doubles")? as usize,
        peak_gflops: get("flops_per_s")? / 1e9,
        bandwidth_gbs: get("bytes_per_s")? / 1e9,
    })
}

/// A problem's work and, when measured, the limits of the machine it ran on at its thread
/// count (run.json's `roofline`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Roofline {
    pub work: Work,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
}

/// Where one time puts the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Reach {
    pub gflops: f64,
    /// FLOP per byte (when the work states its bytes).
    pub intensity: Option<f64>,
    /// The roof at that intensity: min(peak, intensity × bandwidth), or the peak.
    pub bound_gflops: Option<f64>,
    /// `gflops / bound_gflops`.
    pub fraction: Option<f64>,
    /// The threads the limits were measured with.
    pub threads: Option<usize>,
}

impl Roofline {
    /// The reach of a run of `seconds` (`None` unless positive and finite).
    pub fn reach(&self, seconds: f64) -> Option<Reach> {
        if !(seconds.is_finite() && seconds > 0.0) {
            return None;
        }
        let gflops = self.work.flops / seconds / 1e9;
        let intensity = self.work.bytes.map(|b| self.work.flops / b);
        let bound = self.limits.map(|l| match intensity {
            Some(i) => l.peak_gflops.min(i * l.bandwidth_gbs),
            None => l.peak_gflops,
        });
        Some(Reach {
            gflops,
            intensity,
            bound_gflops: bound,
            fraction: bound.map(|b| gflops / b),
            threads: self.limits.map(|l| l.threads),
        })
    }
}

impl Reach {
    /// `12.30 GFLOP/s, intensity 4.10 FLOP/B, 34% of the roofline bound (36.2 GFLOP/s at 1
    /// thread)`.
    pub fn describe(&self) -> String {
        let mut s = format!("{:.2} GFLOP/s", self.gflops);
        if let Some(i) = self.intensity {
            s += &format!(", intensity {i:.2} FLOP/B");
        }
        if let (Some(f), Some(b), Some(t)) = (self.fraction, self.bound_gflops, self.threads) {
            let threads = if t == 1 { "thread" } else { "threads" };
            s += &format!(
                ", {:.0}% of the roofline bound ({b:.1} GFLOP/s at {t} {threads})",
                f * 100.0
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(threads: usize, peak_gflops: f64) -> Cached {
        Cached {
            cpu: "cpu".into(),
            compiler: "cc".into(),
            probe: "p".into(),
            measured_at: "now".into(),
            limits: Limits {
                threads,
                vector_doubles: 4,
                peak_gflops,
                bandwidth_gbs: 10.0,
            },
        }
    }

    /// Probes at once keep every entry (two left one), and figures edited by hand into
    /// what no machine has (a peak of −5) are not used.
    #[test]
    fn the_cache_keeps_every_probe_and_refuses_impossible_figures() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("moldtune").join("machine.json");
        std::thread::scope(|s| {
            for t in 1..=8 {
                let f = &file;
                s.spawn(move || keep(f, entry(t, 50.0)).unwrap());
            }
        });
        let mut threads: Vec<usize> = read_cache(&file).iter().map(|c| c.limits.threads).collect();
        threads.sort();
        assert_eq!(threads, (1..=8).collect::<Vec<_>>());
        keep(&file, entry(3, -5.0)).unwrap();
        assert!(read_cache(&file).iter().all(|c| c.limits.threads != 3));
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace("50.0", "NaN");
        std::fs::write(&file, text).unwrap();
        assert!(
            read_cache(&file).is_empty(),
            "not JSON numbers: nothing is used"
        );
    }

    fn gemm(n: f64) -> Work {
        // C = alpha·A·B + beta·C on n×n: 2n³ + 3n² operations, 4n² doubles.
        Work {
            flops: 2.0 * n * n * n + 3.0 * n * n,
            bytes: Some(8.0 * 4.0 * n * n),
        }
    }

    const LIMITS: Limits = Limits {
        threads: 1,
        vector_doubles: 4,
        peak_gflops: 50.0,
        bandwidth_gbs: 10.0,
    };

    #[test]
    fn a_compute_bound_kernel_is_measured_against_the_peak() {
        let r = Roofline {
            work: gemm(1000.0),
            limits: Some(LIMITS),
        };
        // 2.003e9 operations in 0.1 s.
        let reach = r.reach(0.1).unwrap();
        assert!((reach.gflops - 20.03).abs() < 1e-9, "{reach:?}");
        // Intensity 2.003e9 / 3.2e7 = 62.6 FLOP/B: the roof is the peak.
        assert!((reach.intensity.unwrap() - 62.59375).abs() < 1e-9);
        assert_eq!(reach.bound_gflops, Some(50.0));
        assert!((reach.fraction.unwrap() - 0.4006).abs() < 1e-9);
        assert!(reach
            .describe()
            .ends_with(", 40% of the roofline bound (50.0 GFLOP/s at 1 thread)"));
    }

    #[test]
    fn a_memory_bound_kernel_is_measured_against_bandwidth_times_intensity() {
        // A triad: 2 operations per 24 bytes over 1e7 elements.
        let r = Roofline {
            work: Work {
                flops: 2e7,
                bytes: Some(24e7),
            },
            limits: Some(LIMITS),
        };
        let reach = r.reach(0.05).unwrap();
        let roof = 10.0 * (2.0 / 24.0);
        assert!((reach.bound_gflops.unwrap() - roof).abs() < 1e-12);
        assert!((reach.fraction.unwrap() - 0.4 / roof).abs() < 1e-12);
    }

    #[test]
    fn without_limits_or_bytes_only_the_rate_is_known() {
        let r = Roofline {
            work: Work {
                flops: 1e9,
                bytes: None,
            },
            limits: None,
        };
        let reach = r.reach(2.0).unwrap();
        assert_eq!(
            (reach.gflops, reach.intensity, reach.fraction),
            (0.5, None, None)
        );
        assert_eq!(reach.describe(), "0.50 GFLOP/s");
        assert!(r.reach(0.0).is_none() && r.reach(f64::NAN).is_none());
    }

    #[test]
    fn the_probe_output_is_read_and_a_missing_figure_is_an_error() {
        let l = parse_probe(
            "vector_doubles 4\nflops_per_s 3.2e10\nbytes_per_s 1.5e10\n",
            2,
        )
        .unwrap();
        assert_eq!(l.threads, 2);
        assert_eq!(l.vector_doubles, 4);
        assert!((l.peak_gflops - 32.0).abs() < 1e-9 && (l.bandwidth_gbs - 15.0).abs() < 1e-9);
        assert!(parse_probe("vector_doubles 4\nflops_per_s 3.2e10\n", 1).is_err());
    }
}
