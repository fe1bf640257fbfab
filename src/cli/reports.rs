//! `importance`, `replay`, `measure`, `show`, `best`: reading run directories.

use std::path::{Path, PathBuf};

use crate::cli::print::print_json;
use crate::cli::tune::leave_curve;
use crate::error::{exit, Error};
use crate::report;
use crate::run::front_ends::FrontEnds;
use crate::search::{Acquisition, Learner};

/// `moldtune importance`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ImportanceArgs {
    /// The run directory.
    dir: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// `moldtune importance`.
pub(super) fn importance_command(a: ImportanceArgs, fronts: &FrontEnds) -> Result<u8, Error> {
    let (dir, json) = (a.dir.as_path(), a.json);
    let report = report::importance(dir, fronts)?;
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
        let more = crate::run::dir::RunDir::metadata(dir).map_or_else(
            |_| format!("moldtune run --resume {} --max-evals N", dir.display()),
            |m| m.continued_by(dir, "N"),
        );
        return format!(
            "not enough data to rank parameters: {numbers}\n  {why}\n  hint: a longer run may \
             give enough: `{more}` (N > {})\n",
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
    /// Counterfactuals: also replay each learner (but random) without each of these
    /// mechanisms of the failure policy, and without them all (`books,worst`).
    #[arg(long, value_enum, value_delimiter = ',')]
    without: Vec<crate::search::settings::Mechanism>,
    /// Acquisition function.
    #[arg(long = "acq", value_enum, default_value_t = Acquisition::Lcb)]
    acquisition: Acquisition,
    /// LCB exploration weight.
    #[arg(long, default_value_t = 1.96)]
    kappa: f64,
    /// How proposals meet the table: `nearest` (the whole space searched, a proposal that is
    /// not a row answered by the nearest row: the rules every peer in scripts/peers gets) or
    /// `rows` (the learner chooses among the rows only).
    #[arg(long, value_enum, default_value_t = crate::report::replay::Rules::Nearest)]
    rules: crate::report::replay::Rules,
    /// Write the report (Markdown) here as well as to stdout.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Also write every seed's evaluations and seconds to 5% and failures, per table and
    /// learner, to this JSON file (for comparisons seed by seed).
    #[arg(long = "seeds-json", value_name = "FILE")]
    seeds_json: Option<PathBuf>,
    /// A run of the same space as each table (given in the same order as the tables):
    /// rf and gp (the default) are also replayed warm-started from it (`run --warm-start`).
    #[arg(long = "warm-start", value_name = "DIR")]
    warm_start: Vec<PathBuf>,
    /// Also draw each table's best-so-far curves (median and quartiles over seeds) as
    /// SVG files in this directory.
    #[arg(long, value_name = "DIR")]
    figures: Option<PathBuf>,
}

/// `moldtune replay`.
pub(super) fn replay_command(a: ReplayArgs, fronts: &FrontEnds) -> Result<u8, Error> {
    use crate::report::replay;
    let protocol = replay::Protocol {
        seeds: a.seeds.into(),
        budget: a.budget as usize,
        initial: a.initial,
        acquisition: a.acquisition,
        kappa: crate::run::limits::flag("--kappa", crate::problem::limits::non_negative(a.kappa))?,
        rules: a.rules,
    };
    let mut seeds = serde_json::Map::new();
    let mut text = String::from("# Search quality: replayed tables\n\nProduced by `moldtune replay`. Lower is better; `best@k` is the best objective found within k evaluations.\n\n");
    for (table, prior) in &replay_tables(&a, fronts)? {
        let named = (prior.as_ref()).map(|(p, w)| (w.problem_name.as_str(), p));
        let variants = replay::variants(&a.learners, &a.without, named);
        let reports = replay::replay_table(table, &variants, &protocol);
        text.push_str(&crate::report::replay_md::report_table(
            table, &reports, &protocol,
        ));
        let per_seed = replay::seeds_json(table, &reports, &protocol);
        seeds.insert(table.name.clone(), per_seed);
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
    if let Some(p) = &a.seeds_json {
        // Values built from numbers and strings: serializing them cannot fail.
        let json = serde_json::Value::Object(seeds);
        write_creating(p, &format!("{json:#}\n"))?;
    }
    if let Some(p) = &a.report {
        write_creating(p, &text)?;
    }
    Ok(exit::OK)
}

/// Writes `text` to `path`, creating its folder.
fn write_creating(path: &Path, text: &str) -> Result<(), Error> {
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::write(path, text)
        .map_err(|e| Error::io(format!("cannot write `{}`", path.display()), e))
}

/// The tables `moldtune replay` replays: the run directories', each with its prior when
/// `--warm-start` gives one, then the synthetic ones.
fn replay_tables(
    a: &ReplayArgs,
    fronts: &FrontEnds,
) -> Result<Vec<(crate::report::replay::Table, Option<Warm>)>, Error> {
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
        let table = report::table_of(d, fronts)?;
        let prior = match a.warm_start.get(k) {
            Some(p) => Some(crate::run::warm::load(
                p,
                &table.space,
                table.goal,
                None,
                fronts,
            )?),
            None => None,
        };
        tables.push((table, prior));
    }
    if a.synthetic {
        use crate::report::synthetic;
        tables.push((synthetic::branin(), None));
        tables.push((synthetic::tiles(), None));
    }
    Ok(tables)
}

type Warm = (crate::search::prior::Prior, crate::run::meta::WarmStart);

/// `moldtune measure`'s arguments.
#[derive(Debug, clap::Args)]
pub struct MeasureArgs {
    /// The problem file.
    problem: PathBuf,
    #[command(flatten)]
    which: crate::report::pick::Which,
    /// Timed runs.
    #[arg(long, default_value_t = 5)]
    repeats: u32,
    /// Compile timeout in seconds (overrides `timeouts.compile_s`).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    compile_timeout: Option<f64>,
    /// Run timeout in seconds (overrides `timeouts.run_s`).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    run_timeout: Option<f64>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// `moldtune measure`.
pub(super) fn measure_command(a: MeasureArgs) -> Result<u8, Error> {
    let limits = crate::run::limits::Limits {
        repeats: Some(a.repeats),
        compile_timeout: a.compile_timeout,
        run_timeout: a.run_timeout,
    };
    let r = report::measure(&a.problem, &a.which, limits)?;
    if a.json {
        print_json(&r);
    } else {
        println!("{}: {}", r.status, r.config);
        if let Some(o) = r.objective {
            println!("objective {o} (samples {:?})", r.samples);
        }
        for (name, v) in &r.recorded {
            println!("{name} {v}");
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

/// `moldtune show`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
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
}

/// `moldtune show`.
pub(super) fn show_command(a: ShowArgs) -> Result<u8, Error> {
    let (out, json) = (a.out.as_deref(), a.json);
    let shown = report::show(&a.problem, &a.which)?;
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

/// `moldtune best`'s arguments.
#[derive(Debug, clap::Args)]
pub struct BestArgs {
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
}

/// `moldtune best`.
pub(super) fn best_command(a: BestArgs, fronts: &FrontEnds) -> Result<u8, Error> {
    let (dir, json) = (a.dir.as_path(), a.json);
    if a.verify {
        let plan = crate::run::verification::Plan {
            top: a.top,
            rounds: a.rounds.into(),
        };
        let verified = crate::run::verify::verify_again(dir, plan, fronts);
        // The curve rings the verified best: draw it again.
        leave_curve(&verified, |_| dir.to_path_buf(), Some(dir), fronts);
        verified?;
    }
    let b = report::best(dir)?;
    match (b, json) {
        (None, true) => println!("null"),
        (None, false) => println!("no successful evaluation in {}", dir.display()),
        (Some(b), true) => print_json(&b),
        (Some(b), false) => {
            let pruned = match b.pruned {
                0 => String::new(),
                n => format!(", {n} pruned"),
            };
            println!(
                "best objective {} (eval {}, {} of {} evaluations ok{pruned})",
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
            if let Some(r) = &b.reach {
                println!("reach: {}", r.describe());
            }
            if let Some(r) = &b.default_reach {
                println!("default's reach: {}", r.describe());
            }
            if let Some(v) = &b.verification {
                println!("verified: {}", v.describe());
            }
            if let Some(p) = &b.preferred {
                println!("{}", super::tune::preferred_line(p));
            }
            if let Some(p) = &b.best_c {
                println!("source: {p}");
            }
        }
    }
    Ok(exit::OK)
}
