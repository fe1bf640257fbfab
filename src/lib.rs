//! moldtune: an autotuner for compiled code.
//!
//! The folders follow the data's path, one stage each; a stage imports only from earlier
//! stages, from the process layer ([`process`]: every child moldtune starts) and from the
//! leaves at the top ([`error`], [`rng`], [`stats`], [`scratch`]):
//!
//! 1. [`problem`] — the problem file, its parameter space and constraints, the mold, templates;
//! 2. [`evaluate`] — one configuration rendered, compiled, checked and timed in child
//!    processes under timeouts, giving an [`evaluate::outcome::Measurement`];
//! 3. [`search`] — the strategy that chooses the next configuration (ask/tell) and the
//!    surrogate models it fits;
//! 4. [`run`] — the driver loop, the results log (the checkpoint resume replays) and progress;
//! 5. [`report`] — best, importance, re-measurement and replay over run directories.
//!
//! [`mctree`] is a second front end onto stages 2–4: it makes the problem (the kernel's
//! loops and the tree of transformations) from a plain C file and hands a tree search to
//! the run's driver; reports read its run directories like any other.
//!
//! [`check`] is a third front end, onto stage 2: the regression gate over recorded baselines.
//!
//! [`cli`] is the front door that parses the command line and calls into the stages.

pub mod check;
pub mod cli;
pub mod error;
pub mod evaluate;
pub mod host;
pub mod mctree;
pub mod number;
pub mod problem;
pub mod process;
pub mod report;
pub mod rng;
pub mod run;
pub mod scratch;
pub mod search;
pub mod stats;

pub use cli::run;
pub use error::{exit, Error};
