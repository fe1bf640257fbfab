//! What failures say, on the console: a failed evaluation's cause in brief (its first line
//! and the last lines of the program's stderr, not the bare "stderr tail:" it ends with),
//! the most common cause when nothing succeeded, and when to stop early: the default and the
//! evaluations after it all failed for one cause (a missing import, a compiler flag the
//! compiler refuses), so the rest of the budget would fail the same way. Timeouts do not stop
//! a run: they depend on the configuration.

use crate::evaluate::outcome::Status;
use crate::run::log::Record;

/// Failed evaluations, the default's among them, that stop a run whose every evaluation so
/// far failed for one cause.
pub const EARLY_FAILURES: usize = 5;

/// Lines of the program's stderr shown under a failed evaluation's progress line.
const TAIL_LINES: usize = 3;

/// The cause in brief: its first line (without a trailing "stderr tail:") and the last
/// [`TAIL_LINES`] non-empty lines after it, each on its own line indented by four spaces.
pub fn brief(cause: &str) -> String {
    let mut lines = cause.lines();
    let first = lines.next().unwrap_or("");
    let first = first.strip_suffix("; stderr tail:").unwrap_or(first);
    let rest: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    let tail = &rest[rest.len().saturating_sub(TAIL_LINES)..];
    let mut out = first.to_string();
    for l in tail {
        out.push_str("\n    ");
        out.push_str(l.trim_end());
    }
    out
}

/// The cause with its numbers blanked, so that failures differing only in an evaluation's
/// directory, a line number or a time compare equal.
fn shape(cause: &str) -> String {
    static DIGITS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"[0-9]+(\.[0-9]+)?").expect("a valid regex")
    });
    DIGITS.replace_all(cause, "#").into_owned()
}

/// The cause of every evaluation so far, when there are at least [`EARLY_FAILURES`], the
/// default is among them, none succeeded and all failed the same way; else `None`.
pub fn one_failure(records: &[Record]) -> Option<&str> {
    if records.len() < EARLY_FAILURES {
        return None;
    }
    let default = crate::run::log::default_record(records)?;
    // A timeout depends on the configuration (the next one may be fast): not a cause that
    // condemns the rest; nor is a cluster's lost job, nor a pruned run.
    let failed = |r: &Record| {
        let s = r.m.status;
        !matches!(
            s,
            Status::Ok | Status::Lost | Status::RunTimeout | Status::BuildTimeout | Status::Pruned
        )
    };
    if !records.iter().all(failed) || !failed(default) {
        return None;
    }
    let first = records[0].m.cause.as_deref()?;
    let same = |r: &Record| {
        r.m.status == records[0].m.status && r.m.cause.as_deref().map(shape) == Some(shape(first))
    };
    records.iter().all(same).then_some(first)
}

/// The most common cause among failed evaluations (compared by [`shape`]), in brief, with
/// how many evaluations it ended.
pub fn common_cause(records: &[Record]) -> Option<(String, usize)> {
    let mut counts: Vec<(String, &str, usize)> = Vec::new();
    let failed = |r: &&Record| !matches!(r.m.status, Status::Ok | Status::Pruned);
    for r in records.iter().filter(failed) {
        let Some(c) = r.m.cause.as_deref() else {
            continue;
        };
        let key = shape(c);
        match counts.iter_mut().find(|(k, _, _)| *k == key) {
            Some(e) => e.2 += 1,
            None => counts.push((key, c, 1)),
        }
    }
    let top = counts.iter().max_by_key(|e| e.2)?;
    Some((
        format!("{}: {}", status_word(records, top.1), brief(top.1)),
        top.2,
    ))
}

/// The status of the first evaluation whose cause is `cause`.
fn status_word(records: &[Record], cause: &str) -> &'static str {
    (records.iter())
        .find(|r| r.m.cause.as_deref() == Some(cause))
        .map_or("failed", |r| r.m.status.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::outcome::{Measurement, Source};
    use crate::problem::space::Config;

    fn failed(eval_id: usize, cause: &str) -> Record {
        Record {
            eval_id,
            config: Config(vec![eval_id as f64]),
            m: Measurement::failed(Status::RunError, 0.0, 0.1, cause.into()),
            elapsed_sec: 0.0,
            source: if eval_id == 0 {
                Source::Default
            } else {
                Source::Initial
            },
            learner: None,
            config_hash: String::new(),
        }
    }

    const MISSING: &str = "the program exited with code 1; stderr tail:\nTraceback (most recent call last):\n  File \"/tmp/eval-3/variant.py\", line 1, in <module>\nModuleNotFoundError: No module named 'sklearn'\n";

    #[test]
    fn the_brief_cause_shows_the_last_lines_of_stderr() {
        let b = brief(MISSING);
        assert!(b.starts_with("the program exited with code 1\n"), "{b}");
        assert!(
            b.ends_with("    ModuleNotFoundError: No module named 'sklearn'"),
            "{b}"
        );
        assert_eq!(
            brief("the run exceeded its timeout of 1 s"),
            "the run exceeded its timeout of 1 s"
        );
    }

    #[test]
    fn five_failures_of_one_cause_with_the_default_stop_the_run() {
        let mut records: Vec<Record> = (0..4)
            .map(|i| failed(i, &MISSING.replace("eval-3", &format!("eval-{i}"))))
            .collect();
        assert!(one_failure(&records).is_none(), "only four");
        records.push(failed(4, MISSING));
        assert!(one_failure(&records).is_some());
        records.push(failed(
            5,
            "the program exited with code 2; stderr tail:\nother\n",
        ));
        assert!(one_failure(&records).is_none(), "a second cause");
        let (why, n) = common_cause(&records).unwrap();
        assert_eq!(n, 5);
        assert!(
            why.starts_with("run_error: the program exited with code 1"),
            "{why}"
        );
        assert!(why.contains("No module named 'sklearn'"), "{why}");
    }
}
