//! `moldtune check`, the CI regression gate, a front end onto the evaluation like
//! `mctree`: each [`baseline`] names a problem, a reference configuration and the
//! configurations to guard; [`gate`] rebuilds them, checks their output and times them
//! interleaved until the [`rule`] decides whether the guarded speed-ups still hold;
//! [`output`] prints the table and writes Markdown, JUnit XML or JSON.
//!
//! `moldtune baseline DIR…` writes a baseline from run directories, and `moldtune check
//! --update` records a baseline's samples again.

pub mod baseline;
pub mod gate;
pub mod output;
pub mod rule;
pub mod simulate;

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::evaluate::{Evaluator, MockEvaluator, RealEvaluator};
use crate::run::driver;
use baseline::{Baseline, Entry, Loaded, Recorded};
use gate::Guarded;
use rule::Rule;

/// Where `moldtune check` looks when given no baseline.
pub const DEFAULT_BASELINES: &str = "results/baselines";

/// What `moldtune check` and `moldtune baseline` were asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub rule: Rule,
    /// Rounds when recording a baseline.
    pub rounds: usize,
    /// Testing: the mock evaluator instead of a compiler.
    pub mock: bool,
    pub quiet: bool,
}

/// The verdicts of one check.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Checked {
    pub rule: Rule,
    pub guarded: Vec<Guarded>,
    pub seconds: f64,
}

impl Checked {
    /// The worst verdict's exit code.
    pub fn exit_code(&self) -> u8 {
        (self.guarded.iter().map(|g| g.verdict))
            .max_by_key(|v| v.severity())
            .map_or(0, |v| v.exit_code())
    }
}

/// Checks every baseline in `paths` (files, or folders of `*.json`). All are read and
/// resolved before anything is built, so bad input costs nothing.
pub fn check(paths: &[PathBuf], opts: &Options) -> Result<Checked, Error> {
    let start = std::time::Instant::now();
    let loaded = load_all(paths)?;
    loaded.iter().try_for_each(Loaded::require_samples)?;
    let scratch = Scratch::new()?;
    let mut guarded = Vec::new();
    for (k, l) in loaded.iter().enumerate() {
        let notes = notes(l, opts.mock);
        for n in &notes {
            eprintln!("warning: {}: {n}", l.baseline.name);
        }
        progress(
            opts,
            format!("checking {} ({}/{})", l.baseline.name, k + 1, loaded.len()),
        );
        let mut ev = evaluator(opts.mock);
        let mut got = gate::check(l, opts.rule, ev.as_mut(), &scratch.dir(k))?;
        for g in &mut got {
            g.notes.clone_from(&notes);
            progress(opts, output::line(g));
        }
        guarded.extend(got);
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(Checked {
        rule: opts.rule,
        guarded,
        seconds,
    })
}

fn load_all(paths: &[PathBuf]) -> Result<Vec<Loaded>, Error> {
    let default = [PathBuf::from(DEFAULT_BASELINES)];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    if paths == default && !default[0].exists() {
        let message = format!("no baselines given and no `{DEFAULT_BASELINES}` here");
        return Err(Error::usage(
            message,
            Some("name baseline files or folders, or write one with `moldtune baseline DIR`"),
        ));
    }
    baseline::files(paths)?
        .iter()
        .map(|f| baseline::load(f))
        .collect()
}

fn progress(opts: &Options, line: String) {
    if !opts.quiet {
        eprintln!("{line}");
    }
}

fn evaluator(mock: bool) -> Box<dyn Evaluator> {
    match mock {
        true => Box::new(MockEvaluator::new()),
        false => {
            crate::evaluate::child::install_signal_handlers();
            crate::evaluate::child::become_subreaper();
            Box::new(RealEvaluator::new())
        }
    }
}

/// What differs from the recording in a way that can move the ratio.
fn notes(l: &Loaded, mock: bool) -> Vec<String> {
    let then = &l.baseline.recorded;
    let mut out = Vec::new();
    let cpu = driver::cpu_model();
    if !mock && then.cpu.is_some() && cpu != then.cpu {
        out.push(format!(
            "recorded on `{}`, checked on `{}`: ratios carry over between machines of one kind, not always across CPU families",
            then.cpu.as_deref().unwrap_or_default(),
            cpu.as_deref().unwrap_or("an unknown CPU")
        ));
    }
    let now = (!mock)
        .then(|| driver::compiler_version(&l.problem))
        .flatten();
    if !mock && now != then.compiler {
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "an unknown compiler".into());
        out.push(format!(
            "recorded with `{}`, checked with `{}`: a new compiler can move the ratio; `moldtune check --update {}` accepts the new one",
            show(&then.compiler),
            show(&now),
            l.file.display()
        ));
    }
    out
}

/// A scratch folder for the builds, removed at the end (also on an error).
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, Error> {
        let dir = std::env::temp_dir().join(format!("moldtune-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io("cannot create a scratch directory", e))?;
        Ok(Scratch(dir))
    }

    fn dir(&self, k: usize) -> PathBuf {
        self.0.join(k.to_string())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
    let problem = crate::problem::Problem::load(&meta.problem)?;
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
        recorded: recorded_info(&problem, 0, None),
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
fn metric_name(problem: &crate::problem::Problem) -> String {
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
fn dataset(problem: &crate::problem::Problem) -> Option<String> {
    let argv = driver::default_compile_argv(problem)?;
    (argv.iter()).find_map(|a| {
        a.strip_prefix("-D")?
            .strip_suffix("_DATASET")
            .map(str::to_string)
    })
}

fn recorded_info(
    problem: &crate::problem::Problem,
    rounds: usize,
    from: Option<&Path>,
) -> Recorded {
    Recorded {
        at: driver::now_rfc3339(),
        rounds,
        cpu: driver::cpu_model(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        compiler: driver::compiler_version(problem),
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
    let from = from
        .map(|d| relative(d, folder(&l.file)))
        .or(b.recorded.from_run.take());
    b.recorded = recorded_info(&l.problem, opts.rounds, from.as_deref());
    if opts.mock {
        b.recorded.compiler = None;
    }
    let mut it = samples.into_iter();
    let reference = it.next().unwrap_or_default();
    for (g, s) in b.guards.iter_mut().zip(it) {
        g.record(s, Some(&reference));
    }
    b.reference.record(reference, None);
    Ok(b)
}

fn folder(file: &Path) -> &Path {
    file.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}
