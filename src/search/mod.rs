//! Stage 3, search: which configuration to evaluate next. The ask/tell [`searcher`] and the
//! [`surrogate`] models it fits.

pub mod searcher;
pub mod surrogate;

pub use searcher::{Acquisition, Design, Learner, Searcher, Settings};
