//! The command line: parses the arguments and calls into the stages, one function per
//! subcommand; prints human or JSON output and returns the exit code.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::error::{exit, Error};
use crate::mctree::MctreeOptions;
use crate::run::front_ends::FrontEnds;
use crate::run::settings::RunOptions;

mod check;
mod print;
mod reports;
mod tune;
pub use check::CheckArgs;
use check::{baseline_command, check_command, check_options, threshold};
use reports::{
    best_command, importance_command, measure_command, replay_command, show_command, ReplayArgs,
};
use tune::{leave_curve, mctree_command, report_command, run_command};

#[derive(Debug, Parser)]
#[command(
    name = "moldtune",
    version,
    about = "Autotune compiled code: code molds + YAML spaces, checked and timed variants, surrogate-model search"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Tune a problem: render, compile, check and time variants chosen by the search.
    Run(RunOptions),
    /// Tune a C kernel without a mold: find its loop nests (clang-22's AST) and search the
    /// tree of OpenMP loop transformations and Polly settings, each node built, checked
    /// against the untransformed program and timed.
    Mctree(MctreeOptions),
    /// Which parameters matter: mean decrease in impurity of a random forest fitted to a run,
    /// with the evaluations used and the forest's out-of-bag R² (no ranking when too low).
    Importance {
        /// The run directory.
        dir: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Search-quality benchmark: replay a recorded run directory (ideally exhaustive) and/or
    /// synthetic functions for each learner over many seeds; no compiler needed.
    Replay(ReplayArgs),
    /// Build, check and time one configuration (the default, or the best / a given evaluation
    /// of a run directory), e.g. to re-measure a tuned result with more repeats.
    Measure {
        /// The problem file.
        problem: PathBuf,
        #[command(flatten)]
        which: crate::report::pick::Which,
        /// Timed runs.
        #[arg(long, default_value_t = 5)]
        repeats: u32,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Print one variant's source and the exact compile, check and run commands, without
    /// building or running anything.
    Show {
        /// The problem file.
        problem: PathBuf,
        #[command(flatten)]
        which: crate::report::pick::Which,
        /// Write the variant's source to this file instead of printing it.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// The CI regression gate: rebuild each baseline's guarded configurations and their
    /// reference, check their output, time them interleaved and decide whether the
    /// recorded speed-ups still hold. Exit 0 ok, 4 regression, 6 broken (wrong output,
    /// build or run failure), 7 undecided.
    Check(CheckArgs),
    /// Write baselines for `moldtune check` from run directories: the problem's default as
    /// the reference, the run's (verified) best as the guarded configuration, both measured
    /// interleaved.
    Baseline {
        /// Run directories of `moldtune run`.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Folder of the baseline files (one `<problem name>.json` per run).
        #[arg(long, default_value = crate::check::DEFAULT_BASELINES)]
        out: PathBuf,
        /// Interleaved rounds to record; more (up to 4×) while the guards' speed-ups are
        /// not known finely enough for `--threshold`.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(5..))]
        rounds: u16,
        /// The regression threshold the baseline is meant for (`10%` or `0.1`).
        #[arg(long, default_value = "10%", value_parser = threshold)]
        threshold: f64,
        /// Refuse (exit 7, nothing written) a baseline too noisy for `--threshold`,
        /// instead of writing it with a warning.
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        jobs: crate::run::settings::Jobs,
        /// Testing: replace compile+run by a deterministic synthetic objective.
        #[arg(long, hide = true)]
        mock: bool,
    },
    /// Print the best configuration of a run directory and where its source is.
    Best {
        /// The run directory (holds results.csv and run.json).
        dir: PathBuf,
        /// Re-measure the default and the best few interleaved first, decide the winner
        /// and its speed-up on those numbers, and record them in the run directory.
        #[arg(long)]
        verify: bool,
        /// With `--verify`: how many of the best besides the default.
        #[arg(long, default_value_t = 3, requires = "verify")]
        top: usize,
        /// With `--verify`: interleaved rounds.
        #[arg(long, default_value_t = 10, requires = "verify", value_parser = clap::value_parser!(u16).range(2..))]
        rounds: u16,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// A Slurm job of `moldtune run` or `mctree --executor slurm`: does the task the run wrote in
    /// DIR/jobs/KEY (started by Slurm, not by hand).
    #[command(hide = true)]
    Worker {
        /// The run directory.
        dir: PathBuf,
        /// The job: `reference`, `eval-N` or `verify`.
        key: String,
    },
    /// One self-contained HTML page and a Markdown summary over run directories: a
    /// comparison table, convergence plots, outcome counts, parameter importance and the
    /// diff of each best variant against the default.
    Report {
        /// Run directories of `moldtune run` or `moldtune mctree`.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output directory [default: DIR/report for one run directory, else ./moldtune-report].
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// What the front ends tell the run layer: mctree's runs rebuild their problem from the C
/// file's loops, which only mctree reads; a Slurm job of `check --update --executor slurm`
/// records a baseline with check's code.
pub const FRONT_ENDS: FrontEnds = FrontEnds {
    rebuild: Some(crate::mctree::problem_of_run),
    task: Some(crate::check::cluster::on_node),
};

/// Runs the command line; returns the process exit code.
pub fn run(args: Vec<String>) -> u8 {
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
        }
    };
    match dispatch(cli, args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.code()
        }
    }
}

fn dispatch(cli: Cli, args: Vec<String>) -> Result<u8, Error> {
    match cli.command {
        Command::Run(a) => run_command(a, args, &FRONT_ENDS),
        Command::Mctree(a) => mctree_command(a, args, &FRONT_ENDS),
        Command::Importance { dir, json } => importance_command(&dir, json, &FRONT_ENDS),
        Command::Replay(a) => replay_command(a, &FRONT_ENDS),
        Command::Measure {
            problem,
            which,
            repeats,
            json,
        } => measure_command(&problem, &which, repeats, json),
        Command::Show {
            problem,
            which,
            out,
            json,
        } => show_command(&problem, &which, out.as_deref(), json),
        Command::Check(a) => check_command(a),
        Command::Worker { dir, key } => crate::run::slurm::worker::work(&dir, &key, &FRONT_ENDS),
        Command::Baseline {
            dirs,
            out,
            rounds,
            threshold,
            strict,
            jobs,
            mock,
        } => {
            let mut opts = check_options(rounds.into(), mock, false);
            (opts.rule.threshold, opts.strict) = (threshold, strict);
            opts.jobs = jobs.or(None);
            baseline_command(&dirs, &out, &opts)
        }
        Command::Best {
            dir,
            verify,
            top,
            rounds,
            json,
        } => {
            if verify {
                let plan = crate::run::verification::Plan {
                    top,
                    rounds: rounds.into(),
                };
                let verified = crate::run::verify::verify_again(&dir, plan, &FRONT_ENDS);
                // The curve rings the verified best: draw it again.
                leave_curve(&verified, |_| dir.clone(), Some(&dir), &FRONT_ENDS);
                verified?;
            }
            best_command(&dir, json)
        }
        Command::Report { dirs, out } => report_command(&dirs, out, &FRONT_ENDS),
    }
}
