//! Stage 5, reports over run directories: [`best`], importance, re-measurement and the
//! search-quality [`replay`].

pub mod best;
pub mod replay;

pub use best::{best, importance, measure, table_of, Best, Measured};
