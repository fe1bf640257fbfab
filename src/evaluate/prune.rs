//! Pruning (`progress:`): a timed run is watched while it runs, and stopped as soon as the best
//! value it reported up to some step is worse than the median of the values the
//! configurations that completed before it reported at that step (the median stopping rule
//! of Google Vizier, Optuna's `MedianPruner`). Nothing is pruned at a step until `startup` completed
//! configurations reported a value there, nor at a step up to `warmup`. The evaluation is recorded as `pruned`: not a failure of the
//! variant, a configuration the search learns is likely no better than the median.
//!
//! Every evaluation's reported (step, value) curve is written to `progress.jsonl` in the run
//! directory, so a resumed run compares with the curves of the configurations its log
//! says completed. One [`Pruner`] is shared by every evaluator of a run (`--parallel`
//! workers compare with each other's completed curves).

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::evaluate::outcome::{Curve, Measurement, Status};
use crate::number::sig;
use crate::problem::progress::Progress;

/// The run directory's record of every evaluation's curve, one JSON line each.
pub const PROGRESS_JSONL: &str = "progress.jsonl";

/// Bytes of a line without its newline kept while waiting for the rest of it.
const MAX_PARTIAL_LINE: usize = 64 * 1024;

/// The pruning rule and the curves it compares with, shared by a run's evaluators.
#[derive(Clone)]
pub struct Pruner {
    rule: Arc<Progress>,
    curves: Arc<Mutex<Curves>>,
    file: PathBuf,
}

#[derive(Default)]
struct Curves {
    /// The curves of the configurations that completed (status `ok`), by eval_id.
    done: BTreeMap<usize, Curve>,
    /// Curves written but not yet known to belong to a completed, recorded evaluation.
    saved: BTreeMap<usize, Curve>,
}

#[derive(Serialize, Deserialize)]
struct Line {
    eval_id: usize,
    status: Status,
    curve: Curve,
}

impl Pruner {
    /// The pruner of the run in `run_dir`, with the curves its `progress.jsonl` holds (they
    /// count once [`Pruner::remember`] is told their evaluation completed).
    pub fn open(rule: &Progress, run_dir: &Path) -> Pruner {
        let file = run_dir.join(PROGRESS_JSONL);
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        // A line cut by a crash does not parse and is left out; a later line wins.
        let saved = (text.lines())
            .filter_map(|l| serde_json::from_str::<Line>(l).ok())
            .map(|l| (l.eval_id, l.curve))
            .collect();
        Pruner {
            rule: Arc::new(rule.clone()),
            curves: Arc::new(Mutex::new(Curves {
                done: BTreeMap::new(),
                saved,
            })),
            file,
        }
    }

    /// Learns an evaluation: a freshly measured curve is written down; the curve of one
    /// that completed (fresh, or recorded earlier and read back) counts from now on.
    pub fn remember(&self, m: &Measurement, eval_id: usize) {
        let Ok(mut c) = self.curves.lock() else {
            return;
        };
        if !m.curve.is_empty() && m.reused_from.is_none() {
            self.append(eval_id, m);
            c.saved.insert(eval_id, m.curve.clone());
        }
        if m.status == Status::Ok {
            if let Some(curve) = c.saved.remove(&eval_id) {
                c.done.insert(eval_id, curve);
            }
        }
    }

    fn append(&self, eval_id: usize, m: &Measurement) {
        let line = Line {
            eval_id,
            status: m.status,
            curve: m.curve.clone(),
        };
        let Ok(text) = serde_json::to_string(&line) else {
            return;
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.file);
        if let Ok(mut f) = file {
            let _ = f.write_all(format!("{text}\n").as_bytes());
        }
    }

