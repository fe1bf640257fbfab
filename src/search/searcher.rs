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
//! Failures (one policy, documented in docs/deciding.md):
//! * a feasibility classifier (a random forest on ok = 1 / failed = 0, i.e. a probability
//!   forest) learns which configurations fail to build, crash or give wrong output, over
//!   whole configurations (a failure may belong to a combination of values). Once its
//!   out-of-bag "fails" verdicts have been right at least half the time (at least 3 of them),
//!   it weighs the acquisition by each candidate's probability of success p, as constrained
//!   Bayesian optimisation does (Gelbart et al. 2014; LCB that of the expected outcome, a
//!   failure counting as the worst target; EI/PI times p: [`Scorer::score`]) — it vetoes
//!   nothing, so a candidate it doubts is taken when it promises enough — and a random step
//!   takes a draw with its probability of success ([`Feasible::accepted`]). Its leaves hold
//!   at least 3 observations: with leaves of one, a lone failure made its whole leaf
//!   infeasible. It draws from a random stream of its own, so a search with it proposes what
//!   one without it would, except where its verdict decides;
//! * a discrete value that has only ever failed, in every context it was tried in (with at
//!   least half the values of every other discrete parameter, up to three), where its
//!   siblings succeed, is condemned ([`condemned`](crate::search::condemned)): not drawn again
//!   except as a deliberate, labelled re-test (`Source::Explore`) in a context it has not
//!   failed in;
//! * for the tree learners, failures also enter the regression with the worst successful
//!   value, with or without the classifier. Fitted on successes only, a forest predicts the
//!   failure region from its successful edge, i.e. as good as the best configurations, and
//!   sends proposal after proposal into it. A tree holds that cliff in one split; the GP's
//!   smooth model cannot, so while the classifier weighs the acquisition the GP is fitted on
//!   successes only, as in constrained Bayesian optimisation. The replays that decided both
//!   are in results/search/ and docs/deciding.md;
//! * a run that timed out is *censored*, not failed: it is known to be at least as slow as
//!   the timeout, so it enters the regression with the larger of that bound and the worst
//!   success.
//!
//! Tree learners interleave a random proposal every third step (see [`Settings::interleave`]).

use crate::evaluate::outcome::{Measurement, Source, Status};
use crate::problem::space::{Config, Space};
use crate::rng::Rng;
use crate::search::bandit::Bandit;
use crate::search::condemned::Condemned;
use crate::search::prior::Prior;
// Re-exported so that `search::searcher::{Learner, ...}`, their home before the settings had
// a module of their own, keeps working.
use crate::search::settings::{Design, Learner, Mechanism, Settings};
use crate::search::surrogate::{Forest, ForestParams};
use crate::search::unseen::NoProposal;
use crate::search::unseen::Unseen;
use history::{History, Observation};
use model::{Feasible, Model};
use streams::{STREAM_EXPLORE, STREAM_FEASIBLE, STREAM_INITIAL, STREAM_LHS, STREAM_PRIOR};

pub struct Searcher<'s> {
    /// The space, settings, history, prior forest and books a model step reads.
    model: Model<'s>,
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
    /// What `--warm-start` transfers from an earlier run (nothing by default); a forest
    /// fitted once on it is the model's prior mean (see [`Searcher::warm_start`]).
    prior: Prior,
}

/// How many of the prior's best configurations open the initial design.
const PRIOR_FIRST: usize = 5;

