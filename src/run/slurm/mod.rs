//! Evaluations on a Slurm cluster (`--executor slurm`). Each evaluation — build, check
//! build, check run, timed runs — is one Slurm job that runs `moldtune worker` on a compute
//! node: the same evaluator as a local run, handed its [`job`] through the run directory on
//! the shared file system ([`worker`]). The driver keeps `--workers` jobs in flight and
//! collects them as they end ([`farm`], [`watch`]), talking to Slurm only through its
//! commands ([`queue`]: sbatch, srun, squeue, scontrol, scancel).

pub mod farm;
pub mod job;
pub mod queue;
pub mod watch;
pub mod worker;

use serde::{Deserialize, Serialize};

/// Where evaluations run, as `--executor` and `search.executor` name it (resolved with the
/// other flags into a [`crate::run::executor_kind::ExecutorKind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutorFlag {
    /// On this machine, timed runs one at a time (builds ahead with `--jobs`).
    #[default]
    Local,
    /// One Slurm job per evaluation, `--workers` of them at once.
    Slurm,
}

/// How the Slurm jobs are submitted (run.json's `slurm`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Evaluations in flight at once.
    pub workers: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Each job's time limit, in Slurm's syntax (`10:00`, `1-00:00:00`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The allocation moldtune ran in (`salloc`, a batch script): its evaluations were steps
    /// of it (`srun`), not jobs of their own; `partition` and `account` are the allocation's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation: Option<String>,
}

/// Evaluations in flight unless told (`--workers`).
pub const DEFAULT_WORKERS: usize = 2;
