//! moldtune: an autotuner for compiled code.
//!
//! The data's path: problem file → [`space`] → search strategy asks for a configuration →
//! [`mold`] renders the variant → [`evaluate`] compiles, checks and times it (through
//! [`measure`]) → an [`outcome::Evaluation`] → [`db`] appends it to the results log → the
//! strategy is told → … → [`report`].

pub mod check;
pub mod cli;
pub mod db;
pub mod driver;
pub mod error;
pub mod evaluate;
pub mod expr;
pub mod measure;
pub mod mold;
pub mod outcome;
pub mod problem;
pub mod progress;
pub mod replay;
pub mod report;
pub mod rng;
pub mod search;
pub mod space;
pub mod surrogate;
pub mod template;

pub use cli::run;
pub use error::{exit, Error};
