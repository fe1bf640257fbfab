//! The problem's tie rule applied to a run's evaluations (`prefer:`): the preferred
//! configuration — among the successful ones within `within` of the best objective, the one
//! with the least (or most) of a quantity — and the front of objective against that quantity
//! (the evaluations no other beats on both). The summary, results.json, `best` and the report
//! all take them from here.

use serde::Serialize;

use crate::evaluate::outcome::Status;
use crate::problem::record::Prefer;
use crate::problem::Problem;
use crate::run::log::{self, Record};

/// The tie rule's choice, as results.json and the summary give it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Preferred {
    pub eval_id: usize,
    pub objective: f64,
    /// The deciding quantity's name and this evaluation's value of it.
    pub quantity: String,
    pub value: f64,
    /// How far from the best objective counted as equal: "0.002" (the metric's units) or
    /// "5%" (of the best).
    pub within: String,
    /// Whether the least of the quantity was preferred (else the most).
    pub least: bool,
    /// The configuration by parameter name (inactive parameters absent).
    pub config: serde_json::Map<String, serde_json::Value>,
}

impl Preferred {
    /// "ALPHA=0.001 SOLVER=adam": the configuration as `--set` writes it.
    pub fn config_text(&self) -> String {
        let value = |v: &serde_json::Value| v.as_str().map_or(v.to_string(), str::to_string);
        let parts: Vec<String> = (self.config.iter())
            .map(|(k, v)| format!("{k}={}", value(v)))
            .collect();
        parts.join(" ")
    }
}

/// A record's value of quantity `name`: a `record:` quantity, or `run_s` (one timed run's
/// seconds) or `compile_s`.
pub fn quantity(r: &Record, name: &str) -> Option<f64> {
    match name {
        "run_s" => (r.m.repeats > 0).then(|| r.m.run_s / f64::from(r.m.repeats)),
        "compile_s" => Some(r.m.compile_s),
        _ => r.m.recorded.get(name).copied(),
    }
    .filter(|x| x.is_finite())
}

/// The `record:` quantities a successful evaluation's output lacks (their regex did not
/// match); a progress report is optional (a solver with no epochs prints none) and not
/// listed.
pub fn lacking<'p>(problem: &'p Problem, r: &Record) -> Vec<&'p str> {
    let progress = [
        crate::problem::progress::STEP,
        crate::problem::progress::VALUE,
    ];
    if r.m.status != Status::Ok {
        return Vec::new();
    }
    (problem.record.iter())
        .filter(|q| !progress.contains(&q.name.as_str()) && quantity(r, &q.name).is_none())
        .map(|q| q.name.as_str())
        .collect()
}

/// A warning when `last` is the first success whose output lacks a `record:` quantity:
/// the column stays empty, and a tie rule on it has no data. `lacked` holds the quantities
/// an earlier success lacked (not warned again); `last`'s are added to it.
pub fn missing_warning(
    problem: &Problem,
    last: &Record,
    lacked: &mut std::collections::BTreeSet<String>,
) -> Option<String> {
    let new: Vec<&str> = (lacking(problem, last).into_iter())
        .filter(|q| lacked.insert(q.to_string()))
        .collect();
    let names: Vec<String> = (problem.record.iter())
        .filter(|q| new.contains(&q.name.as_str()))
        .map(|q| match &q.regex {
            Some(r) => format!("`{}` (regex `{}`)", q.name, r.as_str()),
            None => format!("`{}`", q.name),
        })
        .collect();
    if names.is_empty() {
        return None;
    }
    let tie_rule = problem
        .prefer
        .as_ref()
        .is_some_and(|p| new.contains(&p.quantity.as_str()));
    Some(format!(
        "warning: eval {} succeeded, but its output has no match for the recorded {}: the column stays empty{}",
        last.eval_id,
        names.join(", "),
        match tie_rule {
            true => ", and the tie rule has no value of it there",
            false => "",
        }
    ))
}

/// The successful evaluations that have the rule's quantity: (record, objective, value).
pub fn points<'r>(records: &'r [Record], rule: &Prefer) -> Vec<(&'r Record, f64, f64)> {
    (records.iter())
        .filter(|r| r.m.status == Status::Ok)
        .filter_map(|r| Some((r, r.m.objective?, quantity(r, &rule.quantity)?)))
        .collect()
}

/// `a`'s value of the quantity is better than `b`'s under the rule.
fn better_value(rule: &Prefer, a: f64, b: f64) -> bool {
    if rule.least {
        a < b
    } else {
        a > b
    }
}

/// The evaluation the problem's tie rule prefers (the earliest of equals); `None` without a
/// rule or an evaluation that has both an objective and the quantity.
pub fn preferred<'r>(problem: &Problem, records: &'r [Record]) -> Option<&'r Record> {
    let rule = problem.prefer.as_ref()?;
    let best = log::best(records, problem.metric.goal)?.m.objective?;
    let near = points(records, rule)
        .into_iter()
        .filter(|(_, y, _)| rule.within.holds(*y, best));
    near.fold(None, |kept: Option<(&Record, f64)>, (r, _, q)| match kept {
        Some((_, kq)) if !better_value(rule, q, kq) => kept,
        _ => Some((r, q)),
    })
    .map(|(r, _)| r)
}

/// [`preferred`] as results.json and the summary give it.
pub fn preferred_json(problem: &Problem, records: &[Record]) -> Option<Preferred> {
    let rule = problem.prefer.as_ref()?;
    let r = preferred(problem, records)?;
    Some(Preferred {
        eval_id: r.eval_id,
        objective: r.m.objective?,
        quantity: rule.quantity.clone(),
        value: quantity(r, &rule.quantity)?,
        within: rule.within.to_string(),
        least: rule.least,
        config: log::json_record(problem, r).config,
    })
}

/// The front: the successful evaluations no other beats on both the objective and the
/// quantity (the earliest of equal points), best objective first. Empty without a rule.
pub fn front<'r>(problem: &Problem, records: &'r [Record]) -> Vec<&'r Record> {
    let Some(rule) = problem.prefer.as_ref() else {
        return Vec::new();
    };
    let goal = problem.metric.goal;
    let mut pts = points(records, rule);
    // Best objective first; among equals, the better quantity, then the earliest.
    pts.sort_by(|a, b| {
        (goal.order(a.1, b.1))
            .then_with(|| match better_value(rule, a.2, b.2) {
                true => std::cmp::Ordering::Less,
                false if better_value(rule, b.2, a.2) => std::cmp::Ordering::Greater,
                false => std::cmp::Ordering::Equal,
            })
            .then(a.0.eval_id.cmp(&b.0.eval_id))
    });
    let mut out: Vec<&Record> = Vec::new();
    let mut best_q: Option<f64> = None;
    for (r, _, q) in pts {
        if best_q.is_none_or(|b| better_value(rule, q, b)) {
            out.push(r);
            best_q = Some(q);
        }
    }
    out
}
