//! Stage 2, evaluation: one configuration in, one [`outcome::Measurement`] out — children run
//! under timeouts ([`child`]), the variant built, its output [checked](check) and timed
//! ([`evaluator`]).

pub mod check;
pub mod child;
pub mod evaluator;
pub mod outcome;

pub use evaluator::{Evaluated, Evaluator, MockEvaluator, RealEvaluator};
