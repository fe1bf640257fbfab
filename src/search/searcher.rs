//! Search strategies behind one ask/tell interface: the driver asks for the next
//! configuration, evaluates it, and tells the result. Strategies never see processes.
//!
//! Every proposal draws from a generator seeded by (run seed, step), so a resumed search
//! proposes exactly what the uninterrupted one would have: same seed + same measurements ⇒
//! same proposals.
//!
//! Order of proposals: the problem's default configuration first (the baseline), then exactly
//! `initial` distinct valid configurations (random, or a Latin hypercube), then the learner:
//! `random` keeps sampling; `rf`/`et`/`gbrt`/`gp` fit a surrogate and take the candidate with
//! the best acquisition (LCB = μ − κ·σ by default, Srinivas et al. 2010; or EI, PI) from a
//! pool of valid, not yet evaluated configurations. No configuration is ever proposed twice.
//! "Random" is always the hierarchical, constraint-aware law of
//! [`sample`](crate::problem::sample), for the initial design, the pool and the interleaved
//! random steps alike ([`unseen`](crate::search::unseen) keeps the books).
//!
//! Failures (one policy, documented in the README):
//! * a feasibility classifier (a random forest on ok = 1 / failed = 0, i.e. a probability
//!   forest) learns which configurations fail to build, crash or give wrong output; the
//!   acquisition only considers candidates predicted feasible (p ≥ 0.5; the most feasible
//!   ones if none is), and EI/PI are weighted by p. Its leaves hold at least 3 observations:
//!   with leaves of one, a lone failure made its whole leaf infeasible and vetoed good
//!   candidates beside it; it needs repeated failures in a region to veto there. It draws
//!   from a random stream of its own, so a search with it proposes what one without it
//!   would, except where its verdict decides (a veto, EI/PI's weight);
//! * for the tree learners, failures also enter the regression with the worst successful
//!   value, with or without the classifier. Fitted on successes only, a forest predicted the
//!   failure region from its successful edge, i.e. as good as the best configurations, and
//!   sent proposal after proposal into it for the classifier to veto (on the replayed `tiles`
//!   table rf needed 89 evaluations to come within 5% with the classifier, 40 without:
//!   results/search/). A tree holds that cliff in one split; the GP's smooth model cannot
//!   (on `tiles` it needed 53 evaluations instead of 36), so with the classifier the GP is
//!   fitted on successes only, as in constrained Bayesian optimisation (Gelbart et al. 2014);
//! * a run that timed out is *censored*, not failed: it is known to be at least as slow as
//!   the timeout, so it enters the regression with the larger of that bound and the worst
//!   success.
//!
//! Tree learners interleave a random proposal every third step (see [`Settings::interleave`]).

use crate::evaluate::outcome::{Measurement, Source, Status};
use crate::problem::space::{Config, Space};
use crate::problem::Goal;
use crate::rng::Rng;
use crate::search::acquisition::Scorer;
use crate::search::bandit::Bandit;
use crate::search::prior::Prior;
use crate::stats;
// Re-exported so that `search::searcher::{Learner, ...}`, their home before the settings had
// a module of their own, keeps working.
pub use crate::search::settings::{Acquisition, Design, Learner, Settings};
use crate::search::surrogate::{Forest, ForestParams, Gbrt, Gp};
pub use crate::search::unseen::NoProposal;
use crate::search::unseen::Unseen;

#[derive(Debug, Clone)]
struct Observation {
    /// Features for the GP (one column per parameter) and for the tree models (one-hot
    /// categories).
    encoded: Vec<f64>,
    tree: Vec<f64>,
    status: Status,
    objective: Option<f64>,
    /// Wall seconds of the timed runs and their number (for censoring timeouts).
    run_s: f64,
    repeats: u32,
    source: Source,
    /// Proposed and not yet evaluated: its objective is a lie (the best so far, a constant
    /// liar) until [`Searcher::tell`] replaces it, so that proposals made ahead differ.
    pending: bool,
}

