//! Baseline files: what `moldtune check` guards and what it compares with.
//!
//! One JSON file per guarded problem (the PolyBench ones are in `results/baselines/`):
//! the problem file (relative to the baseline), the reference configuration (the mold's
//! default unless edited) and the configurations to guard (the tuned best), each with the
//! samples recorded for it in the same interleaved rounds; and the machine, compiler and
//! moldtune version they were recorded with. `moldtune baseline DIR…` writes one from a
//! run directory, `moldtune check --update FILE…` records its samples again. The format is
//! described in docs/check.md ("Baselines").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Span};
use crate::problem::objective::{Gain, Objective, Sense};
use crate::problem::overrides;
use crate::problem::space::{Config, Space};
use crate::problem::Problem;
use crate::stats;

/// The baseline format this moldtune reads and writes.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub format: u32,
    /// The guarded problem's name (the problem file's `name`).
    pub name: String,
    /// The problem file, relative to the baseline file's folder.
    pub problem: PathBuf,
    /// The dataset the compile command selects (`-DMEDIUM_DATASET` → `MEDIUM`), if any.
    pub dataset: Option<String>,
    /// What the samples are: the problem's metric and its goal.
    pub metric: String,
    pub reference: Entry,
    pub guards: Vec<Entry>,
    pub recorded: Recorded,
    /// The same configurations recorded on other CPUs: `moldtune check --update` on a
    /// machine of another CPU keeps the earlier recording here, and a check on a CPU
    /// found here compares with its samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elsewhere: Vec<Elsewhere>,
}

/// A recording made on another CPU: the reference's and each guard's samples.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Elsewhere {
    pub recorded: Recorded,
    pub reference: Vec<f64>,
    pub guards: Vec<Vec<f64>>,
}

impl Baseline {
    /// Makes the recording made on `cpu` the one a check compares with, when there is
    /// one; whether it did.
    pub fn prefer_cpu(&mut self, cpu: Option<&str>, objective: Objective) -> bool {
        let on = |r: &Recorded| cpu.is_some() && r.cpu.as_deref() == cpu;
        if on(&self.recorded) {
            return false;
        }
        let Some(k) = self.elsewhere.iter().position(|e| on(&e.recorded)) else {
            return false;
        };
        let other = self.elsewhere[k].clone();
        self.elsewhere[k] = self.swap_in(other, objective);
        true
    }

    /// Before a new recording on `cpu`: keeps the current one under `elsewhere` when it
    /// was made on another CPU, and drops an older one made on `cpu`.
    pub fn keep_other_cpus(&mut self, cpu: Option<&str>) {
        self.elsewhere.retain(|e| e.recorded.cpu.as_deref() != cpu);
        let recorded = !self.reference.samples.is_empty();
        if recorded && self.recorded.cpu.as_deref() != cpu {
            let current = self.elsewhere_of_current();
            self.elsewhere.push(current);
        }
    }

    /// Puts `other`'s samples and details in place of the current ones; returns those.
    fn swap_in(&mut self, other: Elsewhere, objective: Objective) -> Elsewhere {
        let current = self.elsewhere_of_current();
        self.recorded = other.recorded;
        for (g, s) in self.guards.iter_mut().zip(other.guards) {
            g.record(s, Some(&other.reference), objective);
        }
        self.reference.record(other.reference, None, objective);
        current
    }

    fn elsewhere_of_current(&self) -> Elsewhere {
        Elsewhere {
            recorded: self.recorded.clone(),
            reference: self.reference.samples.clone(),
            guards: self.guards.iter().map(|g| g.samples.clone()).collect(),
        }
    }
}

/// One configuration and its recorded samples.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub name: String,
    /// Parameter name → value, written as in the problem file (`--set` syntax).
    pub config: BTreeMap<String, String>,
    #[serde(default)]
    pub samples: Vec<f64>,
    /// For reading only: the median of `samples`.
    #[serde(default)]
    pub median: Option<f64>,
    /// For reading only (guards): its gain over the reference, with its 95% interval (a
    /// speed-up, reference median / this median, for a time; [`crate::problem::objective`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<Gain>,
    /// For reading only (guards): `speedup`'s relative half-width, the smallest change a
    /// check can resolve against this recording (0.04: ±4%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
}

