//! Stage 1, the problem: the problem file (YAML) validated into a [`Problem`], its parameter
//! [`space`](space) with conditions and [constraint expressions](expr), how random
//! configurations are [drawn](sample) from it (with [`bounds`] on constraints), the code
//! [`mold`](mold), the command [`template`](template)s, and configurations written as
//! `--set P=V` [`overrides`](overrides); what a run [`record`]s beside the objective and its
//! tie rule.

pub mod bounds;
mod commands;
mod constraints;
mod defaults;
pub mod expr;
pub mod file;
pub mod limits;
mod locate;
pub mod metric;
pub mod mold;
pub mod objective;
pub mod overrides;
pub mod param;
mod params;
pub mod permutation;
pub mod progress;
mod raw;
pub mod record;
pub mod sample;
pub mod space;
pub mod template;
mod told;
pub mod vocabulary;
pub mod work;

pub use defaults::SearchDefaults;
pub use file::{CodeIdentity, OutputCheck, Problem};
pub use metric::Metric;
pub use raw::from_yaml;
pub use vocabulary::{CheckMode, Goal, MetricKind, Reduce, Stream};
