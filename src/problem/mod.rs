//! Stage 1, the problem: the problem file (YAML) validated into a [`Problem`], its parameter
//! [`space`](space) with conditions and [constraint expressions](expr), the code [`mold`](mold)
//! and the command [`template`](template)s.

pub mod expr;
pub mod file;
pub mod limits;
pub mod mold;
mod raw;
pub mod space;
pub mod template;

pub use file::{
    Check, CheckMode, Goal, Metric, MetricKind, Problem, Reduce, SearchDefaults, Stream,
};
