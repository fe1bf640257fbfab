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

use std::collections::{BTreeMap, HashMap, HashSet};
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
    /// The completed configurations' values by step (the step's bits): each one's last
    /// report at that step, so that a verdict looks up one step, not every curve.
    done: HashMap<u64, Vec<f64>>,
    /// The evaluations whose values are in `done`.
    counted: HashSet<usize>,
    /// Curves written but not yet known to belong to a completed, recorded evaluation.
    saved: BTreeMap<usize, Curve>,
}

impl Curves {
    /// A completed evaluation's curve counts from now on (once).
    fn count(&mut self, eval_id: usize, curve: &Curve) {
        if !self.counted.insert(eval_id) {
            return;
        }
        let mut last: HashMap<u64, f64> = HashMap::new();
        for &(step, value) in curve {
            last.insert(step_key(step), value);
        }
        for (step, value) in last {
            self.done.entry(step).or_default().push(value);
        }
    }
}

/// A step as a key (0 and −0 alike).
fn step_key(step: f64) -> u64 {
    (step + 0.0).to_bits()
}

#[derive(Serialize, Deserialize)]
struct Line {
    eval_id: usize,
    status: Status,
    curve: Curve,
}

impl Pruner {
    /// The pruner of the run in `run_dir`, with the curves its `progress.jsonl` holds (they
    /// count once [`Pruner::remember`] is told their evaluation completed). A line a crash
    /// cut, or one damaged, is left out; the lines after it are read (a byte that is not
    /// UTF-8 spoils its line only), and the next curve is written on a line of its own.
    pub fn open(rule: &Progress, run_dir: &Path) -> Pruner {
        let file = run_dir.join(PROGRESS_JSONL);
        let bytes = std::fs::read(&file).unwrap_or_default();
        // A later line wins.
        let saved = (bytes.split(|&b| b == b'\n'))
            .filter_map(|l| serde_json::from_slice::<Line>(l).ok())
            .map(|l| (l.eval_id, l.curve))
            .collect();
        if bytes.last().is_some_and(|&b| b != b'\n') {
            let f = std::fs::OpenOptions::new().append(true).open(&file);
            let _ = f.and_then(|mut f| f.write_all(b"\n"));
        }
        let curves = Curves {
            saved,
            ..Curves::default()
        };
        Pruner {
            rule: Arc::new(rule.clone()),
            curves: Arc::new(Mutex::new(curves)),
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
                c.count(eval_id, &curve);
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

    /// Whether `value` is better than `best` by the rule's goal (the best so far of a run).
    pub fn better(&self, value: f64, best: Option<f64>) -> bool {
        best.is_none_or(|b| self.rule.goal.better(value, b))
    }

    /// Why to stop a run at `step` whose best value so far is `best`: it is worse than the
    /// median of the completed configurations' values at that step (at least `startup` of
    /// them). Its best so far, not its last value: a training whose accuracy dips for an
    /// epoch is not stopped for the dip (Vizier's and Optuna's rule).
    pub fn verdict(&self, step: f64, best: f64) -> Option<String> {
        let rule = &self.rule;
        if step <= rule.warmup {
            return None;
        }
        let c = self.curves.lock().ok()?;
        let earlier = c.done.get(&step_key(step))?;
        if earlier.len() < rule.startup {
            return None; // a median of too few says little
        }
        let median = crate::stats::median(earlier)?;
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
            best: None,
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
    /// Its best value so far.
    best: Option<f64>,
}

impl Watch<'_> {
    /// Reads the lines printed since the last look; a reason to stop the run if one of
    /// them reports a value worse than the median at its step.
    pub fn poll(&mut self) -> Option<String> {
        let text = self.fresh_lines()?;
        for (step, value) in self.pruner.rule.points(&text) {
            self.push(step, value);
            // The run stops at the first value judged: its curve (and the step recorded
            // with it) ends there, whatever the same read brought after it.
            let best = self.best.unwrap_or(value);
            if let Some(why) = self.pruner.verdict(step, best) {
                return Some(why);
            }
        }
        None
    }

    /// Reads every line left once the run ended by itself (it ran to its end: nothing is
    /// judged), the last one even without its newline.
    pub fn rest(&mut self) {
        while let Some(text) = self.fresh_lines() {
            for (step, value) in self.pruner.rule.points(&text) {
                self.push(step, value);
            }
        }
        let last = String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned();
        for (step, value) in self.pruner.rule.points(&last) {
            self.push(step, value);
        }
    }

    fn push(&mut self, step: f64, value: f64) {
        self.curve.push((step, value));
        if self.pruner.better(value, self.best) {
            self.best = Some(value);
        }
    }

    /// The complete lines written since the last look (at most a megabyte a look); `None`
    /// when nothing new was written.
    fn fresh_lines(&mut self) -> Option<String> {
        let mut f = std::fs::File::open(&self.stdout).ok()?;
        f.seek(SeekFrom::Start(self.offset)).ok()?;
        let mut buf = Vec::new();
        let n = f.take(1 << 20).read_to_end(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        self.offset += n as u64;
        self.partial.extend_from_slice(&buf);
        let end = self.partial.iter().rposition(|&b| b == b'\n');
        let Some(end) = end else {
            if self.partial.len() > MAX_PARTIAL_LINE {
                self.partial.clear(); // no line that long is a progress report
            }
            return Some(String::new());
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
        assert_eq!(p.verdict(1.0, 0.1), None, "before `startup` completed");
        p.remember(&completed(vec![(1.0, 0.4), (2.0, 0.9), (3.0, 0.95)]), 2);
        assert!(p.verdict(1.0, 0.45).unwrap().contains("median"));
        assert_eq!(p.verdict(1.0, 0.5), None, "the median itself is not worse");
        assert_eq!(p.verdict(2.0, 0.85), None);
        assert_eq!(
            p.verdict(3.0, 0.0),
            None,
            "one completed value at that step"
        );
    }

    /// A run that reached the median and dipped below it at its last step goes on: its best
    /// so far decides (a dip was pruned).
    #[test]
    fn a_run_is_judged_by_its_best_value_so_far() {
        let dir = tempfile::tempdir().unwrap();
        let p = Pruner::open(&rule(1, 1.0), dir.path());
        p.remember(&completed(vec![(1.0, 0.5), (2.0, 0.7)]), 0);
        let watched = |name: &str, text: &str| {
            let out = dir.path().join(name);
            std::fs::write(&out, text).unwrap();
            p.watch(&out).poll()
        };
        assert_eq!(watched("dip", "step 1 acc 0.8\nstep 2 acc 0.6\n"), None);
        let why = watched("low", "step 1 acc 0.4\nstep 2 acc 0.6\n").expect("never reached it");
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
        assert_eq!(p.verdict(1.0, 0.05), None);
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
        assert_eq!(p.verdict(1.0, 0.1), None);
        assert!(p.verdict(2.0, 0.1).is_some());
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
        assert_eq!(resumed.verdict(1.0, 0.1), None, "not yet told it completed");
        resumed.remember(&Measurement::single(1.0), 0);
        assert!(resumed.verdict(1.0, 0.1).is_some());
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

    /// A run that printed more than a look reads (a megabyte) keeps its whole curve once it
    /// ended by itself (about 108,000 of 150,000 points were kept).
    #[test]
    fn the_rest_of_a_long_output_is_read_when_the_run_ends() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.out");
        let p = Pruner::open(&rule(1, 0.0), dir.path());
        let text: String = (1..=150_000)
            .map(|k| format!("step {k} acc 0.5\n"))
            .collect();
        std::fs::write(&out, format!("{text}step 150001 acc 0.75")).unwrap();
        let mut w = p.watch(&out);
        assert_eq!(w.poll(), None);
        assert!(w.curve.len() < 150_000);
        w.rest();
        assert_eq!(w.curve.len(), 150_001);
        assert_eq!(w.curve.last(), Some(&(150_001.0, 0.75)));
    }

    /// A line torn by a crash, and a byte that is not UTF-8, spoil their own line only: the
    /// curves written after them are read (the torn line swallowed the next curve; the byte
    /// made a resumed run ignore every curve).
    #[test]
    fn a_damaged_progress_file_loses_only_its_damaged_lines() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(PROGRESS_JSONL);
        let good =
            |id: usize| format!("{{\"eval_id\":{id},\"status\":\"ok\",\"curve\":[[1.0,0.5]]}}\n");
        let mut bytes = good(0).into_bytes();
        bytes.extend(b"{\"eval_id\":1,\"status\":\"ok\",\"curve\":[[1.0,0.\xff]]}\n");
        bytes.extend(good(2).into_bytes());
        bytes.extend(b"{\"eval_id\":3,\"sta");
        std::fs::write(&file, bytes).unwrap();
        let p = Pruner::open(&rule(2, 0.0), dir.path());
        p.remember(&completed(vec![(1.0, 0.6)]), 4);
        let reopened = Pruner::open(&rule(2, 0.0), dir.path());
        for id in [0, 2, 4] {
            reopened.remember(&Measurement::single(1.0), id);
        }
        // Three completed at step 1: 0.5, 0.5, 0.6; the median 0.5.
        let why = reopened.verdict(1.0, 0.4).expect("pruned");
        assert!(why.contains("median of the 3 completed"), "{why}");
    }
}
