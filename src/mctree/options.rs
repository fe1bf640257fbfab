//! Everything `moldtune mctree` can be told on its command line.

use std::path::PathBuf;

use crate::run::settings::Shared;

/// Everything `moldtune mctree` can be told.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MctreeOptions {
    /// The C file holding the kernel. Optional with `--resume DIR`.
    pub file: Option<PathBuf>,
    /// The kernel function [default: the one `kernel_*` function, or the one holding
    /// `#pragma scop`].
    #[arg(long)]
    pub kernel: Option<String>,
    /// Tree search [default: rf, the best of the three in results/mctree].
    #[arg(long, value_parser = ["greedy", "mcts", "rf"])]
    pub strategy: Option<String>,
    /// At most this many transformations per node [default: 4].
    #[arg(long)]
    pub depth: Option<usize>,
    /// Tile sizes to try [default: 4,8,16,20,32,50,64,80,96,100,128,256,2048, each tile's
    /// working set bounded by this machine's L2 cache where some tile of the loops fits it;
    /// sizes given here (or in `--config`) are all tried].
    #[arg(long, value_delimiter = ',')]
    pub tile_sizes: Option<Vec<u32>>,
    /// Print the kernel's loop tree and stop.
    #[arg(long)]
    pub list: bool,
    /// After tuning, write the best node as a mold and problem file into DIR for `moldtune run`.
    #[arg(long, value_name = "DIR")]
    pub emit_mold: Option<PathBuf>,
    /// With `--emit-mold`: overwrite files there that moldtune did not write, or that were
    /// edited since.
    #[arg(long, requires = "emit_mold")]
    pub force: bool,
    /// A YAML file with the same settings (and the compiler, flags, check and environment).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Also propose transformations the dependence analysis does not prove legal; the
    /// output check is then their only guard (recorded as `legality: output-checked`).
    #[arg(long)]
    pub trust_output_check: bool,
    /// One more input the output check runs each candidate on, as environment variables
    /// (`KEY=VALUE`, several joined by `,`) on top of the check's own; repeat it for more
    /// inputs [default: `PB_SEED=2` and `PB_SEED=3`, PolyBench's random input with other
    /// seeds; an input on which the untransformed program prints the same is dropped].
    #[arg(long, value_name = "KEY=VALUE[,...]")]
    pub check_env: Vec<String>,
    #[command(flatten)]
    pub shared: Shared,
    #[command(flatten)]
    pub executor: crate::run::settings::ExecutorFlags,
    /// Compiler and link arguments and extra sources (e.g. `-- -Iutilities utilities/polybench.c`).
    #[arg(last = true)]
    pub args: Vec<String>,
}