pub struct Searcher<'s> {
    space: &'s Space,
    s: Settings,
    history: Vec<Observation>,
    /// What was evaluated, and the draws of what was not.
    unseen: Unseen<'s>,
    /// Whether the default configuration may be proposed (valid, and a candidate).
    default_allowed: bool,
    lhs: Vec<Config>,
    /// Configurations whose evaluation the environment lost (`--executor slurm`), by key:
    /// proposed again once, then left alone.
    lost: std::collections::HashSet<Vec<u64>>,
    /// Which learner proposed each configuration (model steps, and every step of `auto`
    /// after its initial design), by key.
    proposers: std::collections::HashMap<Vec<u64>, Learner>,
    /// `--learner auto`'s choice of learner.
    bandit: Bandit,
    /// What `--warm-start` transfers from an earlier run (nothing by default), and a forest
    /// fitted once on it: the prior mean of this run's models (see [`Searcher::prior_mean`]).
    prior: Prior,
    prior_model: Option<Forest>,
}

/// How many of the prior's best configurations open the initial design.
const PRIOR_FIRST: usize = 5;

/// The fewest observations in a leaf of the feasibility classifier (module documentation).
const FEASIBLE_LEAF: usize = 3;

const STREAM_INITIAL: u64 = 1;
const STREAM_POOL: u64 = 2;
const STREAM_FIT: u64 = 3;
const STREAM_LHS: u64 = 4;
const STREAM_PRIOR: u64 = 5;
const STREAM_FEASIBLE: u64 = 6;

/// The `initial` points of a Latin hypercube design: per parameter, one uniform draw in
/// each of `initial` equal strata, shuffled.
fn latin_hypercube(space: &Space, s: &Settings) -> Vec<Config> {
    let mut rng = Rng::for_step(s.seed, STREAM_LHS, 0);
    let n = s.initial;
    let d = space.params.len();
    let mut cols: Vec<Vec<f64>> = (0..d)
        .map(|_| {
            let mut v: Vec<f64> = (0..n).map(|k| (k as f64 + rng.f64()) / n as f64).collect();
            rng.shuffle(&mut v);
            v
        })
        .collect();
    (0..n)
        .map(|k| space.from_unit(&cols.iter_mut().map(|c| c[k]).collect::<Vec<_>>()))
        .collect()
}

/// The feasibility classifier's verdict on a pool: each candidate's probability of
/// succeeding, or `None` when there are no failures to learn from.
struct Feasible(Option<Vec<f64>>);

impl Feasible {
    /// Probability that candidate `i` succeeds.
    fn p(&self, i: usize) -> f64 {
        self.0.as_ref().map_or(1.0, |p| p[i])
    }

    /// The candidates predicted feasible (p ≥ 0.5) or, if none is, the most feasible ones.
    fn eligible(&self, n: usize) -> Vec<usize> {
        let cutoff = self.0.as_ref().map_or(0.0, |p| {
            let max = p.iter().copied().fold(0.0, f64::max);
            if max >= 0.5 {
                0.5
            } else {
                max
            }
        });
        (0..n).filter(|&i| self.p(i) >= cutoff).collect()
    }

    /// The most feasible of `n` candidates (the first without a classifier).
    fn most_likely(&self, n: usize) -> usize {
        self.0.as_ref().map_or(0, |p| {
            (0..n).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0)
        })
    }
}

/// How a model step ranks its pool: the candidates it may pick, the prior mean the model's
/// predictions are added to (with `--warm-start`), and their acquisition.
struct Ranking {
    eligible: Vec<usize>,
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
struct PriorMean {
    own: Vec<f64>,
    pool: Vec<f64>,
}

impl<'s> Searcher<'s> {
    pub fn new(space: &'s Space, s: Settings) -> Searcher<'s> {
        let all = space.enumerate();
        Searcher::with_candidates(space, s, all)
    }

    /// A searcher restricted to `candidates` (e.g. the rows of a recorded table).
    pub fn with_candidates(
        space: &'s Space,
        s: Settings,
        candidates: Option<Vec<Config>>,
    ) -> Searcher<'s> {
        let lhs = if s.design == Design::Lhs && s.initial > 0 {
            latin_hypercube(space, &s)
        } else {
            Vec::new()
        };
        let unseen = Unseen::new(space, candidates);
        let default = space.default_config();
        let default_allowed = space.is_valid(&default) && unseen.is_candidate(&default);
        Searcher {
            space,
            s,
            history: Vec::new(),
            unseen,
            default_allowed,
            lhs,
            lost: Default::default(),
            proposers: Default::default(),
            bandit: Bandit::default(),
            prior: Prior::default(),
            prior_model: None,
        }
    }

