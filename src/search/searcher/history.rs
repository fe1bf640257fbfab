//! What the search has seen: one observation per evaluated (or pending) configuration.

use crate::evaluate::outcome::{Source, Status};

#[derive(Debug, Clone)]
pub(super) struct Observation {
    /// Features for the GP (one column per parameter) and for the tree models (one-hot
    /// categories).
    pub(super) encoded: Vec<f64>,
    pub(super) tree: Vec<f64>,
    pub(super) status: Status,
    pub(super) objective: Option<f64>,
    /// Wall seconds of the timed runs and their number (for censoring timeouts).
    pub(super) run_s: f64,
    pub(super) repeats: u32,
    pub(super) source: Source,
    /// Proposed and not yet evaluated: its objective is a lie (the best so far, a constant
    /// liar) until [`Searcher::tell`] replaces it, so that proposals made ahead differ.
    pub(super) pending: bool,
}
