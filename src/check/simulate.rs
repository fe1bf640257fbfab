//! The decision rule on simulated measurements: how often it cries regression on
//! unchanged code (false alarms) and how often it catches a given slowdown, with noise
//! drawn from samples recorded on this machine (the baselines' interleaved rounds, each
//! divided by its median).
//!
//! A trial draws a recording (the baseline's rounds) and a check session from the same
//! noise, the session's tuned times multiplied by the slowdown, then runs the rule round
//! by round as `moldtune check` does. With a [`Source::drift`], each session's ratio is
//! also moved by a factor drawn from the drift between real sessions
//! ([`between_sessions`]). `cargo bench --bench decision_rule` writes the
//! figures to `results/check/`; a test keeps a small version of it.

use std::path::Path;

use serde::Serialize;

use crate::check::baseline::{self, Baseline, Entry};
use crate::check::rule::{Pair, Rule, Verdict};
use crate::error::Error;
use crate::problem::objective::{Objective, Sense};
use crate::problem::Goal;
use crate::rng::Rng;
use crate::stats::median;

/// The simulated metric: a kernel time.
const TIME: Objective = Objective {
    goal: Goal::Minimize,
    sense: Sense::Time,
};

/// Relative noise of one configuration: samples divided by their median.
#[derive(Debug, Clone)]
pub struct Noise(Vec<f64>);

impl Noise {
    /// `None` for fewer than 5 samples or a zero median.
    pub fn of(samples: &[f64]) -> Option<Noise> {
        let m = median(samples).filter(|&m| m > 0.0 && samples.len() >= 5)?;
        Some(Noise(samples.iter().map(|x| x / m).collect()))
    }

    fn draw(&self, n: usize, scale: f64, rng: &mut Rng) -> Vec<f64> {
        (0..n)
            .map(|_| scale * self.0[rng.below(self.0.len())])
            .collect()
    }
}

/// A guarded pair as recorded: its medians and noise, and the rounds of its recording.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub reference: (f64, Noise),
    pub tuned: (f64, Noise),
    pub recorded_rounds: usize,
    /// How far a session's ratio strays from the recording's on unchanged code (ratios,
    /// median 1), drawn once per simulated check; `None`: not at all.
    pub drift: Option<Noise>,
}

impl Source {
    /// Every guard of a baseline, with its reference, as a noise source (guards with
    /// fewer than 5 recorded samples are left out).
    fn of_baseline(b: &Baseline) -> Vec<Source> {
        let side = |e: &Entry| Some((median(&e.samples)?, Noise::of(&e.samples)?));
        (b.guards.iter())
            .filter_map(|g| {
                Some(Source {
                    name: format!("{}/{}", b.name, g.name),
                    reference: side(&b.reference)?,
                    tuned: side(g)?,
                    recorded_rounds: b.reference.samples.len().min(g.samples.len()),
                    drift: None,
                })
            })
            .collect()
    }

    /// The sources of every baseline file in `dir` (e.g. `results/baselines`), by name.
    pub fn of_folder(dir: &Path) -> Result<Vec<Source>, Error> {
        let mut out = Vec::new();
        for f in baseline::files(&[dir.to_path_buf()])? {
            let text = std::fs::read_to_string(&f)
                .map_err(|e| Error::io(format!("cannot read `{}`", f.display()), e))?;
            let b: Baseline = serde_json::from_str(&text)
                .map_err(|e| Error::Internal(format!("{}: {e}", f.display())))?;
            out.extend(Source::of_baseline(&b));
        }
        Ok(out)
    }
}

/// The changes (now/recorded) real checks of the unchanged tree saw: every guard of the
/// unchanged runs in `scripts/check_acceptance.py`'s `acceptance.json`.
pub fn observed_changes(file: &Path) -> Option<Vec<f64>> {
    let runs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
    let unchanged = |r: &&serde_json::Value| {
        r["tag"]
            .as_str()
            .is_some_and(|t| t.starts_with("unchanged"))
    };
    let changes: Vec<f64> = (runs.as_array()?.iter().filter(unchanged))
        .flat_map(|r| r["guarded"].as_array().cloned().unwrap_or_default())
        .filter_map(|g| g["change"]["ratio"].as_f64())
        .collect();
    (!changes.is_empty()).then_some(changes)
}

/// The part of the observed changes that is drift between sessions: an observed change
/// is that drift times the check's own estimation noise (log-variance `within`, what
/// [`simulate`] gives on unchanged code), so each log-change is shrunk to the variance
/// left over. The observed log-variance, and the drift: `None` when nothing is left (the
/// sessions drift no more than one session's noise explains).
pub fn between_sessions(observed: &[f64], within: f64) -> (f64, Option<Noise>) {
    let logs: Vec<f64> = observed.iter().map(|x| x.ln()).collect();
    let Some((mean, var)) = mean_var(&logs) else {
        return (0.0, None);
    };
    let left = var - within;
    if left <= 0.0 {
        return (var, None);
    }
    let k = (left / var).sqrt();
    let shrunk: Vec<f64> = logs.iter().map(|l| (mean + k * (l - mean)).exp()).collect();
    (var, Noise::of(&shrunk))
}

