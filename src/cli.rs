//! The command line: parses the arguments and calls into the stages, one function per
//! subcommand; prints human or JSON output and returns the exit code.

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use crate::error::{exit, Error};
use crate::mctree::MctreeOptions;
use crate::report;
use crate::run::driver;
use crate::run::settings::RunOptions;
use crate::search::{Acquisition, Learner};

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
        /// Take the configuration from this run directory (its best unless `--eval`).
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// The evaluation of `--from` to measure.
        #[arg(long, requires = "from")]
        eval: Option<usize>,
        /// Set a parameter, e.g. `--set P0=32 --set P2='#pragma omp interchange'` (on top
        /// of the default or the `--from` configuration).
        #[arg(long = "set", value_name = "P=V")]
        set: Vec<String>,
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
        /// Set a parameter, e.g. `--set P0=32 --set P2='#pragma omp interchange'` (on top
        /// of the default or the `--from` configuration).
        #[arg(long = "set", value_name = "P=V")]
        set: Vec<String>,
        /// Take the configuration from this run directory (its best unless `--eval`).
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// The evaluation of `--from` to show.
        #[arg(long, requires = "from")]
        eval: Option<usize>,
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
        /// Builds (and output checks) run at once before the timed rounds, which stay
        /// alone [default: the number of cores, at most 4].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        jobs: Option<u16>,
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
    /// A Slurm job of `moldtune run --executor slurm`: does the task the run wrote in
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

/// `moldtune replay`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// Run directories whose results are the tables to replay.
    dirs: Vec<PathBuf>,
    /// Also replay the synthetic functions (branin, a tile space with 25% build failures).
    #[arg(long)]
    synthetic: bool,
    /// Seeds per learner.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..))]
    seeds: u16,
    /// Evaluations per simulated search.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    budget: u32,
    /// Learners to compare, separated by commas (`rf,gp`).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = Learner::ALL)]
    learners: Vec<Learner>,
    /// Initial random configurations of each simulated search.
    #[arg(long, default_value_t = 10)]
    initial: usize,
    /// Acquisition function.
    #[arg(long = "acq", value_enum, default_value_t = Acquisition::Lcb)]
    acquisition: Acquisition,
    /// LCB exploration weight.
    #[arg(long, default_value_t = 1.96)]
    kappa: f64,
    /// Write the report (Markdown) here as well as to stdout.
    #[arg(long)]
    report: Option<PathBuf>,
    /// A run of the same space as each table (given in the same order as the tables):
    /// rf and auto are also replayed warm-started from it (`run --warm-start`).
    #[arg(long = "warm-start", value_name = "DIR")]
    warm_start: Vec<PathBuf>,
    /// Also draw each table's best-so-far curves (median and quartiles over seeds) as
    /// SVG files in this directory.
    #[arg(long, value_name = "DIR")]
    figures: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Baseline files, or folders of them [default: results/baselines].
    pub baselines: Vec<PathBuf>,
    /// A slowdown of a guarded speed-up beyond this is a regression (`10%` or `0.1`).
    #[arg(long, default_value = "10%", value_parser = threshold)]
    pub threshold: f64,
    /// Interleaved rounds before the first decision.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(5..))]
    pub min_rounds: u16,
    /// At most this many rounds per baseline while undecided.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u16).range(5..))]
    pub max_rounds: u16,
    /// Write a Markdown summary here.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML page here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Record the baselines' samples again (keeping their configurations) instead of checking.
    #[arg(long)]
    pub update: bool,
    /// With `--update`: interleaved rounds to record; more (up to 4×) while the guards'
    /// speed-ups are not known finely enough for `--threshold`.
    #[arg(long, default_value_t = 100, requires = "update", value_parser = clap::value_parser!(u16).range(5..))]
    pub rounds: u16,
    /// With `--update`: refuse (exit 7, the file unchanged) a recording too noisy for
    /// `--threshold`, instead of writing it with a warning.
    #[arg(long, requires = "update")]
    pub strict: bool,
    /// Builds (and output checks) run at once before the timed rounds, which stay alone
    /// [default: the number of cores, at most 4].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// What a check that ends undecided exits with: `fail` (7) or `pass` (0).
    #[arg(long, value_enum, default_value_t = crate::check::Undecided::Fail)]
    pub undecided: crate::check::Undecided,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Testing: replace compile+run by a deterministic synthetic objective.
    #[arg(long, hide = true)]
    pub mock: bool,
}

