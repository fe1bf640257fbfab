//! Stage 5, reports over run directories: the [`best`] configuration, parameter
//! [`importance`], re-[`measure`]ment of one configuration, one variant's source and
//! commands ([`show`], nothing run), and the search-quality [`replay`]; [`pick`] chooses
//! the configuration `measure` and `show` are about.
//!
//! `moldtune report` ([`page`]) reads runs ([`run_dir`]) into one HTML page and a Markdown
//! summary rendered from the embedded [`templates`]: the comparison [`table`], the
//! convergence [`curve`] (also left in each run directory), importance [`bars`] and the
//! [`diff`] of the best variant; [`plot`] and [`format`] are what the figures and tables share.

pub mod bars;
pub mod best;
pub mod curve;
pub mod diff;
pub mod format;
pub mod front;
pub mod importance;
pub mod measure;
pub mod page;
pub mod pick;
pub mod plot;
pub mod replay;
pub mod replay_md;
pub mod replay_plot;
pub mod roofline;
pub mod run_dir;
pub mod show;
pub mod synthetic;
pub mod table;
pub mod templates;

pub use best::{best, Best};

pub use importance::{importance, Importance};
pub use measure::{measure, Measured};
pub use replay::table_of;
pub use show::{show, Shown};
