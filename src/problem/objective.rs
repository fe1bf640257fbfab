//! How two values of the objective compare: the one goal-oriented rule every comparison
//! after the search goes through (the verification, `best`, `baseline`, `check`, the report
//! and `replay`).
//!
//! A [`Gain`] says how much better a candidate is than a reference, oriented by the goal
//! (above 1 for a ratio, above 0 for a difference is better). It is a ratio of medians only
//! where it means something: the metric is a time or a count and every sample is above 0
//! (`1.80x faster`). Anything else (a score, a log-likelihood, a value that may be 0 or
//! negative) is compared by the difference of medians in the metric's own units
//! (`+0.083 higher`): −2 against −9 is a gain of 7, not "0.22x".

use serde::{Deserialize, Serialize};

use crate::number::{sig, signed};
use crate::problem::{Goal, Metric, MetricKind};
use crate::stats::{self, Ratio};

/// What the metric measures, which decides the words and whether ratios can mean anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Sense {
    /// Seconds: "faster", a speed-up.
    #[default]
    Time,
    /// Instructions or cycles counted: "fewer", a reduction.
    Count,
    /// Any number a regex reads (an accuracy, a throughput, a log-likelihood): "higher" or
    /// "lower" by the goal, a gain.
    Score,
}

/// A metric's goal and sense: all that comparing two of its values needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Objective {
    pub goal: Goal,
    pub sense: Sense,
}

impl Objective {
    pub fn new(kind: MetricKind, goal: Goal) -> Objective {
        let sense = match kind {
            MetricKind::KernelTime | MetricKind::WallTime | MetricKind::CpuTime => Sense::Time,
            MetricKind::Instructions | MetricKind::Cycles => Sense::Count,
            MetricKind::Regex => Sense::Score,
        };
        Objective { goal, sense }
    }

    pub fn of(metric: &Metric) -> Objective {
        Objective::new(metric.kind, metric.goal)
    }

    /// A ratio for a time or a count whose every sample is above 0, else a difference.
    fn ratio_fits(self, sets: &[&[f64]]) -> bool {
        let positive = |s: &&[f64]| s.iter().all(|&v| v > 0.0 && v.is_finite());
        self.sense != Sense::Score && sets.iter().all(positive)
    }

    /// The gain of `candidate` over `reference` (medians of their samples, taken in the
    /// same rounds) with a 95% bootstrap interval, seeded; `None` when either is empty.
    pub fn gain(self, candidate: &[f64], reference: &[f64], seed: u64) -> Option<Gain> {
        let (top, bottom) = self.oriented(candidate, reference);
        let ratio = self.ratio_fits(&[candidate, reference]);
        let estimate = match ratio {
            true => stats::ratio_of_medians(top, bottom, seed)?,
            false => {
                let difference = |m: &[f64]| Some(m[0] - m[1]);
                stats::bootstrap(&[top, bottom], difference, seed, stats::RESAMPLES)?
            }
        };
        Some(Gain::new(self, ratio, estimate, stats::median(reference)?))
    }

    /// The gain of one value over another (the search's own numbers, no interval).
    pub fn gain_of(self, candidate: f64, reference: f64) -> Option<Gain> {
        if !(candidate.is_finite() && reference.is_finite()) {
            return None;
        }
        let (c, r) = ([candidate], [reference]);
        let (top, bottom) = self.oriented(&c, &r);
        let ratio = self.ratio_fits(&[&[candidate], &[reference]]);
        let value = if ratio {
            top[0] / bottom[0]
        } else {
            top[0] - bottom[0]
        };
        let exact = Ratio {
            ratio: value,
            low: value,
            high: value,
            level: 0.0,
        };
        Some(Gain::new(self, ratio, exact, reference))
    }

