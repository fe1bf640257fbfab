//! The model step: a surrogate fitted on the history (the failure policy of the module's
//! documentation), the feasibility classifier's verdict on a pool, and the pool's best by the
//! acquisition.

use crate::evaluate::outcome::Status;
use crate::problem::space::{Config, Space};
use crate::problem::Goal;
use crate::rng::Rng;
use crate::search::acquisition::Scorer;
use crate::search::condemned::Condemned;
use crate::search::prior::Prior;
use crate::search::searcher::history::{History, Observation};
use crate::search::searcher::streams::{STREAM_FEASIBLE, STREAM_FIT, STREAM_POOL};
use crate::search::settings::{Learner, Mechanism, Settings};
use crate::search::surrogate::{Forest, ForestParams, Gbrt, Gp};
use crate::search::unseen::{NoProposal, Unseen};
use crate::search::Timeouts;
use crate::stats;

/// The fewest observations in a leaf of the feasibility classifier (module documentation).
const FEASIBLE_LEAF: usize = 3;

/// The probability of success from which a candidate counts as predicted feasible.
const LIKELY: f64 = 0.5;

/// The feasibility classifier's verdict on a pool: each candidate's probability of
/// succeeding, or `None` when it has nothing to say (no failures, or not calibrated).
pub(super) struct Feasible(pub(super) Option<Vec<f64>>);

impl Feasible {
    /// Probability that candidate `i` succeeds.
    fn p(&self, i: usize) -> f64 {
        self.0.as_ref().map_or(1.0, |p| p[i])
    }

    /// The most feasible of `n` candidates (the first without a classifier).
    fn most_likely(&self, n: usize) -> usize {
        self.0.as_ref().map_or(0, |p| {
            (0..n).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0)
        })
    }

    /// One of `n` random draws, taken with the probability that it succeeds: the first draw
    /// `k` with a uniform `u < p(k)`, else the most feasible one. Drawing from the sampling
    /// law weighted by p, not from what the classifier is sure of: a draw it doubts is
    /// taken now and then, so a failure that belongs to a combination does not keep every
    /// value of it out of reach.
    pub(super) fn accepted(&self, n: usize, rng: &mut Rng) -> usize {
        (0..n)
            .find(|&k| rng.f64() < self.p(k))
            .unwrap_or_else(|| self.most_likely(n))
    }
}

/// How a model step ranks its pool: the probability of success each candidate's
/// acquisition is weighted by, the prior mean the model's predictions are added to (with
/// `--warm-start`), and the acquisition.
struct Ranking {
    feasible: Feasible,
    acq: Scorer,
    prior: Option<Vec<f64>>,
}

impl Ranking {
    /// Acquisition of candidate `i` whose model predicts mean `mu` (beyond the prior mean)
    /// and standard deviation `sd`.
    fn score(&self, i: usize, mu: f64, sd: f64) -> f64 {
        let m = self.prior.as_ref().map_or(0.0, |p| p[i]);
        self.acq.score(m + mu, sd, self.feasible.p(i))
    }
}

/// The prior mean (see [`Searcher::prior_mean`]) of a step's regression rows and pool.
pub(super) struct PriorMean {
    pub(super) own: Vec<f64>,
    pub(super) pool: Vec<f64>,
}

/// What the model step reads of the search: its space and settings, the history, the prior's
/// forest and the books of what was not evaluated yet. [`Searcher`] owns one, and adds what
/// only its other steps need (the initial design, the default, the bandit, the prior's
/// points).
///
/// [`Searcher`]: super::Searcher
pub(super) struct Model<'a> {
    pub(super) space: &'a Space,
    pub(super) s: Settings,
    pub(super) history: History,
    pub(super) prior_model: Option<Forest>,
    pub(super) unseen: Unseen<'a>,
    pub(super) condemned: Condemned,
}

