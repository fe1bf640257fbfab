//! The problem file (YAML) validated into a [`Problem`].
//!
//! Every mistake a user can make in the file is reported here, before a results directory is
//! created: unknown keys and wrong types (from the YAML parser, with `file:line:col`), empty
//! choices, defaults outside their choices, conditions and constraints naming unknown
//! parameters, constraints that exclude every configuration, a missing mold, mold markers
//! without parameters, parameters used nowhere and templates with undefined variables.
//!
//! The file's sections are checked by validator functions of their own modules (`params`,
//! `constraints`, `commands`, `record`, `progress`, `work`, `metric`, `defaults`, `told`),
//! composed here in a fixed order (the steps of [`build_space`], then the rest of the file)
//! and
//! the first failing one is reported, so a file with several mistakes always gets the same
//! message.

use std::path::{Path, PathBuf};

use serde_saphyr::Spanned;

use crate::error::{Error, Span};
use crate::problem::commands::{env_templates, named_templates};
use crate::problem::defaults::{self, SearchDefaults};
use crate::problem::limits;
use crate::problem::locate::Ctx;
use crate::problem::metric::Metric;
use crate::problem::mold::Mold;
use crate::problem::param::Param;
use crate::problem::raw::{self, RawCheck, RawCommand, RawProblem, RawTimeouts};
use crate::problem::record::{Prefer, Quantity};
use crate::problem::space::{Config, Space};
use crate::problem::template::{self, Template};
use crate::problem::vocabulary::{CheckMode, MetricKind, Reduce, Stream};
use crate::problem::{constraints, params};
use crate::rng::hex_hash;

#[derive(Debug, Clone)]
pub struct OutputCheck {
    pub mode: CheckMode,
    pub stream: Stream,
    pub env: Vec<(String, String)>,
    pub rtol: f64,
    pub atol: f64,
    pub reference: Option<PathBuf>,
    /// How messages name the reference when it is the mold at its default configuration
    /// (mctree: the untransformed C file); `None`: "the mold at its default configuration".
    pub reference_name: Option<String>,
    /// Arguments appended to the compile command for a separate, untimed *check build*
    /// (e.g. `-DPOLYBENCH_DUMP_ARRAYS`); empty: the timed binary is also checked.
    pub compile_extra: Vec<String>,
    /// More inputs to check on: each an environment set on top of `env` for one more check
    /// run, compared with the reference's output on the same input (`check.variations`).
    pub variations: Vec<Vec<(String, String)>>,
}

impl OutputCheck {
    /// No output check (a problem whose evaluations are told).
    pub fn none() -> OutputCheck {
        OutputCheck {
            mode: CheckMode::None,
            stream: Stream::default(),
            env: Vec::new(),
            rtol: 0.0,
            atol: 0.0,
            reference: None,
            reference_name: None,
            compile_extra: Vec::new(),
            variations: Vec::new(),
        }
    }

    /// The environment of check input `k`: `env`, then (k ≥ 1) `variations[k - 1]` on top.
    pub fn input_env(&self, k: usize) -> Vec<(String, String)> {
        let extra = k.checked_sub(1).and_then(|i| self.variations.get(i));
        let extra = extra.map_or(&[][..], Vec::as_slice);
        let kept = (self.env.iter()).filter(|(key, _)| !extra.iter().any(|(e, _)| e == key));
        kept.chain(extra).cloned().collect()
    }

    /// How messages name check input `k` (`` `PB_SEED=2` `` for a variation).
    pub fn input_name(&self, k: usize) -> Option<String> {
        let extra = self.variations.get(k.checked_sub(1)?)?;
        let pairs: Vec<String> = extra.iter().map(|(key, v)| format!("{key}={v}")).collect();
        Some(format!("`{}`", pairs.join(" ")))
    }
}

/// Which functions' machine code identifies a program (with the functions outlined from
/// them, `name.omp_outlined…`), and the disassembler that shows it.
#[derive(Debug, Clone)]
pub struct CodeIdentity {
    pub disassembler: String,
    pub functions: Vec<String>,
}