    /// Transfers what an earlier run of the same space found (see [`Prior`]): its best
    /// configurations open the initial design, and a forest fitted on its standardised
    /// targets becomes the prior mean of every model step.
    pub fn warm_start(&mut self, prior: Prior) {
        let configs: Vec<Config> = prior.points.iter().map(|p| p.0.clone()).collect();
        let z: Vec<f64> = prior.points.iter().map(|p| p.1).collect();
        let mut rng = Rng::for_step(self.s.seed, STREAM_PRIOR, 0);
        self.prior_model = (!z.is_empty()).then(|| {
            let x = self.tree_features(&configs);
            let d = self.space.tree_width();
            Forest::fit(&x, d, &z, ForestParams::random_forest(), &mut rng)
        });
        self.prior = prior;
    }

    /// Records an evaluated configuration (also used to replay the log on resume); its
    /// pending entry, if it had one, is replaced.
    pub fn tell(&mut self, config: &Config, m: &Measurement, source: Source) {
        self.unseen.mark(config);
        let encoded = self.space.encode(config);
        self.history
            .retain(|o| !(o.pending && o.encoded == encoded));
        if m.status == Status::Lost {
            // The environment's failure says nothing of the configuration: it may be
            // proposed again, once (one that loses its job every time is left alone).
            if self.lost.insert(config.key()) {
                self.unseen.unmark(config);
            }
            return;
        }
        if self.s.learner == Learner::Auto {
            if let Some(&arm) = self.proposers.get(&config.key()) {
                let reward = self.reward(m);
                self.bandit.credit(arm, reward);
            }
        }
        self.history.push(Observation {
            encoded,
            tree: self.space.tree_features(config),
            status: m.status,
            objective: m.objective,
            run_s: m.run_s,
            repeats: m.repeats,
            source,
            pending: false,
        });
    }

    /// Records a configuration proposed ahead of its evaluation as if it had measured the
    /// best objective so far (the constant liar of batch Bayesian optimisation): the next
    /// proposals neither repeat it nor crowd around it as if it were unknown.
    pub fn pending(&mut self, config: &Config, source: Source) {
        self.unseen.mark(config);
        let best = self.best();
        self.history.push(Observation {
            encoded: self.space.encode(config),
            tree: self.space.tree_features(config),
            status: Status::Ok,
            objective: best,
            run_s: 0.0,
            repeats: 0,
            source,
            pending: true,
        });
    }

    /// What an outcome earns the learner that proposed it (`auto`): 1 for a new best, else
    /// the share of the successes so far that it beats (a proposal in the best tenth earns
    /// 0.9: improvements are too rare early on to tell learners apart); a failure 0.
    fn reward(&self, m: &Measurement) -> f64 {
        let (Status::Ok, Some(v)) = (m.status, m.objective) else {
            return 0.0;
        };
        let goal = self.s.goal;
        let oks: Vec<f64> = self.successes().collect();
        if oks.iter().all(|&b| goal.better(v, b)) {
            return 1.0;
        }
        oks.iter().filter(|&&b| goal.better(v, b)).count() as f64 / oks.len() as f64
    }

    /// The objectives of the successes so far (pending proposals aside).
    fn successes(&self) -> impl Iterator<Item = f64> + '_ {
        (self.history.iter())
            .filter(|o| o.status == Status::Ok && !o.pending)
            .filter_map(|o| o.objective)
    }

    /// The best objective evaluated so far (pending proposals aside).
    fn best(&self) -> Option<f64> {
        let goal = self.s.goal;
        (self.successes()).reduce(|a, b| if goal.better(b, a) { b } else { a })
    }

    /// The learner that proposed `config` (see [`Strategy::proposer`](super::Strategy)).
    pub fn proposer(&self, config: &Config) -> Option<Learner> {
        self.proposers.get(&config.key()).copied()
    }

    /// Restores, from the log, which learner proposed `config`.
    pub fn recall(&mut self, config: &Config, learner: Learner) {
        self.proposers.insert(config.key(), learner);
    }

    pub fn is_seen(&self, config: &Config) -> bool {
        self.unseen.is_seen(config)
    }