impl Model<'_> {
    /// A pool of up to `pool` distinct configurations not yet evaluated (see
    /// [`Unseen::pool`]).
    /// Condemned values are left out while anything else is left.
    pub(super) fn pool(&self, rng: &mut Rng) -> Vec<Config> {
        let pool = self.unseen.pool(rng, self.s.pool);
        let (clean, condemned): (Vec<Config>, Vec<Config>) =
            pool.into_iter().partition(|c| !self.condemned.vetoes(c));
        match clean.is_empty() {
            true => condemned,
            false => clean,
        }
    }

    /// Regression rows and targets following the failure policy (module documentation):
    /// the objective made "smaller is better", log-transformed when all successes are
    /// positive (run times span orders of magnitude).
    /// Also returns which observations the rows are (their indices in the history).
    /// `weighing`: the feasibility classifier has a say in this step.
    pub(super) fn training_set(
        &self,
        gp: bool,
        weighing: bool,
    ) -> (Vec<f64>, Vec<f64>, Vec<usize>) {
        let oks: Vec<&Observation> = self
            .history
            .iter()
            .filter(|o| o.status == Status::Ok && o.objective.is_some())
            .collect();
        let positive = oks.iter().all(|o| o.objective.unwrap_or(0.0) > 0.0);
        let t = |v: f64| {
            let v = if positive { v.max(1e-300).ln() } else { v };
            if self.s.goal == Goal::Maximize {
                -v
            } else {
                v
            }
        };
        let targets: Vec<f64> = oks.iter().map(|o| t(o.objective.unwrap_or(0.0))).collect();
        let worst = targets.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Pruned: worse than the median at some step, so taken as in the worse half of the
        // successes, at its middle (the upper quartile of the targets), or worse where its
        // last progress value, on the objective's scale, says so.
        let quartile = stats::quantile(&targets, 0.75).unwrap_or(worst);
        // Objective units per wall second of one run, from the best success: converts a
        // timeout's wall time into a lower bound on its objective.
        let rate = oks
            .iter()
            .filter(|o| o.repeats > 0 && o.run_s > 0.0)
            .min_by(|a, b| t(a.objective.unwrap_or(0.0)).total_cmp(&t(b.objective.unwrap_or(0.0))))
            .map(|o| o.objective.unwrap_or(0.0) / (o.run_s / o.repeats as f64));
        let mut x = Vec::new();
        let mut y = Vec::new();
        let mut rows = Vec::new();
        for (k, o) in self.history.iter().enumerate() {
            if o.pending && o.objective.is_none() {
                continue; // proposed before any success: nothing to pretend
            }
            let target = match (o.status, o.objective) {
                (Status::Ok, Some(v)) => Some(t(v)),
                (Status::Pruned, v) => Some(v.map_or(quartile, |v| t(v).max(quartile))),
                (Status::RunTimeout, _) if self.s.timeouts == Timeouts::Unscored => None,
                (Status::RunTimeout, _) if self.s.timeouts == Timeouts::Censored && positive => {
                    let bound = rate.map(|r| t(r * o.run_s.max(1e-9)));
                    Some(bound.map_or(worst, |b| b.max(worst)))
                }
                _ => self.failure_is_worst(gp, weighing).then_some(worst),
            };
            if let Some(v) = target {
                x.extend_from_slice(if gp { &o.encoded } else { &o.tree });
                y.push(v);
                rows.push(k);
            }
        }
        (x, y, rows)
    }

    /// Whether a failure enters the regression as the worst success. The GP's smooth model
    /// cannot hold a cliff to the worst value beside the optimum: once the classifier weighs
    /// the acquisition, it sees successes only (constrained BO); until its verdicts are
    /// calibrated, failures count as the worst value. The tree learners always count them so,
    /// unless a replay leaves that out (`--without worst`).
    fn failure_is_worst(&self, gp: bool, weighing: bool) -> bool {
        match gp {
            true => !weighing,
            false => !self.s.without.has(Mechanism::Worst),
        }
    }

    /// The prior mean of a model step, for this run's regression rows (history indices
    /// `rows`, targets `y`) and for the `pool`: the prior forest's prediction mapped onto this
    /// run's targets by least squares over this run's successes, its slope kept ≥ 0 (a prior
    /// that ranks them backwards gets no say) and shrunk by [`Prior::share`]. The model is
    /// fitted to what the prior does not explain, so where this run has not looked it keeps
    /// its full uncertainty around the prior's guess. `None` without a prior.
    /// `xt` holds the pool's tree features.
    pub(super) fn prior_mean(&self, rows: &[usize], y: &[f64], xt: &[f64]) -> Option<PriorMean> {
        let model = self.prior_model.as_ref()?;
        let own: Vec<f64> = (rows.iter())
            .flat_map(|&k| self.history[k].tree.iter().copied())
            .collect();
        let z_own = model.predict(&own).0;
        let ok: Vec<(f64, f64)> = (rows.iter().zip(&z_own).zip(y))
            .filter(|((&k, _), _)| self.history[k].status == Status::Ok)
            .map(|((_, &z), &y)| (z, y))
            .collect();
        let line = stats::LeastSquares::through(&ok);
        let slope = Prior::share(ok.len()) * line.slope.max(0.0);
        let at = |z: f64| line.y_mean + slope * (z - line.x_mean);
        let z_pool = model.predict(xt).0;
        Some(PriorMean {
            own: z_own.into_iter().map(at).collect(),
            pool: z_pool.into_iter().map(at).collect(),
        })
    }

    /// Whether an outcome of `status` gives the regression a value.
    pub(super) fn gives_value(&self, status: Status) -> bool {
        matches!(status, Status::Ok | Status::Pruned)
            || (status == Status::RunTimeout && self.s.timeouts == Timeouts::Censored)
    }

    /// Whether the feasibility classifier has something to learn.
    pub(super) fn learns_failures(&self) -> bool {
        !self.s.without.has(Mechanism::Classifier)
            && self.history.any_besides(|s| self.gives_value(s))
    }

    /// Probability that each pooled candidate (tree features `xt`) succeeds, when the
    /// classifier has earned a say: its out-of-bag "fails" verdicts held ([`calibrated`];
    /// else `None`: it vetoes nothing and weighs nothing).
    pub(super) fn feasibility(&self, xt: &[f64], rng: &mut Rng) -> Option<Vec<f64>> {
        let d = self.space.tree_width();
        let x: Vec<f64> = self
            .history
            .iter()
            .flat_map(|o| o.tree.iter().copied())
            .collect();
        let y: Vec<f64> = self
            .history
            .iter()
            .map(|o| self.gives_value(o.status) as u8 as f64)
            .collect();
        let params = ForestParams {
            n_trees: 50,
            min_samples_leaf: FEASIBLE_LEAF,
            max_depth: 32,
            extra: false,
        };
        let (forest, diagnostics) = Forest::fit_diagnosed(&x, d, &y, params, rng);
        calibrated(&diagnostics.oob, &y).then(|| forest.predict(xt).0)
    }

    /// A proposal of the surrogate model, in phases: draw the pool, predict which of it is
    /// feasible, fit the regression on the (censored) targets, score the feasible candidates
    /// by the acquisition and take the best.
    pub(super) fn step(&self, step: usize, learner: Learner) -> Result<Config, NoProposal> {
        let mut rng = Rng::for_step(self.s.seed, STREAM_POOL, step as u64);
        let mut pool = self.pool(&mut rng);
        if pool.is_empty() {
            // The pool's draws found nothing: let the exhaustive search prove it or find one.
            return self.unseen.random(&mut rng);
        }
        let gp = learner == Learner::Gp;
        let xt = self.pool_tree_features(&pool, gp);
        // The classifier has a stream of its own: the regression then draws the same with or
        // without it, and the two differ only where the classifier vetoes a candidate.
        let mut fit_rng = Rng::for_step(self.s.seed, STREAM_FIT, step as u64);
        let mut feasible_rng = Rng::for_step(self.s.seed, STREAM_FEASIBLE, step as u64);
        let feasible = Feasible(match &xt {
            Some(xt) if self.learns_failures() => self.feasibility(xt, &mut feasible_rng),
            _ => None,
        });
        let (x, mut y, rows) = self.training_set(gp, feasible.0.is_some());
        let acq = Scorer::new(&self.s, &y);
        let prior = (xt.as_ref()).and_then(|xt| self.prior_mean(&rows, &y, xt));
        if let Some(m) = &prior {
            y.iter_mut().zip(&m.own).for_each(|(y, m)| *y -= m);
        }
        if y.len() < 2 {
            // Too few usable observations for a model: the most feasible candidate, else random.
            let k = feasible.most_likely(pool.len());
            return Ok(pool.swap_remove(k));
        }
        let ranking = Ranking {
            feasible,
            acq,
            prior: prior.map(|m| m.pool),
        };
        let best = if gp {
            let xp: Vec<f64> = (pool.iter())
                .flat_map(|c| self.space.kernel_features(c))
                .collect();
            self.best_by_gp(&x, &y, &xp, &ranking)
        } else {
            let xp = xt.expect("the tree learners always have tree features");
            self.best_by_trees(learner, (&x, &y), &xp, &ranking, &mut fit_rng)
        };
        let best = best.expect("the most feasible candidate passes the cutoff");
        Ok(pool.swap_remove(best))
    }

    /// Tree features of the pool, when a model needs them: the tree learners, the
    /// feasibility classifier and the prior's forest.
    fn pool_tree_features(&self, pool: &[Config], gp: bool) -> Option<Vec<f64>> {
        let needed = !gp || self.learns_failures() || self.prior_model.is_some();
        needed.then(|| self.tree_features(pool))
    }

    /// The tree features of `configs`, one row each.
    pub(super) fn tree_features(&self, configs: &[Config]) -> Vec<f64> {
        let mut xt = Vec::with_capacity(configs.len() * self.space.tree_width());
        for c in configs {
            self.space.push_tree_features(c, &mut xt);
        }
        xt
    }

    /// The best eligible candidate by a tree ensemble fitted on (`x`, `y`), predicting the
    /// pool's rows `xp` of tree features.
    fn best_by_trees(
        &self,
        learner: Learner,
        (x, y): (&[f64], &[f64]),
        xp: &[f64],
        r: &Ranking,
        rng: &mut Rng,
    ) -> Option<usize> {
        let d = self.space.tree_width();
        let (mu, sd) = match learner {
            Learner::Gbrt => Gbrt::fit(x, d, y, rng).predict(xp),
            Learner::Et => Forest::fit(x, d, y, ForestParams::extra_trees(), rng).predict(xp),
            _ => Forest::fit(x, d, y, ForestParams::random_forest(), rng).predict(xp),
        };
        (0..mu.len()).min_by(|&a, &b| {
            r.score(a, mu[a], sd[a])
                .total_cmp(&r.score(b, mu[b], sd[b]))
        })
    }

    /// The best eligible candidate by a GP fitted on (`x`, `y`), predicting the pool's
    /// encoded rows `xp`.
    ///
    /// The posterior std costs a triangular solve per candidate, so it is computed only where
    /// it can matter: every acquisition here is monotone in σ, hence bounded by its values at
    /// σ = 0 and at the prior σ; candidates are visited by that bound and the search stops
    /// once no remaining one can win. Exact.
    fn best_by_gp(&self, x: &[f64], y: &[f64], xp: &[f64], r: &Ranking) -> Option<usize> {
        let mask = self.space.categorical_mask();
        let d = mask.len();
        let keep = gp_rows(y);
        let xk: Vec<f64> = keep
            .iter()
            .flat_map(|&i| &x[i * d..(i + 1) * d])
            .copied()
            .collect();
        let yk: Vec<f64> = keep.iter().map(|&i| y[i]).collect();
        let gp = Gp::fit(&xk, d, &yk, &mask);
        let mu = gp.mean(xp);
        let smax = gp.prior_std();
        let bound = |i: usize| r.score(i, mu[i], 0.0).min(r.score(i, mu[i], smax));
        let mut order: Vec<(f64, usize)> = (0..mu.len()).map(|i| (bound(i), i)).collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut best: Option<(f64, usize)> = None;
        for (lb, i) in order {
            if best.is_some_and(|b| b.0 <= lb) {
                break;
            }
            let v = r.score(i, mu[i], gp.std_at(&xp[i * d..(i + 1) * d]));
            if best.is_none_or(|b| v < b.0) {
                best = Some((v, i));
            }
        }
        best.map(|b| b.1)
    }
}