/// Where and with what the samples were recorded.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    /// RFC 3339, UTC.
    pub at: String,
    pub rounds: usize,
    pub cpu: Option<String>,
    pub cores: usize,
    /// The compiler's `--version` first line.
    pub compiler: Option<String>,
    pub moldtune: String,
    /// The run directory the guarded configurations came from.
    #[serde(default)]
    pub from_run: Option<PathBuf>,
    /// The regression threshold the recording was made for: it kept adding rounds until
    /// every guard's `resolution` was within [`crate::check::rule::resolution_needed`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The Slurm node it was recorded on (`check --update --executor slurm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// A baseline read and resolved against its problem.
pub struct Loaded {
    pub file: PathBuf,
    pub baseline: Baseline,
    pub problem: Problem,
    pub reference: Config,
    pub guards: Vec<Config>,
}

/// Reads, parses and resolves a baseline file; every error names the file (and the
/// entry or `line:col`).
pub fn load(file: &Path) -> Result<Loaded, Error> {
    let baseline = parse(file)?;
    shape(file, &baseline)?;
    let problem = problem_of(file, &baseline)?;
    let reference = config_of(file, &problem.space, &baseline.reference, "reference")?;
    let guards = (baseline.guards.iter().enumerate())
        .map(|(i, g)| config_of(file, &problem.space, g, &format!("guards[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok(Loaded {
        file: file.to_path_buf(),
        baseline,
        problem,
        reference,
        guards,
    })
}

/// The file read and parsed, its errors at `file:line:col`.
fn parse(file: &Path) -> Result<Baseline, Error> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Error::usage(
            format!("cannot read the baseline `{}`: {e}", file.display()),
            Some("give baseline files or folders, e.g. `moldtune check results/baselines`"),
        )
    })?;
    serde_json::from_str(&text).map_err(|e| Error::Config {
        span: Span {
            file: file.to_path_buf(),
            line: e.line() as u32,
            col: e.column() as u32,
        },
        message: format!("not a moldtune baseline: {e}"),
        hint: Some(
            "the format is in docs/check.md (\"Baselines\"); `moldtune baseline DIR` writes one"
                .into(),
        ),
    })
}

/// What the types cannot say: the format version, at least one guard, and one sample
/// list per guard in every recording of another CPU.
fn shape(file: &Path, b: &Baseline) -> Result<(), Error> {
    if b.format != FORMAT {
        let message = format!(
            "format {} is not {FORMAT}, the one this moldtune reads",
            b.format
        );
        return Err(in_file(
            file,
            message,
            "record it again with `moldtune check --update FILE`",
        ));
    }
    if b.guards.is_empty() {
        let message = "`guards` is empty: nothing to guard".into();
        let hint =
            "add the tuned configuration, or write the baseline with `moldtune baseline DIR`";
        return Err(in_file(file, message, hint));
    }
    match (b.elsewhere.iter()).position(|e| e.guards.len() != b.guards.len()) {
        None => Ok(()),
        Some(k) => {
            let (got, want) = (b.elsewhere[k].guards.len(), b.guards.len());
            let message = format!("`elsewhere[{k}]` holds samples for {got} guards, not {want}");
            Err(in_file(
                file,
                message,
                "one sample list per entry of `guards`, in order",
            ))
        }
    }
}

/// "kernel_time (minimize)": what a baseline's samples measure.
pub fn metric_name(problem: &Problem) -> String {
    fn name(v: impl serde::Serialize) -> String {
        let v = serde_json::to_value(v).unwrap_or_default();
        v.as_str().unwrap_or_default().to_string()
    }
    let (kind, goal) = (name(problem.metric.kind), name(problem.metric.goal));
    format!("{kind} ({goal})")
}

