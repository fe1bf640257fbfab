//! Stage 3, search: which configuration to evaluate next. The ask/tell [`searcher`] with its
//! [`settings`], what is left to propose and how it is drawn ([`unseen`]), the acquisition
//! functions that rank candidates (`acquisition`) and the [`surrogate`] models it fits.

mod acquisition;
pub mod searcher;
pub mod settings;
pub mod surrogate;
pub mod unseen;

pub use searcher::Searcher;
pub use settings::{Acquisition, Design, Learner, Settings};
