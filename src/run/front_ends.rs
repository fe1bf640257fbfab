//! What the front ends tell the run layer, which knows none of them: how one's run
//! directories rebuild their problem (mctree's is the C file's loops, kept in `mctree.json`),
//! and how a Slurm job does one's task outside a run (`check --update`'s recording). Made
//! once by the command line and handed down as a value to whatever reads run directories or
//! serves jobs; nothing is registered process-wide.

use std::path::Path;

use crate::error::Error;
use crate::problem::Problem;
use crate::run::meta::RunMeta;

/// A front end's rebuilding of the problem of a run directory it wrote (`None`: not one of
/// its runs).
pub type Rebuild = fn(&Path, &RunMeta) -> Option<Result<Problem, Error>>;

/// A front end's task handler for a Slurm job: its input in, its output (or why not) out.
pub type Handler = fn(&serde_json::Value) -> Result<serde_json::Value, Error>;

/// The front ends' hooks; the default knows none (a run directory of a problem file, and no
/// front end's task, is all it can serve).
#[derive(Debug, Clone, Copy, Default)]
pub struct FrontEnds {
    pub rebuild: Option<Rebuild>,
    pub task: Option<Handler>,
}
