//! `moldtune check`, the CI regression gate, a front end onto the evaluation like
//! `mctree`: each [`baseline`] names a problem, a reference configuration and the
//! configurations to guard; [`gate`] rebuilds them, checks their output and times them
//! interleaved until the [`rule`] decides whether the guarded speed-ups still hold;
//! [`output`] prints the table and writes Markdown, JUnit XML or JSON.
//!
//! [`record`] writes baselines: `moldtune baseline DIR…` from run directories, `moldtune
//! check --update` with new samples.

pub mod baseline;
pub mod cluster;
pub mod gate;
pub mod output;
pub mod record;
pub mod rule;
pub mod simulate;

use std::path::PathBuf;

use crate::error::Error;
use crate::evaluate::Evaluator;
use crate::problem::objective::Objective;
use crate::run::machine;
use baseline::Loaded;
use gate::Guarded;
use rule::{Rule, Verdict};

/// Where `moldtune check` looks when given no baseline.
pub const DEFAULT_BASELINES: &str = "results/baselines";

/// What `moldtune check` and `moldtune baseline` were asked to do.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Options {
    pub rule: Rule,
    /// Rounds when recording a baseline (more while they cannot resolve the threshold).
    pub rounds: usize,
    /// Recording: refuse a baseline that cannot resolve the threshold (else a warning).
    pub strict: bool,
    /// Checking: what an undecided verdict makes of the exit code.
    pub undecided: Undecided,
    /// Testing: the mock evaluator instead of a compiler.
    pub mock: bool,
    pub quiet: bool,
    /// Builds (and output checks) at once before the timed rounds (`--jobs`).
    pub jobs: usize,
    /// `check --update --executor slurm`: each baseline recorded by a job on a node.
    #[serde(skip)]
    pub slurm: Option<crate::run::slurm::Settings>,
}

/// What a check that ends undecided exits with (`--undecided`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Undecided {
    /// Exit 7: the gate could not see, so it does not let the change through.
    #[default]
    Fail,
    /// Exit 0 (the verdict still says undecided, and why).
    Pass,
}

/// The verdicts of one check.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Checked {
    pub rule: Rule,
    pub undecided: Undecided,
    pub guarded: Vec<Guarded>,
    pub seconds: f64,
}

impl Checked {
    /// The worst verdict's exit code (an undecided one passes under `--undecided pass`).
    pub fn exit_code(&self) -> u8 {
        (self.guarded.iter().map(|g| g.verdict))
            .filter(|&v| self.fails(v))
            .max_by_key(|v| v.severity())
            .map_or(0, |v| v.exit_code())
    }

    /// Whether `v` fails the check.
    pub fn fails(&self, v: Verdict) -> bool {
        v.severity() > 0 && (v != Verdict::Undecided || self.undecided == Undecided::Fail)
    }
}

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
    let scratch = Scratch::new()?;
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
        undecided: opts.undecided,
        guarded,
        seconds,
    })
}

/// The compilers and valgrind the problems need, found before anything is made or built
/// (not for the mock evaluator, nor when Slurm's nodes build: their PATH is not this one).
pub(crate) fn require_tools<'p>(
    problems: impl IntoIterator<Item = &'p crate::problem::Problem>,
    opts: &Options,
) -> Result<(), Error> {
    if opts.mock || opts.slurm.is_some() {
        return Ok(());
    }
    problems
        .into_iter()
        .try_for_each(crate::evaluate::environment::require_tools)
}

pub(crate) fn load_all(paths: &[PathBuf]) -> Result<Vec<Loaded>, Error> {
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

/// The files the baselines' problems read: each problem file, its mold, its sources and its
/// check reference (which no report may overwrite).
pub fn problem_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for l in load_all(paths)? {
        let p = &l.problem;
        out.extend([p.path.clone(), p.mold.path.clone()]);
        out.extend(p.sources.iter().cloned());
        out.extend(p.check.reference.iter().cloned());
    }
    Ok(out)
}

pub(crate) fn progress(opts: &Options, line: String) {
    if !opts.quiet {
        eprintln!("{line}");
    }
}

/// The evaluator of a check or a recording: builds `jobs` at once before the timed rounds.
pub(crate) fn evaluator(mock: bool, jobs: usize) -> Box<dyn Evaluator> {
    crate::evaluate::make_evaluator(mock, false, jobs)
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

/// A scratch folder for the builds, removed at the end (also on an error).
pub(crate) struct Scratch(crate::scratch::Scratch);

impl Scratch {
    pub(crate) fn new() -> Result<Scratch, Error> {
        let dir = crate::scratch::Scratch::new("check")
            .map_err(|e| Error::io("cannot create a scratch directory", e))?;
        Ok(Scratch(dir))
    }

    pub(crate) fn dir(&self, k: usize) -> PathBuf {
        self.0.path().join(k.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory planted (as a symlink) at the scratch path `check` once used is not where
    /// its builds go.
    #[test]
    fn builds_never_go_into_a_planted_directory() {
        let victim = tempfile::tempdir().unwrap();
        let old = std::env::temp_dir().join(format!("moldtune-check-{}", std::process::id()));
        let planted = std::os::unix::fs::symlink(victim.path(), &old).is_ok();
        let s = Scratch::new().unwrap();
        std::fs::create_dir_all(s.dir(0)).unwrap();
        std::fs::write(s.dir(0).join("variant"), "built").unwrap();
        if planted {
            let _ = std::fs::remove_file(&old);
        }
        assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 0);
        assert!(!s.dir(0).starts_with(&old));
    }
}
