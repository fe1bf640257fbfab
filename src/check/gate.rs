//! Re-measuring a baseline: its reference and guarded configurations are built, checked
//! against the reference output and timed interleaved ([`crate::evaluate::interleave`]),
//! with rounds added until the [`Rule`] decides every guard; or, to record a baseline, for
//! a fixed number of rounds.

use std::path::Path;

use serde::Serialize;

use crate::check::baseline::Loaded;
use crate::check::rule::{self, Drift, Judge, Pair, Rule, Verdict};
use crate::check::session::Undecided;
use crate::error::Error;
use crate::evaluate::interleave::{Failed, Remeasured, Rounds};
use crate::evaluate::outcome::{Status, Stop};
use crate::evaluate::roofline::{Reach, Roofline};
use crate::evaluate::Evaluator;
use crate::problem::objective::{Gain, Objective};
use crate::stats::Ratio;

/// The verdicts of one check.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Checked {
    pub rule: Rule,
    pub undecided: Undecided,
    pub guarded: Vec<Guarded>,
    pub seconds: f64,
}

impl Checked {
    /// The worst verdict's exit code (an undecided one passes under `--undecided pass`).
    pub fn exit_code(&self) -> u8 {
        (self.guarded.iter().map(|g| g.verdict))
            .filter(|&v| self.fails(v))
            .max_by_key(|v| v.severity())
            .map_or(0, |v| v.exit_code())
    }

    /// Whether `v` fails the check.
    pub fn fails(&self, v: Verdict) -> bool {
        v.severity() > 0 && (v != Verdict::Undecided || self.undecided == Undecided::Fail)
    }
}

/// The verdict on one guarded configuration of one baseline.
#[derive(Debug, Clone, Serialize)]
pub struct Guarded {
    /// The baseline's name and the guard's: `gemm-medium`, `tuned`.
    pub name: String,
    pub guard: String,
    pub file: String,
    pub verdict: Verdict,
    /// Gain over the reference when recorded and now, with 95% intervals (a speed-up for
    /// a time, [`crate::problem::objective`]).
    pub recorded: Option<Gain>,
    pub measured: Option<Gain>,
    /// The change of its standing against the reference since the recording, above 1
    /// worse ([`crate::check::rule`]); judged by its lead.
    pub change: Option<Ratio>,
    /// Its own value's movement since the recording; judged by its value (a score).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
    pub rounds: usize,
    /// Why it is broken, or why the rule could not decide.
    pub cause: Option<String>,
    /// Warnings about the comparison (a different compiler, …).
    pub notes: Vec<String>,
    pub seconds: f64,
    /// Where the guarded configuration and the reference stand on the roofline, by the
    /// medians of this check's rounds (a problem that declares its `work:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reach: Option<Reach>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_reach: Option<Reach>,
}

/// Rounds until the rule has judged every guard (or one of them is already settled
/// by a failure).
struct Gate<'a> {
    rule: Rule,
    loaded: &'a Loaded,
    judged: Vec<Option<Judged>>,
}

/// A guard's verdict and what it was decided on.
#[derive(Debug, Clone, Copy)]
struct Judged {
    verdict: Verdict,
    change: Option<Ratio>,
    drift: Option<Drift>,
}

impl Rounds for Gate<'_> {
    fn enough(&mut self, done: usize, so_far: &[Remeasured]) -> bool {
        let Ok(reference) = &so_far[0] else {
            return true;
        };
        let objective = Objective::of(&self.loaded.problem.metric);
        if !self.rule.decides_at(done) && !rule::settled(objective, so_far) {
            return false;
        }
        for i in 0..self.judged.len() {
            let Ok(tuned) = &so_far[i + 1] else { continue };
            if self.judged[i].is_none() {
                self.judged[i] = self.judge(i, Pair { tuned, reference });
            }
        }
        let failed = |i: usize| so_far[i + 1].is_err();
        (0..self.judged.len()).all(|i| self.judged[i].is_some() || failed(i))
    }
}

impl Gate<'_> {
    /// Guard `i`'s verdict on this session's samples, `None` while more rounds could
    /// settle it.
    fn judge(&self, i: usize, now: Pair) -> Option<Judged> {
        let then = &self.loaded.baseline;
        let objective = Objective::of(&self.loaded.problem.metric);
        let seed = seed(&then.name, i);
        let tuned_then = &then.guards[i].samples;
        match self.rule.judge_for(objective) {
            Judge::Lead => {
                let recorded = Pair {
                    tuned: tuned_then,
                    reference: &then.reference.samples,
                };
                let (verdict, change) = self.rule.judge(objective, now, recorded, seed)?;
                let drift = None;
                Some(Judged {
                    verdict,
                    change,
                    drift,
                })
            }
            Judge::Value => {
                let judged = self
                    .rule
                    .judge_value(objective, now.tuned, tuned_then, seed);
                let (verdict, drift) = judged?;
                let change = None;
                Some(Judged {
                    verdict,
                    change,
                    drift,
                })
            }
        }
    }
}