/// `10%`, `0.1`: a fraction in (0, 1).
fn threshold(s: &str) -> Result<f64, String> {
    let (num, scale) = match s.trim().strip_suffix('%') {
        Some(p) => (p, 100.0),
        None => (s.trim(), 1.0),
    };
    let x = num
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("`{s}` is not a number; write e.g. `10%`"))?
        / scale;
    match x > 0.0 && x < 1.0 {
        true => Ok(x),
        false => Err(format!(
            "`{s}` is not between 0% and 100%; write e.g. `10%` or `0.1`"
        )),
    }
}

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
        Command::Run(a) => run_command(a, args),
        Command::Mctree(a) => mctree_command(a, args),
        Command::Importance { dir, json } => importance_command(&dir, json),
        Command::Replay(a) => replay_command(a),
        Command::Measure {
            problem,
            from,
            eval,
            set,
            repeats,
            json,
        } => measure_command(&problem, from.as_deref(), eval, &set, repeats, json),
        Command::Show {
            problem,
            set,
            from,
            eval,
            out,
            json,
        } => show_command(&problem, from.as_deref(), eval, &set, out.as_deref(), json),
        Command::Check(a) => check_command(a),
        Command::Worker { dir, key } => crate::run::slurm::worker::work(&dir, &key),
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
            opts.jobs = jobs.map_or(opts.jobs, usize::from);
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
                let plan = crate::run::verdict::Plan {
                    top,
                    rounds: rounds.into(),
                };
                let verified = report::best::verify_again(&dir, plan);
                // The curve rings the verified best: draw it again.
                leave_curve(&verified, |_| dir.clone(), Some(&dir));
                verified?;
            }
            best_command(&dir, json)
        }
        Command::Report { dirs, out } => report_command(&dirs, out),
    }
}

/// `moldtune report`.
fn report_command(dirs: &[PathBuf], out: Option<PathBuf>) -> Result<u8, Error> {
    let out = out.unwrap_or_else(|| report::page::default_out(dirs));
    let w = report::page::report(dirs, &out)?;
    println!("page: {}", w.html.display());
    println!("summary: {}", w.markdown.display());
    for f in &w.figures {
        println!("figure: {}", f.display());
    }
    Ok(exit::OK)
}

/// Draws `curve.svg` into the run directory a `run` or `mctree` left, whether the search
/// finished, was interrupted or found no working variant (not after a usage error: the
/// directory may then be another run's). A failure to draw is a warning, never the run's.
fn leave_curve<T>(result: &Result<T, Error>, finished: impl Fn(&T) -> PathBuf, out: Option<&Path>) {
    let dir = match result {
        Ok(t) => Some(finished(t)),
        Err(Error::Interrupted(d)) => Some(d.clone()),
        Err(e) if e.code() == exit::USAGE => None,
        Err(_) => out.map(Path::to_path_buf),
    };
    let Some(dir) = dir.filter(|d| d.join(crate::run::meta::RUN_JSON).is_file()) else {
        return;
    };
    // Even a bug in the plotting must not turn a finished run into a failed one.
    let drawn = std::panic::catch_unwind(|| report::curve::write_curve(&dir));
    let why = match drawn {
        Ok(Ok(_)) => return,
        Ok(Err(e)) => e.to_string(),
        Err(_) => "the plotting panicked".to_string(),
    };
    let path = dir.join(report::curve::CURVE_SVG);
    eprintln!("warning: cannot draw `{}`: {why}", path.display());
}

fn print_json(v: &impl serde::Serialize) {
    println!("{}", serde_json::to_string_pretty(v).expect("serializable"));
}

/// `moldtune run`.
fn run_command(mut a: RunOptions, args: Vec<String>) -> Result<u8, Error> {
    a.shared.command_line = args;
    let (json, out_dir) = (a.shared.json, a.shared.run_dir());
    let result = driver::run(a);
    leave_curve(&result, |s| s.dir.clone(), out_dir.as_deref());
    let s = result?;
    if json {
        print_json(&serde_json::json!({
            "dir": s.dir, "evaluations": s.evaluations, "termination": s.termination,
            "best": s.best.as_ref().map(|b| serde_json::json!({"eval_id": b.0, "objective": b.1, "config": s.best_config, "described": b.2})),
            "default_objective": s.default_objective,
            "verification": s.verification,
            "proposers": s.proposers,
        }));
    } else {
        print_summary(&s);
    }
    Ok(exit::OK)
}

