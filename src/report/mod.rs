//! Stage 5, reports over run directories: the [`best`] configuration, parameter
//! [`importance`], re-[`measure`]ment of one configuration, and the search-quality
//! [`replay`].

pub mod best;
pub mod importance;
pub mod measure;
pub mod replay;

pub use best::{best, Best};
pub use importance::{importance, Importance};
pub use measure::{measure, Measured};
pub use replay::table_of;