/// A validated problem, ready to run.
#[derive(Debug, Clone)]
pub struct Problem {
    pub name: String,
    pub path: PathBuf,
    pub dir: PathBuf,
    /// Hash of the problem file's bytes.
    pub hash: String,
    pub space: Space,
    pub mold: Mold,
    pub sources: Vec<PathBuf>,
    pub compile: Template,
    /// Where `compile:` is written (`None`: not from a problem file).
    pub compile_at: Option<Span>,
    /// Where `run:` is in the problem file.
    pub run_at: Option<Span>,
    pub run: Template,
    pub env: Vec<(String, Template)>,
    pub metric: Metric,
    pub repeats: u32,
    pub reduce: Reduce,
    pub compile_timeout_s: f64,
    pub run_timeout_s: f64,
    /// Whether the user set the run timeout (`timeouts.run_s`, `--run-timeout`): then it
    /// does not adapt to the fastest run ([`Problem::adapts_run_timeout`]).
    pub run_timeout_given: bool,
    /// The most bytes a compile or run may write to one file (`max_output_mb`, 1 GiB by
    /// default): past it the writer is killed by SIGXFSZ.
    pub max_output_bytes: u64,
    /// Arguments that turn the compile command into a cheap syntax check (mctree:
    /// `-fsyntax-only`), run before each timed build: a rejection is a `build_error`
    /// without the full compile. Not settable in a problem file.
    pub syntax_check: Option<Vec<String>>,
    /// When set, programs are identified by one function's machine code instead of their
    /// whole bytes (mctree: the kernel). Not settable in a problem file.
    pub code_identity: Option<CodeIdentity>,
    pub check: OutputCheck,
    pub search: SearchDefaults,
    /// Quantities read from each timed run beside the metric (`record:`, then the two of
    /// `progress:`).
    pub record: Vec<Quantity>,
    /// The tie rule (`prefer:`).
    pub prefer: Option<Prefer>,
    /// Intermediate values read while a timed run runs, for pruning (`progress:`).
    pub progress: Option<crate::problem::progress::Progress>,
    /// What one timed run computes (`work:`).
    pub work: Option<crate::problem::work::Work>,
    /// A program tells the evaluations (`moldtune serve`, `ask`, `tell`): the file has no
    /// mold and no `run:`, and `moldtune run` refuses it.
    pub told: bool,
}

impl Problem {
    /// Refuses `command` (`run`, `measure`, …) on a problem whose evaluations are told: it
    /// has nothing to build or run.
    pub fn built(self, command: &str) -> Result<Problem, Error> {
        if !self.told {
            return Ok(self);
        }
        Err(Error::usage(
            format!(
                "`{}` has neither `mold:` nor `run:`: `moldtune {command}` has nothing to build or run",
                self.path.display()
            ),
            Some("a program tells this problem's values: drive it with `moldtune serve`, `ask` and `tell` (or the Python module), or add a mold and its `run:`"),
        ))
    }

    /// Whether the run timeout adapts to the fastest run so far: only for a time (a score
    /// such as an accuracy may rise with run time, and the slow end of a trade-off is what
    /// it trades for), and never when the user set the timeout.
    pub fn adapts_run_timeout(&self) -> bool {
        let time = matches!(
            self.metric.kind,
            MetricKind::KernelTime | MetricKind::WallTime | MetricKind::CpuTime
        );
        time && !self.run_timeout_given
    }

    /// Reads the problem file at `path` and validates it.
    pub fn load(path: &Path) -> Result<Problem, Error> {
        let bytes = std::fs::read(path).map_err(|e| {
            Error::usage(
                format!("cannot read the problem file `{}`: {e}", path.display()),
                Some("give the path of a problem YAML, e.g. `moldtune run tests/e2e/matmul/matmul.yaml`"),
            )
        })?;
        let text = utf8(path, bytes)?;
        let raw = raw::parse(path, &text)?;
        let abs = std::fs::canonicalize(path)
            .map_err(|e| Error::io(format!("cannot resolve `{}`", path.display()), e))?;
        let dir = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
        let cx = Ctx {
            file: path,
            dir: &dir,
            text: &text,
        };
        problem(&cx, raw, &abs, hex_hash(text.as_bytes()))
    }

    /// The program the compile command runs at the default configuration (`None`: it does
    /// not render).
    pub fn compile_program(&self) -> Option<String> {
        self.program(&self.compile)
    }

    /// The program the run command starts at the default configuration, unless it is the
    /// variant itself (`{{ exe }}`, or a script run as `{{ source }}`), which exists only once
    /// built or rendered.
    pub fn run_program(&self) -> Option<String> {
        let p = self.program(&self.run)?;
        (p != "./variant" && p != self.mold.variant_file()).then_some(p)
    }

    fn program(&self, t: &Template) -> Option<String> {
        let builtins =
            template::Builtins::placeholder(&self.dir, &self.sources, &self.mold.variant_file());
        let vars = template::context(&self.space, &self.space.default_config(), &builtins);
        t.argv(&vars).ok()?.into_iter().next()
    }

