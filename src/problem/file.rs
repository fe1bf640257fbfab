//! The problem file (YAML) validated into a [`Problem`].
//!
//! Every mistake a user can make in the file is reported here, before a results directory is
//! created: unknown keys and wrong types (from the YAML parser, with `file:line:col`), empty
//! choices, defaults outside their choices, conditions and constraints naming unknown
//! parameters, constraints that exclude every configuration, a missing mold, mold markers
//! without parameters, parameters used nowhere and templates with undefined variables.
//!
//! The checks run in a fixed order (the steps of `build_space` and `Problem::from_raw`) and
//! the first failing one is reported, so a file with several mistakes always gets the same
//! message.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde_saphyr::{Location, Spanned};

use crate::error::{did_you_mean, Error, Span};
use crate::problem::expr::{self, ParseError};
use crate::problem::limits;
use crate::problem::mold::Mold;
use crate::problem::raw::{
    self, ParamType, RawCheck, RawMetric, RawParam, RawProblem, RawScalar, RawSearch, RawTimeouts,
    RawValues,
};
pub use crate::problem::raw::{CheckMode, Goal, MetricKind, Reduce, Stream};
use crate::problem::space::{Condition, Config, Constraint, Kind, Param, Scalar, Space};
use crate::problem::template::{self, Template};
use crate::rng::hex_hash;

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
    /// Arguments appended to the compile command for a separate, untimed *check build*
    /// (e.g. `-DPOLYBENCH_DUMP_ARRAYS`); empty: the timed binary is also checked.
    pub compile_extra: Vec<String>,
}

/// The problem file's `search:` defaults, validated (the learner's name is checked where
/// learners are known, in the run's settings, and keeps its position for that message).
#[derive(Debug, Default, Clone)]
pub struct SearchDefaults {
    pub learner: Option<(String, Span)>,
    pub max_evals: Option<usize>,
    pub initial: Option<usize>,
    pub kappa: Option<f64>,
    pub seed: Option<u64>,
    pub pool: Option<usize>,
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
    /// The most bytes a compile or run may write to one file (`max_output_mb`, 1 GiB by
    /// default): past it the writer is killed by SIGXFSZ.
    pub max_output_bytes: u64,
    pub check: Check,
    pub search: SearchDefaults,
}

impl Problem {
    /// Reads the problem file at `path` and validates it.
    pub fn load(path: &Path) -> Result<Problem, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::usage(
                format!("cannot read the problem file `{}`: {e}", path.display()),
                Some("give the path of a problem YAML, e.g. `moldtune run tests/e2e/matmul/matmul.yaml`"),
            )
        })?;
        let raw = raw::parse(path, &text)?;
        let abs = std::fs::canonicalize(path)
            .map_err(|e| Error::io(format!("cannot resolve `{}`", path.display()), e))?;
        let dir = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
        let cx = Ctx {
            file: path,
            dir: &dir,
            text: &text,
        };
        cx.problem(raw, &abs, hex_hash(text.as_bytes()))
    }

    /// The default configuration: the baseline every run evaluates first.
    pub fn default_config(&self) -> Config {
        self.space.default_config()
    }
}

impl Ctx<'_> {
    /// Validates a parsed problem file: the space, then what the evaluations need (mold,
    /// sources, templates), then how they are measured and checked.
    fn problem(&self, raw: RawProblem, abs: &Path, hash: String) -> Result<Problem, Error> {
        let cx = self;
        let space = build_space(cx, &raw)?;
        let mold = cx.mold(&raw.mold, &space)?;
        let sources = cx.sources(&raw.sources)?;
        let compile = Template::new(raw.compile.value.text());
        let run = Template::new(raw.run.value.text());
        let env = env_templates(&raw.env);
        let named = named_templates(&raw, &compile, &run, &env);
        cx.check_templates(&named, &space, &sources)?;
        cx.check_commands_not_empty(&named[..2], &space, &sources)?;
        cx.check_every_param_used(&named, &space, &mold, &raw)?;
        let metric = cx.metric(raw.metric.as_ref())?;
        let repeats = cx.repeats(raw.repeats.as_ref())?;
        let (compile_timeout_s, run_timeout_s) = cx.timeouts(raw.timeouts.unwrap_or_default())?;
        let max_output_bytes = match &raw.max_output_mb {
            Some(v) => cx.valid(v, "max_output_mb", |&mb| limits::output_mb(mb))?,
            None => limits::DEFAULT_OUTPUT_BYTES,
        };
        let check = cx.check(raw.check.unwrap_or_default())?;
        let search = cx.search(raw.search.unwrap_or_default())?;
        Ok(Problem {
            name: cx.name(raw.name.as_ref(), abs)?,
            path: abs.to_path_buf(),
            dir: cx.dir.to_path_buf(),
            hash,
            space,
            mold,
            sources,
            compile,
            run,
            env,
            metric,
            repeats,
            reduce: raw.reduce.unwrap_or_default(),
            compile_timeout_s,
            run_timeout_s,
            max_output_bytes,
            check,
            search,
        })
    }
}

