//! Stage 4, the run: the [`driver`] loop that asks the search, evaluates and records; the
//! results [`log`] (the checkpoint resume replays), [`progress`], and the end-of-run
//! [`verify`]cation of the claimed best; with `--executor slurm`, evaluations as jobs on a
//! cluster ([`slurm`]); with `--warm-start`, an earlier run as the search's prior ([`warm`]).

pub mod causes;
pub mod dir;
pub mod driver;
pub mod executor;
pub mod executor_kind;
pub mod front_ends;
pub mod limits;
pub mod lock;
pub mod log;
pub mod machine;
pub mod meta;
pub mod observe;
pub mod parallel;
pub mod prefer;
pub mod progress;
pub mod results_json;
pub mod settings;
pub mod slurm;
pub mod verification;
pub mod verify;
pub mod warm;