/// Draws a random step makes to find one without a condemned value.
const SCREEN_DRAWS: usize = 32;
/// Draws an exploration makes to find one with the value it re-tests.
const EXPLORE_DRAWS: usize = 256;
/// Configurations with the value a re-test chooses from (the freshest context,
/// [`Condemned::fresh`]).
const EXPLORE_CANDIDATES: usize = 16;

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
            model: Model {
                space,
                history: History::new(s.goal),
                s,
                prior_model: None,
                unseen,
                condemned: Condemned::default(),
            },
            default_allowed,
            lhs,
            lost: Default::default(),
            proposers: Default::default(),
            bandit: Bandit::default(),
            prior: Prior::default(),
        }
    }

    /// Transfers what an earlier run of the same space found (see [`Prior`]): its best
    /// configurations open the initial design, and a forest fitted on its standardised
    /// targets becomes the prior mean of every model step.
    pub fn warm_start(&mut self, prior: Prior) {
        let configs: Vec<Config> = prior.points.iter().map(|p| p.0.clone()).collect();
        let z: Vec<f64> = prior.points.iter().map(|p| p.1).collect();
        let mut rng = Rng::for_step(self.model.s.seed, STREAM_PRIOR, 0);
        self.model.prior_model = (!z.is_empty()).then(|| {
            let x = self.model.tree_features(&configs);
            let d = self.model.space.tree_width();
            Forest::fit(&x, d, &z, ForestParams::random_forest(), &mut rng)
        });
        self.prior = prior;
    }

    /// Records an evaluated configuration (also used to replay the log on resume); its
    /// pending entry, if it had one, is replaced.
    pub fn tell(&mut self, config: &Config, m: &Measurement, source: Source) {
        self.model.unseen.mark(config);
        let encoded = self.model.space.kernel_features(config);
        self.model.history.settle(&encoded);
        if m.status == Status::Lost {
            // The environment's failure says nothing of the configuration: it may be
            // proposed again, once (one that loses its job every time is left alone).
            if self.lost.insert(config.key()) {
                self.model.unseen.unmark(config);
            }
            return;
        }
        let usable = self.model.gives_value(m.status);
        if !self.model.s.without.has(Mechanism::Books) {
            self.model.condemned.tell(self.model.space, config, usable);
        }
        if self.model.s.learner == Learner::Auto {
            if let Some(&arm) = self.proposers.get(&config.key()) {
                let reward = self.reward(m);
                self.bandit.credit(arm, reward, m.compile_s + m.run_s);
            }
        }
        self.model.history.push(Observation {
            encoded,
            tree: self.model.space.tree_features(config),
            status: m.status,
            objective: self.observed(m),
            run_s: m.run_s,
            repeats: m.repeats,
            source,
            pending: false,
        });
    }

    /// The objective an outcome tells the model: a success's, or the last progress value of a
    /// pruned run when it is on the objective's scale.
    fn observed(&self, m: &Measurement) -> Option<f64> {
        match m.status {
            Status::Pruned if self.model.s.progress_is_objective => {
                m.recorded.get(crate::problem::progress::VALUE).copied()
            }
            _ => m.objective,
        }
    }

    /// Records a configuration proposed ahead of its evaluation as if it had measured the
    /// best objective so far (the constant liar of batch Bayesian optimisation): the next
    /// proposals neither repeat it nor crowd around it as if it were unknown.
    pub fn pending(&mut self, config: &Config, source: Source) {
        self.model.unseen.mark(config);
        let best = self.best();
        self.model.history.push(Observation {
            encoded: self.model.space.kernel_features(config),
            tree: self.model.space.tree_features(config),
            status: Status::Ok,
            objective: best,
            run_s: 0.0,
            repeats: 0,
            source,
            pending: true,
        });
    }

    /// What an outcome earns the learner that proposed it (`auto`): 1 for a new best, else 0
    /// (OpenTuner's credit).
    fn reward(&self, m: &Measurement) -> f64 {
        let (Status::Ok, Some(v)) = (m.status, m.objective) else {
            return 0.0;
        };
        let goal = self.model.s.goal;
        let new_best = self.best().is_none_or(|b| goal.better(v, b));
        f64::from(u8::from(new_best))
    }

    /// The best objective evaluated so far (pending proposals aside).
    fn best(&self) -> Option<f64> {
        self.model.history.best()
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
        self.model.unseen.is_seen(config)
    }

    /// The next configuration, or why there is none: every valid configuration has been
    /// evaluated ([`NoProposal::Exhausted`], known or proved), or none new could be found.
    pub fn ask(&mut self, step: usize) -> Result<(Config, Source), NoProposal> {
        if let Some(default) = self.default_due() {
            return Ok((default, Source::Default));
        }
        if let Some(c) = self.exploration(step) {
            return Ok((c, Source::Explore));
        }
        let history = &self.model.history;
        let n_initial = history.from(Source::Initial) + history.from(Source::Prior);
        if n_initial < self.model.s.initial {
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
        let learner = match self.model.s.learner {
            Learner::Auto => self.bandit.choose(),
            l => l,
        };
        let proposal = if learner == Learner::Random {
            self.random_step(step).map(|c| (c, Source::Random))
        } else {
            self.model.step(step, learner).map(|c| (c, Source::Model))
        };
        if let Ok((c, _)) = &proposal {
            self.proposers.insert(c.key(), learner);
        }
        proposal
    }

    /// A random proposal after the initial design, screened as [`Searcher::screened_random`]
    /// says.
    fn random_step(&self, step: usize) -> Result<Config, NoProposal> {
        let mut rng = Rng::for_step(self.model.s.seed, STREAM_INITIAL, step as u64);
        self.screened_random(&mut rng, step)
    }

    /// A random configuration (plain for random search, the baseline), screened where failures
    /// have been seen: of up to [`SCREEN_DRAWS`] draws, those without a condemned value, and
    /// of these, once the feasibility classifier's verdicts are calibrated, one taken with its
    /// probability of success ([`Feasible::accepted`]), before that the first; the first draw
    /// when every draw has a condemned value.
    fn screened_random(&self, rng: &mut Rng, step: usize) -> Result<Config, NoProposal> {
        let first = self.model.unseen.random(rng)?;
        let plain = self.model.s.learner == Learner::Random;
        let model = &self.model;
        if plain || (!self.model.condemned.vetoes(&first) && !model.learns_failures()) {
            return Ok(first);
        }
        let mut clean: Vec<Config> = std::iter::once(first.clone())
            .chain((1..SCREEN_DRAWS).map_while(|_| self.model.unseen.random(rng).ok()))
            .filter(|c| !self.model.condemned.vetoes(c))
            .collect();
        if clean.is_empty() {
            return Ok(first);
        }
        let pick = match model.learns_failures() {
            true => {
                let mut feasible_rng =
                    Rng::for_step(self.model.s.seed, STREAM_FEASIBLE, step as u64);
                let p = model.feasibility(&model.tree_features(&clean), &mut feasible_rng);
                Feasible(p).accepted(clean.len(), &mut feasible_rng)
            }
            false => 0,
        };
        Ok(clean.swap_remove(pick))
    }

    /// A deliberate re-test of a condemned value whose time has come
    /// ([`crate::search::condemned`]): of random configurations with that value, the one in
    /// the context most unlike its failures', unless a re-test is already under way.
    fn exploration(&self, step: usize) -> Option<Config> {
        if self.model.s.learner == Learner::Random {
            return None;
        }
        let (i, x) = self.model.condemned.due()?;
        let under_way = self.model.history.pending_from(Some(Source::Explore)) > 0;
        if under_way {
            return None;
        }
        let mut rng = Rng::for_step(self.model.s.seed, STREAM_EXPLORE, step as u64);
        let books = &self.model.condemned;
        (0..EXPLORE_DRAWS)
            .map_while(|_| self.model.unseen.random(&mut rng).ok())
            .filter(|c| c.0[i].to_bits() == x.to_bits())
            .take(EXPLORE_CANDIDATES)
            .enumerate()
            .max_by_key(|(k, c)| (books.fresh(i, x, c), std::cmp::Reverse(*k)))
            .map(|(_, c)| c)
    }

    /// The default configuration, while it is allowed and not yet proposed or evaluated.
    fn default_due(&self) -> Option<Config> {
        if self.default_allowed && self.model.history.from(Source::Default) == 0 {
            let default = self.model.space.default_config();
            if !self.is_seen(&default) {
                return Some(default);
            }
        }
        None
    }

    /// The next of the prior's best configurations, while fewer than [`PRIOR_FIRST`] were
    /// proposed: the first that may be proposed and was not.
    fn prior_point(&self) -> Option<Config> {
        let done = self.model.history.from(Source::Prior);
        if done >= PRIOR_FIRST {
            return None;
        }
        (self.prior.best(PRIOR_FIRST))
            .find(|c| {
                self.model.unseen.is_candidate(c)
                    && !self.is_seen(c)
                    && self.model.space.is_valid(c)
            })
            .cloned()
    }

    /// Point `k` of the initial design: the Latin hypercube's, when it is a new candidate,
    /// else a random one.
    fn initial_point(&self, step: usize, k: usize) -> Result<Config, NoProposal> {
        let mut rng = Rng::for_step(self.model.s.seed, STREAM_INITIAL, step as u64);
        if let Some(c) = self.lhs.get(k) {
            if self.model.unseen.is_candidate(c)
                && !self.is_seen(c)
                && !self.model.condemned.vetoes(c)
            {
                return Ok(c.clone());
            }
        }
        self.screened_random(&mut rng, step)
    }

    /// Whether this step after the initial design is random: random search, fewer than two
    /// successes to learn from, or an interleaved random step.
    fn random_due(&self, step: usize) -> bool {
        let ok = self.model.history.with(Status::Ok);
        let every = self.model.s.interleave;
        self.model.s.learner == Learner::Random || ok < 2 || (every > 0 && step % every == 0)
    }

    /// A pool of up to `pool` distinct configurations not yet evaluated ([`Model::pool`]).
    pub fn pool(&self, rng: &mut Rng) -> Vec<Config> {
        self.model.pool(rng)
    }
}

pub(super) mod history;
mod model;
pub(super) mod streams;
pub use model::GP_ROWS;
#[cfg(test)]
mod tests;
