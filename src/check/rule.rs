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
//! A score (an accuracy, a log-likelihood, an error count) is judged by its own value
//! instead ([`Judge::Value`], the default for a metric a regex reads): the guarded
//! configuration's loss since the recording, in the metric's units, against a tolerance
//! (`--tolerance 0.01`, or a fraction of the recorded value's size, by default the
//! threshold). A change of the data that lifts every configuration is then an improvement,
//! not a lost lead, and a score that falls is a regression even when the reference falls
//! with it. The same interval rule decides, the tolerance in the place of `threshold`.
//!
//! A deterministic metric (a count or a score) decides as soon as [`SURE_ROUNDS`] rounds of
//! every program show no spread at all: more rounds could not move a median ([`settled`]).
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

/// Rounds of identical samples after which a program's metric counts as deterministic.
pub const SURE_ROUNDS: usize = 3;

/// Whether the samples so far settle every comparison: a count or a score (not a time,
/// whose printed digits may hide its noise) of which every program measured gave at least
/// [`SURE_ROUNDS`] samples, all equal.
pub fn settled(objective: Objective, so_far: &[crate::evaluate::interleave::Remeasured]) -> bool {
    let same = |s: &[f64]| s.len() >= SURE_ROUNDS && s.iter().all(|&x| x == s[0]);
    let measured = so_far.iter().filter_map(|m| m.as_deref().ok());
    objective.sense != crate::problem::objective::Sense::Time
        && measured.clone().count() > 0
        && measured.clone().all(same)
}

/// What a guard is judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Judge {
    /// Its lead over the reference, against the lead recorded (times and counts: measuring
    /// both in the same rounds cancels the machine).
    Lead,
    /// Its own value against the value recorded (scores).
    Value,
}

/// How much of a score may be lost (`--tolerance`): in the metric's units, or a fraction
/// of the recorded value's size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tolerance {
    Units(f64),
    Relative(f64),
}

/// A guarded score's own movement since the recording: the medians then and now, the loss
/// (above 0 worse) with its 95% interval, and the tolerance it was judged against, both in
/// the metric's units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    pub then: f64,
    pub now: f64,
    pub loss: Ratio,
    pub tolerance: f64,
}

/// The band an interval is judged in: no change at `none`, worse beyond `up`, better
/// beyond `down`.
#[derive(Debug, Clone, Copy)]
struct Band {
    none: f64,
    up: f64,
    down: f64,
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
    /// What guards are judged by; `None`: by [`Rule::judge_for`]'s default.
    pub judge: Option<Judge>,
    /// The loss a score may take; `None`: `threshold` of the recorded value's size.
    pub tolerance: Option<Tolerance>,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            threshold: 0.10,
            first: 20,
            step: 20,
            cap: 200,
            resamples: 2000,
            judge: None,
            tolerance: None,
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
        let band = Band {
            none: 1.0,
            up: 1.0 + self.threshold,
            down: 1.0 - self.threshold,
        };
        decide(c, band, at_cap)
    }

    /// What a guard of `objective` is judged by: `--judge`, else its value for a score and
    /// its lead over the reference for a time or a count.
    pub fn judge_for(&self, objective: Objective) -> Judge {
        use crate::problem::objective::Sense;
        self.judge.unwrap_or(match objective.sense {
            Sense::Score => Judge::Value,
            Sense::Time | Sense::Count => Judge::Lead,
        })
    }

    /// The guarded configuration's loss of value from `then` to `now` (its samples), in the
    /// metric's units, and the verdict against the tolerance; `None` while more rounds could
    /// settle it.
    pub fn judge_value(
        &self,
        objective: Objective,
        now: &[f64],
        then: &[f64],
        seed: u64,
    ) -> Option<(Verdict, Option<Drift>)> {
        let at_cap = now.len() >= self.cap;
        let (Some(then_m), Some(now_m)) = (crate::stats::median(then), crate::stats::median(now))
        else {
            return Some((Verdict::Undecided, None));
        };
        let tolerance = match self
            .tolerance
            .unwrap_or(Tolerance::Relative(self.threshold))
        {
            Tolerance::Units(u) => u,
            Tolerance::Relative(f) => f * then_m.abs(),
        };
        let worse = match objective.goal {
            crate::problem::Goal::Minimize => 1.0,
            crate::problem::Goal::Maximize => -1.0,
        };
        let loss = |m: &[f64]| Some(worse * (m[0] - m[1]));
        let Some(loss) = crate::stats::bootstrap(&[now, then], loss, seed, self.resamples) else {
            return Some((Verdict::Undecided, None));
        };
        let band = Band {
            none: 0.0,
            up: tolerance,
            down: -tolerance,
        };
        let drift = Drift {
            then: then_m,
            now: now_m,
            loss,
            tolerance,
        };
        decide(&loss, band, at_cap).map(|v| (v, Some(drift)))
    }
}

/// The interval rule: beyond `up` as a whole a regression, within it as a whole fine (an
/// improvement beyond `down`); at the cap the estimate decides where the interval allows.
fn decide(c: &Ratio, b: Band, at_cap: bool) -> Option<Verdict> {
    let fine = |c: &Ratio| match c.high < b.down {
        true => Verdict::Improvement,
        false => Verdict::Ok,
    };
    if c.low > b.up {
        return Some(Verdict::Regression);
    }
    // `<=`: a loss of exactly nothing against a tolerance of nothing (a count 0 → 0) is fine.
    if c.high < b.up || c.high <= b.none {
        return Some(fine(c));
    }
    if !at_cap {
        return None;
    }
    Some(match c.ratio > b.up {
        true if c.low > b.none => Verdict::Regression,
        false if c.high < b.none + 2.0 * (b.up - b.none) => fine(c),
        _ => Verdict::Undecided,
    })
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

    /// The tester's cases, as a score's own value judges them (maximised).
    #[test]
    fn a_score_is_judged_by_its_loss_against_the_tolerance() {
        let r = Rule::default();
        let max = Objective::new(
            crate::problem::MetricKind::Regex,
            crate::problem::Goal::Maximize,
        );
        let min = Objective::new(
            crate::problem::MetricKind::Regex,
            crate::problem::Goal::Minimize,
        );
        let v = |r: &Rule, o, now: f64, then: f64| {
            r.judge_value(o, &[now; 3], &[then; 3], 1).map(|j| j.0)
        };
        assert_eq!(r.judge_for(max), Judge::Value);
        // Every configuration lifted by new data: 0.95 → 1.00.
        assert_eq!(v(&r, max, 1.00, 0.95), Some(Verdict::Ok));
        let tight = Rule {
            tolerance: Some(Tolerance::Units(0.01)),
            ..r
        };
        assert_eq!(v(&tight, max, 1.00, 0.95), Some(Verdict::Improvement));
        // 0.04 of accuracy lost at `--tolerance 0.01`.
        assert_eq!(v(&tight, max, 0.91, 0.95), Some(Verdict::Regression));
        // An error count 0 → 0, and 0 → 1.
        assert_eq!(v(&r, min, 0.0, 0.0), Some(Verdict::Ok));
        assert_eq!(v(&r, min, 1.0, 0.0), Some(Verdict::Regression));
        // A log-likelihood that falls from −0.168 to −0.417.
        assert_eq!(v(&r, max, -0.417, -0.168), Some(Verdict::Regression));
        assert_eq!(v(&r, max, -0.168, -0.417), Some(Verdict::Improvement));
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
