//! Writing baselines: `moldtune baseline DIR…` from run directories (the problem's default
//! as the reference, the run's verified best as the guard) and `moldtune check --update`
//! (new samples, machine and compiler for the configurations a baseline already has); both
//! measure with [`gate::record`].

use std::path::{Path, PathBuf};

use crate::check::baseline::{self, Baseline, Entry, Loaded, Recorded};
use crate::check::{evaluator, gate, load_all, progress, Options, Scratch};
use crate::error::Error;
use crate::problem::Problem;
use crate::run::driver;

/// Records every baseline in `paths` again: new samples, machine and compiler; the
/// configurations are kept.
pub fn update(paths: &[PathBuf], opts: &Options) -> Result<Vec<PathBuf>, Error> {
    let loaded = load_all(paths)?;
    let scratch = Scratch::new()?;
    let mut written = Vec::new();
    for (k, l) in loaded.into_iter().enumerate() {
        progress(
            opts,
            format!("recording {} ({} rounds)", l.baseline.name, opts.rounds),
        );
        let b = recorded(&l, opts, &scratch.dir(k), None)?;
        baseline::save(&l.file, &b)?;
        written.push(l.file);
    }
    Ok(written)
}

/// Writes a baseline for each run directory into `out`: the problem's default as the
/// reference and the run's best (its verified winner when it has one) as the guard.
pub fn from_runs(dirs: &[PathBuf], out: &Path, opts: &Options) -> Result<Vec<PathBuf>, Error> {
    let fresh: Vec<(Loaded, PathBuf)> = (dirs.iter())
        .map(|d| fresh(d, out))
        .collect::<Result<_, _>>()?;
    std::fs::create_dir_all(out)
        .map_err(|e| Error::io(format!("cannot create `{}`", out.display()), e))?;
    let scratch = Scratch::new()?;
    let mut written = Vec::new();
    for (k, (l, dir)) in fresh.into_iter().enumerate() {
        progress(
            opts,
            format!("recording {} ({} rounds)", l.baseline.name, opts.rounds),
        );
        let b = recorded(&l, opts, &scratch.dir(k), Some(&dir))?;
        baseline::save(&l.file, &b)?;
        written.push(l.file);
    }
    Ok(written)
}

/// A baseline, not yet measured, for the run in `dir`, to be written into `out`.
fn fresh(dir: &Path, out: &Path) -> Result<(Loaded, PathBuf), Error> {
    let meta = crate::run::log::read_run_json(dir)?;
    if meta.mctree.is_some() {
        let message = format!(
            "`{}` is an mctree run: a baseline needs a problem file",
            dir.display()
        );
        return Err(Error::usage(message, Some("write its best as a mold with `moldtune mctree --emit-mold DIR`, tune or measure that with `moldtune run`, then baseline that run")));
    }
    let problem = Problem::load(&meta.problem)?;
    let best = crate::report::pick::configuration(&problem, Some(dir), None, &[])?;
    let reference = problem.default_config();
    let file = out.join(format!("{}.json", problem.name));
    let rel = relative(&problem.path, out);
    let baseline = Baseline {
        format: baseline::FORMAT,
        name: problem.name.clone(),
        problem: rel,
        dataset: dataset(&problem),
        metric: metric_name(&problem),
        reference: Entry::new("default", &problem.space, &reference),
        guards: vec![Entry::new("tuned", &problem.space, &best)],
        // Filled in when it is measured (`recorded`).
        recorded: Recorded::default(),
        elsewhere: Vec::new(),
    };
    let loaded = Loaded {
        file,
        baseline,
        problem,
        reference,
        guards: vec![best],
    };
    Ok((loaded, dir.to_path_buf()))
}

/// "kernel_time (minimize)".
fn metric_name(problem: &Problem) -> String {
    fn name(v: impl serde::Serialize) -> String {
        let v = serde_json::to_value(v).unwrap_or_default();
        v.as_str().unwrap_or_default().to_string()
    }
    let (kind, goal) = (name(problem.metric.kind), name(problem.metric.goal));
    format!("{kind} ({goal})")
}

/// `path` relative to the folder `from` (both made absolute first).
fn relative(path: &Path, from: &Path) -> PathBuf {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    pathdiff::diff_paths(abs(path), abs(from)).unwrap_or_else(|| abs(path))
}

/// The PolyBench dataset the default compile command selects (`-DMEDIUM_DATASET`).
fn dataset(problem: &Problem) -> Option<String> {
    let argv = driver::default_compile_argv(problem)?;
    (argv.iter()).find_map(|a| {
        a.strip_prefix("-D")?
            .strip_suffix("_DATASET")
            .map(str::to_string)
    })
}

/// This machine and moldtune; the compiler's version unless `mock` (no compiler then).
fn recorded_info(problem: &Problem, rounds: usize, from: Option<&Path>, mock: bool) -> Recorded {
    Recorded {
        at: driver::now_rfc3339(),
        rounds,
        cpu: driver::cpu_model(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        compiler: (!mock).then(|| driver::compiler_version(problem)).flatten(),
        moldtune: env!("CARGO_PKG_VERSION").to_string(),
        from_run: from.map(|d| d.to_path_buf()),
    }
}

/// `l`'s baseline with fresh samples and recording details.
fn recorded(
    l: &Loaded,
    opts: &Options,
    work: &Path,
    from: Option<&Path>,
) -> Result<Baseline, Error> {
    let mut ev = evaluator(opts.mock);
    let samples = gate::record(l, opts.rounds, ev.as_mut(), work)?;
    let mut b = l.baseline.clone();
    b.keep_other_cpus(driver::cpu_model().as_deref());
    let from = from
        .map(|d| relative(d, baseline::folder(&l.file)))
        .or(b.recorded.from_run.take());
    b.recorded = recorded_info(&l.problem, opts.rounds, from.as_deref(), opts.mock);
    let mut it = samples.into_iter();
    let reference = it.next().unwrap_or_default();
    for (g, s) in b.guards.iter_mut().zip(it) {
        g.record(s, Some(&reference));
    }
    b.reference.record(reference, None);
    Ok(b)
}
