//! Surrogate models that predict a configuration's (transformed) objective with an
//! uncertainty, for the acquisition function.

mod forest;

pub use forest::{Forest, ForestParams};