/// The most observations the GP is fitted on: its exact fit is cubic in them
/// (`cargo bench --bench tuner_overhead`: 2.3 s at 1,000 observations, 21.5 s at 2,000; a
/// whole proposal with the cap about 0.15 s from 1,000 to 10,000).
pub const GP_ROWS: usize = 300;

/// The regression rows (targets `y`, lower is better, in the order evaluated) the GP is
/// fitted on: all of them up to [`GP_ROWS`]; beyond, the best half of that many and the most
/// recent of the others — the region the acquisition is narrowing down and where the search
/// looks now — in their original order.
fn gp_rows(y: &[f64]) -> Vec<usize> {
    if y.len() <= GP_ROWS {
        return (0..y.len()).collect();
    }
    let mut by_value: Vec<usize> = (0..y.len()).collect();
    by_value.sort_by(|&a, &b| y[a].total_cmp(&y[b]).then(a.cmp(&b)));
    let mut keep = vec![false; y.len()];
    by_value[..GP_ROWS / 2].iter().for_each(|&i| keep[i] = true);
    let recent = (0..y.len()).rev().filter(|&i| !keep[i]);
    let recent: Vec<usize> = recent.take(GP_ROWS - GP_ROWS / 2).collect();
    recent.into_iter().for_each(|i| keep[i] = true);
    (0..y.len()).filter(|&i| keep[i]).collect()
}

