//! Stage 1, the problem: the problem file (YAML) validated into a [`Problem`], its parameter
//! [`space`](space) with conditions and [constraint expressions](expr), how random
//! configurations are [drawn](sample) from it (with [`bounds`] on constraints), the code
//! [`mold`](mold) and the command [`template`](template)s.

pub mod bounds;
pub mod expr;
pub mod file;
pub mod mold;
mod raw;
pub mod sample;
pub mod space;
pub mod template;

pub use file::{
    Check, CheckMode, Goal, Metric, MetricKind, Problem, Reduce, SearchDefaults, Stream,
};