fn seed(name: &str, guard: usize) -> u64 {
    crate::rng::fnv1a(name.as_bytes()) ^ guard as u64
}

/// Builds the reference output, then re-measures and judges every guard of `loaded`.
pub fn check(
    loaded: &Loaded,
    rule: Rule,
    evaluator: &mut dyn Evaluator,
    work: &Path,
    roofline: Option<Roofline>,
) -> Result<Vec<Guarded>, Error> {
    let start = std::time::Instant::now();
    let mut configs = vec![loaded.reference.clone()];
    configs.extend(loaded.guards.iter().cloned());
    let mut gate = Gate {
        rule,
        loaded,
        judged: vec![None; loaded.guards.len()],
    };
    let measured = match evaluator.prepare(&loaded.problem, work) {
        Ok(()) => evaluator
            .remeasure(&loaded.problem, &configs, &mut gate)
            .map_err(stopped)?,
        Err(Error::Reference { message, built }) => vec![Err(reference_failed(message, built))],
        Err(Error::Interrupted(..)) => return Err(stopped(Stop::Interrupted)),
        Err(e) => return Err(e),
    };
    let seconds = start.elapsed().as_secs_f64();
    let reach = |k: usize| {
        let samples = measured.get(k)?.as_deref().ok()?;
        roofline?.reach(crate::stats::median(samples)?)
    };
    Ok((0..loaded.guards.len())
        .map(|i| guarded(loaded, i, &measured, gate.judged[i], seconds))
        .map(|g| explained(g, rule.threshold))
        .enumerate()
        .map(|(i, g)| Guarded {
            reach: reach(i + 1),
            reference_reach: reach(0),
            ..g
        })
        .collect())
}

fn stopped(s: Stop) -> Error {
    s.into_cancelled("no verdict for this baseline")
}

/// The reference program could not be built or run for its output.
fn reference_failed(cause: String, built: bool) -> Failed {
    let status = match built {
        true => Status::RunError,
        false => Status::BuildError,
    };
    Failed { status, cause }
}

fn guarded(
    loaded: &Loaded,
    i: usize,
    measured: &[Remeasured],
    judged: Option<Judged>,
    seconds: f64,
) -> Guarded {
    let b = &loaded.baseline;
    let objective = Objective::of(&loaded.problem.metric);
    let reference = &measured[0];
    let tuned = measured
        .get(i + 1)
        .cloned()
        .unwrap_or_else(|| Ok(Vec::new()));
    let broken = match (reference, &tuned) {
        (Err(f), _) => Some(("the reference", f)),
        (_, Err(f)) => Some(("it", f)),
        _ => None,
    };
    let (verdict, judged, cause) = match (broken, judged) {
        (Some((who, f)), _) => (failure(f.status), None, Some(format!("{who}: {f}"))),
        (None, Some(j)) => (j.verdict, Some(j), None),
        (None, None) => (
            Verdict::Undecided,
            None,
            Some("no rounds were measured".into()),
        ),
    };
    let (now_r, now_t) = (
        reference.as_deref().unwrap_or(&[]),
        tuned.as_deref().unwrap_or(&[]),
    );
    Guarded {
        name: b.name.clone(),
        guard: b.guards[i].name.clone(),
        file: loaded.file.display().to_string(),
        verdict,
        recorded: objective.gain(&b.guards[i].samples, &b.reference.samples, 1),
        measured: objective.gain(now_t, now_r, 1),
        change: judged.and_then(|j| j.change),
        drift: judged.and_then(|j| j.drift),
        rounds: now_r.len().min(now_t.len()),
        cause,
        notes: Vec::new(),
        seconds,
        reach: None,
        reference_reach: None,
    }
}

fn failure(status: Status) -> Verdict {
    match status {
        Status::WrongOutput => Verdict::WrongOutput,
        Status::BuildError | Status::BuildTimeout => Verdict::BuildFailure,
        _ => Verdict::RunFailure,
    }
}

/// An undecided verdict's cause: which side's noise made the change's interval too wide
/// — the recording's, this session's or both — with the figures and what to do.
fn explained(mut g: Guarded, threshold: f64) -> Guarded {
    if g.verdict != Verdict::Undecided || g.cause.is_some() {
        return g;
    }
    if let Some(d) = g.drift {
        g.cause = Some(format!(
            "after {} rounds the loss's 95% interval, {}–{}, still straddles the {} allowed: its samples vary too much for the tolerance (raise `--tolerance`, or allow more rounds with `--max-rounds`)",
            g.rounds,
            crate::number::sig(d.loss.low, 4),
            crate::number::sig(d.loss.high, 4),
            crate::number::sig(d.tolerance, 4)
        ));
        return g;
    }
    let Some(c) = g.change else {
        g.cause = Some("a median was zero or missing".into());
        return g;
    };
    let need = rule::resolution_needed(threshold);
    let pct = |r: Option<Gain>| r.map_or(f64::NAN, |r| 100.0 * r.half_width());
    let (then, now) = (pct(g.recorded), pct(g.measured));
    let noisy = |x: f64| x.is_nan() || x > 100.0 * need;
    let side = match (noisy(then), noisy(now)) {
        (true, true) => format!("both the recording (±{then:.0}%) and this session (±{now:.0}%) are too noisy"),
        (true, false) => format!("the recording is too noisy: its speed-up is known to ±{then:.0}% (this session's to ±{now:.0}%); record it again on a quieter machine (`moldtune check --update {}`)", g.file),
        (false, true) => format!("this session is too noisy: ±{now:.0}% (the recording's ±{then:.0}%); run the check on a quieter or dedicated runner, or allow more rounds (`--max-rounds`)"),
        (false, false) => format!("the change sits at the threshold (recording ±{then:.0}%, this session ±{now:.0}%)"),
    };
    g.cause = Some(format!(
        "after {} rounds the change's 95% interval, {:.2}–{:.2}, still straddles the {:.0}% threshold: {side}; each side must be within ±{:.1}% (or raise `--threshold`)",
        g.rounds,
        c.low,
        c.high,
        100.0 * threshold,
        100.0 * need
    ));
    g
}

