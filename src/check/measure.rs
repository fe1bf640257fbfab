//! Measuring one baseline for a recording: its configurations timed with [`gate::record`],
//! adding rounds until every guard's speed-up is resolved finely enough for the threshold
//! ([`rule::resolution_needed`]); the recording details; the judgement that warns (or, with
//! `--strict`, refuses) when the machine was too noisy for that.

use std::path::{Path, PathBuf};

use crate::check::baseline::{self, Baseline, Loaded, Recorded};
use crate::check::session::{evaluator, progress, Options};
use crate::check::{gate, rule};
use crate::error::Error;
use crate::problem::objective::Objective;
use crate::problem::Problem;
use crate::run::machine;

/// `path` relative to the folder `from` (both made absolute first).
pub(super) fn relative(path: &Path, from: &Path) -> PathBuf {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    pathdiff::diff_paths(abs(path), abs(from)).unwrap_or_else(|| abs(path))
}

/// This machine and moldtune; the compiler's version unless `mock` (no compiler then).
fn recorded_info(problem: &Problem, rounds: usize, from: Option<&Path>, mock: bool) -> Recorded {
    Recorded {
        at: machine::now_rfc3339(),
        rounds,
        cpu: machine::cpu_model(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        compiler: (!mock)
            .then(|| machine::compiler_version(problem))
            .flatten(),
        moldtune: env!("CARGO_PKG_VERSION").to_string(),
        from_run: from.map(|d| d.to_path_buf()),
        threshold: None,
        node: None,
    }
}

/// A recording grows to at most this many times the rounds asked for.
pub const CAP_FACTOR: usize = 4;

/// `opts.rounds` rounds, then the rule's step at a time up to [`CAP_FACTOR`] × as many,
/// until every guard resolves `opts.rule.threshold`.
pub(super) fn plan(l: &Loaded, opts: &Options) -> gate::Recording {
    gate::Recording {
        objective: Objective::of(&l.problem.metric),
        first: opts.rounds,
        step: opts.rule.step,
        cap: opts.rounds * CAP_FACTOR,
        target: rule::resolution_needed(opts.rule.threshold),
    }
}

/// Writes `b` into `file` unless [`judge`] refuses it; the file written.
pub(super) fn judged_and_saved(
    file: PathBuf,
    b: &Baseline,
    opts: &Options,
) -> Result<PathBuf, Error> {
    judge(b, &file, opts)?;
    baseline::save(&file, b)?;
    Ok(file)
}

/// Says how finely the recording resolves a change; when too coarsely for its threshold,
/// warns (or, `--strict`, refuses: nothing is written).
fn judge(b: &Baseline, file: &Path, opts: &Options) -> Result<(), Error> {
    let need = rule::resolution_needed(opts.rule.threshold);
    let worst = (b.guards.iter())
        .filter_map(|g| Some((g, g.resolution?)))
        .max_by(|x, y| x.1.total_cmp(&y.1));
    let Some((g, res)) = worst else {
        return Ok(());
    };
    let (rounds, pct) = (b.recorded.rounds, |x: f64| 100.0 * x);
    progress(
        opts,
        format!(
            "{}: {rounds} rounds resolve a change of ±{:.1}% (a {:.0}% threshold needs ±{:.1}%)",
            b.name,
            pct(res),
            pct(opts.rule.threshold),
            pct(need)
        ),
    );
    if res <= need {
        return Ok(());
    }
    let sp = g.speedup.map_or(String::new(), |r| {
        format!(" {} [{}]", r.describe(), r.interval())
    });
    let message = format!(
        "the baseline `{}` cannot decide a {:.0}% threshold: after {rounds} interleaved rounds, `{}`'s speed-up{sp} is only known to ±{:.0}% (a check needs ±{:.1}%), so checks against it will end undecided even on unchanged code",
        b.name,
        pct(opts.rule.threshold),
        g.name,
        pct(res),
        pct(need)
    );
    let hint = format!(
        "record it on a quieter machine, or pin the job to a dedicated runner; or accept a coarser gate with `--threshold {:.0}%`",
        (pct(2.0 * res)).ceil()
    );
    if opts.strict {
        return Err(Error::Undecidable {
            message: format!("{message}; `{}` left as it was", file.display()),
            hint: Some(hint),
        });
    }
    eprintln!("warning: {message}\n  hint: {hint}");
    Ok(())
}

/// `l`'s baseline with fresh samples and recording details.
pub(super) fn recorded(
    l: &Loaded,
    opts: &Options,
    work: &Path,
    from: Option<&Path>,
) -> Result<Baseline, Error> {
    let mut ev = evaluator(opts.mock, opts.jobs);
    let samples = gate::record(l, plan(l, opts), ev.as_mut(), work)?;
    let rounds = samples.iter().map(Vec::len).min().unwrap_or(0);
    let mut b = l.baseline.clone();
    b.keep_other_cpus(machine::cpu_model().as_deref());
    let from = from
        .map(|d| relative(d, baseline::folder(&l.file)))
        .or(b.recorded.from_run.take());
    b.recorded = recorded_info(&l.problem, rounds, from.as_deref(), opts.mock);
    b.recorded.threshold = Some(opts.rule.threshold);
    // The samples are now of the problem's metric, whatever the file said before.
    b.metric = baseline::metric_name(&l.problem);
    let mut it = samples.into_iter();
    let reference = it.next().unwrap_or_default();
    let objective = Objective::of(&l.problem.metric);
    for (g, s) in b.guards.iter_mut().zip(it) {
        g.record(s, Some(&reference), objective);
    }
    b.reference.record(reference, None, objective);
    Ok(b)
}