    /// Why to stop a run whose reports so far are `curve`: at its last step, the best value
    /// it reached so far is worse than the median of the completed configurations' values at
    /// that step (at least `startup` of them). Its best so far, not its last value: a
    /// training whose accuracy dips for an epoch is not stopped for the dip (Vizier's and
    /// Optuna's rule).
    pub fn verdict(&self, curve: &Curve) -> Option<String> {
        let rule = &self.rule;
        let &(step, _) = curve.last()?;
        if step <= rule.warmup {
            return None;
        }
        let values = curve.iter().map(|p| p.1);
        let best = values.reduce(|a, b| if rule.goal.better(b, a) { b } else { a })?;
        let c = self.curves.lock().ok()?;
        let at = |curve: &Curve| curve.iter().rev().find(|p| p.0 == step).map(|p| p.1);
        let earlier: Vec<f64> = c.done.values().filter_map(at).collect();
        if earlier.len() < rule.startup {
            return None; // a median of too few says little
        }
        let median = crate::stats::median(&earlier)?;
        rule.goal.better(median, best).then(|| {
            format!(
                "pruned at step {}: its best so far, {}, is worse than {}, the median of the {} completed configurations there",
                sig(step, 6),
                sig(best, 6),
                sig(median, 6),
                earlier.len()
            )
        })
    }

    /// A watch over the run writing `stdout`.
    pub fn watch(&self, stdout: &Path) -> Watch<'_> {
        Watch {
            pruner: self,
            stdout: stdout.to_path_buf(),
            offset: 0,
            partial: Vec::new(),
            curve: Vec::new(),
        }
    }
}

/// Reads a running program's stdout as it grows.
pub struct Watch<'a> {
    pruner: &'a Pruner,
    stdout: PathBuf,
    offset: u64,
    partial: Vec<u8>,
    /// What the run reported so far.
    pub curve: Curve,
}