    /// The next configuration, or why there is none: every valid configuration has been
    /// evaluated ([`NoProposal::Exhausted`], known or proved), or none new could be found.
    pub fn ask(&mut self, step: usize) -> Result<(Config, Source), NoProposal> {
        if let Some(default) = self.default_due() {
            return Ok((default, Source::Default));
        }
        let n_initial = (self.history.iter())
            .filter(|o| matches!(o.source, Source::Initial | Source::Prior))
            .count();
        if n_initial < self.s.initial {
            if let Some(c) = self.prior_point() {
                return Ok((c, Source::Prior));
            }
            return self
                .initial_point(step, n_initial)
                .map(|c| (c, Source::Initial));
        }
        if self.random_due(step) {
            return self.random_step(step).map(|c| (c, Source::Random));
        }
        let learner = match self.s.learner {
            Learner::Auto => self.bandit.choose(),
            l => l,
        };
        let proposal = if learner == Learner::Random {
            self.random_step(step).map(|c| (c, Source::Random))
        } else {
            self.model_step(step, learner).map(|c| (c, Source::Model))
        };
        if let Ok((c, _)) = &proposal {
            self.proposers.insert(c.key(), learner);
        }
        proposal
    }

    /// A random proposal after the initial design. Its draws are not screened by the
    /// feasibility classifier: screened (the first of 16 draws predicted feasible), rf's random
    /// steps on the replayed `tiles` table failed less (26 failed evaluations instead of 34 in
    /// 200, 20 seeds) but came within 5% later (41 evaluations instead of 40; with leaves of
    /// one, 38 instead of 31 at 60 seeds): the optimum lies on the failure boundary, and
    /// exploration there is what finds it. On gemm-table screening changed nothing: its few
    /// failures come before there is anything to learn.
    fn random_step(&self, step: usize) -> Result<Config, NoProposal> {
        let mut rng = Rng::for_step(self.s.seed, STREAM_INITIAL, step as u64);
        self.unseen.random(&mut rng)
    }

    /// The default configuration, while it is allowed and not yet proposed or evaluated.
    fn default_due(&self) -> Option<Config> {
        if self.default_allowed && self.history.iter().all(|o| o.source != Source::Default) {
            let default = self.space.default_config();
            if !self.is_seen(&default) {
                return Some(default);
            }
        }
        None
    }

    /// The next of the prior's best configurations, while fewer than [`PRIOR_FIRST`] were
    /// proposed: the first that may be proposed and was not.
    fn prior_point(&self) -> Option<Config> {
        let done = (self.history.iter())
            .filter(|o| o.source == Source::Prior)
            .count();
        if done >= PRIOR_FIRST {
            return None;
        }
        (self.prior.best(PRIOR_FIRST))
            .find(|c| self.unseen.is_candidate(c) && !self.is_seen(c) && self.space.is_valid(c))
            .cloned()
    }

    /// Point `k` of the initial design: the Latin hypercube's, when it is a new candidate,
    /// else a random one.
    fn initial_point(&self, step: usize, k: usize) -> Result<Config, NoProposal> {
        let mut rng = Rng::for_step(self.s.seed, STREAM_INITIAL, step as u64);
        if let Some(c) = self.lhs.get(k) {
            if self.unseen.is_candidate(c) && !self.is_seen(c) {
                return Ok(c.clone());
            }
        }
        self.unseen.random(&mut rng)
    }

    /// Whether this step after the initial design is random: random search, fewer than two
    /// successes to learn from, or an interleaved random step.
    fn random_due(&self, step: usize) -> bool {
        let ok = self
            .history
            .iter()
            .filter(|o| o.status == Status::Ok)
            .count();
        let every = self.s.interleave;
        self.s.learner == Learner::Random || ok < 2 || (every > 0 && step % every == 0)
    }

    /// A pool of up to `pool` distinct configurations not yet evaluated (see
    /// [`Unseen::pool`]).
    pub fn pool(&self, rng: &mut Rng) -> Vec<Config> {
        self.unseen.pool(rng, self.s.pool)
    }

