//! `moldtune importance`: which parameters matter, how many evaluations say so, and how far the
//! model behind the answer can be trusted.
//!
//! **Model.** A 100-tree random forest (Breiman 2001, the search's `rf` settings, seed 0) is
//! fitted to the run's successful evaluations — log objective when every objective is positive
//! — with one feature per parameter ([`Space::encode`]; an inactive parameter is
//! [`INACTIVE_FEATURE`], below every active value).
//!
//! **Importance** is the mean decrease in impurity: the decrease of the squared error made by
//! every split of every tree, summed per parameter and normalised to sum to 1. One rule decides
//! whose a split is: a split on a conditional parameter that separates its inactive rows from
//! its active ones answers "is the condition met?", which the parent decides, so it is credited
//! to the parent; every other split belongs to the parameter it splits on. Without that rule a
//! switch's effect goes to whichever child's inactive/active split the trees happen to pick (a
//! tie with the switch's own split, or the only single split that isolates the switching values
//! of a categorical parent), and the switch looks irrelevant. With nested conditions a split is
//! credited to the direct parent only.
//!
//! **Trust.** The forest's out-of-bag R² (Breiman 2001): each evaluation predicted only by the
//! trees whose bootstrap sample left it out. The ranking is withheld, with the numbers, when
//! fewer than [`MIN_SUCCESSES`] evaluations succeeded or the R² is below [`MIN_OOB_R2`].

use std::path::Path;

use serde::Serialize;

use crate::error::Error;
use crate::evaluate::outcome::Status;
use crate::problem::param::INACTIVE_FEATURE;
use crate::problem::space::Space;
use crate::problem::Problem;
use crate::run::front_ends::FrontEnds;
use crate::run::log;
use crate::search::surrogate::{Forest, ForestParams, NodeSplit};

/// Fewest successful evaluations a ranking is given for. Below it a bootstrap sample holds
/// about six distinct rows, leaves of at least three allow one split per tree, and the
/// out-of-bag R² itself rests on a handful of predictions. Ten is also the default initial
/// design, before which the search has no model either.
pub const MIN_SUCCESSES: usize = 10;

/// Lowest out-of-bag R² a ranking is given for. Below it the forest predicts evaluations it
/// did not see hardly better than their mean, so its splits mostly follow noise; impurity
/// importance then still looks decisive (it even favours parameters with many distinct values,
/// Strobl et al. 2007). On pure noise the forest's out-of-bag R² is below 0 (see the tests).
pub const MIN_OOB_R2: f64 = 0.1;

/// The model behind the shares (the report's `method` adds the target and [`CONDITIONS`]).
pub const MODEL: &str = "mean decrease in impurity of a 100-tree random forest (Breiman 2001)";

/// How conditional parameters are handled, as the report's `method` states it.
pub const CONDITIONS: &str =
    "a conditional parameter's inactive-vs-active splits are credited to the parent that switches it";

/// The report: the numbers behind the ranking, and the ranking when they support one.
#[derive(Debug, Clone, Serialize)]
pub struct Importance {
    /// Rows in results.csv.
    pub evaluations: usize,
    /// Successful evaluations (status `ok` with an objective): the rows the forest is fitted to.
    pub successes: usize,
    /// What the forest predicts: `log objective` or `objective`.
    pub target: &'static str,
    /// Out-of-bag R² of the forest; `None` when no forest was fitted or the objective is constant.
    pub oob_r2: Option<f64>,
    pub min_successes: usize,
    pub min_oob_r2: f64,
    /// Whether the numbers support a ranking.
    pub enough_data: bool,
    /// Why the ranking is withheld; `None` when it is given.
    pub reason: Option<String>,
    /// [`MODEL`] on `target`; [`CONDITIONS`].
    pub method: String,
    /// Parameters, most important first; `None` when withheld.
    pub ranking: Option<Vec<Share>>,
}

/// One parameter's share of the forest's impurity decrease.
#[derive(Debug, Clone, Serialize)]
pub struct Share {
    pub parameter: String,
    /// Share of the total, all parameters summing to 1.
    pub importance: f64,
    /// The part of `importance` credited from its conditional parameters' inactive-vs-active
    /// splits (0 for a parameter that switches none).
    pub from_children: f64,
    /// The conditional parameters whose condition reads this one.
    pub children: Vec<String>,
}

/// Parameter importance of the run in `dir`: see the module documentation.
pub fn importance(dir: &Path, fronts: &FrontEnds) -> Result<Importance, Error> {
    let crate::run::dir::RunDir {
        problem, records, ..
    } = crate::run::dir::RunDir::open(dir, fronts)?;
    Ok(importance_of(&problem, &records))
}

