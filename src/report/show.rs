//! `moldtune show`: one variant as the evaluator would build and run it, with nothing
//! compiled or run — the rendered source, and the compile, check and timed-run commands
//! (argv, added environment, directory, timeout).
//!
//! The commands come from [`Variant`], the evaluator's own code path, so what is printed is
//! what a run executes. The build directory, which a run creates as `RUN_DIR/work/eval-N`,
//! is shown as the placeholder [`WORK_DIR`].

use std::path::{Path, PathBuf};

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::error::Error;
use crate::evaluate::variant::Variant;
use crate::problem::{MetricKind, Problem, Reduce, Stream};
use crate::process::Command;
use crate::report::pick;

/// Stands for the build directory in the commands shown.
pub const WORK_DIR: &str = "{work_dir}";

/// A variant shown: its configuration, source and commands.
#[derive(Debug, serde::Serialize)]
pub struct Shown {
    pub problem: String,
    pub name: String,
    pub config: Pairs,
    /// The configuration as the progress line writes it (`P0=32 P2='' …`).
    pub described: String,
    pub work_dir: String,
    /// The file the source is written to in the work directory (`variant.c`, `variant.py`).
    pub source_file: String,
    pub source: String,
    pub compile: Shell,
    /// `None` with `check.mode: none`.
    pub check: Option<CheckRun>,
    pub run: Shell,
    /// Timed runs per evaluation, how they are reduced, and what is measured.
    pub repeats: u32,
    pub reduce: Reduce,
    pub metric: MetricKind,
    /// Each parameter's values, for scripts that walk the space (`scripts/reach.py`).
    pub space: Vec<ShownParam>,
    /// What one timed run computes (`work:`, evaluated over its sizes), when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work: Option<crate::problem::work::Work>,
}

/// A parameter's values in order (`None` for a range), and whether that order means
/// anything (an ordinal's does; a categorical's does not); a permutation's items and
/// separator (its values are their orders).
#[derive(Debug, serde::Serialize)]
pub struct ShownParam {
    pub name: String,
    pub ordered: bool,
    pub values: Option<Vec<serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permutation: Option<ShownPermutation>,
}

/// What a permutation orders.
#[derive(Debug, serde::Serialize)]
pub struct ShownPermutation {
    pub items: Vec<String>,
    pub separator: String,
}

impl ShownParam {
    fn of(p: &crate::problem::param::Param) -> ShownParam {
        use crate::problem::param::Kind;
        let n = match &p.kind {
            Kind::Ordinal(v) => Some(v.len()),
            Kind::Categorical(v) => Some(v.len()),
            Kind::Permutation(p) => Some(p.texts.len()),
            Kind::Boolean => Some(2),
            Kind::Integer { .. } | Kind::Real { .. } | Kind::Open(_) => None,
        };
        ShownParam {
            name: p.name.clone(),
            ordered: matches!(p.kind, Kind::Ordinal(_)),
            values: n.map(|n| (0..n).map(|i| p.json(i as f64)).collect()),
            permutation: match &p.kind {
                Kind::Permutation(perm) => Some(ShownPermutation {
                    items: perm.items.clone(),
                    separator: perm.separator.clone(),
                }),
                _ => None,
            },
        }
    }
}

/// The check run, and what its output is compared with.
#[derive(Debug, serde::Serialize)]
pub struct CheckRun {
    #[serde(flatten)]
    pub shell: Shell,
    /// `stdout` or `stderr`.
    pub stream: &'static str,
    /// Where the reference output comes from.
    pub reference: String,
    /// The check build's compile (`check.compile_extra`), when the check runs a binary of
    /// its own.
    pub build: Option<Shell>,
    /// `check.variations`: each one more check run, with these variables on top.
    pub variations: Vec<String>,
}

/// One command: what the child is given.
#[derive(Debug, serde::Serialize)]
pub struct Shell {
    pub argv: Vec<String>,
    /// Added to moldtune's own environment.
    pub env: Pairs,
    pub cwd: PathBuf,
    /// The most it may take (a timed run's timeout adapts below this, see docs/measuring.md).
    pub timeout_s: f64,
}

/// Name/value pairs serialized as a JSON object in their own order.
#[derive(Debug)]
pub struct Pairs(pub Vec<(String, serde_json::Value)>);

