//! The one door to a run directory that `moldtune run` or `moldtune mctree` wrote, with one
//! way in per need: run.json alone ([`RunDir::metadata`]), results.csv as text without the
//! problem ([`RunDir::table`]), the records under a problem file given now
//! ([`RunDir::records_under`]), or the full run — run.json, the problem it was run on and
//! its typed records ([`RunDir::open`]). The run's vocabulary — its default, best and winner
//! records, a record by id — is [`RunDir`]'s methods. The readers underneath are private to
//! `run/`.
//!
//! A front end whose problem is not a problem file — mctree's is the C file's loops, kept in
//! the run directory's `mctree.json` — says how to rebuild it through the [`FrontEnds`] the
//! command line hands down; `run/` knows no front end.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::problem::Problem;
use crate::run::front_ends::FrontEnds;
use crate::run::log::{self, Record};
use crate::run::meta::{self, RunMeta};

/// A run directory, read.
pub struct RunDir {
    pub dir: PathBuf,
    pub meta: RunMeta,
    pub problem: Problem,
    pub records: Vec<Record>,
}

impl RunDir {
    /// Reads the run in `dir`: run.json, its problem (rebuilt by its front end when it is
    /// not a problem file), its records.
    pub fn open(dir: &Path, fronts: &FrontEnds) -> Result<RunDir, Error> {
        let meta = read_meta(dir)?;
        let problem = problem_of(dir, &meta, fronts)?;
        let records = log::read_run_records(dir, &problem)?;
        Ok(RunDir {
            dir: dir.to_path_buf(),
            meta,
            problem,
            records,
        })
    }

    /// The records of the run in `dir` read against `problem` — the problem file given now,
    /// which may have been edited since — without run.json (`--from DIR`: a directory
    /// holding only results.csv still names its configurations).
    pub fn records_under(dir: &Path, problem: &Problem) -> Result<Vec<Record>, Error> {
        log::read_run_records(dir, problem)
    }

    /// run.json of the run in `dir`, alone.
    pub fn metadata(dir: &Path) -> Result<RunMeta, Error> {
        read_meta(dir)
    }

    /// run.json and results.csv as text, without the problem (`best` reads a run whose
    /// problem file has gone).
    pub fn table(dir: &Path) -> Result<(RunMeta, log::Table), Error> {
        Ok((read_meta(dir)?, log::read_table(dir, false)?))
    }

    /// The evaluation with id `eval_id`.
    pub fn record(&self, eval_id: usize) -> Option<&Record> {
        self.records.iter().find(|r| r.eval_id == eval_id)
    }

    /// The winner the verification chose, when it has a record.
    pub fn winner_record(&self) -> Option<&Record> {
        self.meta.winner().and_then(|w| self.record(w))
    }

    /// The default configuration's evaluation (the baseline), when there is one.
    pub fn default_record(&self) -> Option<&Record> {
        log::default_record(&self.records)
    }

    /// The run's best as `moldtune best` reports it: the verified winner, else the search's
    /// best (the earliest of equals).
    pub fn best_record(&self) -> Option<&Record> {
        log::claimed(
            &self.records,
            self.meta.goal,
            self.meta.winner(),
            log::succeeded,
        )
    }
}

/// run.json of the run in `dir`, read here only: its problem path made absolute (written
/// relative to the directory), a directory that holds none told what it is.
pub(in crate::run) fn read_meta(dir: &Path) -> Result<RunMeta, Error> {
    let path = dir.join(meta::RUN_JSON);
    let bytes = std::fs::read(&path).map_err(|e| {
        // mctree keeps what it found (mctree.json) before the run's first record: a run
        // stopped in between has nothing to resume, and is started again.
        if dir.join(meta::MCTREE_JSON).is_file() && !dir.join(meta::RESULTS_CSV).exists() {
            return Error::usage(
                format!("`{}` was stopped before its run started: it holds what mctree found but no run.json, nothing to resume", dir.display()),
                Some("start it again: the same command without `--resume`, with `--out` naming this directory"),
            );
        }
        Error::usage(
            format!("`{}` is not a moldtune run directory: {e}", dir.display()),
            Some("give the directory a `moldtune run` or `moldtune mctree` wrote (it holds run.json)"),
        )
    })?;
    let mut meta: RunMeta = serde_json::from_slice(&bytes).map_err(|e| Error::ConfigFile {
        file: path,
        message: format!("unreadable run.json: {e}"),
        hint: None,
    })?;
    // A relative problem path is relative to the run directory (made absolute: the current
    // directory may change meaning for whoever writes run.json next).
    meta.problem = meta::absolute(&dir.join(&meta.problem));
    Ok(meta)
}

/// The problem of the run in `dir` as the run ran it: [`problem_of`] with the repeats and
/// timeouts its run.json recorded (as `--resume` has them) — what re-measuring one of its
/// configurations needs (`best --verify`, a Slurm job).
pub fn problem_as_run(dir: &Path, meta: &RunMeta, fronts: &FrontEnds) -> Result<Problem, Error> {
    let mut problem = problem_of(dir, meta, fronts)?;
    crate::run::limits::Limits::recorded(meta).apply(&mut problem)?;
    Ok(problem)
}

/// The problem of the run in `dir` (run.json `meta`): the front end's rebuilding for one of
/// its runs, else the problem file run.json names.
pub fn problem_of(dir: &Path, meta: &RunMeta, fronts: &FrontEnds) -> Result<Problem, Error> {
    let rebuilt = fronts.rebuild.and_then(|rebuild| rebuild(dir, meta));
    match (rebuilt, &meta.mctree) {
        (Some(p), _) => p,
        (None, Some(_)) => Err(Error::Internal(format!(
            "`{}` was written by `moldtune mctree`, whose runs this command cannot read",
            dir.display()
        ))),
        (None, None) => Problem::load(&meta.problem),
    }
}
