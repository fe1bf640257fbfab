//! `run`, `mctree` and `report`: tuning and its report, their summaries.

use std::path::{Path, PathBuf};

use crate::cli::print::print_json;
use crate::error::{exit, Error};
use crate::mctree::MctreeOptions;
use crate::report;
use crate::run::driver;
use crate::run::front_ends::FrontEnds;
use crate::run::settings::RunOptions;

/// `moldtune report`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Run directories of `moldtune run` or `moldtune mctree`.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Output directory [default: DIR/report for one run directory, else ./moldtune-report].
    #[arg(long)]
    out: Option<PathBuf>,
}

/// `moldtune report`.
pub(super) fn report_command(a: ReportArgs, fronts: &FrontEnds) -> Result<u8, Error> {
    let out = (a.out).unwrap_or_else(|| report::page::default_out(&a.dirs));
    let w = report::page::report(&a.dirs, &out, fronts)?;
    println!("page: {}", w.html.display());
    println!("summary: {}", w.markdown.display());
    for f in &w.figures {
        println!("figure: {}", f.display());
    }
    Ok(exit::OK)
}

/// Draws `curve.svg` into the run directory a `run` or `mctree` left, whether the search
/// finished, was interrupted or found no working variant (not after a usage error: the
/// directory may then be another run's). A failure to draw is a warning, never the run's.
pub(super) fn leave_curve<T>(
    result: &Result<T, Error>,
    finished: impl Fn(&T) -> PathBuf,
    out: Option<&Path>,
    fronts: &FrontEnds,
) {
    let dir = match result {
        Ok(t) => Some(finished(t)),
        Err(Error::Interrupted(d, _)) => Some(d.clone()),
        Err(e) if e.code() == exit::USAGE => None,
        Err(_) => out.map(Path::to_path_buf),
    };
    let Some(dir) = dir.filter(|d| d.join(crate::run::meta::RUN_JSON).is_file()) else {
        return;
    };
    // Even a bug in the plotting must not turn a finished run into a failed one.
    let drawn = std::panic::catch_unwind(|| report::curve::write_curve(&dir, fronts));
    let why = match drawn {
        Ok(Ok(_)) => return,
        Ok(Err(e)) => e.to_string(),
        Err(_) => "the plotting panicked".to_string(),
    };
    let path = dir.join(report::curve::CURVE_SVG);
    eprintln!("warning: cannot draw `{}`: {why}", path.display());
}

/// `moldtune run`.
pub(super) fn run_command(
    mut a: RunOptions,
    args: Vec<String>,
    fronts: &FrontEnds,
) -> Result<u8, Error> {
    a.shared.command_line = args;
    let (json, out_dir) = (a.shared.json, a.shared.run_dir());
    let result = driver::run(a, fronts);
    leave_curve(&result, |s| s.dir.clone(), out_dir.as_deref(), fronts);
    let s = result?;
    if json {
        print_json(&Printed::of(&s, false));
    } else {
        print_summary(&s);
    }
    Ok(exit::OK)
}

/// `moldtune mctree`.
pub(super) fn mctree_command(
    mut o: MctreeOptions,
    args: Vec<String>,
    fronts: &FrontEnds,
) -> Result<u8, Error> {
    o.shared.command_line = args;
    let (list, json, out_dir) = (o.list, o.shared.json, o.shared.run_dir());
    let result = crate::mctree::mctree(o);
    if !list {
        let dir = |d: &crate::mctree::Done| match d {
            crate::mctree::Done::Tuned(t) => t.summary.dir.clone(),
            crate::mctree::Done::Listed(_) => PathBuf::new(),
        };
        leave_curve(&result, dir, out_dir.as_deref(), fronts);
    }
    match result? {
        crate::mctree::Done::Listed(tree) if json => print_json(&tree),
        crate::mctree::Done::Listed(tree) => print!("{}", tree.render()),
        crate::mctree::Done::Tuned(t) if json => print_json(&Printed {
            emitted: Some(&t.emitted),
            legality: Some(t.legality),
            ..Printed::of(&t.summary, true)
        }),
        crate::mctree::Done::Tuned(t) => {
            print_summary(&t.summary);
            println!(
                "{} experiments for {} valid evaluations ({:.2} per valid evaluation)",
                t.summary.evaluations,
                t.summary.spent,
                t.summary.evaluations as f64 / t.summary.spent.max(1) as f64
            );
            let l = t.legality;
            println!(
                "legality: {} evaluated nodes proved legal by the dependence analysis, {} output-checked only; {} candidates refused (not proved)",
                l.proved, l.output_checked, l.refused
            );
            let (checked, given) = t.check_inputs;
            if checked < given {
                println!(
                    "output check: on {checked} of {given} inputs (on the others the untransformed program prints the same: its input does not vary with them, and only the proof protects what it does not show; name inputs that vary with `--check-env`)"
                );
            }
            if let Some(p) = &t.emitted {
                println!("mold for `moldtune run`: {}", p.display());
            }
        }
    }
    Ok(exit::OK)
}