    /// (candidate, reference) for a maximised metric, (reference, candidate) for a minimised
    /// one: a gain is the first over (or minus) the second.
    fn oriented<'a>(self, candidate: &'a [f64], reference: &'a [f64]) -> (&'a [f64], &'a [f64]) {
        match self.goal {
            Goal::Maximize => (candidate, reference),
            Goal::Minimize => (reference, candidate),
        }
    }

    /// The change of a guarded configuration's standing against its reference between a
    /// recording (`then`) and now, each a (tuned, reference) pair of interleaved samples:
    /// 1 is unchanged, above 1 worse (1.10: 10% lost). For ratios, the ratio of the two
    /// sessions' ratios (worse / better); for differences, 1 + the lost difference over
    /// the size of the recorded reference, so one threshold reads the same for both.
    pub fn change(
        self,
        now: (&[f64], &[f64]),
        then: (&[f64], &[f64]),
        seed: u64,
        resamples: usize,
    ) -> Option<Ratio> {
        let sets = [now.0, now.1, then.0, then.1];
        if self.ratio_fits(&sets) {
            let (now, then) = (self.oriented_pair(now), self.oriented_pair(then));
            return stats::change_of_ratio(now, then, seed, resamples);
        }
        let size = size_of(stats::median(then.1)?, stats::median(then.0)?);
        let sign = match self.goal {
            Goal::Minimize => 1.0,
            Goal::Maximize => -1.0,
        };
        // m = medians of (tuned now, reference now, tuned then, reference then).
        let stat = |m: &[f64]| Some(1.0 + sign * ((m[0] - m[1]) - (m[2] - m[3])) / size);
        stats::bootstrap(&sets, stat, seed, resamples)
    }

    /// A (tuned, reference) pair ordered so that the first over the second grows as the tuned
    /// configuration gets worse: as it is for a minimised metric, swapped for a maximised one.
    fn oriented_pair<'a>(self, pair: (&'a [f64], &'a [f64])) -> (&'a [f64], &'a [f64]) {
        match self.goal {
            Goal::Minimize => (pair.0, pair.1),
            Goal::Maximize => (pair.1, pair.0),
        }
    }
}

/// How far `value` is behind `best` under `goal`, as a fraction of `best`'s size (0 when it
/// is as good or better): 0.05 is "within 5%" for values of any sign (−2.1 is 5% behind −2
/// when maximising).
pub fn shortfall(goal: Goal, value: f64, best: f64) -> f64 {
    let behind = match goal {
        Goal::Minimize => value - best,
        Goal::Maximize => best - value,
    };
    match best.abs() {
        m if m > 0.0 => (behind / m).max(0.0),
        _ => behind.max(0.0),
    }
}

/// The size a difference is measured against: the reference's magnitude, else the tuned
/// one's, else 1 (both 0).
fn size_of(reference: f64, tuned: f64) -> f64 {
    [reference.abs(), tuned.abs(), 1.0]
        .into_iter()
        .find(|&m| m > 0.0 && m.is_finite())
        .unwrap_or(1.0)
}

/// How much better a candidate is than a reference, with an interval, oriented by the
/// goal: the value is a ratio (better above 1) or a difference in the metric's units
/// (better above 0). Written to JSON as `ratio` or `difference`, with `low`, `high` and
/// `level` (as a speed-up always was).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Gain {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    difference: Option<f64>,
    pub low: f64,
    pub high: f64,
    /// The interval's confidence level (0.95; 0 for a gain of two single values).
    pub level: f64,
    #[serde(default)]
    pub sense: Sense,
    #[serde(default)]
    pub goal: Goal,
    /// The reference's median: what a difference is relative to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reference: Option<f64>,
}

impl Gain {
    fn new(o: Objective, ratio: bool, e: Ratio, reference: f64) -> Gain {
        Gain {
            ratio: ratio.then_some(e.ratio),
            difference: (!ratio).then_some(e.ratio),
            low: e.low,
            high: e.high,
            level: e.level,
            sense: o.sense,
            goal: o.goal,
            reference: (!ratio).then_some(reference),
        }
    }