impl Serialize for Pairs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The variant of `problem_path` chosen by `from`/`eval`/`sets` (see [`pick`]).
pub fn show(problem_path: &Path, which: &pick::Which) -> Result<Shown, Error> {
    let problem = Problem::load(problem_path)?.built("show")?;
    for w in problem.mold.unnamed_markers(&problem.space) {
        eprintln!("warning: {w}");
    }
    let config = pick::configuration(&problem, which)?;
    // A run records this as the variant's failure; `show` reports it instead.
    let v = Variant::render(&problem, &config, Path::new(WORK_DIR)).map_err(|u| {
        Error::usage(
            format!(
                "a template does not render for this configuration: {}",
                u.cause
            ),
            Some(&format!("a run records it as the variant's `{}`", u.status)),
        )
    })?;
    let compile = v.compile_command(&v.compile, false);
    let check = v.check_command().map(|c| CheckRun {
        shell: shell(c, problem.run_timeout_s),
        stream: stream_name(problem.check.stream),
        reference: reference_name(&problem),
        build: (v.check_build.as_ref())
            .map(|cb| shell(v.compile_command(cb, false), problem.compile_timeout_s)),
        variations: (1..=problem.check.variations.len())
            .filter_map(|k| problem.check.input_name(k))
            .collect(),
    });
    let run = v.timed_command("run0");
    let config_pairs = (problem.space.params.iter().zip(&config.0))
        .map(|(p, &x)| (p.name.clone(), (!x.is_nan()).then(|| p.json(x)).into()))
        .collect();
    Ok(Shown {
        problem: problem_path.display().to_string(),
        name: problem.name.clone(),
        config: Pairs(config_pairs),
        described: problem.space.describe(&config),
        work_dir: WORK_DIR.into(),
        source_file: problem.mold.variant_file(),
        source: v.source.clone(),
        compile: shell(compile, problem.compile_timeout_s),
        check,
        run: shell(run, problem.run_timeout_s),
        repeats: problem.repeats,
        reduce: problem.reduce,
        metric: problem.metric.kind,
        space: problem.space.params.iter().map(ShownParam::of).collect(),
        work: problem.work,
    })
}

fn shell(c: Command, timeout_s: f64) -> Shell {
    Shell {
        argv: c.argv,
        env: Pairs(c.env.into_iter().map(|(k, v)| (k, v.into())).collect()),
        cwd: c.cwd,
        timeout_s,
    }
}

impl Shown {
    /// The human-readable form; the source is included unless it was written to `out`.
    pub fn text(&self, out: Option<&Path>) -> String {
        let mut t = format!("{}: {}\n", self.name, self.described);
        t.push_str(&format!(
            "nothing is built or run; {WORK_DIR} stands for the build directory (a run uses RUN_DIR/work/eval-N)\n\n"
        ));
        let c = &self.compile;
        t.push_str(&match c.argv.is_empty() {
            true => "compile: none (no `compile:`: the variant is run as rendered)\n".to_string(),
            false => format!(
                "compile (in {WORK_DIR}, timeout {} s):\n  {}\n",
                c.timeout_s,
                c.line()
            ),
        });
        if let Some(b) = self.check.as_ref().and_then(|c| c.build.as_ref()) {
            t.push_str(&format!(
                "check build (untimed binary with `check.compile_extra`, in {}, timeout {} s):\n  {}\n",
                b.cwd.display(),
                b.timeout_s,
                b.line()
            ));
        }
        match &self.check {
            None => t.push_str("check run: none (`check.mode: none`)\n"),
            Some(c) => t.push_str(&format!(
                "check run (untimed; its {} is compared with the reference's, {}; timeout {} s):\n  {}\n",
                c.stream,
                c.reference,
                c.shell.timeout_s,
                c.shell.line()
            )),
        }
        if let Some(c) = self.check.as_ref().filter(|c| !c.variations.is_empty()) {
            t.push_str(&format!(
                "  and once more on each input of `check.variations`: {}\n",
                c.variations.join(", ")
            ));
        }
        t.push_str(&format!(
            "timed runs ({} × {} of {}; timeout at most {} s):\n  {}\n\n",
            self.repeats,
            serde_name(&self.reduce),
            serde_name(&self.metric),
            self.run.timeout_s,
            self.run.line()
        ));
        match out {
            Some(p) => t.push_str(&format!(
                "{} written to {}\n",
                self.source_file,
                p.display()
            )),
            None => {
                t.push_str(&format!("--- {WORK_DIR}/{}\n", self.source_file));
                t.push_str(&self.source);
            }
        }
        t
    }
}

/// A unit enum's name as the problem file writes it (`median`, `kernel_time`).
fn serde_name(v: &impl Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl Shell {
    /// `env K=V … argv…`, quoted for a POSIX shell.
    pub fn line(&self) -> String {
        let mut words: Vec<String> = Vec::new();
        if !self.env.0.is_empty() {
            words.push("env".into());
            for (k, v) in &self.env.0 {
                let v = v.as_str().unwrap_or_default();
                words.push(format!("{k}={}", quote(v)));
            }
        }
        words.extend(self.argv.iter().map(|a| quote(a)));
        words.join(" ")
    }
}

/// `arg` as one shell word: as it is when that is safe, else in single quotes.
pub fn quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

fn stream_name(s: Stream) -> &'static str {
    match s {
        Stream::Stdout => "stdout",
        Stream::Stderr => "stderr",
    }
}

/// What the reference output comes from.
fn reference_name(problem: &Problem) -> String {
    match &problem.check.reference {
        Some(p) => format!("`{}` built by the same compile command", p.display()),
        None => "the mold at its default configuration".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(quote("-O3"), "-O3");
        assert_eq!(quote("-DX=a b"), "'-DX=a b'");
        assert_eq!(quote("#pragma"), "'#pragma'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
