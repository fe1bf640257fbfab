//! The problem file (YAML): parsing with positions, and validation into a [`Problem`].
//!
//! Every mistake a user can make in the file is reported here, before a results directory is
//! created: unknown keys and wrong types (from the YAML parser, with `file:line:col`), empty
//! choices, defaults outside their choices, conditions and constraints naming unknown
//! parameters, constraints that exclude every configuration, a missing mold, mold markers
//! without parameters, parameters used nowhere and templates with undefined variables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::error::{Error, Span};
use crate::problem::expr;
use crate::problem::mold::Mold;
use crate::problem::space::{Condition, Config, Constraint, Kind, Param, Scalar, Space};
use crate::problem::template::{self, Template};
use crate::rng::hex_hash;

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum RawScalar {
    Bool(bool),
    Int(i64),
    Real(f64),
    Str(String),
}

impl From<RawScalar> for Scalar {
    fn from(r: RawScalar) -> Scalar {
        match r {
            RawScalar::Bool(b) => Scalar::Bool(b),
            RawScalar::Int(i) => Scalar::Int(i),
            RawScalar::Real(x) => Scalar::Real(x),
            RawScalar::Str(s) => Scalar::Str(s),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum ParamType {
    Ordinal,
    Categorical,
    Integer,
    Real,
    Boolean,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParam {
    name: Spanned<String>,
    #[serde(rename = "type")]
    kind: Spanned<ParamType>,
    values: Option<Spanned<Vec<RawScalar>>>,
    choices: Option<Spanned<Vec<String>>>,
    low: Option<Spanned<f64>>,
    high: Option<Spanned<f64>>,
    #[serde(default)]
    log: bool,
    default: Option<Spanned<RawScalar>>,
    when: Option<Spanned<BTreeMap<String, Vec<RawScalar>>>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawCommand {
    Line(String),
    Args(Vec<String>),
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    KernelTime,
    WallTime,
    CpuTime,
    Regex,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    #[default]
    Minimize,
    Maximize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMetric {
    kind: Option<MetricKind>,
    #[serde(default)]
    goal: Goal,
    regex: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Reduce {
    Min,
    #[default]
    Median,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimeouts {
    compile_s: Option<f64>,
    run_s: Option<f64>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum CheckMode {
    #[default]
    Output,
    None,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    #[default]
    Stderr,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    #[serde(default)]
    mode: CheckMode,
    #[serde(default)]
    stream: Stream,
    #[serde(default)]
    env: BTreeMap<String, String>,
    rtol: Option<f64>,
    atol: Option<f64>,
    reference: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchDefaults {
    pub learner: Option<String>,
    pub max_evals: Option<usize>,
    pub initial: Option<usize>,
    pub kappa: Option<f64>,
    pub seed: Option<u64>,
    pub pool: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProblem {
    name: Option<String>,
    mold: Spanned<String>,
    #[serde(default)]
    sources: Vec<Spanned<String>>,
    params: Spanned<Vec<RawParam>>,
    #[serde(default)]
    constraints: Vec<Spanned<String>>,
    #[serde(default)]
    forbidden: Vec<Spanned<BTreeMap<String, RawScalar>>>,
    compile: Spanned<RawCommand>,
    run: Spanned<RawCommand>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<String>>,
    metric: Option<RawMetric>,
    repeats: Option<Spanned<u32>>,
    reduce: Option<Reduce>,
    timeouts: Option<RawTimeouts>,
    check: Option<RawCheck>,
    search: Option<SearchDefaults>,
}

#[derive(Debug, Clone)]
pub struct Metric {
    pub kind: MetricKind,
    pub goal: Goal,
    pub regex: Option<regex::Regex>,
}

#[derive(Debug, Clone)]
pub struct Check {
    pub mode: CheckMode,
    pub stream: Stream,
    pub env: Vec<(String, String)>,
    pub rtol: f64,
    pub atol: f64,
    pub reference: Option<PathBuf>,
}

/// A validated problem, ready to run.
#[derive(Debug)]
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
    pub run: Template,
    pub env: Vec<(String, Template)>,
    pub metric: Metric,
    pub repeats: u32,
    pub reduce: Reduce,
    pub compile_timeout_s: f64,
    pub run_timeout_s: f64,
    pub check: Check,
    pub search: SearchDefaults,
}

struct Ctx<'a> {
    file: &'a Path,
}

impl Ctx<'_> {
    fn span(&self, loc: &serde_saphyr::Location) -> Span {
        Span {
            file: self.file.to_path_buf(),
            line: loc.line() as u32,
            col: loc.column() as u32,
        }
    }
    fn err<T>(
        &self,
        loc: &serde_saphyr::Location,
        message: String,
        hint: Option<&str>,
    ) -> Result<T, Error> {
        Err(Error::Config {
            span: self.span(loc),
            message,
            hint: hint.map(str::to_string),
        })
    }
}

/// Converts a serde-saphyr error into `file:line:col: message` plus a hint.
fn yaml_error(file: &Path, e: serde_saphyr::Error) -> Error {
    let text = e.to_string();
    // The rendered message may carry a source snippet; keep its first line, which says what.
    let first = text.lines().next().unwrap_or("invalid YAML").trim();
    // Drop the parser's own "error: line N column M:" prefix: we print file:line:col.
    let first = regex::Regex::new(r"^(error:\s*)?(line \d+ column \d+:\s*)?")
        .expect("valid regex")
        .replace(first, "")
        .to_string();
    let hint = if first.contains("unknown field") {
        Some("see the README's \"Problem file\" section for the allowed keys".to_string())
    } else if first.contains("invalid type") || first.contains("expected") {
        Some("check the value's type against the README's \"Problem file\" section".to_string())
    } else {
        None
    };
    match e.location() {
        Some(loc) if loc.line() > 0 => Error::Config {
            span: Span {
                file: file.to_path_buf(),
                line: loc.line() as u32,
                col: loc.column() as u32,
            },
            message: first,
            hint,
        },
        _ => Error::ConfigFile {
            file: file.to_path_buf(),
            message: first,
            hint,
        },
    }
}

impl Problem {
    pub fn load(path: &Path) -> Result<Problem, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::usage(
                format!("cannot read the problem file `{}`: {e}", path.display()),
                Some("give the path of a problem YAML, e.g. `moldtune run tests/e2e/matmul/matmul.yaml`"),
            )
        })?;
        let raw: RawProblem = serde_saphyr::from_str(&text).map_err(|e| yaml_error(path, e))?;
        let abs = std::fs::canonicalize(path)
            .map_err(|e| Error::io(format!("cannot resolve `{}`", path.display()), e))?;
        let dir = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
        Problem::from_raw(raw, path, &abs, dir, hex_hash(text.as_bytes()))
    }

    fn from_raw(
        raw: RawProblem,
        path: &Path,
        abs: &Path,
        dir: PathBuf,
        hash: String,
    ) -> Result<Problem, Error> {
        let cx = Ctx { file: path };
        let space = build_space(&cx, &raw)?;

        let mold_path = dir.join(&raw.mold.value);
        if !mold_path.is_file() {
            return cx.err(
                &raw.mold.referenced,
                format!("mold file `{}` does not exist", raw.mold.value),
                Some(&format!("looked for `{}`", mold_path.display())),
            );
        }
        let mold = Mold::load(&mold_path, &space)?;

        let mut sources = Vec::new();
        for s in &raw.sources {
            let p = dir.join(&s.value);
            if !p.is_file() {
                return cx.err(
                    &s.referenced,
                    format!("source file `{}` does not exist", s.value),
                    None,
                );
            }
            sources.push(p);
        }

        let compile = Template::new(command_text(&raw.compile.value));
        let run = Template::new(command_text(&raw.run.value));
        let env: Vec<(String, Template)> = raw
            .env
            .iter()
            .map(|(k, v)| (k.clone(), Template::new(v.value.clone())))
            .collect();

        // Every template must render with the default configuration: this finds undefined
        // variables and syntax errors now rather than at the first evaluation.
        let default = space.default_config();
        let vars = template::context(
            &space,
            &default,
            &template::Builtins::placeholder(&dir, &sources),
        );
        let mut checks: Vec<(&Template, &serde_saphyr::Location, String)> = vec![
            (&compile, &raw.compile.referenced, "compile".into()),
            (&run, &raw.run.referenced, "run".into()),
        ];
        for ((k, t), (_, sp)) in env.iter().zip(raw.env.iter()) {
            checks.push((t, &sp.referenced, format!("env.{k}")));
        }
        for (t, loc, what) in &checks {
            if let Err(e) = t.render(&vars) {
                return cx.err(
                    loc,
                    format!("the `{what}` template does not render: {e}"),
                    Some("template variables are the parameter names plus source, exe, sources, problem_dir, work_dir"),
                );
            }
        }

        // Every parameter must be used somewhere.
        let mut used_in_templates = std::collections::HashSet::new();
        for (t, _, _) in &checks {
            used_in_templates.extend(t.identifiers());
        }
        for (i, p) in space.params.iter().enumerate() {
            if !mold.uses(i) && !used_in_templates.contains(&p.name) {
                let loc = &raw.params.value[i].name.referenced;
                return cx.err(
                    loc,
                    format!("parameter `{}` is used nowhere", p.name),
                    Some(&format!(
                        "put a `#{}` marker in `{}`, or use `{{{{ {} }}}}` in compile, run or env",
                        p.name, raw.mold.value, p.name
                    )),
                );
            }
        }

        let m = raw.metric.unwrap_or(RawMetric {
            kind: None,
            goal: Goal::Minimize,
            regex: None,
        });
        let kind = m.kind.unwrap_or(if m.regex.is_some() {
            MetricKind::Regex
        } else {
            MetricKind::KernelTime
        });
        let regex = match (&kind, &m.regex) {
            (MetricKind::Regex, None) => {
                return Err(Error::ConfigFile {
                    file: path.to_path_buf(),
                    message: "`metric.kind: regex` needs `metric.regex`".into(),
                    hint: Some(
                        "e.g. `regex: 'time: ([0-9.eE+-]+)'` (the first group is the number)"
                            .into(),
                    ),
                })
            }
            (_, Some(r)) => match regex::Regex::new(&r.value) {
                Ok(re) => Some(re),
                Err(e) => {
                    return cx.err(
                        &r.referenced,
                        format!("invalid metric regex `{}`: {e}", r.value),
                        None,
                    )
                }
            },
            _ => None,
        };

        let repeats = match &raw.repeats {
            Some(r) if r.value == 0 => {
                return cx.err(&r.referenced, "`repeats` must be at least 1".into(), None)
            }
            Some(r) => r.value,
            None => 3,
        };
        let t = raw.timeouts.unwrap_or(RawTimeouts {
            compile_s: None,
            run_s: None,
        });
        let compile_timeout_s = t.compile_s.unwrap_or(120.0);
        let run_timeout_s = t.run_s.unwrap_or(60.0);
        if !(compile_timeout_s > 0.0 && run_timeout_s > 0.0) {
            return Err(Error::ConfigFile {
                file: path.to_path_buf(),
                message: "timeouts must be positive numbers of seconds".into(),
                hint: None,
            });
        }

        let c = raw.check.unwrap_or(RawCheck {
            mode: CheckMode::Output,
            stream: Stream::Stderr,
            env: BTreeMap::new(),
            rtol: None,
            atol: None,
            reference: None,
        });
        let reference = match &c.reference {
            Some(r) => {
                let p = dir.join(&r.value);
                if !p.is_file() {
                    return cx.err(
                        &r.referenced,
                        format!("reference source `{}` does not exist", r.value),
                        None,
                    );
                }
                Some(p)
            }
            None => None,
        };
        let check = Check {
            mode: c.mode,
            stream: c.stream,
            env: c.env.into_iter().collect(),
            rtol: c.rtol.unwrap_or(1e-6),
            atol: c.atol.unwrap_or(1e-9),
            reference,
        };

        let name = raw.name.clone().unwrap_or_else(|| {
            abs.file_stem()
                .map_or("problem".into(), |s| s.to_string_lossy().into_owned())
        });
        Ok(Problem {
            name,
            path: abs.to_path_buf(),
            dir,
            hash,
            space,
            mold,
            sources,
            compile,
            run,
            env,
            metric: Metric {
                kind,
                goal: m.goal,
                regex,
            },
            repeats,
            reduce: raw.reduce.unwrap_or_default(),
            compile_timeout_s,
            run_timeout_s,
            check,
            search: raw.search.unwrap_or_default(),
        })
    }
}

/// "choose one of `a`, `b`" for a default that is not among the values.
fn one_of<T: std::fmt::Display>(values: &[T]) -> String {
    let shown: Vec<String> = values.iter().map(|x| format!("`{x}`")).collect();
    format!("choose one of {}", shown.join(", "))
}

fn command_text(c: &RawCommand) -> String {
    match c {
        RawCommand::Line(s) => s.clone(),
        RawCommand::Args(v) => v.join(" "),
    }
}

fn build_space(cx: &Ctx, raw: &RawProblem) -> Result<Space, Error> {
    let mut params: Vec<Param> = Vec::new();
    let raws = &raw.params.value;
    if raws.is_empty() {
        return cx.err(
            &raw.params.referenced,
            "`params` is empty".into(),
            Some("a problem needs at least one parameter"),
        );
    }
    for rp in raws {
        let name = &rp.name.value;
        if !name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return cx.err(
                &rp.name.referenced,
                format!("parameter name `{name}` is not an identifier"),
                Some("use names like `P0`, `TILE_I`"),
            );
        }
        if [
            "pragma", "include", "define", "if", "ifdef", "ifndef", "endif", "else", "elif",
            "undef", "error", "line",
        ]
        .contains(&name.as_str())
        {
            return cx.err(
                &rp.name.referenced,
                format!("parameter name `{name}` is a preprocessor directive"),
                Some("its marker would replace the directive"),
            );
        }
        if params.iter().any(|p| p.name == *name) {
            return cx.err(
                &rp.name.referenced,
                format!("parameter `{name}` is defined twice"),
                None,
            );
        }
        let ty = rp.kind.value;
        let allowed: &[&str] = match ty {
            ParamType::Ordinal => &["values"],
            ParamType::Categorical => &["choices"],
            ParamType::Integer | ParamType::Real => &["low", "high", "log"],
            ParamType::Boolean => &[],
        };
        for (key, present) in [
            ("values", rp.values.is_some()),
            ("choices", rp.choices.is_some()),
            ("low", rp.low.is_some()),
            ("high", rp.high.is_some()),
            ("log", rp.log),
        ] {
            if present && !allowed.contains(&key) {
                return cx.err(
                    &rp.kind.referenced,
                    format!("`{key}` does not apply to a parameter of type `{}`", format!("{ty:?}").to_lowercase()),
                    Some("ordinal takes `values`, categorical `choices`, integer/real `low`/`high`/`log`"),
                );
            }
        }
        let kind = match ty {
            ParamType::Ordinal => {
                let Some(v) = &rp.values else {
                    return cx.err(
                        &rp.name.referenced,
                        format!("ordinal parameter `{name}` needs `values`"),
                        None,
                    );
                };
                if v.value.is_empty() {
                    return cx.err(
                        &v.referenced,
                        format!("`values` of `{name}` is empty"),
                        None,
                    );
                }
                Kind::Ordinal(v.value.iter().cloned().map(Scalar::from).collect())
            }
            ParamType::Categorical => {
                let Some(v) = &rp.choices else {
                    return cx.err(
                        &rp.name.referenced,
                        format!("categorical parameter `{name}` needs `choices`"),
                        None,
                    );
                };
                if v.value.is_empty() {
                    return cx.err(
                        &v.referenced,
                        format!("`choices` of `{name}` is empty"),
                        None,
                    );
                }
                Kind::Categorical(v.value.clone())
            }
            ParamType::Integer | ParamType::Real => {
                let (Some(lo), Some(hi)) = (&rp.low, &rp.high) else {
                    return cx.err(
                        &rp.name.referenced,
                        format!("parameter `{name}` needs `low` and `high`"),
                        None,
                    );
                };
                if lo.value > hi.value {
                    return cx.err(
                        &hi.referenced,
                        format!(
                            "`high` ({}) is below `low` ({}) in `{name}`",
                            hi.value, lo.value
                        ),
                        None,
                    );
                }
                if rp.log && lo.value <= 0.0 {
                    return cx.err(
                        &lo.referenced,
                        format!(
                            "a log-scale range needs `low` > 0, `{name}` has {}",
                            lo.value
                        ),
                        None,
                    );
                }
                if ty == ParamType::Integer {
                    if lo.value.fract() != 0.0 || hi.value.fract() != 0.0 {
                        return cx.err(
                            &lo.referenced,
                            format!("integer parameter `{name}` needs whole-number bounds"),
                            None,
                        );
                    }
                    Kind::Integer {
                        low: lo.value as i64,
                        high: hi.value as i64,
                        log: rp.log,
                    }
                } else {
                    Kind::Real {
                        low: lo.value,
                        high: hi.value,
                        log: rp.log,
                    }
                }
            }
            ParamType::Boolean => Kind::Boolean,
        };
        let mut p = Param {
            name: name.clone(),
            kind,
            default: 0.0,
            condition: None,
        };
        p.default = match &rp.default {
            Some(d) => match p.coord_of(&d.value.clone().into()) {
                Some(c) => c,
                None => {
                    let shown = Scalar::from(d.value.clone()).to_string();
                    return cx.err(
                        &d.referenced,
                        format!("default `{shown}` is not a value of `{name}`"),
                        Some(&match &p.kind {
                            Kind::Ordinal(v) => one_of(v),
                            Kind::Categorical(v) => one_of(v),
                            _ => "the default must lie within `low`..=`high`".to_string(),
                        }),
                    );
                }
            },
            None => match &p.kind {
                Kind::Integer { low, .. } => *low as f64,
                Kind::Real { low, high, log } => {
                    if *log {
                        (low * high).sqrt()
                    } else {
                        (low + high) / 2.0
                    }
                }
                _ => 0.0,
            },
        };
        params.push(p);
    }

    // Conditions, after all parameters are known (a parent may come later in the list).
    for (i, rp) in raws.iter().enumerate() {
        let Some(w) = &rp.when else { continue };
        if w.value.len() != 1 {
            return cx.err(
                &w.referenced,
                "`when` must name exactly one parent parameter".into(),
                Some("e.g. `when: {P1: [\"#pragma omp interchange\"]}`"),
            );
        }
        let (parent_name, vals) = w.value.iter().next().expect("one entry");
        let Some(parent) = params.iter().position(|p| p.name == *parent_name) else {
            return cx.err(
                &w.referenced,
                format!("condition names unknown parameter `{parent_name}`"),
                None,
            );
        };
        if parent == i {
            return cx.err(
                &w.referenced,
                format!("parameter `{parent_name}` cannot depend on itself"),
                None,
            );
        }
        let mut coords = Vec::new();
        for v in vals {
            let s: Scalar = v.clone().into();
            match params[parent].coord_of(&s) {
                Some(c) => coords.push(c),
                None => {
                    return cx.err(
                        &w.referenced,
                        format!("`{s}` is not a value of `{parent_name}`"),
                        None,
                    )
                }
            }
        }
        params[i].condition = Some(Condition {
            parent,
            values: coords,
        });
    }
    // Dependency order; a cycle is an error.
    let n = params.len();
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    while order.len() < n {
        let before = order.len();
        for i in 0..n {
            if !placed[i]
                && params[i]
                    .condition
                    .as_ref()
                    .is_none_or(|c| placed[c.parent])
            {
                placed[i] = true;
                order.push(i);
            }
        }
        if order.len() == before {
            let i = (0..n).find(|&i| !placed[i]).expect("unplaced");
            let w = raws[i].when.as_ref().expect("has a condition");
            return cx.err(
                &w.referenced,
                format!("conditions of `{}` form a cycle", params[i].name),
                None,
            );
        }
    }

    let lookup = |n: &str| params.iter().position(|p| p.name == n);
    let mut forbidden = Vec::new();
    for f in &raw.forbidden {
        let mut combo = Vec::new();
        for (k, v) in &f.value {
            let Some(i) = lookup(k) else {
                return cx.err(
                    &f.referenced,
                    format!("forbidden combination names unknown parameter `{k}`"),
                    None,
                );
            };
            let s: Scalar = v.clone().into();
            match params[i].coord_of(&s) {
                Some(c) => combo.push((i, c)),
                None => {
                    return cx.err(
                        &f.referenced,
                        format!("`{s}` is not a value of `{k}`"),
                        None,
                    )
                }
            }
        }
        forbidden.push(combo);
    }
    let mut constraints = Vec::new();
    for c in &raw.constraints {
        match expr::parse(&c.value, &lookup) {
            Ok(e) => constraints.push(Constraint {
                text: c.value.clone(),
                expr: e,
            }),
            Err(pe) => {
                let mut loc = cx.span(&c.referenced);
                // The YAML position is the scalar's start; a quoted scalar starts one earlier.
                loc.col += pe.col as u32 + 1;
                return Err(Error::Config {
                    span: loc,
                    message: format!("in constraint `{}`: {}", c.value, pe.message),
                    hint: Some(format!(
                        "parameters are {}",
                        params
                            .iter()
                            .map(|p| format!("`{}`", p.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                });
            }
        }
    }
    let space = Space {
        params,
        order,
        forbidden,
        constraints,
    };

    // The default configuration is the baseline and the reference: it must be valid. (This
    // also proves that the constraints leave something to search.)
    let default = space.default_config();
    if !space.is_valid(&default) {
        let broken = space
            .constraints
            .iter()
            .zip(&raw.constraints)
            .find(|(k, _)| {
                let one = Space {
                    constraints: vec![(*k).clone()],
                    forbidden: vec![],
                    ..space.clone()
                };
                !one.is_valid(&default)
            });
        let message = format!(
            "the default configuration ({}) is excluded by the constraints",
            space.describe(&default)
        );
        return match broken {
            Some((k, raw_k)) => cx.err(
                &raw_k.referenced,
                format!("{message}: `{}` is false for it", k.text),
                Some("change a parameter's `default` or relax the constraint"),
            ),
            None => Err(Error::ConfigFile {
                file: cx.file.to_path_buf(),
                message: format!("{message} (a forbidden combination)"),
                hint: Some("change a parameter's `default`".into()),
            }),
        };
    }

    Ok(space)
}

impl Problem {
    pub fn default_config(&self) -> Config {
        self.space.default_config()
    }
}
