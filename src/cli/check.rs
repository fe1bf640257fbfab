//! `check` and `baseline`: the regression gate's flags, its runs and its reports.

use std::path::{Path, PathBuf};

use crate::cli::print::print_json;
use crate::error::{exit, Error};

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Baseline files, or folders of them [default: results/baselines].
    pub baselines: Vec<PathBuf>,
    /// A slowdown of a guarded speed-up beyond this is a regression (`10%` or `0.1`).
    #[arg(long, default_value = "10%", value_parser = threshold)]
    pub threshold: f64,
    /// What a guard is judged by: `lead` (its gain over the reference, against the gain
    /// recorded) or `value` (its own metric against the value recorded) [default: value for
    /// a score a regex reads, lead for a time or a count].
    #[arg(long, value_enum)]
    pub judge: Option<crate::check::rule::Judge>,
    /// Judged by value: the loss allowed, in the metric's units (`0.01`) or of the recorded
    /// value's size (`2%`) [default: `--threshold` of the recorded value's size].
    #[arg(long, value_parser = tolerance, allow_negative_numbers = true)]
    pub tolerance: Option<crate::check::rule::Tolerance>,
    /// Interleaved rounds before the first decision.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(5..=10000))]
    pub min_rounds: u16,
    /// At most this many rounds per baseline while undecided.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u16).range(5..=10000))]
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
    #[arg(long, default_value_t = 100, requires = "update", value_parser = clap::value_parser!(u16).range(5..=2500))]
    pub rounds: u16,
    /// With `--update`: refuse (exit 7, the file unchanged) a recording too noisy for
    /// `--threshold`, instead of writing it with a warning.
    #[arg(long, requires = "update")]
    pub strict: bool,
    #[command(flatten)]
    pub jobs: crate::run::settings::Jobs,
    /// With `--update`: `--executor slurm` records each baseline as a Slurm job on a node.
    #[command(flatten)]
    pub executor: crate::run::settings::ExecutorFlags,
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
pub(super) fn threshold(s: &str) -> Result<f64, String> {
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

/// `0.01` (the metric's units) or `2%` (of the recorded value's size), not negative.
fn tolerance(s: &str) -> Result<crate::check::rule::Tolerance, String> {
    use crate::check::rule::Tolerance;
    let (num, relative) = match s.trim().strip_suffix('%') {
        Some(p) => (p.trim(), true),
        None => (s.trim(), false),
    };
    let x = num
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0);
    match (x, relative) {
        (Some(x), true) => Ok(Tolerance::Relative(x / 100.0)),
        (Some(x), false) => Ok(Tolerance::Units(x)),
        (None, _) => Err(format!(
            "`{s}` is not a loss of 0 or more; write it in the metric's units (`0.01`) or as a share of the recorded value (`2%`)"
        )),
    }
}

pub(super) fn check_options(rounds: usize, mock: bool, quiet: bool) -> crate::check::Options {
    crate::check::Options {
        rule: crate::check::rule::Rule::default(),
        rounds,
        strict: false,
        undecided: Default::default(),
        mock,
        quiet,
        jobs: crate::run::settings::default_jobs(),
        slurm: None,
    }
}

/// `moldtune baseline`'s arguments.
#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    /// Run directories of `moldtune run`.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Folder of the baseline files (one `<problem name>.json` per run).
    #[arg(long, default_value = crate::check::DEFAULT_BASELINES)]
    out: PathBuf,
    /// Interleaved rounds to record; more (up to 4×) while the guards' speed-ups are
    /// not known finely enough for `--threshold`.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(5..=2500))]
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
}

/// `moldtune baseline`.
pub(super) fn baseline_command(a: BaselineArgs) -> Result<u8, Error> {
    let mut opts = check_options(a.rounds.into(), a.mock, false);
    (opts.rule.threshold, opts.strict) = (a.threshold, a.strict);
    opts.jobs = a.jobs.or(None);
    for f in crate::check::record::from_runs(&a.dirs, &a.out, &opts)? {
        println!("wrote {}", f.display());
    }
    Ok(exit::OK)
}

/// `moldtune check`.
pub(super) fn check_command(a: CheckArgs) -> Result<u8, Error> {
    let mut opts = check_options(a.rounds.into(), a.mock, a.quiet);
    opts.rule.threshold = a.threshold;
    (opts.rule.judge, opts.rule.tolerance) = (a.judge, a.tolerance);
    (opts.strict, opts.undecided) = (a.strict, a.undecided);
    opts.jobs = a.jobs.or(None);
    opts.slurm = crate::run::settings::resolve_executor(&a.executor, None, None)?;
    if opts.slurm.is_some() && !a.update {
        return Err(Error::usage(
            "`moldtune check` times on this machine; only `--update` records on a cluster",
            Some("run the check itself as a job (e.g. `srun moldtune check …`), or add `--update`"),
        ));
    }
    if a.update {
        for f in crate::check::record::update(&a.baselines, &opts)? {
            println!("recorded {}", f.display());
        }
        return Ok(exit::OK);
    }
    opts.rule.first = a.min_rounds.into();
    opts.rule.cap = usize::from(a.max_rounds).max(opts.rule.first);
    let reports = check_reports(&a);
    let baselines = match a.baselines.is_empty() {
        true => vec![PathBuf::from(crate::check::DEFAULT_BASELINES)],
        false => a.baselines.clone(),
    };
    let mut inputs: Vec<(PathBuf, &str)> =
        baselines.into_iter().map(|b| (b, "a baseline")).collect();
    // The problems' own files too: a report must never replace a problem file or a mold.
    if !reports.is_empty() {
        let files = crate::check::problem_files(&a.baselines)?;
        inputs.extend(
            files
                .into_iter()
                .map(|f| (f, "a problem file or mold of a baseline")),
        );
    }
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
