//! What a search is configured with: the learner, the initial design, the acquisition
//! function and the failure policy (see the [`searcher`](super::searcher) module
//! documentation).

use crate::problem::Goal;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Learner {
    /// Random forest.
    Rf,
    /// Extra trees.
    Et,
    /// Gradient-boosted trees, quantile loss.
    Gbrt,
    /// Gaussian process (Matérn 5/2 × categorical overlap; the default).
    Gp,
    /// Random search over valid configurations.
    Random,
    /// OpenTuner's AUC bandit over gp, rf, gbrt, et and random: each proposal by the learner
    /// whose proposals were new bests lately (see `search::bandit`).
    Auto,
}

impl Learner {
    pub const ALL: [Learner; 6] = [
        Learner::Rf,
        Learner::Et,
        Learner::Gbrt,
        Learner::Gp,
        Learner::Random,
        Learner::Auto,
    ];

    /// The lowercase name, as on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Learner::Rf => "rf",
            Learner::Et => "et",
            Learner::Gbrt => "gbrt",
            Learner::Gp => "gp",
            Learner::Random => "random",
            Learner::Auto => "auto",
        }
    }

    /// The learner named `s` (see [`Learner::as_str`]).
    pub fn parse(s: &str) -> Option<Learner> {
        Learner::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
    Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Acquisition {
    /// Lower confidence bound μ − κσ.
    #[default]
    Lcb,
    /// Expected improvement.
    Ei,
    /// Probability of improvement.
    Pi,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
    Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// Random valid configurations, drawn hierarchically (see `problem::sample`).
    #[default]
    Random,
    /// A Latin hypercube (invalid or repeated points replaced by random ones).
    Lhs,
}

/// A mechanism of the failure policy (the [`searcher`](super::searcher) module documentation)
/// that a search may do without: `moldtune replay --without` measures what each one buys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mechanism {
    /// The value books ([`condemned`](super::condemned)): a value that only ever failed is not
    /// drawn again but deliberately re-tested.
    Books,
    /// The feasibility classifier altogether (its weight on the acquisition and on random
    /// draws): `--no-feasibility`.
    Classifier,
    /// A failure in the tree learners' regression as the worst success.
    Worst,
}

impl Mechanism {
    /// The lowercase name, as on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Books => "books",
            Mechanism::Classifier => "classifier",
            Mechanism::Worst => "worst",
        }
    }
}

/// The mechanisms a search does without (none by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Without(u8);

impl Without {
    /// Without `m` as well.
    pub fn and(self, m: Mechanism) -> Without {
        Without(self.0 | 1 << m as u8)
    }

    /// Without `m` as well when `off`.
    pub fn and_if(self, m: Mechanism, off: bool) -> Without {
        if off {
            self.and(m)
        } else {
            self
        }
    }

    /// Whether `m` is left out.
    pub fn has(self, m: Mechanism) -> bool {
        self.0 & 1 << m as u8 != 0
    }

    /// The mechanisms left out, in their declared order.
    pub fn list(self) -> Vec<Mechanism> {
        use clap::ValueEnum;
        (Mechanism::value_variants().iter().copied())
            .filter(|&m| self.has(m))
            .collect()
    }
}

/// How a search proposes: with the space and the measurements told so far, these settings
/// determine every proposal.
#[derive(Debug, Clone)]
pub struct Settings {
    pub learner: Learner,
    pub seed: u64,
    pub initial: usize,
    pub design: Design,
    pub acquisition: Acquisition,
    pub kappa: f64,
    /// Exploration margin of EI/PI, in transformed (log) units.
    pub xi: f64,
    /// Candidate pool size per model step.
    pub pool: usize,
    pub goal: Goal,
    /// The failure policy's mechanisms left out (see the module documentation): the
    /// classifier with `--no-feasibility`, any of them in the replay's counterfactuals.
    pub without: Without,
    /// What a run timeout says about the objective.
    pub timeouts: Timeouts,
    /// A pruned run's last progress value (`progress:`) is on the objective's scale (its
    /// goal is the metric's): the search takes it as a bound on the objective.
    pub progress_is_objective: bool,
    /// Every `interleave`-th proposal after the initial design is random (0: never), as SMAC
    /// interleaves random configurations (Hutter et al. 2011): tree ensembles extrapolate
    /// flat and under-estimate their uncertainty in unexplored corners, so without this they
    /// can settle on a local plateau (measured on the recorded gemm table: results/search/).
    pub interleave: usize,
}

/// What a run cut by its timeout says about its objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeouts {
    /// At least this slow: the metric is a time (or count) being minimised, and the run's
    /// wall time bounds its objective from below (a censored observation).
    Censored,
    /// As bad as the worst success (the failure policy of every other failure).
    Worst,
    /// Nothing: a score (an accuracy may be best exactly where runs are long). The
    /// regression leaves it out; the feasibility model learns that it did not finish.
    Unscored,
}

impl Settings {
    /// Random interleaving for the tree learners; the GP's uncertainty does not need it, and
    /// `auto` explores through its random arm.
    pub fn default_interleave(learner: Learner) -> usize {
        match learner {
            Learner::Rf | Learner::Et | Learner::Gbrt => 3,
            Learner::Gp | Learner::Random | Learner::Auto => 0,
        }
    }

    /// Defaults for everything but the learner, seed and goal.
    pub fn new(learner: Learner, seed: u64, goal: Goal) -> Settings {
        Settings {
            learner,
            seed,
            initial: 10,
            design: Design::Random,
            acquisition: Acquisition::Lcb,
            kappa: 1.96,
            xi: 0.01,
            pool: 10_000,
            goal,
            without: Without::default(),
            timeouts: match goal {
                Goal::Minimize => Timeouts::Censored,
                Goal::Maximize => Timeouts::Worst,
            },
            interleave: Settings::default_interleave(learner),
            progress_is_objective: false,
        }
    }
}