    /// A ratio read from an earlier recording (a speed-up), for tests and old files.
    pub fn from_ratio(r: Ratio) -> Gain {
        Gain::new(
            Objective {
                goal: Goal::Minimize,
                sense: Sense::Time,
            },
            true,
            r,
            f64::NAN,
        )
    }

    pub fn is_ratio(&self) -> bool {
        self.ratio.is_some()
    }

    /// The ratio or the difference.
    pub fn value(&self) -> f64 {
        self.ratio.or(self.difference).unwrap_or(f64::NAN)
    }

    /// What "no gain" is: 1 for a ratio, 0 for a difference.
    pub fn none(&self) -> f64 {
        if self.is_ratio() {
            1.0
        } else {
            0.0
        }
    }

    /// Better beyond doubt: the whole interval lies above no gain.
    pub fn beyond_doubt(&self) -> bool {
        self.low > self.none()
    }

    /// Better by the point estimate.
    pub fn better(&self) -> bool {
        self.value() > self.none()
    }

    /// The interval's wider side relative to the value's size: 0.05 for 2.00 [1.90–2.10];
    /// for a difference, relative to the reference (±0.9 on a reference of −9: 0.10).
    pub fn half_width(&self) -> f64 {
        match self.ratio {
            Some(r) => (self.high / r).max(r / self.low) - 1.0,
            None => {
                let v = self.value();
                let size = size_of(self.reference.unwrap_or(0.0), v);
                (self.high - v).max(v - self.low) / size
            }
        }
    }

    /// "1.80x faster", "1.25x fewer", "0.083 higher" (by the goal), "7 lower".
    pub fn describe(&self) -> String {
        let v = self.value();
        match (self.ratio.is_some(), self.sense) {
            (true, Sense::Time) => format!("{v:.2}x faster"),
            (true, Sense::Count) => format!("{v:.2}x fewer"),
            (true, Sense::Score) => format!("{v:.2}x better"),
            (false, _) => format!("{} {}", sig(v.abs(), 4), self.direction(v)),
        }
    }

    /// The interval as "1.70–1.90" (ratios) or "+0.07 to +0.09" (differences, in the
    /// metric's units, signed the way the metric moved).
    pub fn interval(&self) -> String {
        match self.ratio {
            Some(_) => format!("{:.2}–{:.2}", self.low, self.high),
            None => {
                let (a, b) = match self.goal {
                    Goal::Maximize => (self.low, self.high),
                    Goal::Minimize => (-self.high, -self.low),
                };
                format!("{} to {}", signed(a), signed(b))
            }
        }
    }

    /// "1.80x faster (95% CI 1.70–1.90)".
    pub fn with_interval(&self) -> String {
        match self.level > 0.0 {
            true => format!("{} (95% CI {})", self.describe(), self.interval()),
            false => self.describe(),
        }
    }