    /// The default configuration: the baseline every run evaluates first.
    pub fn default_config(&self) -> Config {
        self.space.default_config()
    }
}

/// Validates a parsed problem file: the space, then what the evaluations need (mold,
/// sources, templates; nothing when a program tells them), then how they are measured
/// and checked.
fn problem(cx: &Ctx, mut raw: RawProblem, abs: &Path, hash: String) -> Result<Problem, Error> {
    let space = build_space(cx, &raw)?;
    let told = crate::problem::told::told(cx, &raw)?;
    let metric = crate::problem::metric::metric(cx, raw.metric.as_ref(), told)?;
    let search = defaults::search(
        cx,
        raw.search.take().unwrap_or_default(),
        raw.slurm.take().unwrap_or_default(),
    )?;
    let recorded = (&raw.record[..], raw.progress.as_ref(), metric.goal);
    let (record, prefer, progress) =
        super::record::trade_off(cx, recorded, raw.prefer.as_ref(), (&space, told))?;
    let mut p = Problem {
        name: name(cx, raw.name.as_ref(), abs)?,
        path: abs.to_path_buf(),
        dir: cx.dir.to_path_buf(),
        hash,
        mold: Mold::none(),
        sources: Vec::new(),
        compile: Template::new(String::new()),
        compile_at: None,
        run_at: None,
        run: Template::new(String::new()),
        env: Vec::new(),
        work: None,
        metric,
        repeats: 1,
        reduce: Reduce::default(),
        // Nothing is built or run by moldtune for a told problem; run.json records these.
        compile_timeout_s: 120.0,
        run_timeout_s: 60.0,
        run_timeout_given: false,
        max_output_bytes: limits::DEFAULT_OUTPUT_BYTES,
        syntax_check: None,
        code_identity: None,
        check: OutputCheck::none(),
        search,
        record,
        prefer,
        progress,
        told,
        space,
    };
    if !told {
        built(cx, raw, abs, &mut p)?;
    }
    Ok(p)
}

/// What building and running the variants needs: the mold, sources, templates, timeouts,
/// the output check and the work, into `p`.
fn built(cx: &Ctx, raw: RawProblem, abs: &Path, p: &mut Problem) -> Result<(), Error> {
    let (raw_mold, raw_run) = (raw.mold.as_ref(), raw.run.as_ref());
    let (raw_mold, raw_run) = raw_mold.zip(raw_run).expect("checked by `told`");
    let space = &p.space;
    let mold = mold(cx, raw_mold, space)?;
    let sources = sources(cx, &raw.sources)?;
    let compile = Template::new((raw.compile.as_ref()).map_or(String::new(), |c| c.value.text()));
    let run = Template::new(raw_run.value.text());
    let env = env_templates(&raw.env);
    let named = named_templates(&raw, &compile, &run, &env);
    super::commands::check_templates(cx, &named, space, &sources, &mold.variant_file())?;
    super::commands::check_every_param_used(cx, &named, space, &mold, &raw)?;
    p.repeats = repeats(cx, raw.repeats.as_ref())?;
    p.run_timeout_given = raw.timeouts.as_ref().is_some_and(|t| t.run_s.is_some());
    (p.compile_timeout_s, p.run_timeout_s) = timeouts(cx, raw.timeouts.unwrap_or_default())?;
    if let Some(v) = &raw.max_output_mb {
        p.max_output_bytes = cx.valid(v, "max_output_mb", |&mb| limits::output_mb(mb))?;
    }
    let check = check(cx, raw.check.unwrap_or_default())?;
    if raw.compile.is_none() {
        without_compile(cx, (raw_mold, raw_run), &mold, &run, &check, abs)?;
    }
    p.work = super::work::work(cx, raw.work.as_ref(), p.metric.kind)?;
    p.compile_at = raw.compile.as_ref().map(|c| cx.span(&c.referenced));
    p.run_at = Some(cx.span(&raw_run.referenced));
    p.reduce = raw.reduce.unwrap_or_default();
    (p.mold, p.sources, p.compile, p.run, p.env, p.check) =
        (mold, sources, compile, run, env, check);
    Ok(())
}

/// The problem file's text; a byte that is not UTF-8 (even in a comment) is refused at its
/// `file:line:col`.
fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let good = &e.as_bytes()[..at];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let col = String::from_utf8_lossy(&good[start..]).chars().count() + 1;
        Error::Config {
            span: Span {
                file: path.to_path_buf(),
                line: line as u32,
                col: col as u32,
            },
            message: format!("byte 0x{:02x} is not UTF-8 text", e.as_bytes()[at]),
            hint: Some("a problem file is UTF-8 YAML: save it as UTF-8".into()),
        }
    })
}