/// Whether a success classifier's verdict "fails" has been right on data it did not see: of
/// the training rows whose out-of-bag prediction (`oob`; `y` 1 for a success) said failure
/// (p < [`LIKELY`]), at least [`MIN_VERDICTS`], at least [`VETO_PRECISION`] really failed. Until then
/// the classifier vetoes nothing and weighs nothing.
fn calibrated(oob: &[Option<f64>], y: &[f64]) -> bool {
    let verdicts: Vec<f64> = (oob.iter().zip(y))
        .filter_map(|(p, &y)| (p.is_some_and(|p| p < LIKELY)).then_some(y))
        .collect();
    let right = verdicts.iter().filter(|&&y| y < 0.5).count();
    verdicts.len() >= MIN_VERDICTS && right as f64 >= VETO_PRECISION * verdicts.len() as f64
}

/// The fewest out-of-bag "fails" verdicts that judge the classifier.
const MIN_VERDICTS: usize = 3;
/// The share of its out-of-bag "fails" verdicts that must have been right.
const VETO_PRECISION: f64 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gp_keeps_the_best_half_and_the_most_recent_beyond_its_cap() {
        assert_eq!(gp_rows(&[3.0, 1.0, 2.0]), vec![0, 1, 2]);
        let n = GP_ROWS + 100;
        // Early rows are the best: the best half is rows 0..150, the rest the last 150.
        let y: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let keep = gp_rows(&y);
        assert_eq!(keep.len(), GP_ROWS);
        assert!(keep[..GP_ROWS / 2].iter().enumerate().all(|(k, &i)| i == k));
        assert!(keep[GP_ROWS / 2..].iter().all(|&i| i >= n - GP_ROWS / 2));
    }

    #[test]
    fn the_classifier_vetoes_once_its_failure_verdicts_held_out_of_bag() {
        let (f, s) = (0.0, 1.0);
        // Three "fails" verdicts out of bag, two right: trusted.
        let oob = [Some(0.1), Some(0.2), Some(0.3), Some(0.9), None];
        assert!(calibrated(&oob, &[f, f, s, s, f]));
        // Two of three wrong: not trusted.
        assert!(!calibrated(&oob, &[f, s, s, s, f]));
        // Too few verdicts to judge.
        assert!(!calibrated(&[Some(0.1), Some(0.2), None], &[f, f, f]));
    }
}