/// Where errors point: the problem file (its path and text), and the directory its
/// relative paths start from.
struct Ctx<'a> {
    file: &'a Path,
    dir: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn span(&self, loc: &Location) -> Span {
        Span {
            file: self.file.to_path_buf(),
            line: loc.line() as u32,
            col: loc.column() as u32,
        }
    }

    fn err<T>(&self, loc: &Location, message: String, hint: Option<&str>) -> Result<T, Error> {
        Err(Error::Config {
            span: self.span(loc),
            message,
            hint: hint.map(str::to_string),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The parameter space
// ---------------------------------------------------------------------------------------------

/// Names that must not be parameters: the parameter's `#NAME` marker would replace the
/// directive in the mold.
const DIRECTIVES: [&str; 12] = [
    "pragma", "include", "define", "if", "ifdef", "ifndef", "endif", "else", "elif", "undef",
    "error", "line",
];

/// The parameter space, checked in the order a reader meets it: each parameter on its own,
/// then the conditions between them, the forbidden combinations, the constraints, and last
/// the default configuration against all of these.
fn build_space(cx: &Ctx, raw: &RawProblem) -> Result<Space, Error> {
    cx.check_params_not_empty(&raw.params)?;
    let raws = &raw.params.value;
    let mut params: Vec<Param> = Vec::new();
    for rp in raws {
        let p = cx.param(rp, &params)?;
        params.push(p);
    }
    cx.add_conditions(raws, &mut params)?;
    let order = cx.dependency_order(raws, &params)?;
    let forbidden = cx.forbidden(&raw.forbidden, &params)?;
    let constraints = cx.constraints(&raw.constraints, &params)?;
    let space = Space {
        params,
        order,
        forbidden,
        constraints,
    };
    cx.check_constraints_evaluate(&space, &raw.constraints)?;
    cx.check_default_is_valid(&space, &raw.constraints, &raw.forbidden)?;
    Ok(space)
}

impl Ctx<'_> {
    /// There is at least one parameter.
    fn check_params_not_empty(&self, params: &Spanned<Vec<RawParam>>) -> Result<(), Error> {
        if params.value.is_empty() {
            return self.err(
                &params.referenced,
                "`params` is empty".into(),
                Some("a problem needs at least one parameter"),
            );
        }
        Ok(())
    }

    /// One parameter on its own: its name, the keys its type takes, its values, its default.
    /// `earlier` are the parameters before it in the file.
    fn param(&self, rp: &RawParam, earlier: &[Param]) -> Result<Param, Error> {
        self.check_name(&rp.name, earlier)?;
        self.check_keys_apply(rp)?;
        let mut p = Param {
            name: rp.name.value.clone(),
            kind: self.kind(rp)?,
            default: 0.0,
            condition: None,
        };
        p.default = self.default_coord(rp.default.as_ref(), &p)?;
        Ok(p)
    }

    /// The name is an identifier, not a preprocessor directive, and not already taken.
    fn check_name(&self, name: &Spanned<String>, earlier: &[Param]) -> Result<(), Error> {
        let (loc, name) = (&name.referenced, &name.value);
        if !is_identifier(name) {
            return self.err(
                loc,
                format!("parameter name `{name}` is not an identifier"),
                Some("use names like `P0`, `TILE_I`"),
            );
        }
        if DIRECTIVES.contains(&name.as_str()) {
            return self.err(
                loc,
                format!("parameter name `{name}` is a preprocessor directive"),
                Some("its marker would replace the directive"),
            );
        }
        if earlier.iter().any(|p| p.name == *name) {
            return self.err(loc, format!("parameter `{name}` is defined twice"), None);
        }
        Ok(())
    }

    /// Only the keys of the parameter's type are given (`values` for ordinal, `choices` for
    /// categorical, `low`/`high`/`log` for integer and real, none for boolean).
    fn check_keys_apply(&self, rp: &RawParam) -> Result<(), Error> {
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
                return self.err(
                    &rp.kind.referenced,
                    format!("`{key}` does not apply to a parameter of type `{}`", format!("{ty:?}").to_lowercase()),
                    Some("ordinal takes `values`, categorical `choices`, integer/real `low`/`high`/`log`"),
                );
            }
        }
        Ok(())
    }

    /// The parameter's values by its type: a list given and not empty, or a valid range.
    fn kind(&self, rp: &RawParam) -> Result<Kind, Error> {
        match rp.kind.value {
            ParamType::Ordinal => self.ordinal(rp),
            ParamType::Categorical => self.categorical(rp),
            ParamType::Integer => self.integer(rp),
            ParamType::Real => self.real(rp),
            ParamType::Boolean => Ok(Kind::Boolean),
        }
    }

    /// An ordinal's `values` are given and not empty.
    fn ordinal(&self, rp: &RawParam) -> Result<Kind, Error> {
        let name = &rp.name.value;
        let Some(v) = &rp.values else {
            return self.err(
                &rp.name.referenced,
                format!("ordinal parameter `{name}` needs `values`"),
                None,
            );
        };
        if v.value.is_empty() {
            return self.err(
                &v.referenced,
                format!("`values` of `{name}` is empty"),
                None,
            );
        }
        let values: Vec<Scalar> = v.value.iter().cloned().map(Scalar::from).collect();
        if let Some(x) = values
            .iter()
            .find(|x| matches!(x, Scalar::Real(r) if !r.is_finite()))
        {
            return self.err(
                &v.referenced,
                format!("`values` of `{name}` holds `{x}`, which is not a finite number"),
                None,
            );
        }
        self.check_unique(&v.referenced, name, "values", &Kind::Ordinal(values))
    }

    /// No two values of a parameter are equal (`2` and `2.0` are): one configuration
    /// would otherwise have two names and be evaluated twice.
    fn check_unique(
        &self,
        loc: &Location,
        name: &str,
        key: &str,
        kind: &Kind,
    ) -> Result<Kind, Error> {
        let probe = Param {
            name: name.to_string(),
            kind: kind.clone(),
            default: 0.0,
            condition: None,
        };
        let shown: Vec<Scalar> = match kind {
            Kind::Ordinal(v) => v.clone(),
            Kind::Categorical(v) => v.iter().cloned().map(Scalar::Str).collect(),
            _ => vec![],
        };
        // coord_of finds the first equal value: a later index means an earlier duplicate.
        for (i, x) in shown.iter().enumerate() {
            if let Some(first) = probe.coord_of(x).filter(|&c| c as usize != i) {
                let earlier = &shown[first as usize];
                let message = match earlier.to_string() == x.to_string() {
                    true => format!("`{key}` of `{name}` lists `{x}` twice"),
                    false => {
                        format!("`{key}` of `{name}` lists one value twice: `{earlier}` and `{x}`")
                    }
                };
                return self.err(loc, message, Some("remove the repeated value"));
            }
        }
        Ok(kind.clone())
    }

    /// A categorical's `choices` are given and not empty.
    fn categorical(&self, rp: &RawParam) -> Result<Kind, Error> {
        let name = &rp.name.value;
        let Some(v) = &rp.choices else {
            return self.err(
                &rp.name.referenced,
                format!("categorical parameter `{name}` needs `choices`"),
                None,
            );
        };
        if v.value.is_empty() {
            return self.err(
                &v.referenced,
                format!("`choices` of `{name}` is empty"),
                None,
            );
        }
        self.check_unique(
            &v.referenced,
            name,
            "choices",
            &Kind::Categorical(v.value.clone()),
        )
    }

    /// An integer range is a valid range with whole-number bounds within ±2^53.
    fn integer(&self, rp: &RawParam) -> Result<Kind, Error> {
        let (lo, hi) = self.range(rp)?;
        let name = &rp.name.value;
        let low = self.valid(lo, &format!("low` of `{name}"), |&x| limits::whole(x))?;
        let high = self.valid(hi, &format!("high` of `{name}"), |&x| limits::whole(x))?;
        Ok(Kind::Integer {
            low,
            high,
            log: rp.log,
        })
    }

    /// A real range is a valid range.
    fn real(&self, rp: &RawParam) -> Result<Kind, Error> {
        let (lo, hi) = self.range(rp)?;
        Ok(Kind::Real {
            low: lo.value,
            high: hi.value,
            log: rp.log,
        })
    }

    /// A range has `low` and `high`, `low` <= `high`, and `low` > 0 on a log scale.
    fn range<'r>(&self, rp: &'r RawParam) -> Result<(&'r Spanned<f64>, &'r Spanned<f64>), Error> {
        let name = &rp.name.value;
        let (Some(lo), Some(hi)) = (&rp.low, &rp.high) else {
            return self.err(
                &rp.name.referenced,
                format!("parameter `{name}` needs `low` and `high`"),
                None,
            );
        };
        self.valid(lo, &format!("low` of `{name}"), |&x| limits::finite(x))?;
        self.valid(hi, &format!("high` of `{name}"), |&x| limits::finite(x))?;
        if lo.value > hi.value {
            return self.err(
                &hi.referenced,
                format!(
                    "`high` ({}) is below `low` ({}) in `{name}`",
                    hi.value, lo.value
                ),
                None,
            );
        }
        if rp.log && lo.value <= 0.0 {
            return self.err(
                &lo.referenced,
                format!(
                    "a log-scale range needs `low` > 0, `{name}` has {}",
                    lo.value
                ),
                None,
            );
        }
        Ok((lo, hi))
    }

    /// A given default is one of the parameter's values; none given picks
    /// [`implicit_default`].
    fn default_coord(&self, d: Option<&Spanned<RawScalar>>, p: &Param) -> Result<f64, Error> {
        let Some(d) = d else {
            return Ok(implicit_default(&p.kind));
        };
        if let Some(c) = p.coord_of(&d.value.clone().into()) {
            return Ok(c);
        }
        let shown = Scalar::from(d.value.clone()).to_string();
        let hint = match &p.kind {
            Kind::Ordinal(v) => one_of(v),
            Kind::Categorical(v) => one_of(v),
            Kind::Boolean => "use `true` or `false`".to_string(),
            _ => "the default must lie within `low`..=`high`".to_string(),
        };
        self.err(
            &d.referenced,
            format!("default `{shown}` is not a value of `{}`", p.name),
            Some(&hint),
        )
    }

    /// Conditions (`when`), once all parameters are known: a parent may come later in the
    /// list than its child.
    fn add_conditions(&self, raws: &[RawParam], params: &mut [Param]) -> Result<(), Error> {
        for (i, rp) in raws.iter().enumerate() {
            let Some(w) = &rp.when else { continue };
            let condition = self.condition(w, i, params)?;
            params[i].condition = Some(condition);
        }
        Ok(())
    }

    /// The `when` of parameter `i` names exactly one parent, a known parameter other than
    /// `i` itself, and only values of that parent.
    fn condition(
        &self,
        w: &Spanned<BTreeMap<String, Vec<RawScalar>>>,
        i: usize,
        params: &[Param],
    ) -> Result<Condition, Error> {
        if w.value.len() != 1 {
            return self.err(
                &w.referenced,
                "`when` must name exactly one parent parameter".into(),
                Some("e.g. `when: {P1: [\"#pragma omp interchange\"]}`"),
            );
        }
        let (parent_name, vals) = w.value.iter().next().expect("one entry");
        let Some(parent) = index_of(params, parent_name) else {
            return self.err(
                &w.referenced,
                format!("condition names unknown parameter `{parent_name}`"),
                None,
            );
        };
        if parent == i {
            return self.err(
                &w.referenced,
                format!("parameter `{parent_name}` cannot depend on itself"),
                None,
            );
        }
        let values = vals
            .iter()
            .map(|v| self.coord_in(&w.referenced, &params[parent], v))
            .collect::<Result<Vec<f64>, Error>>()?;
        Ok(Condition { parent, values })
    }

    /// The parameters in dependency order, parents before children; conditions that form a
    /// cycle are an error.
    fn dependency_order(&self, raws: &[RawParam], params: &[Param]) -> Result<Vec<usize>, Error> {
        let n = params.len();
        let mut order = Vec::with_capacity(n);
        let mut placed = vec![false; n];
        while order.len() < n {
            let before = order.len();
            place_ready(params, &mut placed, &mut order);
            if order.len() == before {
                let i = (0..n).find(|&i| !placed[i]).expect("unplaced");
                let w = raws[i].when.as_ref().expect("has a condition");
                return self.err(
                    &w.referenced,
                    format!("conditions of `{}` form a cycle", params[i].name),
                    None,
                );
            }
        }
        Ok(order)
    }

    /// Forbidden combinations name known parameters and values of them. An entry that
    /// lists several values for a parameter forbids each of them (any-of): it stands for
    /// every combination of its lists.
    fn forbidden(
        &self,
        raw: &[Spanned<BTreeMap<String, RawValues>>],
        params: &[Param],
    ) -> Result<Vec<Vec<(usize, f64)>>, Error> {
        let mut all = Vec::new();
        for f in raw {
            all.extend(self.combinations(f, params)?);
        }
        Ok(all)
    }

    /// The combinations one forbidden entry stands for (the product of its lists).
    fn combinations(
        &self,
        f: &Spanned<BTreeMap<String, RawValues>>,
        params: &[Param],
    ) -> Result<Vec<Vec<(usize, f64)>>, Error> {
        let mut combos: Vec<Vec<(usize, f64)>> = vec![vec![]];
        for (k, v) in &f.value {
            let Some(i) = index_of(params, k) else {
                return self.err(
                    &f.referenced,
                    format!("forbidden combination names unknown parameter `{k}`"),
                    None,
                );
            };
            let coords = (v.values().iter())
                .map(|x| self.coord_in(&f.referenced, &params[i], x))
                .collect::<Result<Vec<f64>, Error>>()?;
            if coords.is_empty() || combos.len() * coords.len() > MAX_FORBIDDEN_COMBINATIONS {
                let why = format!("a forbidden entry must list 1 to {MAX_FORBIDDEN_COMBINATIONS} combinations (`{k}` lists {})", coords.len());
                return self.err(
                    &f.referenced,
                    why,
                    Some("split it, or write a constraint instead"),
                );
            }
            combos = (combos.iter())
                .flat_map(|c| {
                    coords
                        .iter()
                        .map(move |&x| [c.clone(), vec![(i, x)]].concat())
                })
                .collect();
        }
        Ok(combos)
    }

    /// The coordinate of the YAML value `v` of parameter `p`; an error at `loc` when `v` is
    /// not one of its values.
    fn coord_in(&self, loc: &Location, p: &Param, v: &RawScalar) -> Result<f64, Error> {
        let s: Scalar = v.clone().into();
        match p.coord_of(&s) {
            Some(c) => Ok(c),
            None => self.err(loc, format!("`{s}` is not a value of `{}`", p.name), None),
        }
    }

    /// Constraint expressions parse and name only known parameters.
    fn constraints(
        &self,
        raw: &[Spanned<String>],
        params: &[Param],
    ) -> Result<Vec<Constraint>, Error> {
        let lookup = |n: &str| index_of(params, n);
        raw.iter()
            .map(|c| match expr::parse(&c.value, &lookup) {
                Ok(e) => Ok(Constraint {
                    text: c.value.clone(),
                    expr: e,
                }),
                Err(pe) => Err(self.constraint_error(c, pe, params)),
            })
            .collect()
    }

    /// A constraint's parse error, at its column within the YAML scalar.
    fn constraint_error(&self, c: &Spanned<String>, pe: ParseError, params: &[Param]) -> Error {
        let mut span = self.span(&c.referenced);
        // The YAML position is the scalar's start; a quoted scalar starts one earlier.
        span.col += pe.col as u32 + 1;
        let names: Vec<String> = params.iter().map(|p| format!("`{}`", p.name)).collect();
        Error::Config {
            span,
            message: format!("in constraint `{}`: {}", shorten(&c.value), pe.message),
            hint: Some(format!("parameters are {}", names.join(", "))),
        }
    }

    /// Every constraint evaluates without a type error (`"a" * 2`) on the default
    /// configuration and on each one-parameter change of it (every value of a parameter
    /// with few values, the bounds of a range): a type error would otherwise silently
    /// reject configurations as if the constraint were false.
    fn check_constraints_evaluate(
        &self,
        space: &Space,
        raw: &[Spanned<String>],
    ) -> Result<(), Error> {
        let default = space.default_config();
        let mut probes = vec![default.clone()];
        for (i, p) in space.params.iter().enumerate() {
            for coord in probe_coords(&p.kind) {
                let mut c = default.clone();
                c.0[i] = coord;
                probes.push(c);
            }
        }
        for (k, r) in space.constraints.iter().zip(raw) {
            for c in &probes {
                match k.expr.eval(&|i| space.params[i].val(c.0[i])) {
                    Err(e) if e != "inactive parameter" => {
                        return self.err(
                            &r.referenced,
                            format!(
                                "constraint `{}` cannot be evaluated for {}: {e}",
                                k.text,
                                space.describe(c)
                            ),
                            Some("compare numbers with numbers and strings with strings"),
                        )
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// The default configuration is the baseline and the reference, so it must be valid.
    /// (This also proves that the constraints leave something to search.)
    fn check_default_is_valid(
        &self,
        space: &Space,
        raw: &[Spanned<String>],
        forbidden: &[Spanned<BTreeMap<String, RawValues>>],
    ) -> Result<(), Error> {
        let default = space.default_config();
        if space.is_valid(&default) {
            return Ok(());
        }
        let message = format!(
            "the default configuration ({}) is excluded by the constraints",
            space.describe(&default)
        );
        match first_false_constraint(space, &default, raw) {
            Some((k, raw_k)) => self.err(
                &raw_k.referenced,
                format!("{message}: `{}` is false for it", k.text),
                Some("change a parameter's `default` or relax the constraint"),
            ),
            None => {
                let holds = |f: &&Spanned<BTreeMap<String, RawValues>>| {
                    let combos = self.combinations(f, &space.params).unwrap_or_default();
                    combos
                        .iter()
                        .any(|c| c.iter().all(|&(i, v)| default.0[i] == v))
                };
                let Some(at) = forbidden.iter().find(holds) else {
                    return Err(Error::ConfigFile {
                        file: self.file.to_path_buf(),
                        message,
                        hint: None,
                    });
                };
                self.err(
                    &at.referenced,
                    format!("{message}: it is this forbidden combination"),
                    Some("change a parameter's `default` or the combination"),
                )
            }
        }
    }
}

/// The most combinations one forbidden entry's lists may stand for.
const MAX_FORBIDDEN_COMBINATIONS: usize = 10_000;

/// `[A-Za-z_][A-Za-z0-9_]*`: usable as a mold marker, a template variable and in a
/// constraint.
fn is_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The default coordinate when none is given: an integer's `low`, the middle of a real range
/// (geometric on a log scale), otherwise the first value (`false` for a boolean).
fn implicit_default(kind: &Kind) -> f64 {
    match kind {
        Kind::Integer { low, .. } => *low as f64,
        Kind::Real { low, high, log } => {
            if *log {
                (low * high).sqrt()
            } else {
                (low + high) / 2.0
            }
        }
        _ => 0.0,
    }
}

/// Coordinates worth probing a constraint with: every value of a parameter with at most 64,
/// else the first and last; the bounds of a range.
fn probe_coords(kind: &Kind) -> Vec<f64> {
    let n = match kind {
        Kind::Ordinal(v) => v.len(),
        Kind::Categorical(v) => v.len(),
        Kind::Boolean => 2,
        Kind::Integer { low, high, .. } => return vec![*low as f64, *high as f64],
        Kind::Real { low, high, .. } => return vec![*low, *high],
    };
    if n <= 64 {
        (0..n).map(|i| i as f64).collect()
    } else {
        vec![0.0, (n - 1) as f64]
    }
}

/// A long text cut for a one-line message.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// "choose one of `a`, `b`" for a default that is not among the values.
fn one_of<T: std::fmt::Display>(values: &[T]) -> String {
    let shown: Vec<String> = values.iter().map(|x| format!("`{x}`")).collect();
    format!("choose one of {}", shown.join(", "))
}

fn index_of(params: &[Param], name: &str) -> Option<usize> {
    params.iter().position(|p| p.name == name)
}

/// One pass of the dependency order: places every parameter whose parent, if any, is placed.
fn place_ready(params: &[Param], placed: &mut [bool], order: &mut Vec<usize>) {
    let n = params.len();
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
}

/// The first constraint that on its own excludes `c`, with its YAML entry; `None` when only
/// a forbidden combination does.
fn first_false_constraint<'s>(
    space: &'s Space,
    c: &Config,
    raw: &'s [Spanned<String>],
) -> Option<(&'s Constraint, &'s Spanned<String>)> {
    space.constraints.iter().zip(raw).find(|(k, _)| {
        let one = Space {
            constraints: vec![(*k).clone()],
            forbidden: vec![],
            ..space.clone()
        };
        !one.is_valid(c)
    })
}

// ---------------------------------------------------------------------------------------------
// What the evaluations need, and how they are measured and checked
// ---------------------------------------------------------------------------------------------

/// A template with where it is written and what to call it in an error.
struct NamedTemplate<'a> {
    template: &'a Template,
    loc: &'a Location,
    what: String,
    /// A command (split into arguments), not an environment value.
    command: bool,
}

impl<'a> NamedTemplate<'a> {
    fn new(template: &'a Template, loc: &'a Location, what: String) -> Self {
        let command = !what.starts_with("env.");
        NamedTemplate {
            template,
            loc,
            what,
            command,
        }
    }
}

fn env_templates(env: &BTreeMap<String, Spanned<String>>) -> Vec<(String, Template)> {
    env.iter()
        .map(|(k, v)| (k.clone(), Template::new(v.value.clone())))
        .collect()
}

/// compile, run and each `env.NAME`, in that order (the order their errors are reported in).
fn named_templates<'a>(
    raw: &'a RawProblem,
    compile: &'a Template,
    run: &'a Template,
    env: &'a [(String, Template)],
) -> Vec<NamedTemplate<'a>> {
    let mut out = vec![
        NamedTemplate::new(compile, &raw.compile.referenced, "compile".into()),
        NamedTemplate::new(run, &raw.run.referenced, "run".into()),
    ];
    for ((k, t), (_, sp)) in env.iter().zip(raw.env.iter()) {
        out.push(NamedTemplate::new(t, &sp.referenced, format!("env.{k}")));
    }
    out
}

