//! The verdict of a verification ([`crate::run::verify`]): what was re-measured, the
//! winner and its speed-up. Plain data, kept in run.json and results.json.

use serde::{Deserialize, Serialize};

use crate::problem::objective::Gain;

/// A candidate whose first this many samples are all equal (a deterministic accuracy, an
/// instruction count) is not run again: more rounds would repeat the same number.
pub const STEADY_ROUNDS: usize = 3;

/// How many of the search's best are re-measured, and in how many rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub top: usize,
    pub rounds: usize,
}

impl Default for Plan {
    fn default() -> Self {
        Plan { top: 3, rounds: 10 }
    }
}

/// One re-measured configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Candidate {
    pub eval_id: usize,
    /// The objective the search recorded for it.
    pub search_objective: Option<f64>,
    pub samples: Vec<f64>,
    pub median: Option<f64>,
    /// Why it could not be re-measured (it failed to build, check or run this time).
    pub cause: Option<String>,
}

/// The verdict, recorded in run.json and results.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Verification {
    pub rounds: usize,
    pub default_eval_id: Option<usize>,
    pub candidates: Vec<Candidate>,
    /// The best re-measured candidate (possibly the default itself).
    pub winner_eval_id: Option<usize>,
    /// The winner's gain over the default with its 95% interval: a speed-up (default /
    /// winner) for a time, a difference in the metric's units for a signed score
    /// ([`crate::problem::objective`]). The name is kept from when it was always a ratio.
    pub speedup: Option<Gain>,
    /// The best candidate when its interval over the default reached no gain, so that the
    /// default stayed the winner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indistinct: Option<Indistinct>,
}

/// A candidate better than the default by its median but not beyond its interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Indistinct {
    pub eval_id: usize,
    pub speedup: Gain,
}

impl Verification {
    /// "eval 26 is 3.92x faster than the default (95% CI 3.61–4.20; 4 configurations × 10
    /// interleaved rounds)"; "eval 7 is 0.083 higher than the default (95% CI +0.07 to
    /// +0.09; …)".
    pub fn describe(&self) -> String {
        let Some(w) = self.winner_eval_id else {
            return "no candidate could be re-measured".into();
        };
        let n = self.candidates.iter().filter(|c| c.cause.is_none()).count();
        let mut how = format!("{n} configurations × {} interleaved rounds", self.rounds);
        let steady: Vec<String> = (self.candidates.iter())
            .filter(|c| c.samples.len() < self.rounds && c.cause.is_none())
            .filter(|c| {
                c.samples
                    .iter()
                    .all(|&x| Some(x) == c.samples.first().copied())
            })
            .map(|c| c.eval_id.to_string())
            .collect();
        if !steady.is_empty() {
            how += &format!(
                "; eval {} gave the same value every time and was not run again after {} rounds",
                steady.join(", "),
                STEADY_ROUNDS
            );
        }
        match (&self.speedup, Some(w) == self.default_eval_id) {
            (_, true) => match &self.indistinct {
                None => format!(
                    "the default configuration (eval {w}) is the best when re-measured ({how})"
                ),
                Some(f) => format!(
                    "the default configuration (eval {w}) stays the best: eval {} measured \
                     {}, not distinguishable from it ({how})",
                    f.eval_id,
                    f.speedup.with_interval()
                ),
            },
            (Some(r), _) => format!(
                "eval {w} is {} than the default (95% CI {}; {how})",
                r.describe(),
                r.interval()
            ),
            (None, _) => {
                format!("eval {w} is the best when re-measured; no default to compare with ({how})")
            }
        }
    }
}
