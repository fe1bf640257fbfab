//! Stage 5, reports over run directories: the [`best`] configuration, parameter
//! [`importance`], re-[`measure`]ment of one configuration, one variant's source and
//! commands ([`show`], nothing run), and the search-quality [`replay`]; [`pick`] chooses
//! the configuration `measure` and `show` are about.

pub mod best;
pub mod importance;
pub mod measure;
pub mod pick;
pub mod replay;
pub mod show;

pub use best::{best, Best};
pub use importance::{importance, Importance};
pub use measure::{measure, Measured};
pub use replay::table_of;
pub use show::{show, Shown};
