//! Writing baselines: `moldtune baseline DIR…` from run directories (the problem's default
//! as the reference, the run's verified best as the guard) and `moldtune check --update`
//! (new samples, machine and compiler for the configurations a baseline already has); each
//! baseline measured here one after the other or on the cluster's nodes ([`cluster`]), by
//! [`crate::check::measure`].

use std::path::{Path, PathBuf};

use crate::check::baseline::{self, Baseline, Entry, Loaded, Recorded};
use crate::check::cluster;
use crate::check::measure::{judged_and_saved, plan, recorded, relative};
use crate::check::session::{load_all, progress, require_tools, Builds, Options};
use crate::error::Error;
use crate::problem::Problem;
use crate::run::machine;

/// Records every baseline in `paths` again: new samples, machine and compiler; the
/// configurations are kept.
pub fn update(paths: &[PathBuf], opts: &Options) -> Result<Vec<PathBuf>, Error> {
    let loaded = load_all(paths)?;
    require_tools(loaded.iter().map(|l| &l.problem), opts)?;
    let loaded = loaded.into_iter().map(|l| (l, None)).collect();
    record_all(loaded, opts)
}

/// Writes a baseline for each run directory into `out`: the problem's default as the
/// reference and the run's best (its verified winner when it has one) as the guard.
pub fn from_runs(dirs: &[PathBuf], out: &Path, opts: &Options) -> Result<Vec<PathBuf>, Error> {
    let fresh: Vec<(Loaded, PathBuf)> = (dirs.iter())
        .map(|d| fresh(d, out))
        .collect::<Result<_, _>>()?;
    require_tools(fresh.iter().map(|(l, _)| &l.problem), opts)?; // before the folder is made
    std::fs::create_dir_all(out)
        .map_err(|e| Error::io(format!("cannot create `{}`", out.display()), e))?;
    let fresh = fresh.into_iter().map(|(l, d)| (l, Some(d))).collect();
    record_all(fresh, opts)
}

/// Records each baseline (from its run directory, when it is new) and writes it.
fn record_all(todo: Vec<(Loaded, Option<PathBuf>)>, opts: &Options) -> Result<Vec<PathBuf>, Error> {
    if let Some(settings) = &opts.slurm {
        let todo = todo.into_iter().map(|(l, _)| l).collect();
        return cluster::record_all(todo, opts, settings.clone());
    }
    let scratch = Builds::new()?;
    let mut written = Vec::new();
    for (k, (l, dir)) in todo.into_iter().enumerate() {
        progress(
            opts,
            format!(
                "recording {} ({} rounds, up to {} until it resolves a {:.0}% threshold)",
                l.baseline.name,
                opts.rounds,
                plan(&l, opts).cap,
                100.0 * opts.rule.threshold
            ),
        );
        let b = recorded(&l, opts, &scratch.dir(k), dir.as_deref())?;
        written.push(judged_and_saved(l.file, &b, opts)?);
    }
    Ok(written)
}

/// A baseline, not yet measured, for the run in `dir`, to be written into `out`.
fn fresh(dir: &Path, out: &Path) -> Result<(Loaded, PathBuf), Error> {
    let meta = crate::run::dir::RunDir::metadata(dir)?;
    if meta.mctree.is_some() {
        let message = format!(
            "`{}` is an mctree run: a baseline needs a problem file",
            dir.display()
        );
        return Err(Error::usage(message, Some("write its best as a mold with `moldtune mctree --emit-mold DIR`, tune or measure that with `moldtune run`, then baseline that run")));
    }
    let problem = Problem::load(&meta.problem)?.built("baseline")?;
    let best =
        crate::report::pick::configuration(&problem, &crate::report::pick::Which::best_of(dir))?;
    let reference = problem.default_config();
    let file = out.join(format!("{}.json", problem.name));
    let rel = relative(&problem.path, out);
    let baseline = Baseline {
        format: baseline::FORMAT,
        name: problem.name.clone(),
        problem: rel,
        dataset: dataset(&problem),
        metric: baseline::metric_name(&problem),
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

/// The PolyBench dataset the default compile command selects (`-DMEDIUM_DATASET`).
fn dataset(problem: &Problem) -> Option<String> {
    let argv = machine::default_compile_argv(problem)?;
    (argv.iter()).find_map(|a| {
        a.strip_prefix("-D")?
            .strip_suffix("_DATASET")
            .map(str::to_string)
    })
}