fn print_summary(s: &driver::Summary) {
    println!(
        "{} evaluations ({}), stopped by {}",
        s.evaluations, s.counts, s.termination
    );
    if let Some(p) = &s.proposers {
        println!("proposed by (--learner auto): {p}");
    }
    let reach = |v: f64| {
        (s.roofline.and_then(|r| r.reach(v)))
            .map_or(String::new(), |r| format!(" ({})", r.describe()))
    };
    if let Some(d) = s.default_objective {
        println!("default configuration: {d:.6}{}", reach(d));
    }
    if let Some((id, obj, desc)) = &s.best {
        println!("best: {obj:.6} at eval {id}{}\n  {desc}", reach(*obj));
    }
    match (&s.verification, &s.best, s.default_objective) {
        (Some(v), _, _) => println!("verified: {}", v.describe()),
        (None, Some((id, obj, _)), Some(d)) if *id != 0 => {
            if let Some(g) = s.objective.gain_of(*obj, d) {
                println!(
                    "{} than the default by the search's own numbers (not re-measured)",
                    g.describe()
                );
            }
        }
        _ => {}
    }
    if let Some(p) = &s.preferred {
        println!("{}", preferred_line(p));
    }
    if let Some(q) = &s.tie_rule_unfed {
        println!("tie rule: no successful evaluation reported `{q}`, so nothing is preferred (see the `record:` regex)");
    }
    if let Some(r) = &s.progress_unfed {
        println!("progress: no evaluation printed a line matching `{r}`, so nothing could be pruned (see `progress.regex`)");
    }
    println!("results: {}", s.dir.display());
}

/// The tie rule's choice in one line (the summary, `best`).
pub(super) fn preferred_line(p: &crate::run::prefer::Preferred) -> String {
    format!(
        "preferred (within {} of the best, the {} {}): eval {}, objective {:.6}, {} {:.6}\n  {}",
        p.within,
        crate::problem::record::end_word(p.least),
        p.quantity,
        p.eval_id,
        p.objective,
        p.quantity,
        p.value,
        p.config_text()
    )
}

/// What `run --json` and `mctree --json` print: the run's summary; mctree counts its
/// experiments and valid evaluations, and says what it emitted and how its nodes were proved.
#[derive(serde::Serialize)]
struct Printed<'s> {
    dir: &'s Path,
    termination: crate::run::meta::Termination,
    #[serde(skip_serializing_if = "Option::is_none")]
    evaluations: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    experiments: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    valid: Option<usize>,
    best: Option<PrintedBest<'s>>,
    default_objective: Option<f64>,
    verification: &'s Option<crate::run::verification::Verification>,
    #[serde(skip_serializing_if = "Option::is_none")]
    proposers: Option<&'s Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    emitted: Option<&'s Option<PathBuf>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    legality: Option<crate::mctree::LegalityCounts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preferred: Option<&'s crate::run::prefer::Preferred>,
}

#[derive(serde::Serialize)]
struct PrintedBest<'s> {
    eval_id: usize,
    objective: f64,
    config: &'s Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    described: Option<&'s str>,
}

impl<'s> Printed<'s> {
    /// `s` as `run` prints it, or as `mctree` does (`experiments`: its evaluations counted
    /// as experiments and valid ones, the best not described).
    fn of(s: &'s crate::run::driver::Summary, experiments: bool) -> Printed<'s> {
        let best = s.best.as_ref().map(|b| PrintedBest {
            eval_id: b.0,
            objective: b.1,
            config: &s.best_config,
            described: (!experiments).then_some(b.2.as_str()),
        });
        Printed {
            dir: &s.dir,
            termination: s.termination,
            evaluations: (!experiments).then_some(s.evaluations),
            experiments: experiments.then_some(s.evaluations),
            valid: experiments.then_some(s.spent),
            best,
            default_objective: s.default_objective,
            verification: &s.verification,
            proposers: (!experiments).then_some(&s.proposers),
            emitted: None,
            legality: None,
            preferred: s.preferred.as_ref(),
        }
    }
}

/// `moldtune worker`'s arguments.
#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    /// The run directory.
    dir: PathBuf,
    /// The job: `reference`, `eval-N` or `verify`.
    key: String,
}

/// `moldtune worker` (a Slurm job; started by Slurm, not by hand).
pub(super) fn worker_command(a: WorkerArgs, fronts: &FrontEnds) -> Result<u8, Error> {
    crate::run::slurm::worker::work(&a.dir, &a.key, fronts)
}