/// How long a baseline's recording goes on: `first` rounds, then `step` more at a time
/// until every guard's speed-up interval is within `target` (relative half-width) or
/// `cap` rounds are done.
#[derive(Debug, Clone, Copy)]
pub struct Recording {
    pub objective: Objective,
    pub first: usize,
    pub step: usize,
    pub cap: usize,
    pub target: f64,
}

impl Rounds for Recording {
    fn enough(&mut self, done: usize, so_far: &[Remeasured]) -> bool {
        if done >= self.cap {
            return true;
        }
        let due = done >= self.first && (done - self.first) % self.step.max(1) == 0;
        if !due && !rule::settled(self.objective, so_far) {
            return false;
        }
        let Ok(reference) = &so_far[0] else {
            return true;
        };
        so_far[1..].iter().all(|t| match t {
            Ok(t) => resolution(self.objective, reference, t).is_some_and(|r| r <= self.target),
            Err(_) => true,
        })
    }
}

/// The relative half-width of the tuned configuration's gain over the reference (as a
/// baseline records it).
pub fn resolution(objective: Objective, reference: &[f64], tuned: &[f64]) -> Option<f64> {
    objective.gain(tuned, reference, 1).map(|g| g.half_width())
}

/// Measures `loaded`'s reference and guards in interleaved rounds as long as `rounds`
/// says (recording a baseline): the samples, reference first, or the first failure.
pub fn record(
    loaded: &Loaded,
    mut rounds: Recording,
    evaluator: &mut dyn Evaluator,
    work: &Path,
) -> Result<Vec<Vec<f64>>, Error> {
    let mut configs = vec![loaded.reference.clone()];
    configs.extend(loaded.guards.iter().cloned());
    evaluator.prepare(&loaded.problem, work)?;
    let measured = evaluator
        .remeasure(&loaded.problem, &configs, &mut rounds)
        .map_err(stopped)?;
    let names = std::iter::once(&loaded.baseline.reference).chain(&loaded.baseline.guards);
    (measured.into_iter().zip(names))
        .map(|(m, e)| {
            m.map_err(|f| Error::ConfigFile {
                file: loaded.file.clone(),
                message: format!("`{}` cannot be measured: {f}", e.name),
                hint: Some(
                    "a baseline records configurations that work; fix it or choose another".into(),
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(ratio: f64, half: f64) -> Option<Ratio> {
        Some(Ratio {
            ratio,
            low: ratio / (1.0 + half),
            high: ratio * (1.0 + half),
            level: 0.95,
        })
    }

    fn undecided(recorded: Option<Ratio>, measured: Option<Ratio>) -> String {
        let g = Guarded {
            name: "k".into(),
            guard: "tuned".into(),
            file: "b/k.json".into(),
            verdict: Verdict::Undecided,
            recorded: recorded.map(Gain::from_ratio),
            measured: measured.map(Gain::from_ratio),
            change: r(1.1, 0.2),
            drift: None,
            rounds: 200,
            cause: None,
            notes: vec![],
            seconds: 1.0,
            reach: None,
            reference_reach: None,
        };
        explained(g, 0.10).cause.unwrap()
    }

    #[test]
    fn an_undecided_verdict_blames_the_side_whose_interval_is_too_wide() {
        let both = undecided(r(2.22, 0.34), r(2.0, 0.12));
        assert!(
            both.contains("both the recording (±34%) and this session (±12%)"),
            "{both}"
        );
        let rec = undecided(r(2.22, 0.34), r(2.0, 0.02));
        assert!(
            rec.contains("the recording is too noisy") && rec.contains("--update b/k.json"),
            "{rec}"
        );
        let now = undecided(r(2.22, 0.03), r(2.0, 0.12));
        assert!(now.contains("this session is too noisy: ±12%"), "{now}");
        let edge = undecided(r(2.22, 0.03), r(2.0, 0.02));
        assert!(edge.contains("sits at the threshold"), "{edge}");
    }
}
