//! The command line: parses the arguments and calls into the stages, one function per
//! subcommand; prints human or JSON output and returns the exit code.

use clap::{Parser, Subcommand};

use crate::error::{exit, Error};
use crate::mctree::MctreeOptions;
use crate::run::front_ends::FrontEnds;
use crate::run::settings::RunOptions;

mod check;
mod machine;
mod print;
mod reports;
mod study;
mod tune;
pub use check::CheckArgs;
use check::{baseline_command, check_command, BaselineArgs};
use machine::{machine_command, MachineArgs};
use reports::{
    best_command, importance_command, measure_command, replay_command, show_command, BestArgs,
    ImportanceArgs, MeasureArgs, ReplayArgs, ShowArgs,
};
use study::{ask_command, serve_command, tell_command, AskArgs, ServeArgs, TellArgs};
use tune::{mctree_command, report_command, run_command, worker_command, ReportArgs, WorkerArgs};

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
    Importance(ImportanceArgs),
    /// Search-quality benchmark: replay a recorded run directory (ideally exhaustive) and/or
    /// synthetic functions for each learner over many seeds; no compiler needed.
    Replay(ReplayArgs),
    /// Build, check and time one configuration (the default, or the best / a given evaluation
    /// of a run directory), e.g. to re-measure a tuned result with more repeats.
    Measure(MeasureArgs),
    /// Print one variant's source and the exact compile, check and run commands, without
    /// building or running anything.
    Show(ShowArgs),
    /// The CI regression gate: rebuild each baseline's guarded configurations and their
    /// reference, check their output, time them interleaved and decide whether the
    /// recorded speed-ups still hold. Exit 0 ok, 4 regression, 6 broken (wrong output,
    /// build or run failure), 7 undecided.
    Check(CheckArgs),
    /// Write baselines for `moldtune check` from run directories: the problem's default as
    /// the reference, the run's (verified) best as the guarded configuration, both measured
    /// interleaved.
    Baseline(BaselineArgs),
    /// Print the best configuration of a run directory and where its source is.
    Best(BestArgs),
    /// Let a program drive the search in its own process: JSON requests on stdin, one a
    /// line (`{"op":"ask"}`, `{"op":"report",…}`, `{"op":"tell",…}`, `{"op":"best"}`), one
    /// reply a line on stdout, on a run directory like `run`'s (the Python module's transport).
    Serve(ServeArgs),
    /// Print the next configuration to evaluate (JSON with its `eval` id) of a study, started
    /// by the first ask with `--problem SPACE.yaml`.
    Ask(AskArgs),
    /// Record an evaluation's outcome in a study (`--eval N --value V`), or report a value
    /// reached on the way (`--step S --value V`: prints whether to stop it).
    Tell(TellArgs),
    /// A Slurm job of `moldtune run` or `mctree --executor slurm`: does the task the run wrote in
    /// DIR/jobs/KEY (started by Slurm, not by hand).
    #[command(hide = true)]
    Worker(WorkerArgs),
    /// One self-contained HTML page and a Markdown summary over run directories: a
    /// comparison table, convergence plots, outcome counts, parameter importance and the
    /// diff of each best variant against the default.
    Report(ReportArgs),
    /// The machine's limits for the roofline figures of problems that declare their `work:`:
    /// peak GFLOP/s (FMA chains at the widest vector width) and triad bandwidth per thread
    /// count, measured once per CPU and compiler and kept in the user's cache.
    Machine(MachineArgs),
}

/// What the front ends tell the run layer: mctree's runs rebuild their problem from the C
/// file's loops, which only mctree reads; a Slurm job of `check --update --executor slurm`
/// records a baseline with check's code.
const FRONT_ENDS: FrontEnds = FrontEnds {
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
        Command::Importance(a) => importance_command(a, &FRONT_ENDS),
        Command::Replay(a) => replay_command(a, &FRONT_ENDS),
        Command::Measure(a) => measure_command(a),
        Command::Show(a) => show_command(a),
        Command::Check(a) => check_command(a),
        Command::Worker(a) => worker_command(a, &FRONT_ENDS),
        Command::Baseline(a) => baseline_command(a),
        Command::Best(a) => best_command(a, &FRONT_ENDS),
        Command::Serve(a) => serve_command(a, args),
        Command::Ask(a) => ask_command(a, args),
        Command::Tell(a) => tell_command(a, args),
        Command::Report(a) => report_command(a, &FRONT_ENDS),
        Command::Machine(a) => machine_command(a),
    }
}
