//! The regression gate's decision rule.
//!
//! The statistic is the *change* of the guarded configuration's standing against its
//! reference, oriented by the goal so that above 1 is worse ([`Objective::change`]): for a
//! time, (tuned / reference now) / (tuned / reference when recorded), each a ratio of medians
//! of interleaved samples; for a maximised metric the ratios are turned over; for a score of
//! any sign, 1 + the difference lost over the recorded reference's size. A 95% bootstrap
//! interval resamples all four sample sets.
//! Measuring both programs in the same rounds cancels the machine's load and speed, so a
//! baseline recorded on one machine can guard another.
//!
//! Rounds are added in batches, and after each batch, with `up = 1 + threshold`:
//! - the whole interval above `up`: **regression**;
//! - the whole interval below `up`: **ok** (**improvement** when it is also below
//!   `1 − threshold`);
//! - otherwise more rounds, up to the cap. At the cap the point estimate decides where
//!   the interval allows it: a regression when it is above `up` and the interval excludes
//!   1 (slower than recorded beyond doubt); ok when it is below `up` and the interval
//!   excludes `1 + 2 × threshold` (no large regression hides in the noise); else
//!   **undecided**.
//!
//! `results/check/decision_rule.md` gives its false-alarm and detection rates on this
//! machine's recorded noise (`cargo bench --bench decision_rule`).

use serde::{Deserialize, Serialize};

use crate::problem::objective::Objective;
use crate::stats::Ratio;

/// The verdict on one guarded configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Improvement,
    Regression,
    Undecided,
    /// The guarded configuration or its reference gave a wrong output.
    WrongOutput,
    /// It or its reference did not build.
    BuildFailure,
    /// It or its reference crashed, timed out or printed no metric.
    RunFailure,
}

impl Verdict {
    /// The exit code a check with this verdict ends with (see `error::exit`).
    pub fn exit_code(self) -> u8 {
        use crate::error::exit;
        match self {
            Verdict::Ok | Verdict::Improvement => exit::OK,
            Verdict::Regression => exit::REGRESSION,
            Verdict::Undecided => exit::UNDECIDED,
            Verdict::WrongOutput | Verdict::BuildFailure | Verdict::RunFailure => exit::BROKEN,
        }
    }

    /// How bad it is, for the exit code of a check over many kernels: the worst wins.
    pub fn severity(self) -> u8 {
        match self {
            Verdict::Ok | Verdict::Improvement => 0,
            Verdict::Undecided => 1,
            Verdict::Regression => 2,
            Verdict::WrongOutput | Verdict::BuildFailure | Verdict::RunFailure => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Improvement => "improvement",
            Verdict::Regression => "regression",
            Verdict::Undecided => "undecided",
            Verdict::WrongOutput => "wrong output",
            Verdict::BuildFailure => "build failure",
            Verdict::RunFailure => "run failure",
        }
    }
}

/// The relative half-width a recording's speed-up interval may have for a check to decide
/// a `threshold` against it: half the threshold. The change a check judges divides this
/// session's ratio by the recording's, so its interval holds both widths: a recording
/// that alone fills the threshold leaves nothing for the session's own noise, and even
/// unchanged code ends undecided (a busy runner's 2.22 [2.00–2.98], ±34%, against 10%).
pub fn resolution_needed(threshold: f64) -> f64 {
    threshold / 2.0
}

/// The rule's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// A loss beyond this fraction (of the ratio, or of the reference's size) is a
    /// regression (0.10).
    pub threshold: f64,
    /// Rounds before the first decision.
    pub first: usize,
    /// Rounds added while undecided.
    pub step: usize,
    /// At most this many rounds.
    pub cap: usize,
    /// Bootstrap resamples per decision.
    pub resamples: usize,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            threshold: 0.10,
            first: 20,
            step: 20,
            cap: 200,
            resamples: 2000,
        }
    }
}

/// Interleaved samples of a guarded configuration and its reference.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'a> {
    pub tuned: &'a [f64],
    pub reference: &'a [f64],
}