fn mean_var(x: &[f64]) -> Option<(f64, f64)> {
    if x.len() < 2 {
        return None;
    }
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (x.len() - 1) as f64;
    Some((mean, var))
}

/// What the rule said over many trials at one slowdown.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    pub trials: usize,
    pub regression: usize,
    pub ok: usize,
    pub improvement: usize,
    pub undecided: usize,
    /// Mean rounds the check needed.
    pub mean_rounds: f64,
    /// Variance of the log of the change estimate the rule decided on.
    pub change_log_var: f64,
}

impl Tally {
    pub fn rate(&self, n: usize) -> f64 {
        n as f64 / self.trials.max(1) as f64
    }
}

/// Runs `trials` simulated checks of `source` with the tuned program `slowdown` times
/// slower than recorded; seeded.
pub fn simulate(source: &Source, rule: &Rule, slowdown: f64, trials: usize, seed: u64) -> Tally {
    let mut t = Tally {
        trials,
        ..Tally::default()
    };
    let mut rounds = 0;
    let mut logs = Vec::with_capacity(trials);
    for k in 0..trials {
        let mut rng = Rng::for_step(seed, 7, k as u64);
        let (verdict, used, change) = one_trial(source, rule, slowdown, &mut rng, k as u64);
        rounds += used;
        logs.extend(change.map(f64::ln));
        match verdict {
            Verdict::Regression => t.regression += 1,
            Verdict::Improvement => t.improvement += 1,
            Verdict::Ok => t.ok += 1,
            _ => t.undecided += 1,
        }
    }
    t.mean_rounds = rounds as f64 / trials.max(1) as f64;
    t.change_log_var = mean_var(&logs).map_or(0.0, |(_, v)| v);
    t
}

/// One recording and one check session; the verdict, the rounds used and the change it
/// decided on.
fn one_trial(
    s: &Source,
    rule: &Rule,
    slowdown: f64,
    rng: &mut Rng,
    k: u64,
) -> (Verdict, usize, Option<f64>) {
    let n0 = s.recorded_rounds;
    let (r0, t0) = (
        draw(&s.reference, n0, 1.0, rng),
        draw(&s.tuned, n0, 1.0, rng),
    );
    let cap = rule.cap.max(rule.first);
    let shift = (s.drift.as_ref()).map_or(1.0, |d| d.draw(1, 1.0, rng)[0]);
    let (r, t) = (
        draw(&s.reference, cap, 1.0, rng),
        draw(&s.tuned, cap, slowdown * shift, rng),
    );
    let then = Pair {
        tuned: &t0,
        reference: &r0,
    };
    for done in 1..=cap {
        if !rule.decides_at(done) {
            continue;
        }
        let now = Pair {
            tuned: &t[..done],
            reference: &r[..done],
        };
        if let Some((v, c)) = rule.judge(TIME, now, then, k) {
            return (v, done, c.map(|c| c.ratio));
        }
    }
    (Verdict::Undecided, cap, None)
}

fn draw(side: &(f64, Noise), n: usize, factor: f64, rng: &mut Rng) -> Vec<f64> {
    side.1.draw(n, side.0 * factor, rng)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skewed noise with a heavy tail: most runs within ±5%, one in ten up to 40% slow.
    fn noise(seed: u64) -> Noise {
        let mut rng = Rng::new(seed);
        let samples: Vec<f64> = (0..60)
            .map(|i| match i % 10 {
                0 => 1.0 + 0.4 * rng.f64(),
                _ => 0.95 + 0.1 * rng.f64(),
            })
            .collect();
        Noise::of(&samples).unwrap()
    }

    #[test]
    fn unchanged_code_passes_and_a_large_slowdown_is_caught() {
        let source = Source {
            name: "synthetic".into(),
            reference: (0.02, noise(1)),
            tuned: (0.005, noise(2)),
            recorded_rounds: 60,
            drift: None,
        };
        let rule = Rule {
            resamples: 500,
            ..Rule::default()
        };
        let same = simulate(&source, &rule, 1.0, 40, 3);
        assert_eq!(same.regression, 0, "{same:?}");
        let slow = simulate(&source, &rule, 1.3, 40, 3);
        assert!(slow.regression >= 38, "{slow:?}");
        assert_eq!(
            simulate(&source, &rule, 1.3, 40, 3).regression,
            slow.regression
        );
    }

    #[test]
    fn only_the_drift_beyond_one_sessions_noise_is_kept() {
        let observed: Vec<f64> = (0..40)
            .map(|i| (0.02 * ((i % 5) as f64 - 2.0)).exp())
            .collect();
        let (seen, drift) = between_sessions(&observed, 0.0);
        assert!((seen - 0.0008 * 40.0 / 39.0).abs() < 1e-9, "{seen}");
        let all = drift.unwrap();
        let (_, half) = between_sessions(&observed, seen / 2.0);
        let spread = |n: &Noise| n.0.iter().fold(0.0f64, |m, x| m.max(x.ln().abs()));
        assert!((spread(&half.unwrap()) - spread(&all) / 2f64.sqrt()).abs() < 1e-9);
        assert!(between_sessions(&observed, seen).1.is_none());
    }
}