/// Parameter importance of a run's `records` of `problem`, already read.
pub fn importance_of(problem: &Problem, records: &[log::Record]) -> Importance {
    let oks: Vec<&log::Record> = records
        .iter()
        .filter(|r| r.m.status == Status::Ok && r.m.objective.is_some())
        .collect();
    let objectives: Vec<f64> = oks.iter().filter_map(|r| r.m.objective).collect();
    let positive = objectives.iter().all(|&v| v > 0.0);
    let target = if positive {
        "log objective"
    } else {
        "objective"
    };
    let mut report = Importance {
        evaluations: records.len(),
        successes: oks.len(),
        target,
        oob_r2: None,
        min_successes: MIN_SUCCESSES,
        min_oob_r2: MIN_OOB_R2,
        enough_data: false,
        reason: None,
        method: format!("{MODEL} on {target}; {CONDITIONS}"),
        ranking: None,
    };
    if oks.len() < MIN_SUCCESSES {
        report.reason = Some(format!(
            "{} of {} evaluations succeeded; at least {MIN_SUCCESSES} are needed",
            oks.len(),
            records.len()
        ));
        return report;
    }
    let x: Vec<f64> = oks
        .iter()
        .flat_map(|r| problem.space.encode(&r.config))
        .collect();
    let y: Vec<f64> = if positive {
        objectives.iter().map(|v| v.ln()).collect()
    } else {
        objectives
    };
    let (shares, r2) = rank(&problem.space, &x, &y);
    report.oob_r2 = r2;
    report.reason = withheld_because(r2);
    report.enough_data = report.reason.is_none();
    report.ranking = report.enough_data.then_some(shares);
    report
}

/// Why an out-of-bag R² withholds the ranking, if it does.
fn withheld_because(r2: Option<f64>) -> Option<String> {
    match r2 {
        None => Some("the objective is the same in every successful evaluation".into()),
        Some(r) if r < MIN_OOB_R2 => Some(format!(
            "the forest's out-of-bag R² is {r:.2} (at least {MIN_OOB_R2:.2} is needed): it \
             predicts evaluations it did not see hardly better than their mean"
        )),
        Some(_) => None,
    }
}

/// Fits the forest to `x` (rows of [`Space::encode`]) and `y`; returns the shares, most
/// important first, and the out-of-bag R².
fn rank(space: &Space, x: &[f64], y: &[f64]) -> (Vec<Share>, Option<f64>) {
    let d = space.params.len();
    let (_, diagnostics) = Forest::fit_diagnosed(
        x,
        d,
        y,
        ForestParams::random_forest(),
        &mut crate::rng::Rng::new(0),
    );
    let mut shares = credit(space, x, &diagnostics.splits);
    shares.sort_by(|a, b| b.importance.total_cmp(&a.importance));
    (shares, diagnostics.oob_r2(y))
}

/// Sums the splits' impurity decrease per parameter, crediting inactive-vs-active splits to
/// the parent, normalised to sum to 1 (all zero if no split was made). Space order.
fn credit(space: &Space, x: &[f64], splits: &[NodeSplit]) -> Vec<Share> {
    let d = space.params.len();
    let lowest = lowest_active(x, d);
    let mut own = vec![0.0; d];
    let mut from_children = vec![0.0; d];
    for s in splits {
        match activity_parent(space, &lowest, s) {
            Some(parent) => from_children[parent] += s.gain,
            None => own[s.feature] += s.gain,
        }
    }
    let total: f64 = own.iter().sum::<f64>() + from_children.iter().sum::<f64>();
    let norm = if total > 0.0 { 1.0 / total } else { 0.0 };
    space
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| Share {
            parameter: p.name.clone(),
            importance: (own[i] + from_children[i]) * norm,
            from_children: from_children[i] * norm,
            children: space
                .params
                .iter()
                .filter(|c| c.condition.as_ref().is_some_and(|k| k.parent == i))
                .map(|c| c.name.clone())
                .collect(),
        })
        .collect()
}

/// Per feature, the smallest active value in the rows of `x` (+∞ if it is never active).
fn lowest_active(x: &[f64], d: usize) -> Vec<f64> {
    let mut lowest = vec![f64::INFINITY; d];
    for row in x.chunks(d) {
        for (l, &v) in lowest.iter_mut().zip(row) {
            if v != INACTIVE_FEATURE {
                *l = l.min(v);
            }
        }
    }
    lowest
}