impl Loaded {
    /// Refuses a baseline whose samples measure another metric than its problem's now
    /// (kernel times compared with instruction counts would be a ratio of nothing).
    pub fn require_metric(&self) -> Result<(), Error> {
        let now = metric_name(&self.problem);
        if self.baseline.metric == now {
            return Ok(());
        }
        Err(in_file(
            &self.file,
            format!(
                "its samples are of `{}`, but its problem's metric is `{now}`",
                self.baseline.metric
            ),
            &format!(
                "record them again with `moldtune check --update {}`",
                self.file.display()
            ),
        ))
    }

    /// Refuses a baseline whose samples were never recorded (or were deleted).
    pub fn require_samples(&self) -> Result<(), Error> {
        let b = &self.baseline;
        let update = format!(
            "record them with `moldtune check --update {}`",
            self.file.display()
        );
        if let Some(e) = std::iter::once(&b.reference)
            .chain(&b.guards)
            .find(|e| e.samples.len() < 2)
        {
            let why = format!("`{}` has no recorded samples to compare with", e.name);
            return Err(in_file(&self.file, why, &update));
        }
        if let Some(e) = std::iter::once(&b.reference)
            .chain(&b.guards)
            .find(|e| e.samples.len() > MAX_SAMPLES)
        {
            let why = format!(
                "`{}` holds {} samples: more than the {MAX_SAMPLES} a recording makes (each verdict resamples them 2000 times)",
                e.name,
                e.samples.len()
            );
            return Err(in_file(&self.file, why, &update));
        }
        if let Some((key, x)) = self.bad_sample() {
            let why = match self.positive() {
                true => format!("`{key}` is {x}: a recorded time or count is finite and above 0"),
                false => format!("`{key}` is {x}: a recorded sample is a finite number"),
            };
            return Err(in_file(&self.file, why, &update));
        }
        match b.recorded.threshold {
            Some(t) if !(t > 0.0 && t < 1.0) => Err(in_file(
                &self.file,
                format!("`recorded.threshold` is {t}: a threshold is a fraction between 0 and 1"),
                &update,
            )),
            _ => Ok(()),
        }
    }

    /// Whether the metric is a time or a count, whose samples are above 0.
    fn positive(&self) -> bool {
        Objective::of(&self.problem.metric).sense != Sense::Score
    }

    /// The first recorded sample that cannot be one of the metric's values (not finite, or
    /// not above 0 for a time or a count), with its key.
    fn bad_sample(&self) -> Option<(String, f64)> {
        let b = &self.baseline;
        let mut all: Vec<(String, &[f64])> =
            vec![("reference.samples".into(), &b.reference.samples)];
        all.extend(
            (b.guards.iter().enumerate())
                .map(|(g, e)| (format!("guards[{g}].samples"), &e.samples[..])),
        );
        for (k, e) in b.elsewhere.iter().enumerate() {
            all.push((format!("elsewhere[{k}].reference"), &e.reference));
            all.extend(
                (e.guards.iter().enumerate())
                    .map(|(g, s)| (format!("elsewhere[{k}].guards[{g}]"), &s[..])),
            );
        }
        let positive = self.positive();
        let bad = |x: f64| !x.is_finite() || (positive && x <= 0.0);
        (all.iter()).find_map(|(key, xs)| {
            let (i, x) = xs.iter().enumerate().find(|(_, x)| bad(**x))?;
            Some((format!("{key}[{i}]"), *x))
        })
    }
}

/// The most samples a baseline may record for one configuration: 4 × the most `--rounds`
/// (2,500) a recording grows to.
pub const MAX_SAMPLES: usize = 10_000;

fn in_file(file: &Path, message: String, hint: &str) -> Error {
    Error::ConfigFile {
        file: file.to_path_buf(),
        message,
        hint: Some(hint.into()),
    }
}

