//! Stage 3, search: which configuration to evaluate next. The ask/tell [`searcher`] with its
//! [`settings`], what is left to propose and how it is drawn ([`unseen`]), the acquisition
//! functions that rank candidates ([`acquisition`], mctree's rf too), the [`surrogate`] models it fits and the
//! [`bandit`] that picks one of them for `--learner auto`.

pub(crate) mod acquisition;
pub mod bandit;
pub mod condemned;
pub mod prior;
pub mod searcher;
pub mod settings;
pub mod surrogate;
pub mod unseen;

pub use searcher::{Searcher, GP_ROWS};
pub use settings::{Acquisition, Design, Learner, Settings, Timeouts};

use crate::evaluate::outcome::{Measurement, Source};
use crate::problem::space::Config;
use unseen::NoProposal;

/// What the run's driver asks for the next configuration and tells every outcome: the
/// [`Searcher`] over a flat space, and mctree's tree search.
pub trait Strategy {
    /// The configuration to evaluate at `step` (0-based) and why it was chosen.
    fn ask(&mut self, step: usize) -> Result<(Config, Source), NoProposal>;
    /// The outcome of an evaluation (also every logged one when a run resumes).
    fn tell(&mut self, config: &Config, m: &Measurement, source: Source);
    /// A proposal that will be evaluated later (builds run ahead): the next proposals must
    /// differ from it. [`Strategy::tell`] follows with its outcome.
    fn pending(&mut self, _config: &Config, _source: Source) {}
    /// Evaluations (eval ids) the final verification re-measures whatever the search
    /// measured for them: the search's starting points, which it must not end below.
    fn anchors(&self) -> Vec<usize> {
        Vec::new()
    }
    /// The learner whose model (or random arm) proposed `config`, for the log's `learner`
    /// column.
    fn proposer(&self, _config: &Config) -> Option<Learner> {
        None
    }
    /// What the log says proposed `config` (a resumed run), told before its outcome so that
    /// `--learner auto` credits the same learners as the uninterrupted run did.
    fn recall(&mut self, _config: &Config, _learner: Learner) {}
}

impl Strategy for Searcher<'_> {
    fn ask(&mut self, step: usize) -> Result<(Config, Source), NoProposal> {
        Searcher::ask(self, step)
    }
    fn tell(&mut self, config: &Config, m: &Measurement, source: Source) {
        Searcher::tell(self, config, m, source)
    }
    fn pending(&mut self, config: &Config, source: Source) {
        Searcher::pending(self, config, source)
    }
    fn proposer(&self, config: &Config) -> Option<Learner> {
        Searcher::proposer(self, config)
    }
    fn recall(&mut self, config: &Config, learner: Learner) {
        Searcher::recall(self, config, learner)
    }
}