impl Rule {
    /// Whether `done` rounds is a point where the rule decides.
    pub fn decides_at(&self, done: usize) -> bool {
        done >= self.cap || (done >= self.first && (done - self.first) % self.step.max(1) == 0)
    }

    /// The change of `now`'s ratio against `then`'s and the verdict, `None` while more
    /// rounds (below the cap) could settle it. The seed fixes the bootstrap.
    pub fn judge(
        &self,
        objective: Objective,
        now: Pair,
        then: Pair,
        seed: u64,
    ) -> Option<(Verdict, Option<Ratio>)> {
        let at_cap = now.tuned.len().min(now.reference.len()) >= self.cap;
        let change = objective.change(
            (now.tuned, now.reference),
            (then.tuned, then.reference),
            seed,
            self.resamples,
        );
        let Some(c) = change else {
            return Some((Verdict::Undecided, None));
        };
        self.verdict(&c, at_cap).map(|v| (v, Some(c)))
    }

    fn verdict(&self, c: &Ratio, at_cap: bool) -> Option<Verdict> {
        let up = 1.0 + self.threshold;
        let down = 1.0 - self.threshold;
        let fine = |c: &Ratio| match c.high < down {
            true => Verdict::Improvement,
            false => Verdict::Ok,
        };
        if c.low > up {
            return Some(Verdict::Regression);
        }
        if c.high < up {
            return Some(fine(c));
        }
        if !at_cap {
            return None;
        }
        Some(match c.ratio > up {
            true if c.low > 1.0 => Verdict::Regression,
            false if c.high < 1.0 + 2.0 * self.threshold => fine(c),
            _ => Verdict::Undecided,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(ratio: f64, low: f64, high: f64) -> Ratio {
        Ratio {
            ratio,
            low,
            high,
            level: 0.95,
        }
    }

    #[test]
    fn the_interval_decides_early_and_the_estimate_at_the_cap() {
        let r = Rule::default();
        assert_eq!(
            r.verdict(&ratio(1.3, 1.2, 1.4), false),
            Some(Verdict::Regression)
        );
        assert_eq!(r.verdict(&ratio(1.0, 0.95, 1.05), false), Some(Verdict::Ok));
        assert_eq!(
            r.verdict(&ratio(0.7, 0.6, 0.8), false),
            Some(Verdict::Improvement)
        );
        assert_eq!(r.verdict(&ratio(1.12, 1.05, 1.2), false), None);
        assert_eq!(
            r.verdict(&ratio(1.12, 1.05, 1.2), true),
            Some(Verdict::Regression)
        );
        assert_eq!(r.verdict(&ratio(1.08, 1.02, 1.15), true), Some(Verdict::Ok));
        assert_eq!(
            r.verdict(&ratio(1.12, 0.9, 1.4), true),
            Some(Verdict::Undecided)
        );
        assert_eq!(
            r.verdict(&ratio(1.05, 0.8, 1.3), true),
            Some(Verdict::Undecided)
        );
    }

    #[test]
    fn decisions_come_after_the_first_batch_and_each_step() {
        let r = Rule::default();
        let at: Vec<usize> = (0..=200).filter(|&d| r.decides_at(d)).collect();
        assert_eq!(at[..5], [20, 40, 60, 80, 100]);
        assert_eq!(at.len(), 10, "{at:?}");
    }

    #[test]
    fn the_worst_verdict_sets_the_exit_code() {
        use crate::error::exit;
        let all = [
            Verdict::Ok,
            Verdict::Undecided,
            Verdict::Regression,
            Verdict::WrongOutput,
        ];
        let worst = all.iter().max_by_key(|v| v.severity()).unwrap();
        assert_eq!(worst.exit_code(), exit::BROKEN);
        assert_eq!(Verdict::Regression.exit_code(), 4);
        assert_eq!(Verdict::Improvement.exit_code(), 0);
    }
}