/// `check.compile_extra` in a file without a build step.
fn compile_extra_without_compile(file: &Path) -> Error {
    Error::ConfigFile {
        file: file.to_path_buf(),
        message: "`check.compile_extra` adds to a compile, and the file has no `compile:`".into(),
        hint: Some("give a `compile:` command, or leave `check.compile_extra` out".into()),
    }
}

// ---------------------------------------------------------------------------------------------
// What the evaluations need, and how they are measured and checked
// ---------------------------------------------------------------------------------------------

/// Suffixes of sources that must be compiled: a mold of one of these without `compile:`
/// would be run as a shell script.
const COMPILED: [&str; 10] = [
    "c", "cc", "cpp", "cxx", "c++", "f", "f90", "f95", "cu", "rs",
];

/// What a problem without `compile:` may not ask for: `check.compile_extra`, a mold that
/// cannot run as rendered ([`Ctx::script_mold`]).
fn without_compile(
    cx: &Ctx,
    (raw_mold, raw_run): (&Spanned<String>, &Spanned<RawCommand>),
    mold: &Mold,
    run: &Template,
    check: &OutputCheck,
    abs: &Path,
) -> Result<(), Error> {
    if !check.compile_extra.is_empty() {
        return Err(compile_extra_without_compile(abs));
    }
    script_mold(cx, raw_mold, mold, run, raw_run)
}

/// A problem without `compile:` runs its variant as rendered, so the mold must be a
/// script: not a C (or other compiled) source, and when `run:` executes it directly
/// (`{{ exe }}`), it starts with `#!` (else the system runs it with `sh`).
fn script_mold(
    cx: &Ctx,
    at: &Spanned<String>,
    mold: &Mold,
    run: &Template,
    raw_run: &Spanned<RawCommand>,
) -> Result<(), Error> {
    let file = mold.variant_file();
    let suffix = file.rsplit('.').next().unwrap_or("");
    if COMPILED.contains(&suffix) {
        return cx.err(
            &at.referenced,
            format!("the mold `{}` is a source to compile (its variants are `{file}`), but the problem has no `compile:`: it would be run as a shell script", at.value),
            Some("add e.g. `compile: \"clang-22 -O3 {{ source }} -o {{ exe }}\"`"),
        );
    }
    let direct = run.variables().is_ok_and(|v| v.contains("exe"));
    if direct && !mold.text.starts_with("#!") {
        return cx.err(
            &raw_run.referenced,
            format!("`run:` executes the variant (`{{{{ exe }}}}`), but the mold `{}` does not start with `#!`: it would be run by `sh`", at.value),
            Some("name its interpreter in `run:` (e.g. `python3 {{ source }}`), or start the mold with `#!/usr/bin/env python3`"),
        );
    }
    Ok(())
}

/// The mold file exists (its markers are checked by [`Mold::load`]).
fn mold(cx: &Ctx, m: &Spanned<String>, space: &Space) -> Result<Mold, Error> {
    let path = cx.dir.join(&m.value);
    if !path.is_file() {
        return cx.err(
            &m.referenced,
            format!("mold file `{}` does not exist", m.value),
            Some(&format!("looked for `{}`", path.display())),
        );
    }
    Mold::load(&path, space)
}

/// Every extra source file exists.
fn sources(cx: &Ctx, raw: &[Spanned<String>]) -> Result<Vec<PathBuf>, Error> {
    raw.iter()
        .map(|s| existing_file(cx, s, "source file"))
        .collect()
}

/// `s`, relative to the problem's directory, is a file.
fn existing_file(cx: &Ctx, s: &Spanned<String>, what: &str) -> Result<PathBuf, Error> {
    let p = cx.dir.join(&s.value);
    if !p.is_file() {
        return cx.err(
            &s.referenced,
            format!("{what} `{}` does not exist", s.value),
            None,
        );
    }
    Ok(p)
}

/// `repeats` is within [`limits::repeats`] (3 when not given).
fn repeats(cx: &Ctx, r: Option<&Spanned<u64>>) -> Result<u32, Error> {
    let Some(r) = r else { return Ok(3) };
    cx.valid(r, "repeats", |&n| limits::repeats(n))
}

