//! Stage 4, the run: the [`driver`] loop that asks the search, evaluates and records; the
//! results [`log`] (the checkpoint resume replays) and [`progress`].

pub mod driver;
pub mod log;
pub mod progress;
pub mod settings;