/// The baseline's problem, loaded; a missing or broken one is the baseline's error.
fn problem_of(file: &Path, b: &Baseline) -> Result<Problem, Error> {
    let path = folder(file).join(&b.problem);
    if !path.is_file() {
        let message = format!("its problem file `{}` does not exist", path.display());
        return Err(in_file(
            file,
            message,
            "`problem` is relative to the baseline's folder",
        ));
    }
    Problem::load(&path).map_err(|e| {
        let message = format!("its problem file does not load:\n{e}");
        in_file(
            file,
            message,
            "fix the problem file, or record a new baseline",
        )
    })
}

/// The folder of `file` (`.` for a bare name).
pub fn folder(file: &Path) -> &Path {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// An entry's configuration, which must be one the space can propose, naming every
/// active parameter.
fn config_of(file: &Path, space: &Space, e: &Entry, at: &str) -> Result<Config, Error> {
    let sets: Vec<String> = e.config.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let what = format!("{at} (`{}`)", e.name);
    let c = overrides::apply(space, &space.default_config(), &sets).map_err(|err| {
        let (message, hint) = match err {
            Error::Usage { message, hint } => (message.replace("`--set ", "`"), hint),
            other => (other.to_string(), None),
        };
        Error::ConfigFile {
            file: file.to_path_buf(),
            message: format!("{what}: {message} (the problem's space has changed?)"),
            hint: hint.or(Some("record the baseline again from a new run".into())),
        }
    })?;
    let missing = (space.params.iter().enumerate())
        .find(|&(i, p)| !c.0[i].is_nan() && !e.config.contains_key(&p.name));
    if let Some((_, p)) = missing {
        let message = format!(
            "{what}: no value for the parameter `{}` (the problem's space has changed?)",
            p.name
        );
        return Err(in_file(
            file,
            message,
            "add it to `config`, or record the baseline again",
        ));
    }
    Ok(c)
}

/// A configuration as the baseline writes it: every active parameter's value.
fn config_map(space: &Space, c: &Config) -> BTreeMap<String, String> {
    (space.params.iter().zip(&c.0))
        .filter(|(_, x)| !x.is_nan())
        .map(|(p, &x)| (p.name.clone(), p.text(x)))
        .collect()
}

impl Entry {
    /// A configuration with no samples yet.
    pub fn new(name: &str, space: &Space, c: &Config) -> Entry {
        Entry {
            name: name.into(),
            config: config_map(space, c),
            samples: Vec::new(),
            median: None,
            speedup: None,
            resolution: None,
        }
    }

    /// Sets the samples and what is derived from them (the gain over `reference`).
    pub fn record(&mut self, samples: Vec<f64>, reference: Option<&[f64]>, o: Objective) {
        self.median = stats::median(&samples);
        self.speedup = reference.and_then(|r| o.gain(&samples, r, 1));
        self.resolution = self.speedup.map(|r| r.half_width());
        self.samples = samples;
    }
}

/// Writes a baseline (to a temporary file first, so a crash never leaves half a file).
pub fn save(file: &Path, b: &Baseline) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(b)
        .map_err(|e| Error::Internal(format!("cannot serialise a baseline: {e}")))?;
    replace(file, (text + "\n").as_bytes())
        .map_err(|e| Error::io(format!("cannot write `{}`", file.display()), e))
}

/// Replaces `file`'s contents atomically: through a symlink (its target is what changes, the
/// link stays), keeping an existing file's permissions.
fn replace(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let target = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let folder = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(folder)?;
    tmp.write_all(bytes)?;
    if let Ok(meta) = std::fs::metadata(&target) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.persist(&target).map(|_| ()).map_err(|e| e.error)
}

/// The baseline files named by `paths`: files as they are, folders for their `*.json`.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let entries = std::fs::read_dir(p)
            .map_err(|e| Error::io(format!("cannot list `{}`", p.display()), e))?;
        let mut found: Vec<PathBuf> = (entries.flatten().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "json"))
            .collect();
        if found.is_empty() {
            let message = format!("`{}` holds no baseline (*.json)", p.display());
            return Err(Error::usage(
                message,
                Some("write one with `moldtune baseline DIR`"),
            ));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}