/// `moldtune mctree`.
fn mctree_command(mut o: MctreeOptions, args: Vec<String>) -> Result<u8, Error> {
    o.shared.command_line = args;
    let (list, json, out_dir) = (o.list, o.shared.json, o.shared.run_dir());
    let result = crate::mctree::mctree(o);
    if !list {
        let dir = |d: &crate::mctree::Done| match d {
            crate::mctree::Done::Tuned(t) => t.summary.dir.clone(),
            crate::mctree::Done::Listed(_) => PathBuf::new(),
        };
        leave_curve(&result, dir, out_dir.as_deref());
    }
    match result? {
        crate::mctree::Done::Listed(tree) if json => print_json(&tree),
        crate::mctree::Done::Listed(tree) => print!("{}", tree.render()),
        crate::mctree::Done::Tuned(t) if json => print_json(&serde_json::json!({
            "dir": t.summary.dir, "termination": t.summary.termination,
            "experiments": t.summary.evaluations, "valid": t.summary.spent,
            "best": t.summary.best.as_ref().map(|b| serde_json::json!({"eval_id": b.0, "objective": b.1, "config": t.summary.best_config})),
            "default_objective": t.summary.default_objective,
            "verification": t.summary.verification,
            "emitted": t.emitted,
            "legality": t.legality,
        })),
        crate::mctree::Done::Tuned(t) => {
            print_summary(&t.summary);
            println!(
                "{} experiments for {} valid evaluations ({:.2} per valid evaluation)",
                t.summary.evaluations,
                t.summary.spent,
                t.summary.evaluations as f64 / t.summary.spent.max(1) as f64
            );
            let l = t.legality;
            println!(
                "legality: {} evaluated nodes proved legal by the dependence analysis, {} output-checked only; {} candidates refused (not proved)",
                l.proved, l.output_checked, l.refused
            );
            if let Some(p) = &t.emitted {
                println!("mold for `moldtune run`: {}", p.display());
            }
        }
    }
    Ok(exit::OK)
}

fn print_summary(s: &driver::Summary) {
    println!(
        "{} evaluations ({}), stopped by {}",
        s.evaluations, s.counts, s.termination
    );
    if let Some(p) = &s.proposers {
        println!("proposed by (--learner auto): {p}");
    }
    if let Some(d) = s.default_objective {
        println!("default configuration: {d:.6}");
    }
    if let Some((id, obj, desc)) = &s.best {
        println!("best: {obj:.6} at eval {id}\n  {desc}");
    }
    match (&s.verification, &s.best, s.default_objective) {
        (Some(v), _, _) => println!("verified: {}", v.describe()),
        (None, Some((id, obj, _)), Some(d)) if *id != 0 => {
            let ratio = if s.goal == crate::problem::Goal::Minimize {
                d / obj
            } else {
                obj / d
            };
            println!(
                "{ratio:.2}x better than the default by the search's own numbers (not re-measured)"
            );
        }
        _ => {}
    }
    println!("results: {}", s.dir.display());
}

/// `moldtune importance`.
fn importance_command(dir: &Path, json: bool) -> Result<u8, Error> {
    let report = report::importance(dir)?;
    if json {
        print_json(&report);
    } else {
        print!("{}", importance_text(dir, &report));
    }
    Ok(exit::OK)
}

/// The text of `moldtune importance`: a first line with the numbers behind the ranking (or why
/// there is none), the method, then one line per parameter.
fn importance_text(dir: &Path, r: &report::Importance) -> String {
    let r2 = r.oob_r2.map_or("-".to_string(), |v| format!("{v:.2}"));
    let numbers = format!(
        "{} of {} evaluations used (the successes), out-of-bag R² {r2}",
        r.successes, r.evaluations
    );
    let Some(ranking) = &r.ranking else {
        let why = r.reason.as_deref().unwrap_or_default();
        let front = crate::run::meta::read_run_json(dir).map_or("run", |m| {
            if m.mctree.is_some() {
                "mctree"
            } else {
                "run"
            }
        });
        return format!(
            "not enough data to rank parameters: {numbers}\n  {why}\n  hint: a longer run may \
             give enough: `moldtune {front} --resume {} --max-evals N` (N > {})\n",
            dir.display(),
            r.evaluations
        );
    };
    let method = r.method.replace("; ", ";\n          ");
    let mut out = format!("parameter importance: {numbers}\n  method: {method}\n");
    for s in ranking {
        let bar = "#".repeat((s.importance * 40.0).round() as usize);
        let line = format!(
            "  {:<16} {:>5.1}%  {bar}",
            s.parameter,
            100.0 * s.importance
        );
        if s.from_children >= 0.0005 {
            let children = s.children.join(", ");
            let pct = 100.0 * s.from_children;
            out += &format!("{line:<67}  incl. {pct:.1}% switching {children}\n");
        } else {
            out += &format!("{}\n", line.trim_end());
        }
    }
    out
}