/// Both timeouts are within [`limits::timeout`] (120 s to compile and 60 s to run when
/// not given).
fn timeouts(cx: &Ctx, t: RawTimeouts) -> Result<(f64, f64), Error> {
    let get = |v: Option<&Spanned<f64>>, key: &str, default: f64| match v {
        Some(v) => cx.valid(v, key, |&x| limits::timeout(x)),
        None => Ok(default),
    };
    let compile_s = get(t.compile_s.as_ref(), "timeouts.compile_s", 120.0)?;
    let run_s = get(t.run_s.as_ref(), "timeouts.run_s", 60.0)?;
    Ok((compile_s, run_s))
}

/// The problem's name: `name:` (a plain name, see [`limits::name`]), else the file's
/// stem.
fn name(cx: &Ctx, name: Option<&Spanned<String>>, abs: &Path) -> Result<String, Error> {
    match name {
        Some(n) => cx.valid(n, "name", |s| limits::name(s).map(str::to_string)),
        None => {
            let stem = abs.file_stem().map(|s| s.to_string_lossy().into_owned());
            // A file name may hold characters a name may not: replace them.
            let stem = stem.unwrap_or_else(|| "problem".into());
            Ok(stem
                .chars()
                .map(|c| {
                    if limits::name(&c.to_string()).is_ok() {
                        c
                    } else {
                        '_'
                    }
                })
                .collect())
        }
    }
}

/// The output check: its reference source, when given, exists.
fn check(cx: &Ctx, c: RawCheck) -> Result<OutputCheck, Error> {
    let reference = c
        .reference
        .as_ref()
        .map(|r| existing_file(cx, r, "reference source"))
        .transpose()?;
    let tolerance = |v: Option<&Spanned<f64>>, key: &str, default: f64| match v {
        Some(v) => cx.valid(v, key, |&x| limits::non_negative(x)),
        None => Ok(default),
    };
    Ok(OutputCheck {
        mode: c.mode,
        stream: c.stream,
        env: c.env.into_iter().collect(),
        rtol: tolerance(c.rtol.as_ref(), "check.rtol", 1e-6)?,
        atol: tolerance(c.atol.as_ref(), "check.atol", 1e-9)?,
        reference,
        reference_name: None,
        compile_extra: (c.compile_extra.as_ref())
            .map(|x| x.text().split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        variations: (c.variations.into_iter())
            .map(|v| v.into_iter().collect())
            .collect(),
    })
}

/// The parameter space, checked in the order a reader meets it: each parameter on its own,
/// then the conditions between them, the forbidden combinations, the constraints, and last
/// the default configuration against all of these.
fn build_space(cx: &Ctx, raw: &RawProblem) -> Result<Space, Error> {
    params::check_params_not_empty(cx, &raw.params)?;
    let raws = &raw.params.value;
    let mut params: Vec<Param> = Vec::new();
    for rp in raws {
        let p = params::param(cx, rp, &params)?;
        params.push(p);
    }
    params::add_conditions(cx, raws, &mut params)?;
    let order = params::dependency_order(cx, raws, &params)?;
    let forbidden = constraints::forbidden(cx, &raw.forbidden, &params)?;
    let constraints = constraints::constraints(cx, &raw.constraints, &params)?;
    let space = Space {
        params,
        order,
        forbidden,
        constraints,
    };
    constraints::check_constraints_evaluate(cx, &space, &raw.constraints)?;
    constraints::check_default_is_valid(cx, &space, &raw.constraints, &raw.forbidden)?;
    Ok(space)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check.variations` is read as written, and each input's environment is `env` with the
    /// variation on top (a key of both takes the variation's value).
    #[test]
    fn each_check_input_is_the_check_env_with_its_variation_on_top() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.c"), "int main(void) { return #P0; }\n").unwrap();
        let yaml = "mold: k.c\nparams:\n  - {name: P0, type: ordinal, values: [0, 1]}\n\
                    compile: \"cc {{ source }} -o {{ exe }}\"\nrun: \"{{ exe }}\"\n\
                    check:\n  env: {SEED: \"1\", DUMP: \"1\"}\n  variations: [{SEED: \"2\"}, {N: \"9\"}]\n";
        let path = dir.path().join("k.yaml");
        std::fs::write(&path, yaml).unwrap();
        let p = Problem::load(&path).unwrap();
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(p.check.input_env(0), pairs(&[("DUMP", "1"), ("SEED", "1")]));
        assert_eq!(p.check.input_env(1), pairs(&[("DUMP", "1"), ("SEED", "2")]));
        assert_eq!(
            p.check.input_env(2),
            pairs(&[("DUMP", "1"), ("SEED", "1"), ("N", "9")])
        );
        assert_eq!(p.check.input_name(0), None);
        assert_eq!(p.check.input_name(1).as_deref(), Some("`SEED=2`"));
    }
}