    /// Regression rows and targets following the failure policy (module documentation):
    /// the objective made "smaller is better", log-transformed when all successes are
    /// positive (run times span orders of magnitude).
    /// Also returns which observations the rows are (their indices in the history).
    fn training_set(&self, gp: bool) -> (Vec<f64>, Vec<f64>, Vec<usize>) {
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
        let worst = oks
            .iter()
            .map(|o| t(o.objective.unwrap_or(0.0)))
            .fold(f64::NEG_INFINITY, f64::max);
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
                (Status::RunTimeout, _) if self.s.censor_timeouts && positive => {
                    let bound = rate.map(|r| t(r * o.run_s.max(1e-9)));
                    Some(bound.map_or(worst, |b| b.max(worst)))
                }
                // The GP's smooth model cannot hold a cliff to the worst value beside the
                // optimum; with the classifier, it sees successes only (constrained BO).
                _ if gp && self.s.feasibility => None,
                _ => Some(worst),
            };
            if let Some(v) = target {
                x.extend_from_slice(if gp { &o.encoded } else { &o.tree });
                y.push(v);
                rows.push(k);
            }
        }
        (x, y, rows)
    }

    /// The prior mean of a model step, for this run's regression rows (history indices
    /// `rows`, targets `y`) and for the `pool`: the prior forest's prediction mapped onto this
    /// run's targets by least squares over this run's successes, its slope kept ≥ 0 (a prior
    /// that ranks them backwards gets no say) and shrunk by [`Prior::share`]. The model is
    /// fitted to what the prior does not explain, so where this run has not looked it keeps
    /// its full uncertainty around the prior's guess. `None` without a prior.
    /// `xt` holds the pool's tree features.
    fn prior_mean(&self, rows: &[usize], y: &[f64], xt: &[f64]) -> Option<PriorMean> {
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

    /// Whether an observation gives the regression a value (a success, or a censored timeout).
    fn usable(&self, o: &Observation) -> bool {
        o.status == Status::Ok || (o.status == Status::RunTimeout && self.s.censor_timeouts)
    }

    /// Whether the feasibility classifier has something to learn.
    fn learns_failures(&self) -> bool {
        self.s.feasibility && !self.history.iter().all(|o| self.usable(o))
    }

    /// Probability that each pooled candidate (tree features `xt`) succeeds.
    fn feasibility(&self, xt: &[f64], rng: &mut Rng) -> Vec<f64> {
        let d = self.space.tree_width();
        let x: Vec<f64> = self
            .history
            .iter()
            .flat_map(|o| o.tree.iter().copied())
            .collect();
        let y: Vec<f64> = self
            .history
            .iter()
            .map(|o| self.usable(o) as u8 as f64)
            .collect();
        let params = ForestParams {
            n_trees: 50,
            min_samples_leaf: FEASIBLE_LEAF,
            max_depth: 32,
            extra: false,
        };
        Forest::fit(&x, d, &y, params, rng).predict(xt).0
    }

    /// A proposal of the surrogate model, in phases: draw the pool, predict which of it is
    /// feasible, fit the regression on the (censored) targets, score the feasible candidates
    /// by the acquisition and take the best.
    fn model_step(&self, step: usize, learner: Learner) -> Result<Config, NoProposal> {
        let mut rng = Rng::for_step(self.s.seed, STREAM_POOL, step as u64);
        let mut pool = self.pool(&mut rng);
        if pool.is_empty() {
            // The pool's draws found nothing: let the exhaustive search prove it or find one.
            return self.unseen.random(&mut rng);
        }
        let gp = learner == Learner::Gp;
        let (x, mut y, rows) = self.training_set(gp);
        let acq = Scorer::new(&self.s, &y);
        let xt = self.pool_tree_features(&pool, gp);
        let prior = (xt.as_ref()).and_then(|xt| self.prior_mean(&rows, &y, xt));
        if let Some(m) = &prior {
            y.iter_mut().zip(&m.own).for_each(|(y, m)| *y -= m);
        }
        // The classifier has a stream of its own: the regression then draws the same with or
        // without it, and the two differ only where the classifier vetoes a candidate.
        let mut fit_rng = Rng::for_step(self.s.seed, STREAM_FIT, step as u64);
        let mut feasible_rng = Rng::for_step(self.s.seed, STREAM_FEASIBLE, step as u64);
        let feasible = Feasible(match &xt {
            Some(xt) if self.learns_failures() => Some(self.feasibility(xt, &mut feasible_rng)),
            _ => None,
        });
        if y.len() < 2 {
            // Too few usable observations for a model: the most feasible candidate, else random.
            let k = feasible.most_likely(pool.len());
            return Ok(pool.swap_remove(k));
        }
        let ranking = Ranking {
            eligible: feasible.eligible(pool.len()),
            feasible,
            acq,
            prior: prior.map(|m| m.pool),
        };
        let best = if gp {
            let xp: Vec<f64> = pool.iter().flat_map(|c| self.space.encode(c)).collect();
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
    fn tree_features(&self, configs: &[Config]) -> Vec<f64> {
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
        r.eligible.iter().copied().min_by(|&a, &b| {
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
        let d = self.space.params.len();
        let gp = Gp::fit(x, d, y, &self.space.categorical_mask());
        let mu = gp.mean(xp);
        let smax = gp.prior_std();
        let bound = |i: usize| r.score(i, mu[i], 0.0).min(r.score(i, mu[i], smax));
        let mut order: Vec<(f64, usize)> = r.eligible.iter().map(|&i| (bound(i), i)).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::space::{Kind, Param, Scalar};
    use std::collections::HashSet;

    fn ok(y: f64) -> Measurement {
        Measurement::single(y)
    }

    fn grid_space() -> Space {
        let vals: Vec<Scalar> = (0..20).map(Scalar::Int).collect();
        let params = (0..3)
            .map(|i| Param {
                name: format!("P{i}"),
                kind: Kind::Ordinal(vals.clone()),
                default: 0.0,
                condition: None,
            })
            .collect();
        Space {
            params,
            order: vec![0, 1, 2],
            forbidden: vec![],
            constraints: vec![],
        }
    }

    fn f(c: &Config) -> f64 {
        1.0 + (c.0[0] - 13.0).powi(2) + (c.0[1] - 4.0).powi(2) + 0.5 * (c.0[2] - 9.0).powi(2)
    }

    #[test]
    fn a_lost_evaluation_is_not_learnt_and_its_configuration_comes_back_once() {
        let space = grid_space();
        let mut s = Searcher::new(&space, Settings::new(Learner::Rf, 1, Goal::Minimize));
        let (c, source) = s.ask(0).unwrap();
        s.pending(&c, source);
        let lost = Measurement::failed(Status::Lost, 0.0, 0.0, "node failed".into());
        s.tell(&c, &lost, source);
        assert!(
            s.history.is_empty(),
            "neither the pending entry nor the loss is kept"
        );
        assert!(!s.is_seen(&c), "it may be proposed again");
        s.tell(&c, &lost, source);
        assert!(s.is_seen(&c), "lost twice: left alone");
        assert!(s.history.is_empty());
    }

    fn run(learner: Learner, seed: u64, budget: usize) -> (Vec<String>, f64) {
        let space = grid_space();
        let mut s = Searcher::new(
            &space,
            Settings {
                initial: 5,
                pool: 2000,
                ..Settings::new(learner, seed, Goal::Minimize)
            },
        );
        let mut best = f64::INFINITY;
        let mut seen = Vec::new();
        for step in 0..budget {
            let (c, src) = s.ask(step).unwrap();
            let y = f(&c);
            best = best.min(y);
            seen.push(space.hash(&c));
            s.tell(&c, &ok(y), src);
        }
        (seen, best)
    }

    /// rf on the grid: 5 initial points, a pool of 500.
    fn grid_rf(seed: u64) -> Settings {
        Settings {
            initial: 5,
            pool: 500,
            ..Settings::new(Learner::Rf, seed, Goal::Minimize)
        }
    }

    /// A prior of `g` on configurations of the grid away from the optimum of [`f`].
    fn prior_of(g: impl Fn(&Config) -> f64) -> Prior {
        let space = grid_space();
        let mut rng = Rng::for_step(9, 9, 9);
        let points = (0..300)
            .map(|_| space.from_unit(&[rng.f64(), rng.f64(), rng.f64()]))
            .filter(|c| (c.0[0] - 13.0).abs() + (c.0[1] - 4.0).abs() + (c.0[2] - 9.0).abs() > 3.0)
            .map(|c| {
                let y = g(&c);
                (c, y)
            })
            .collect();
        Prior::new(points, Goal::Minimize)
    }

    /// Evaluations an rf search (warm-started from `prior`, if any) takes to come within one
    /// step of the optimum of [`f`].
    fn evals_to_near_optimum(seed: u64, prior: Option<Prior>) -> usize {
        let space = grid_space();
        let mut s = Searcher::new(&space, grid_rf(seed));
        if let Some(p) = prior {
            s.warm_start(p);
        }
        (0..200)
            .position(|step| {
                let (c, src) = s.ask(step).unwrap();
                s.tell(&c, &ok(f(&c)), src);
                f(&c) <= 2.0
            })
            .map_or(201, |k| k + 1)
    }

    #[test]
    fn a_prior_that_ranks_like_this_run_leads_to_what_it_never_saw() {
        let median = |warm: bool| {
            let mut v: Vec<usize> = (0..9)
                .map(|seed| evals_to_near_optimum(seed, warm.then(|| prior_of(|c| 10.0 * f(c)))))
                .collect();
            v.sort();
            v[4]
        };
        let (warm, cold) = (median(true), median(false));
        assert!(warm * 3 <= cold * 2, "warm {warm}, cold {cold}");
    }

    #[test]
    fn a_prior_that_ranks_backwards_gets_no_say() {
        let space = grid_space();
        let mut s = Searcher::new(&space, Settings::new(Learner::Rf, 1, Goal::Minimize));
        s.warm_start(prior_of(|c| -f(c)));
        let mut rng = Rng::for_step(1, 1, 1);
        let pool = s.pool(&mut rng);
        for c in pool.iter().take(20) {
            s.tell(c, &ok(f(c)), Source::Initial);
        }
        let (_, y, rows) = s.training_set(false);
        let m = s.prior_mean(&rows, &y, &s.tree_features(&pool)).unwrap();
        let first = m.pool[0];
        assert!(m.pool.iter().chain(&m.own).all(|&v| v == first));
    }

    /// An rf search of [`f`] in which the configurations `fails` says fail to build: its
    /// proposals and how many failed.
    fn run_failing(
        feasibility: bool,
        seed: u64,
        budget: usize,
        fails: impl Fn(usize, &Config) -> bool,
    ) -> (Vec<String>, usize) {
        let space = grid_space();
        let mut s = Searcher::new(
            &space,
            Settings {
                feasibility,
                ..grid_rf(seed)
            },
        );
        let (mut seen, mut failed) = (Vec::new(), 0);
        for step in 0..budget {
            let (c, src) = s.ask(step).unwrap();
            let m = if fails(step, &c) {
                failed += 1;
                Measurement::failed(Status::BuildError, 0.1, 0.0, "error".into())
            } else {
                ok(f(&c))
            };
            seen.push(space.hash(&c));
            s.tell(&c, &m, src);
        }
        (seen, failed)
    }

    #[test]
    fn a_lone_failure_vetoes_nothing() {
        // The classifier draws from a stream of its own, so without a veto the regression,
        // and every proposal, is the same as without it.
        for seed in 0..4 {
            let lone = |step: usize, _: &Config| step == 8;
            assert_eq!(
                run_failing(true, seed, 40, lone),
                run_failing(false, seed, 40, lone),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn a_failing_region_is_learnt_and_avoided() {
        // A quarter of the grid fails, next to the optimum of `f` (P0 = 13).
        let region = |_: usize, c: &Config| c.0[0] >= 15.0;
        let failed = |feasibility| -> usize {
            (0..6)
                .map(|seed| run_failing(feasibility, seed, 60, region).1)
                .sum()
        };
        let (with, without) = (failed(true), failed(false));
        assert!(
            with < without,
            "failed with the classifier {with}, without {without}"
        );
    }

    #[test]
    fn never_proposes_twice_and_is_deterministic() {
        let (a, _) = run(Learner::Rf, 3, 40);
        let uniq: HashSet<&String> = a.iter().collect();
        assert_eq!(uniq.len(), a.len());
        assert_eq!(a, run(Learner::Rf, 3, 40).0);
        assert_ne!(a, run(Learner::Rf, 4, 40).0);
    }

    #[test]
    fn forest_beats_random_on_a_bowl() {
        // Median over seeds of the best value after 40 evaluations.
        let med = |l| {
            let mut v: Vec<f64> = (0..9).map(|s| run(l, s, 40).1).collect();
            v.sort_by(f64::total_cmp);
            v[4]
        };
        let (rf, rnd) = (med(Learner::Rf), med(Learner::Random));
        assert!(rf < rnd, "rf {rf} random {rnd}");
    }

    #[test]
    fn exhausts_a_small_space_exactly() {
        let vals: Vec<Scalar> = (0..3).map(Scalar::Int).collect();
        let space = Space {
            params: vec![Param {
                name: "P0".into(),
                kind: Kind::Ordinal(vals),
                default: 0.0,
                condition: None,
            }],
            order: vec![0],
            forbidden: vec![],
            constraints: vec![],
        };
        let mut s = Searcher::new(
            &space,
            Settings {
                initial: 1,
                pool: 10,
                ..Settings::new(Learner::Rf, 1, Goal::Minimize)
            },
        );
        let mut n = 0;
        while let Ok((c, src)) = s.ask(n) {
            s.tell(&c, &ok(c.0[0] + 1.0), src);
            n += 1;
        }
        assert_eq!(n, 3);
    }
}