/// The values of `p` that hold several flags (`-mllvm -polly`: two or more words, each
/// starting with `-`), with their coordinates.
fn flag_values(p: &Param) -> Vec<(f64, String)> {
    let texts: Vec<String> = match &p.kind {
        Kind::Categorical(v) => v.clone(),
        Kind::Ordinal(v) => v.iter().map(Scalar::to_string).collect(),
        _ => vec![],
    };
    let is_flags = |v: &str| {
        let words: Vec<&str> = v.split_whitespace().collect();
        words.len() > 1 && words.iter().all(|w| w.starts_with('-'))
    };
    (texts.into_iter().enumerate())
        .filter(|(_, v)| is_flags(v))
        .map(|(k, v)| (k as f64, v))
        .collect()
}

impl Ctx<'_> {
    /// The mold file exists (its markers are checked by [`Mold::load`]).
    fn mold(&self, m: &Spanned<String>, space: &Space) -> Result<Mold, Error> {
        let path = self.dir.join(&m.value);
        if !path.is_file() {
            return self.err(
                &m.referenced,
                format!("mold file `{}` does not exist", m.value),
                Some(&format!("looked for `{}`", path.display())),
            );
        }
        Mold::load(&path, space)
    }

    /// Every extra source file exists.
    fn sources(&self, raw: &[Spanned<String>]) -> Result<Vec<PathBuf>, Error> {
        raw.iter()
            .map(|s| self.existing_file(s, "source file"))
            .collect()
    }

    /// `s`, relative to the problem's directory, is a file.
    fn existing_file(&self, s: &Spanned<String>, what: &str) -> Result<PathBuf, Error> {
        let p = self.dir.join(&s.value);
        if !p.is_file() {
            return self.err(
                &s.referenced,
                format!("{what} `{}` does not exist", s.value),
                None,
            );
        }
        Ok(p)
    }

    /// Every template parses, reads only parameters and built-ins, passes no value that
    /// holds several flags as one argument, and renders with the default configuration
    /// (which finds what tera reports only when rendering, e.g. a filter's bad argument).
    fn check_templates(
        &self,
        named: &[NamedTemplate],
        space: &Space,
        sources: &[PathBuf],
    ) -> Result<(), Error> {
        let builtins = template::Builtins::placeholder(self.dir, sources);
        let vars = template::context(space, &space.default_config(), &builtins);
        for t in named {
            let read = match t.template.variables() {
                Ok(read) => read,
                Err(e) => return self.template_error(t, format!("does not parse: {e}")),
            };
            self.check_names_known(t, &read, space)?;
            if t.command {
                self.check_flags_split(t, &read, space, &builtins)?;
            }
            let rendered = if t.command {
                t.template.argv(&vars).map(|_| ())
            } else {
                t.template.render(&vars).map(|_| ())
            };
            if let Err(e) = rendered {
                return self.template_error(t, format!("does not render: {e}"));
            }
        }
        Ok(())
    }

    /// The compile and run commands name a program (with the default configuration).
    fn check_commands_not_empty(
        &self,
        commands: &[NamedTemplate],
        space: &Space,
        sources: &[PathBuf],
    ) -> Result<(), Error> {
        let builtins = template::Builtins::placeholder(self.dir, sources);
        let vars = template::context(space, &space.default_config(), &builtins);
        for t in commands {
            if t.template.argv(&vars).is_ok_and(|a| a.is_empty()) {
                let example = match t.what.as_str() {
                    "compile" => "clang-22 -O3 {{ source }} -o {{ exe }}",
                    _ => "{{ exe }}",
                };
                return self.err(
                    t.loc,
                    format!("the `{}` command is empty", t.what),
                    Some(&format!("e.g. `{}: \"{example}\"`", t.what)),
                );
            }
        }
        Ok(())
    }

    fn template_error(&self, t: &NamedTemplate, what: String) -> Result<(), Error> {
        self.err(
            t.loc,
            format!("the `{}` template {what}", t.what),
            Some("template variables are the parameter names plus source, exe, sources, problem_dir, work_dir"),
        )
    }

    /// Every name the template reads is a parameter or a built-in, in every branch: a
    /// misspelt name is otherwise silently false in `{% if %}`, or an error only in the
    /// configurations that take the branch reading it.
    fn check_names_known(
        &self,
        t: &NamedTemplate,
        read: &BTreeSet<String>,
        space: &Space,
    ) -> Result<(), Error> {
        let known = || (space.params.iter().map(|p| p.name.as_str())).chain(template::BUILTINS);
        let Some(name) = read.iter().find(|n| !known().any(|k| k == n.as_str())) else {
            return Ok(());
        };
        let hint = match did_you_mean(name, known()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => {
                let params: Vec<String> = known().map(|n| format!("`{n}`")).collect();
                format!("the names a template can read are {}", params.join(", "))
            }
        };
        Err(Error::Config {
            span: self.template_span(t, name),
            message: format!(
                "the `{}` template reads `{name}`, which is neither a parameter nor a built-in",
                t.what
            ),
            hint: Some(hint),
        })
    }

    /// A value that holds several flags (`-mllvm -polly`) is not passed as one argument: a
    /// compiler would reject it in every variant that takes it. `{{ P | words }}` splits it.
    fn check_flags_split(
        &self,
        t: &NamedTemplate,
        read: &BTreeSet<String>,
        space: &Space,
        builtins: &template::Builtins,
    ) -> Result<(), Error> {
        let base: Vec<f64> = space.params.iter().map(|p| p.default).collect();
        for (i, p) in space.params.iter().enumerate() {
            if !read.contains(&p.name) {
                continue;
            }
            for (coord, value) in flag_values(p) {
                let mut c = Config(base.clone());
                c.0[i] = coord;
                let ctx = template::context(space, &c, builtins);
                let argv = t.template.argv(&ctx).unwrap_or_default();
                if argv.iter().any(|a| a.contains(value.as_str())) {
                    return Err(Error::Config {
                        span: self.template_span(t, &p.name),
                        message: format!(
                            "the `{}` template passes the value `{value}` of `{}` as one argument",
                            t.what, p.name
                        ),
                        hint: Some(format!(
                            "a value stays one argument (so paths with spaces work); write `{{{{ {} | words }}}}` to pass its words as separate arguments",
                            p.name
                        )),
                    });
                }
            }
        }
        Ok(())
    }

    /// Where `name` is first read in template `t`, in the YAML file: exact when the template
    /// is written on one line as it reads (plain or quoted, no escape before that point),
    /// else the template's start.
    fn template_span(&self, t: &NamedTemplate, name: &str) -> Span {
        let mut span = self.span(t.loc);
        let Some(offset) = t.template.position_of(name) else {
            return span;
        };
        let prefix = &t.template.text[..offset];
        let line = self
            .text
            .lines()
            .nth((span.line as usize).saturating_sub(1));
        let rest: String = line
            .unwrap_or("")
            .chars()
            .skip((span.col as usize).saturating_sub(1))
            .collect();
        let quote = usize::from(rest.starts_with(['"', '\'']));
        if rest[quote..].starts_with(prefix) {
            span.col += (quote + prefix.chars().count()) as u32;
        }
        span
    }

    /// Every parameter is used: by a marker in the mold or as a template variable.
    fn check_every_param_used(
        &self,
        named: &[NamedTemplate],
        space: &Space,
        mold: &Mold,
        raw: &RawProblem,
    ) -> Result<(), Error> {
        let in_templates: HashSet<String> = named
            .iter()
            .flat_map(|t| t.template.identifiers())
            .collect();
        for (i, p) in space.params.iter().enumerate() {
            if !mold.uses(i) && !in_templates.contains(&p.name) {
                return self.err(
                    &raw.params.value[i].name.referenced,
                    format!("parameter `{}` is used nowhere", p.name),
                    Some(&format!(
                        "put a `#{}` marker in `{}`, or use `{{{{ {} }}}}` in compile, run or env",
                        p.name, raw.mold.value, p.name
                    )),
                );
            }
        }
        Ok(())
    }

    /// The metric: `kind: regex` needs a `regex` (and a `regex` alone means that kind), and a
    /// given regex compiles.
    fn metric(&self, metric: Option<&Spanned<RawMetric>>) -> Result<Metric, Error> {
        let none = RawMetric::default();
        let m = metric.map_or(&none, |m| &m.value);
        let kind = m.kind.unwrap_or(if m.regex.is_some() {
            MetricKind::Regex
        } else {
            MetricKind::KernelTime
        });
        let regex = match (&kind, &m.regex) {
            (MetricKind::Regex, None) => {
                let at = metric.expect("a kind was given").referenced;
                return self.err(
                    &at,
                    "`metric.kind: regex` needs `metric.regex`".into(),
                    Some("e.g. `regex: 'time: ([0-9.eE+-]+)'` (the first group is the number)"),
                );
            }
            (_, Some(r)) => match regex::Regex::new(&r.value) {
                Ok(re) => Some(re),
                Err(e) => {
                    return self.err(
                        &r.referenced,
                        format!("invalid metric regex `{}`: {e}", r.value),
                        None,
                    )
                }
            },
            _ => None,
        };
        Ok(Metric {
            kind,
            goal: m.goal,
            regex,
        })
    }

    /// `repeats` is within [`limits::repeats`] (3 when not given).
    fn repeats(&self, r: Option<&Spanned<u64>>) -> Result<u32, Error> {
        let Some(r) = r else { return Ok(3) };
        self.valid(r, "repeats", |&n| limits::repeats(n))
    }

    /// Both timeouts are within [`limits::timeout`] (120 s to compile and 60 s to run when
    /// not given).
    fn timeouts(&self, t: RawTimeouts) -> Result<(f64, f64), Error> {
        let get = |v: Option<&Spanned<f64>>, key: &str, default: f64| match v {
            Some(v) => self.valid(v, key, |&x| limits::timeout(x)),
            None => Ok(default),
        };
        let compile_s = get(t.compile_s.as_ref(), "timeouts.compile_s", 120.0)?;
        let run_s = get(t.run_s.as_ref(), "timeouts.run_s", 60.0)?;
        Ok((compile_s, run_s))
    }

    /// `check(v)` on a value of the file, or an error at its position naming `key`.
    fn valid<T, U>(
        &self,
        v: &Spanned<T>,
        key: &str,
        check: impl Fn(&T) -> Result<U, String>,
    ) -> Result<U, Error> {
        check(&v.value).or_else(|why| self.err(&v.referenced, format!("`{key}` {why}"), None))
    }

    /// The `search:` defaults: counts at least 1, κ a finite number >= 0.
    fn search(&self, s: RawSearch) -> Result<SearchDefaults, Error> {
        let count = |v: Option<&Spanned<usize>>, key: &str, min: usize| {
            v.map(|v| self.valid(v, key, |&n| limits::at_least(n, min)))
                .transpose()
        };
        Ok(SearchDefaults {
            learner: s.learner.map(|l| (l.value, self.span(&l.referenced))),
            max_evals: count(s.max_evals.as_ref(), "search.max_evals", 1)?,
            initial: count(s.initial.as_ref(), "search.initial", 0)?,
            kappa: (s.kappa.as_ref())
                .map(|k| self.valid(k, "search.kappa", |&x| limits::non_negative(x)))
                .transpose()?,
            seed: s.seed,
            pool: count(s.pool.as_ref(), "search.pool", 1)?,
        })
    }

    /// The problem's name: `name:` (a plain name, see [`limits::name`]), else the file's
    /// stem.
    fn name(&self, name: Option<&Spanned<String>>, abs: &Path) -> Result<String, Error> {
        match name {
            Some(n) => self.valid(n, "name", |s| limits::name(s).map(str::to_string)),
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
    fn check(&self, c: RawCheck) -> Result<Check, Error> {
        let reference = c
            .reference
            .as_ref()
            .map(|r| self.existing_file(r, "reference source"))
            .transpose()?;
        let tolerance = |v: Option<&Spanned<f64>>, key: &str, default: f64| match v {
            Some(v) => self.valid(v, key, |&x| limits::non_negative(x)),
            None => Ok(default),
        };
        Ok(Check {
            mode: c.mode,
            stream: c.stream,
            env: c.env.into_iter().collect(),
            rtol: tolerance(c.rtol.as_ref(), "check.rtol", 1e-6)?,
            atol: tolerance(c.atol.as_ref(), "check.atol", 1e-9)?,
            reference,
            compile_extra: (c.compile_extra.as_ref())
                .map(|x| x.text().split_whitespace().map(str::to_string).collect())
                .unwrap_or_default(),
        })
    }
}