    /// What the gain is called: a speed-up (times), a reduction (counts), a gain (scores).
    pub fn noun(&self) -> &'static str {
        match self.sense {
            Sense::Time => "speed-up",
            Sense::Count => "reduction",
            Sense::Score => "gain",
        }
    }

    /// "higher" or "lower" for a difference `v` (better when above 0), by the goal.
    fn direction(&self, v: f64) -> &'static str {
        let up = (self.goal == Goal::Maximize) == (v >= 0.0);
        match (up, self.sense) {
            (true, Sense::Time) => "s slower",
            (false, Sense::Time) => "s faster",
            (true, _) => "higher",
            (false, _) => "lower",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(goal: Goal) -> Objective {
        Objective {
            goal,
            sense: Sense::Score,
        }
    }

    const TIME: Objective = Objective {
        goal: Goal::Minimize,
        sense: Sense::Time,
    };

    #[test]
    fn a_time_compares_by_ratio_and_a_score_by_difference() {
        let g = TIME.gain(&[1.0, 1.0, 1.0], &[2.0, 2.0, 2.0], 1).unwrap();
        assert!(g.is_ratio() && g.value() == 2.0 && g.beyond_doubt());
        assert_eq!(g.describe(), "2.00x faster");
        let g = score(Goal::Maximize)
            .gain(&[-2.0; 3], &[-9.0; 3], 1)
            .unwrap();
        assert!(!g.is_ratio() && g.value() == 7.0 && g.beyond_doubt());
        assert_eq!(g.describe(), "7 higher");
        let g = score(Goal::Maximize)
            .gain(&[-9.0; 3], &[-2.0; 3], 1)
            .unwrap();
        assert!(g.value() == -7.0 && !g.better());
        assert_eq!(g.describe(), "7 lower");
    }

    #[test]
    fn a_time_at_zero_or_of_mixed_sign_is_a_difference() {
        let g = TIME.gain_of(0.5, 0.0).unwrap();
        assert!(!g.is_ratio() && g.value() == -0.5 && !g.better());
        let g = score(Goal::Minimize).gain_of(-2.5, 1.0).unwrap();
        assert_eq!((g.value(), g.describe()), (3.5, "3.5 lower".to_string()));
    }

    #[test]
    fn a_maximised_positive_count_gains_by_its_ratio() {
        let o = Objective::new(MetricKind::Instructions, Goal::Maximize);
        let g = o.gain_of(6.0, 1.0).unwrap();
        assert!(g.is_ratio() && g.value() == 6.0, "{g:?}");
    }

    #[test]
    fn shortfall_is_relative_for_values_of_any_sign() {
        let (min, max) = (Goal::Minimize, Goal::Maximize);
        assert!((shortfall(min, 1.05, 1.0) - 0.05).abs() < 1e-12);
        assert_eq!(shortfall(min, 0.9, 1.0), 0.0);
        assert!((shortfall(min, -1.9, -2.0) - 0.05).abs() < 1e-12);
        assert!((shortfall(max, -2.1, -2.0) - 0.05).abs() < 1e-12);
        assert!((shortfall(max, 0.95, 1.0) - 0.05).abs() < 1e-12);
        assert_eq!(shortfall(max, -1.0, -2.0), 0.0);
    }

    #[test]
    fn a_maximised_metric_that_drops_is_a_change_above_one() {
        let then = ([6.0; 5], [1.0; 5]);
        let now = ([3.0; 5], [1.0; 5]);
        let max_count = Objective::new(MetricKind::Cycles, Goal::Maximize);
        let c = max_count.change((&now.0, &now.1), (&then.0, &then.1), 1, 200);
        assert_eq!(c.unwrap().ratio, 2.0);
        let c = TIME.change((&now.0, &now.1), (&then.0, &then.1), 1, 200);
        assert_eq!(c.unwrap().ratio, 0.5, "for a time, 3 against 6 is a gain");
        // A log-likelihood: tuned −2 against −9 recorded; now −5.5 against −9.
        let (t, r, n) = ([-2.0; 5], [-9.0; 5], [-5.5; 5]);
        let c = score(Goal::Maximize).change((&n, &r), (&t, &r), 1, 200);
        let c = c.unwrap().ratio;
        assert!((c - (1.0 + 3.5 / 9.0)).abs() < 1e-12, "{c}");
    }

    #[test]
    fn a_recorded_speed_up_reads_back_as_a_ratio() {
        let old = r#"{"ratio": 2.5, "low": 2.0, "high": 3.0, "level": 0.95}"#;
        let g: Gain = serde_json::from_str(old).unwrap();
        assert!(g.is_ratio() && g.value() == 2.5 && g.sense == Sense::Time);
        let d = score(Goal::Maximize).gain_of(0.9, 0.8).unwrap();
        let text = serde_json::to_string(&d).unwrap();
        assert!(
            text.contains("\"difference\"") && !text.contains("\"ratio\""),
            "{text}"
        );
    }
}