/// Draws `table`'s curves into `dir`, named after the table's first word.
fn replay_figure(
    dir: &Path,
    table: &crate::report::replay::Table,
    reports: &[crate::report::replay::LearnerReport],
) -> Result<PathBuf, Error> {
    let name = table.name.split_whitespace().next().unwrap_or("table");
    let path = dir.join(format!("{name}.svg"));
    let lower = table.goal == crate::problem::Goal::Minimize;
    let svg = crate::report::replay_plot::replay_svg(&table.name, reports, table.optimum(), lower)?;
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, svg))
        .map_err(|e| Error::io(format!("cannot write `{}`", path.display()), e))?;
    Ok(path)
}

/// `moldtune replay`.
fn replay_command(a: ReplayArgs) -> Result<u8, Error> {
    use crate::report::replay;
    let protocol = replay::Protocol {
        seeds: a.seeds.into(),
        budget: a.budget as usize,
        initial: a.initial,
        acquisition: a.acquisition,
        kappa: crate::run::settings::flag(
            "--kappa",
            crate::problem::limits::non_negative(a.kappa),
        )?,
    };
    let mut text = String::from("# Search quality: replayed tables\n\nProduced by `moldtune replay`. Lower is better; `best@k` is the best objective found within k evaluations.\n\n");
    for (table, prior) in &replay_tables(&a)? {
        let named = (prior.as_ref()).map(|(p, w)| (w.problem_name.as_str(), p));
        let variants = replay::variants(&a.learners, named);
        let reports = replay::replay_table(table, &variants, &protocol);
        text.push_str(&replay::report_table(table, &reports, &protocol));
        if let Some(dir) = &a.figures {
            let path = replay_figure(dir, table, &reports)?;
            // Linked from where the report is written.
            let base = (a.report.as_deref()).and_then(Path::parent);
            let link = path
                .strip_prefix(base.unwrap_or(Path::new("")))
                .unwrap_or(&path);
            text.push_str(&format!("![{}]({})\n\n", table.name, link.display()));
        }
    }
    print!("{text}");
    if let Some(p) = &a.report {
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        std::fs::write(p, &text)
            .map_err(|e| Error::io(format!("cannot write `{}`", p.display()), e))?;
    }
    Ok(exit::OK)
}

