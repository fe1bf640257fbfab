//! Verify before claiming: the default configuration and the search's top few are
//! re-measured together, interleaved, with more runs than the search gave each of them,
//! and the winner and its speed-up over the default are decided on those numbers, with a
//! 95% confidence interval (bootstrap of the ratio of medians, [`crate::stats`]).
//!
//! The search's own objectives were each taken at a different moment of a noisy machine
//! (a default timed once during a load spike made a 4× speed-up read 12×); these are taken
//! in the same rounds.

use crate::evaluate::interleave::Remeasured;
use crate::evaluate::outcome::{Source, Status, Stop};
use crate::evaluate::Evaluator;
use crate::problem::{Goal, Problem};
use crate::run::log::Record;
use crate::run::verdict::{Candidate, Plan, Verification};
use crate::stats::{median, ratio_of_medians};

/// The default (when it succeeded) and the `top` best successful evaluations, each
/// measured once: an evaluation that reused another's outcome stands for that one.
pub fn candidates(records: &[Record], goal: Goal, top: usize) -> Vec<&Record> {
    let ok = |r: &&Record| r.m.status == Status::Ok && r.m.objective.is_some();
    let mut best: Vec<&Record> = (records.iter())
        .filter(ok)
        .filter(|r| r.source != Source::Default && r.m.reused_from.is_none())
        .collect();
    let objective = |r: &Record| r.m.objective.unwrap_or(f64::NAN);
    best.sort_by(|a, b| goal.order(objective(a), objective(b)));
    best.truncate(top);
    let default = records
        .iter()
        .find(|r| r.source == Source::Default)
        .filter(ok);
    default.into_iter().chain(best).collect()
}

/// Re-measures the candidates interleaved and decides the winner.
pub fn verify(
    problem: &Problem,
    records: &[Record],
    evaluator: &mut dyn Evaluator,
    plan: Plan,
) -> Result<Option<Verification>, Stop> {
    let chosen = candidates(records, problem.metric.goal, plan.top);
    if chosen.is_empty() {
        return Ok(None);
    }
    let configs: Vec<_> = chosen.iter().map(|r| r.config.clone()).collect();
    let measured = evaluator.remeasure(problem, &configs, &mut plan.rounds.clone())?;
    let candidates: Vec<Candidate> = (chosen.iter().zip(measured))
        .map(|(r, m)| candidate(r, m))
        .collect();
    let default_eval_id = (chosen.first())
        .filter(|r| r.source == Source::Default)
        .map(|r| r.eval_id);
    Ok(Some(decide(
        problem.metric.goal,
        plan.rounds,
        default_eval_id,
        candidates,
    )))
}

fn candidate(r: &Record, m: Remeasured) -> Candidate {
    let (samples, cause) = match m {
        Ok(s) => (s, None),
        Err(why) => (vec![], Some(why.to_string())),
    };
    Candidate {
        eval_id: r.eval_id,
        search_objective: r.m.objective,
        median: median(&samples),
        samples,
        cause,
    }
}

/// The winner is the candidate with the best median; its speed-up is measured against
/// the default's samples of the same rounds.
fn decide(
    goal: Goal,
    rounds: usize,
    default_eval_id: Option<usize>,
    c: Vec<Candidate>,
) -> Verification {
    let key = |x: &Candidate| x.median.filter(|m| m.is_finite());
    let winner = (c.iter().filter(|x| key(x).is_some()))
        .min_by(|a, b| goal.order(key(a).unwrap_or(0.0), key(b).unwrap_or(0.0)));
    let default = c.iter().find(|x| Some(x.eval_id) == default_eval_id);
    let speedup = match (default, winner) {
        (Some(d), Some(w)) if !d.samples.is_empty() => {
            let seed = w.eval_id as u64;
            match goal {
                Goal::Minimize => ratio_of_medians(&d.samples, &w.samples, seed),
                Goal::Maximize => ratio_of_medians(&w.samples, &d.samples, seed),
            }
        }
        _ => None,
    };
    let winner_eval_id = winner.map(|w| w.eval_id);
    Verification {
        rounds,
        default_eval_id,
        winner_eval_id,
        speedup,
        candidates: c,
    }
}
