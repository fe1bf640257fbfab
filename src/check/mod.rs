//! `moldtune check`, the CI regression gate, a front end onto the evaluation like
//! `mctree`: each [`baseline`] names a problem, a reference configuration and the
//! configurations to guard; [`gate`] rebuilds them, checks their output and times them
//! interleaved until the [`rule`] decides whether the guarded speed-ups still hold;
//! [`output`] prints the table and writes Markdown, JUnit XML or JSON.
//!
//! [`record`] writes baselines: `moldtune baseline DIR…` from run directories, `moldtune
//! check --update` with new samples, each measured by [`measure`] (here or on the cluster's
//! nodes, [`cluster`]); [`session`] holds what a check and a recording share.

pub mod baseline;
pub mod cluster;
pub mod gate;
pub mod measure;
pub mod output;
pub mod record;
pub mod rule;
pub mod session;
pub mod simulate;

use std::path::PathBuf;

use crate::error::Error;
use crate::problem::objective::Objective;
use crate::run::machine;
use baseline::Loaded;
use session::{evaluator, load_all, progress, require_tools, Builds};

pub use gate::Checked;
pub use session::{problem_files, Options, Undecided, DEFAULT_BASELINES};

/// Checks every baseline in `paths` (files, or folders of `*.json`). All are read and
/// resolved before anything is built, so bad input costs nothing.
pub fn check(paths: &[PathBuf], opts: &Options) -> Result<Checked, Error> {
    let start = std::time::Instant::now();
    let mut loaded = load_all(paths)?;
    loaded.iter().try_for_each(Loaded::require_samples)?;
    loaded.iter().try_for_each(Loaded::require_metric)?;
    require_tools(loaded.iter().map(|l| &l.problem), opts)?;
    let cpu = machine::cpu_model();
    for l in &mut loaded {
        if l.baseline
            .prefer_cpu(cpu.as_deref(), Objective::of(&l.problem.metric))
        {
            progress(
                opts,
                format!(
                    "{}: compared with its recording on this CPU",
                    l.baseline.name
                ),
            );
        }
    }
    let scratch = Builds::new()?;
    let mut guarded = Vec::new();
    for (k, l) in loaded.iter().enumerate() {
        let notes = notes(l, opts);
        for n in &notes {
            eprintln!("warning: {}: {n}", l.baseline.name);
        }
        progress(
            opts,
            format!("checking {} ({}/{})", l.baseline.name, k + 1, loaded.len()),
        );
        let mut ev = evaluator(opts.mock, opts.jobs);
        let roofline = machine::roofline(&l.problem, opts.mock);
        let mut got = gate::check(l, opts.rule, ev.as_mut(), &scratch.dir(k), roofline)?;
        for g in &mut got {
            g.notes.clone_from(&notes);
            progress(opts, output::line(g));
        }
        guarded.extend(got);
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(Checked {
        rule: opts.rule,
        undecided: opts.undecided,
        guarded,
        seconds,
    })
}

/// What differs from the recording in a way that can move the ratio, and a recording
/// too noisy to decide the threshold.
fn notes(l: &Loaded, opts: &Options) -> Vec<String> {
    let (then, mock) = (&l.baseline.recorded, opts.mock);
    let mut out = Vec::new();
    let need = rule::resolution_needed(opts.rule.threshold);
    let reference = &l.baseline.reference.samples;
    for g in &l.baseline.guards {
        match gate::resolution(Objective::of(&l.problem.metric), reference, &g.samples) {
            Some(r) if r > need => out.push(format!(
                "`{}`'s recorded speed-up is known to ±{:.0}% only, a {:.0}% threshold needs ±{:.1}%: expect undecided checks; record it again on a quieter machine (`moldtune check --update {}`)",
                g.name,
                100.0 * r,
                100.0 * opts.rule.threshold,
                100.0 * need,
                l.file.display()
            )),
            _ => {}
        }
    }
    let cpu = machine::cpu_model();
    if !mock && then.cpu.is_some() && cpu != then.cpu {
        out.push(format!(
            "recorded on `{}`, checked on `{}`: ratios carry over between machines of one kind, not always across CPU families; `moldtune check --update` records this CPU too",
            then.cpu.as_deref().unwrap_or_default(),
            cpu.as_deref().unwrap_or("an unknown CPU")
        ));
    }
    let now = (!mock)
        .then(|| machine::compiler_version(&l.problem))
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