/// The tables `moldtune replay` replays: the run directories', each with its prior when
/// `--warm-start` gives one, then the synthetic ones.
fn replay_tables(
    a: &ReplayArgs,
) -> Result<Vec<(crate::report::replay::Table, Option<Warm>)>, Error> {
    use crate::report::replay;
    if a.dirs.is_empty() && !a.synthetic {
        return Err(Error::usage(
            "nothing to replay",
            Some("give run directories and/or `--synthetic`"),
        ));
    }
    if !a.warm_start.is_empty() && a.warm_start.len() != a.dirs.len() {
        return Err(Error::usage(
            format!(
                "{} `--warm-start` for {} tables ({})",
                a.warm_start.len(),
                a.dirs.len(),
                (a.dirs.iter().map(|d| format!("`{}`", d.display())))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some("give one `--warm-start DIR` per table, in the tables' order"),
        ));
    }
    let mut tables = Vec::new();
    for (k, d) in a.dirs.iter().enumerate() {
        let table = report::table_of(d)?;
        let prior = match a.warm_start.get(k) {
            Some(p) => Some(crate::run::warm::load(p, &table.space, table.goal, None)?),
            None => None,
        };
        tables.push((table, prior));
    }
    if a.synthetic {
        tables.push((replay::branin(), None));
        tables.push((replay::tiles(), None));
    }
    Ok(tables)
}

/// A prior and what run.json records of it.
type Warm = (crate::search::prior::Prior, crate::run::meta::WarmStart);

fn check_options(rounds: usize, mock: bool, quiet: bool) -> crate::check::Options {
    crate::check::Options {
        rule: crate::check::rule::Rule::default(),
        rounds,
        strict: false,
        undecided: Default::default(),
        mock,
        quiet,
        jobs: crate::run::settings::default_jobs(),
    }
}

/// `moldtune baseline`.
fn baseline_command(
    dirs: &[PathBuf],
    out: &Path,
    opts: &crate::check::Options,
) -> Result<u8, Error> {
    for f in crate::check::record::from_runs(dirs, out, opts)? {
        println!("wrote {}", f.display());
    }
    Ok(exit::OK)
}

/// `moldtune check`.
fn check_command(a: CheckArgs) -> Result<u8, Error> {
    let mut opts = check_options(a.rounds.into(), a.mock, a.quiet);
    opts.rule.threshold = a.threshold;
    (opts.strict, opts.undecided) = (a.strict, a.undecided);
    opts.jobs = a.jobs.map_or(opts.jobs, usize::from);
    if a.update {
        for f in crate::check::record::update(&a.baselines, &opts)? {
            println!("recorded {}", f.display());
        }
        return Ok(exit::OK);
    }
    opts.rule.first = a.min_rounds.into();
    opts.rule.cap = usize::from(a.max_rounds).max(opts.rule.first);
    let reports = check_reports(&a);
    let inputs = match a.baselines.is_empty() {
        true => vec![PathBuf::from(crate::check::DEFAULT_BASELINES)],
        false => a.baselines.clone(),
    };
    crate::check::output::check_reports(&reports, &inputs)?;
    let checked = crate::check::check(&a.baselines, &opts)?;
    match a.json {
        true => print_json(&checked),
        false => println!("{}", crate::check::output::table(&checked)),
    }
    write_reports(&checked, &reports);
    Ok(checked.exit_code())
}

/// The reports `check` was asked for, with their flags.
fn check_reports(a: &CheckArgs) -> Vec<(&'static str, &Path)> {
    [
        ("--markdown", &a.markdown),
        ("--html", &a.html),
        ("--junit", &a.junit),
    ]
    .into_iter()
    .filter_map(|(flag, f)| Some((flag, f.as_deref()?)))
    .collect()
}

/// Writes the reports; one that fails is said on stderr and the verdict's exit code stands
/// (the table is on stdout already).
fn write_reports(checked: &crate::check::Checked, reports: &[(&str, &Path)]) {
    use crate::check::output;
    for (flag, f) in reports {
        let written = match *flag {
            "--markdown" => output::markdown(checked, f),
            "--html" => output::html(checked, f),
            _ => output::junit(checked, f),
        };
        if let Err(e) = written {
            eprintln!("error: the verdict stands, but `{flag}` was not written: {e}");
        }
    }
}

/// `moldtune measure`.
fn measure_command(
    problem: &Path,
    from: Option<&Path>,
    eval: Option<usize>,
    set: &[String],
    repeats: u32,
    json: bool,
) -> Result<u8, Error> {
    let r = report::measure(problem, from, eval, set, repeats)?;
    if json {
        print_json(&r);
    } else {
        println!("{}: {}", r.status, r.config);
        if let Some(o) = r.objective {
            println!("objective {o} (samples {:?})", r.samples);
        }
        if let Some(c) = &r.cause {
            println!("cause: {c}");
        }
    }
    Ok(if r.status == crate::evaluate::outcome::Status::Ok {
        exit::OK
    } else {
        exit::NO_SUCCESS
    })
}

/// `moldtune show`.
fn show_command(
    problem: &Path,
    from: Option<&Path>,
    eval: Option<usize>,
    set: &[String],
    out: Option<&Path>,
    json: bool,
) -> Result<u8, Error> {
    let shown = report::show(problem, from, eval, set)?;
    if let Some(p) = out {
        std::fs::write(p, &shown.source)
            .map_err(|e| Error::io(format!("cannot write `{}`", p.display()), e))?;
    }
    if json {
        print_json(&shown);
    } else {
        print!("{}", shown.text(out));
    }
    Ok(exit::OK)
}

/// `moldtune best`.
fn best_command(dir: &Path, json: bool) -> Result<u8, Error> {
    let b = report::best(dir)?;
    match (b, json) {
        (None, true) => println!("null"),
        (None, false) => println!("no successful evaluation in {}", dir.display()),
        (Some(b), true) => print_json(&b),
        (Some(b), false) => {
            println!(
                "best objective {} (eval {}, {} of {} evaluations ok)",
                b.objective, b.eval_id, b.ok, b.evaluations
            );
            for (k, v) in &b.config {
                match v {
                    serde_json::Value::String(s) => println!("  {k} = {s:?}"),
                    other => println!("  {k} = {other}"),
                }
            }
            for k in &b.inactive {
                println!("  {k} (inactive)");
            }
            if let Some(v) = &b.verification {
                println!("verified: {}", v.describe());
            }
            if let Some(p) = &b.best_c {
                println!("source: {p}");
            }
        }
    }
    Ok(exit::OK)
}
