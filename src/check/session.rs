//! What a check and a recording stand on: the options they were given, the baselines they
//! load, the tools they require, the evaluator they measure with, their scratch folder.

use std::path::PathBuf;

use crate::check::baseline::{self, Loaded};
use crate::check::rule::Rule;
use crate::error::Error;
use crate::evaluate::Evaluator;

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

/// A scratch folder for the builds, removed at the end (also on an error).
pub(crate) struct Builds(crate::scratch::Scratch);

impl Builds {
    pub(crate) fn new() -> Result<Builds, Error> {
        let dir = crate::scratch::Scratch::for_command("check")?;
        Ok(Builds(dir))
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
        let s = Builds::new().unwrap();
        std::fs::create_dir_all(s.dir(0)).unwrap();
        std::fs::write(s.dir(0).join("variant"), "built").unwrap();
        if planted {
            let _ = std::fs::remove_file(&old);
        }
        assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 0);
        assert!(!s.dir(0).starts_with(&old));
    }
}
