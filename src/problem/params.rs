//! The parameter space part of the problem file (`params`, `when`, `forbidden`,
//! `constraints`) validated into a [`Space`], checked in the order a reader meets it.

use std::collections::BTreeMap;

use serde_saphyr::{Location, Spanned};

use crate::error::Error;
use crate::problem::expr::{self, ParseError};
use crate::problem::limits;
use crate::problem::locate::Ctx;
use crate::problem::raw::{ParamType, RawParam, RawProblem, RawScalar, RawValues};
use crate::problem::space::{Condition, Config, Constraint, Kind, Param, Scalar, Space};

/// Names that must not be parameters: the parameter's `#NAME` marker would replace the
/// directive in the mold.
const DIRECTIVES: [&str; 12] = [
    "pragma", "include", "define", "if", "ifdef", "ifndef", "endif", "else", "elif", "undef",
    "error", "line",
];

/// The parameter space, checked in the order a reader meets it: each parameter on its own,
/// then the conditions between them, the forbidden combinations, the constraints, and last
/// the default configuration against all of these.
pub fn build_space(cx: &Ctx, raw: &RawProblem) -> Result<Space, Error> {
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
        Kind::Open(v) => v.len(),
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