impl Watch<'_> {
    /// Reads the lines printed since the last look; a reason to stop the run if one of
    /// them reports a value worse than the median at its step.
    pub fn poll(&mut self) -> Option<String> {
        let text = self.fresh_lines()?;
        for (step, value) in self.pruner.rule.points(&text) {
            self.curve.push((step, value));
            // The run stops at the first value judged: its curve (and the step recorded
            // with it) ends there, whatever the same read brought after it.
            if let Some(why) = self.pruner.verdict(&self.curve) {
                return Some(why);
            }
        }
        None
    }

    /// The complete lines written since the last look (at most a megabyte a look).
    fn fresh_lines(&mut self) -> Option<String> {
        let mut f = std::fs::File::open(&self.stdout).ok()?;
        f.seek(SeekFrom::Start(self.offset)).ok()?;
        let mut buf = Vec::new();
        let n = f.take(1 << 20).read_to_end(&mut buf).ok()?;
        self.offset += n as u64;
        self.partial.extend_from_slice(&buf);
        let end = self.partial.iter().rposition(|&b| b == b'\n');
        let Some(end) = end else {
            if self.partial.len() > MAX_PARTIAL_LINE {
                self.partial.clear(); // no line that long is a progress report
            }
            return None;
        };
        let lines: Vec<u8> = self.partial.drain(..=end).collect();
        Some(String::from_utf8_lossy(&lines).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Goal;

    fn rule(startup: usize, warmup: f64) -> Progress {
        Progress {
            regex: Some(regex::Regex::new(r"step (\d+) acc ([0-9.]+)").unwrap()),
            goal: Goal::Maximize,
            startup,
            warmup,
        }
    }

    fn completed(curve: Curve) -> Measurement {
        Measurement {
            curve,
            ..Measurement::single(1.0)
        }
    }

    #[test]
    fn a_value_below_the_median_of_completed_runs_is_pruned_after_startup() {
        let dir = tempfile::tempdir().unwrap();
        let p = Pruner::open(&rule(3, 0.0), dir.path());
        p.remember(&completed(vec![(1.0, 0.5), (2.0, 0.7)]), 0);
        p.remember(&completed(vec![(1.0, 0.6), (2.0, 0.8)]), 1);
        assert_eq!(
            p.verdict(&vec![(1.0, 0.1)]),
            None,
            "before `startup` completed"
        );
        p.remember(&completed(vec![(1.0, 0.4), (2.0, 0.9), (3.0, 0.95)]), 2);
        assert!(p.verdict(&vec![(1.0, 0.45)]).unwrap().contains("median"));
        assert_eq!(
            p.verdict(&vec![(1.0, 0.5)]),
            None,
            "the median itself is not worse"
        );
        assert_eq!(p.verdict(&vec![(2.0, 0.85)]), None);
        assert_eq!(
            p.verdict(&vec![(3.0, 0.0)]),
            None,
            "one completed value at that step"
        );
    }

    /// A run that reached the median and dipped below it at its last step goes on: its best
    /// so far decides (a dip was pruned).
    #[test]
    fn a_run_is_judged_by_its_best_value_so_far() {
        let dir = tempfile::tempdir().unwrap();
        let p = Pruner::open(&rule(1, 0.0), dir.path());
        p.remember(&completed(vec![(1.0, 0.5), (2.0, 0.7)]), 0);
        assert_eq!(p.verdict(&vec![(1.0, 0.8), (2.0, 0.6)]), None);
        let why = p
            .verdict(&vec![(1.0, 0.4), (2.0, 0.6)])
            .expect("never reached it");
        assert!(
            why.contains("its best so far, 0.6, is worse than 0.7"),
            "{why}"
        );
    }

    #[test]
    fn failures_and_pruned_runs_do_not_set_the_median() {
        let dir = tempfile::tempdir().unwrap();
        let p = Pruner::open(&rule(1, 0.0), dir.path());
        let mut pruned = completed(vec![(1.0, 0.1)]);
        pruned.status = Status::Pruned;
        p.remember(&pruned, 0);
        assert_eq!(p.verdict(&vec![(1.0, 0.05)]), None);
    }

    /// Two steps read in one look, the first already worse than the median: the run is
    /// pruned at that step and its curve ends there (the cause named step 1 while
    /// `progress_step` said 2).
    #[test]
    fn a_run_pruned_at_a_step_records_that_step_last() {
        let dir = tempfile::tempdir().unwrap();
        let p = Pruner::open(&rule(1, 0.0), dir.path());
        p.remember(&completed(vec![(1.0, 0.5), (2.0, 0.7)]), 0);
        let out = dir.path().join("stdout");
        std::fs::write(&out, "step 1 acc 0.1\nstep 2 acc 0.2\n").unwrap();
        let mut w = p.watch(&out);
        let why = w.poll().expect("pruned");
        assert!(why.contains("pruned at step 1"), "{why}");
        assert_eq!(w.curve, vec![(1.0, 0.1)]);
    }

    #[test]
    fn warmup_steps_are_never_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let p = Pruner::open(&rule(1, 1.0), dir.path());
        p.remember(&completed(vec![(1.0, 0.5), (2.0, 0.7)]), 0);
        assert_eq!(p.verdict(&vec![(1.0, 0.1)]), None);
        assert!(p.verdict(&vec![(2.0, 0.1)]).is_some());
    }

    #[test]
    fn a_resumed_run_compares_with_the_curves_its_log_says_completed() {
        let dir = tempfile::tempdir().unwrap();
        let first = Pruner::open(&rule(1, 0.0), dir.path());
        first.remember(&completed(vec![(1.0, 0.5)]), 0);
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(PROGRESS_JSONL))
            .unwrap()
            .write_all(b"{\"eval_id\":1,\"sta")
            .unwrap();
        let resumed = Pruner::open(&rule(1, 0.0), dir.path());
        assert_eq!(
            resumed.verdict(&vec![(1.0, 0.1)]),
            None,
            "not yet told it completed"
        );
        resumed.remember(&Measurement::single(1.0), 0);
        assert!(resumed.verdict(&vec![(1.0, 0.1)]).is_some());
    }

    #[test]
    fn a_watch_reads_whole_lines_as_the_file_grows() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.out");
        let p = Pruner::open(&rule(1, 0.0), dir.path());
        p.remember(&completed(vec![(1.0, 0.5), (2.0, 0.6)]), 0);
        let mut w = p.watch(&out);
        assert_eq!(w.poll(), None, "no file yet");
        std::fs::write(&out, "step 1 acc 0.5\nstep 2 acc 0.").unwrap();
        assert_eq!(w.poll(), None);
        assert_eq!(w.curve, vec![(1.0, 0.5)]);
        std::fs::write(&out, "step 1 acc 0.5\nstep 2 acc 0.55\n").unwrap();
        assert!(w.poll().is_some());
        assert_eq!(w.curve, vec![(1.0, 0.5), (2.0, 0.55)]);
    }
}
