//! Surrogate models that predict a configuration's (transformed) objective with an
//! uncertainty, for the acquisition function: random forest and extra trees ([`Forest`]),
//! quantile gradient boosting ([`Gbrt`]) and a Gaussian process for mixed inputs ([`Gp`]).

mod forest;
mod gbrt;
mod gp;
mod tree;

pub use forest::diagnostics::Diagnostics;
pub use forest::Forest;
pub use gbrt::Gbrt;
pub use gp::Gp;
pub use tree::{ForestParams, NodeSplit};
