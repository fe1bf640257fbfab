//! Progress while a search runs: a bar on a TTY (evaluations, best so far, counts per
//! outcome), one plain line per evaluation otherwise. Always on stderr.

use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use crate::error::Error;
use crate::evaluate::outcome::Status;
use crate::run::log::Record;
use crate::run::observe::{Observe, Seen};

pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    counts: BTreeMap<&'static str, usize>,
    quiet: bool,
    /// The `record:` quantities some success lacked (warned once).
    lacked: BTreeSet<String>,
}

/// The terminal's view: a line (or the bar's message) per evaluation, and the warning when a
/// success lacks a quantity the problem records.
impl Observe for Progress {
    fn logged(&mut self, seen: &Seen) -> Result<(), Error> {
        let Some(last) = seen.records.last() else {
            return Ok(());
        };
        if let Some(w) = crate::run::prefer::missing_warning(seen.problem, last, &mut self.lacked) {
            self.message(&w);
        }
        let best = seen.best.and_then(|i| seen.records[i].m.objective);
        let describe = seen.problem.space.describe(&last.config);
        self.update(last, seen.spent, best, &describe);
        Ok(())
    }
}

impl Progress {
    pub fn new(total: usize, done: usize, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
                )
                .expect("valid template"),
            );
            b.set_position(done as u64);
            b
        });
        Progress {
            bar,
            total,
            counts: BTreeMap::new(),
            quiet,
            lacked: BTreeSet::new(),
        }
    }

    fn count(&mut self, r: &Record) {
        *self.counts.entry(r.m.status.as_str()).or_default() += 1;
    }

    /// Counts an evaluation of the log a resumed run replays (not shown); a quantity it
    /// lacked is not warned of again.
    pub fn replayed(&mut self, problem: &crate::problem::Problem, r: &Record) {
        self.count(r);
        let lacking = crate::run::prefer::lacking(problem, r);
        self.lacked.extend(lacking.into_iter().map(str::to_string));
    }

    fn counts_text(&self) -> String {
        self.counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Shows evaluation `r`, after which `spent` of the budget is used.
    pub fn update(&mut self, r: &Record, spent: usize, best: Option<f64>, describe: &str) {
        self.count(r);
        let best_s = best.map_or("-".to_string(), |b| format!("{b:.6}"));
        if let Some(b) = &self.bar {
            b.set_position(spent as u64);
            b.set_message(format!("best {best_s} | {}", self.counts_text()));
            if let (Some(c), None) = (&r.m.cause, r.m.reused_from) {
                let status = r.m.status.as_str();
                b.println(format!(
                    "eval {} {status}: {}",
                    r.eval_id,
                    crate::run::causes::brief(c)
                ));
            }
        } else if !self.quiet {
            let obj = r.m.objective.map_or("-".to_string(), |o| format!("{o:.6}"));
            let why = match (&r.m.status, &r.m.cause, r.m.reused_from) {
                (_, _, Some(e)) => format!("  (the same program as eval {e}: not re-measured)"),
                (Status::Ok, _, _) | (_, None, _) => String::new(),
                (_, Some(c), _) => format!("  ({})", crate::run::causes::brief(c)),
            };
            // The eval id as results.csv has it, then how far the run is.
            eprintln!(
                "eval {:>4} [{}/{}] {:<14} {:>10}  best {:>10}  {}{}",
                r.eval_id,
                spent,
                self.total,
                r.m.status.as_str(),
                obj,
                best_s,
                describe,
                why
            );
        }
    }

    pub fn message(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    pub fn summary_counts(&self) -> String {
        self.counts_text()
    }
}
