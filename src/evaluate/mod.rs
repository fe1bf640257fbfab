//! Stage 2, evaluation: one configuration in, one [`outcome::Measurement`] out. A
//! [`variant`] is rendered and [built](build) (the compile), its output [checked](output_check)
//! against the reference and [timed](time), every child run under a timeout in its own
//! process group ([`crate::process`]); identical builds and programs are [reused](reuse); a failure
//! the machine caused stops the run instead of being blamed on the variant ([`environment`]);
//! a simulated metric runs the program under [`cachegrind`]. The [`evaluator`] strings
//! these together; the [`mock`] stands in for it in tests.

pub mod ahead;
pub mod build;
pub mod cachegrind;
pub mod environment;
pub mod evaluator;
pub mod interleave;
pub mod mock;
pub mod outcome;
pub mod output_check;
pub mod prune;
pub mod reuse;
pub mod roofline;
pub mod time;
pub mod variant;

pub use evaluator::{Evaluator, RealEvaluator};
pub use mock::MockEvaluator;
pub use outcome::Evaluated;

/// The one place an evaluator is made (`run`, `mctree`, `check`, `baseline`, `best --verify`,
/// `measure`, a Slurm worker): the mock, or the real one — keeping its builds or not,
/// building `jobs` at once when it re-measures — with the process layer ready for the
/// children it starts (the interrupt handlers, moldtune their subreaper).
pub fn make_evaluator(mock: bool, keep_builds: bool, jobs: usize) -> Box<dyn Evaluator + Send> {
    crate::process::take_charge();
    if mock {
        return Box::new(MockEvaluator::new());
    }
    let mut e = RealEvaluator::new();
    e.keep_builds = keep_builds;
    e.jobs = jobs;
    Box::new(e)
}