/// The parent a split is credited to when it separates a conditional parameter's inactive rows
/// from all its active ones (its threshold lies between the inactive value and the smallest
/// active one); `None` for any other split.
fn activity_parent(space: &Space, lowest_active: &[f64], s: &NodeSplit) -> Option<usize> {
    let condition = space.params[s.feature].condition.as_ref()?;
    (s.threshold > INACTIVE_FEATURE && s.threshold < lowest_active[s.feature])
        .then_some(condition.parent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::param::{Condition, Kind, Param, Scalar};
    use crate::rng::Rng;

    /// T1 and T2 (listed first) are active only when `switch` (index 2) has one of
    /// `on`; OPT is unconditional.
    fn switched_space(switch: Kind, on: Vec<f64>) -> Space {
        let when = Some(Condition {
            parent: 2,
            values: on,
        });
        let ints = Kind::Integer {
            low: 1,
            high: 64,
            log: false,
        };
        let sizes = Kind::Ordinal((1..=8).map(|k| Scalar::Int(4 * k)).collect());
        let opt = Kind::Categorical(vec!["-O1".into(), "-O2".into(), "-O3".into()]);
        Space {
            params: vec![
                Param::new("T1", ints, when.clone()),
                Param::new("T2", sizes, when),
                Param::new("TILE", switch, None),
                Param::new("OPT", opt, None),
            ],
            order: vec![2, 0, 1, 3],
            forbidden: vec![],
            constraints: vec![],
        }
    }

    /// `n` random configurations of `space`, encoded, and `f` of each (plus a little noise).
    fn table(space: &Space, n: usize, f: impl Fn(&[f64]) -> f64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = Rng::new(11);
        let mut x = Vec::new();
        let mut y = Vec::new();
        let sampler = crate::problem::sample::Sampler::new(space);
        for _ in 0..n {
            let c = sampler
                .draw(&mut rng, &|_| true)
                .found()
                .expect("an unconstrained space");
            y.push(f(&c.0) + 0.01 * rng.f64());
            x.extend(space.encode(&c));
        }
        (x, y)
    }

    /// The plain impurity importance (no crediting), highest first.
    fn plain_ranking(space: &Space, x: &[f64], y: &[f64]) -> Vec<String> {
        let forest = Forest::fit(
            x,
            space.params.len(),
            y,
            ForestParams::random_forest(),
            &mut Rng::new(0),
        );
        let mut v: Vec<(String, f64)> = space
            .params
            .iter()
            .map(|p| p.name.clone())
            .zip(forest.importance().iter().copied())
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v.into_iter().map(|(n, _)| n).collect()
    }

    fn check_switch_ranks_first(space: &Space, on: f64) {
        // Only the switch matters: 1 when on, 2 when off, whatever the tile sizes and OPT.
        let (x, y) = table(space, 60, |c| if c[2] == on { 1.0 } else { 2.0 });
        let plain = plain_ranking(space, &x, &y);
        assert_ne!(
            plain[0], "TILE",
            "the case must be one where a child absorbs"
        );
        let (shares, r2) = rank(space, &x, &y);
        assert_eq!(shares[0].parameter, "TILE", "{shares:?}");
        assert!(shares[0].importance > 0.9, "{shares:?}");
        assert!(shares[0].from_children > 0.0, "{shares:?}");
        assert_eq!(shares[0].children, ["T1", "T2"]);
        assert!(r2.unwrap() > 0.9, "{r2:?}");
        let total: f64 = shares.iter().map(|s| s.importance).sum();
        assert!((total - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_boolean_switch_gets_its_childrens_on_off_splits() {
        // The children come first, so their inactive-vs-active split wins the tie with the
        // switch's own split: plain impurity importance gives the switch nothing.
        check_switch_ranks_first(&switched_space(Kind::Boolean, vec![1.0]), 1.0);
    }

    #[test]
    fn a_categorical_switch_gets_its_childrens_on_off_splits() {
        // Tiling is on for the middle choice only: no single split of the switch isolates it,
        // a child's inactive-vs-active split does.
        let kind = Kind::Categorical(vec!["none".into(), "tile".into(), "skew".into()]);
        check_switch_ranks_first(&switched_space(kind, vec![1.0]), 1.0);
    }

    #[test]
    fn a_child_keeps_the_splits_among_its_active_values() {
        // Tiling on is what matters most, then T1's value when on: T1 must keep a share.
        let space = switched_space(Kind::Boolean, vec![1.0]);
        let (x, y) = table(&space, 80, |c| {
            if c[2] == 1.0 {
                1.0 + (c[0] / 64.0)
            } else {
                4.0
            }
        });
        let (shares, _) = rank(&space, &x, &y);
        let share = |n: &str| shares.iter().find(|s| s.parameter == n).unwrap().importance;
        assert_eq!(shares[0].parameter, "TILE", "{shares:?}");
        assert!(share("T1") > 0.02, "{shares:?}");
        assert!(
            share("T1") > 5.0 * share("T2").max(share("OPT")),
            "{shares:?}"
        );
    }

    #[test]
    fn pure_noise_stays_below_the_trust_threshold() {
        let space = switched_space(Kind::Boolean, vec![1.0]);
        let mut noise = Rng::new(3);
        let y: Vec<f64> = (0..60).map(|_| noise.f64()).collect();
        let (x, _) = table(&space, 60, |_| 0.0);
        let (_, r2) = rank(&space, &x, &y);
        assert!(r2.unwrap() < MIN_OOB_R2, "{r2:?}");
        assert!(withheld_because(r2).is_some());
        assert!(withheld_because(Some(0.5)).is_none());
        assert!(withheld_because(None).is_some());
    }
}
