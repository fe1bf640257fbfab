//! The parameter space part of the problem file (`params`, `when`, `forbidden`,
//! `constraints`) validated into a [`Space`], checked in the order a reader meets it.

use std::collections::BTreeMap;

use serde_saphyr::{Location, Spanned};

use crate::error::Error;
use crate::problem::limits;
use crate::problem::locate::Ctx;
use crate::problem::param::{Condition, Kind, Param, Scalar};
use crate::problem::permutation::Permutation;
use crate::problem::permutation::MAX_ITEMS;
use crate::problem::raw::{ParamType, RawParam, RawScalar};

/// Names that must not be parameters: the parameter's `#NAME` marker would replace the
/// directive in the mold.
const DIRECTIVES: [&str; 12] = [
    "pragma", "include", "define", "if", "ifdef", "ifndef", "endif", "else", "elif", "undef",
    "error", "line",
];

/// There is at least one parameter.
pub(super) fn check_params_not_empty(
    cx: &Ctx,
    params: &Spanned<Vec<RawParam>>,
) -> Result<(), Error> {
    if params.value.is_empty() {
        return cx.err(
            &params.referenced,
            "`params` is empty".into(),
            Some("a problem needs at least one parameter"),
        );
    }
    Ok(())
}

/// One parameter on its own: its name, the keys its type takes, its values, its default.
/// `earlier` are the parameters before it in the file.
pub(super) fn param(cx: &Ctx, rp: &RawParam, earlier: &[Param]) -> Result<Param, Error> {
    check_name(cx, &rp.name, earlier)?;
    check_keys_apply(cx, rp)?;
    let mut p = Param {
        name: rp.name.value.clone(),
        kind: kind(cx, rp)?,
        default: 0.0,
        condition: None,
    };
    p.default = default_coord(cx, rp.default.as_ref(), &p)?;
    Ok(p)
}

/// The name is an identifier, not a preprocessor directive, and not already taken.
fn check_name(cx: &Ctx, name: &Spanned<String>, earlier: &[Param]) -> Result<(), Error> {
    let (loc, name) = (&name.referenced, &name.value);
    if !is_identifier(name) {
        return cx.err(
            loc,
            format!("parameter name `{name}` is not an identifier"),
            Some("use names like `P0`, `TILE_I`"),
        );
    }
    if DIRECTIVES.contains(&name.as_str()) {
        return cx.err(
            loc,
            format!("parameter name `{name}` is a preprocessor directive"),
            Some("its marker would replace the directive"),
        );
    }
    if earlier.iter().any(|p| p.name == *name) {
        return cx.err(loc, format!("parameter `{name}` is defined twice"), None);
    }
    Ok(())
}

/// Only the keys of the parameter's type are given (`values` for ordinal, `choices` for
/// categorical, `items`/`separator` for permutation, `low`/`high`/`log` for integer and
/// real, none for boolean).
fn check_keys_apply(cx: &Ctx, rp: &RawParam) -> Result<(), Error> {
    let ty = rp.kind.value;
    let allowed: &[&str] = match ty {
        ParamType::Ordinal => &["values"],
        ParamType::Categorical => &["choices"],
        ParamType::Permutation => &["items", "separator"],
        ParamType::Integer | ParamType::Real => &["low", "high", "log"],
        ParamType::Boolean => &[],
    };
    for (key, present) in [
        ("values", rp.values.is_some()),
        ("choices", rp.choices.is_some()),
        ("items", rp.items.is_some()),
        ("separator", rp.separator.is_some()),
        ("low", rp.low.is_some()),
        ("high", rp.high.is_some()),
        ("log", rp.log),
    ] {
        if present && !allowed.contains(&key) {
            return cx.err(
                &rp.kind.referenced,
                format!("`{key}` does not apply to a parameter of type `{}`", format!("{ty:?}").to_lowercase()),
                Some("ordinal takes `values`, categorical `choices`, permutation `items`/`separator`, integer/real `low`/`high`/`log`"),
            );
        }
    }
    Ok(())
}

/// The parameter's values by its type: a list given and not empty, or a valid range.
fn kind(cx: &Ctx, rp: &RawParam) -> Result<Kind, Error> {
    match rp.kind.value {
        ParamType::Ordinal => ordinal(cx, rp),
        ParamType::Categorical => categorical(cx, rp),
        ParamType::Permutation => permutation(cx, rp),
        ParamType::Integer => integer(cx, rp),
        ParamType::Real => real(cx, rp),
        ParamType::Boolean => Ok(Kind::Boolean),
    }
}

/// An ordinal's `values` are given and not empty.
fn ordinal(cx: &Ctx, rp: &RawParam) -> Result<Kind, Error> {
    let name = &rp.name.value;
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
    let values: Vec<Scalar> = v.value.iter().cloned().map(Scalar::from).collect();
    if let Some(x) = values
        .iter()
        .find(|x| matches!(x, Scalar::Real(r) if !r.is_finite()))
    {
        return cx.err(
            &v.referenced,
            format!("`values` of `{name}` holds `{x}`, which is not a finite number"),
            None,
        );
    }
    check_unique(cx, &v.referenced, name, "values", &Kind::Ordinal(values))
}

/// No two values of a parameter are equal (`2` and `2.0` are): one configuration
/// would otherwise have two names and be evaluated twice.
fn check_unique(
    cx: &Ctx,
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
            return cx.err(loc, message, Some("remove the repeated value"));
        }
    }
    Ok(kind.clone())
}

/// A categorical's `choices` are given and not empty.
fn categorical(cx: &Ctx, rp: &RawParam) -> Result<Kind, Error> {
    let name = &rp.name.value;
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
    check_unique(
        cx,
        &v.referenced,
        name,
        "choices",
        &Kind::Categorical(v.value.clone()),
    )
}

/// A permutation's `items` are given, distinct, 1 to [`MAX_ITEMS`] of them, and its orders'
/// texts distinct (a separator inside an item could join two orders into one text).
fn permutation(cx: &Ctx, rp: &RawParam) -> Result<Kind, Error> {
    let name = &rp.name.value;
    let Some(v) = &rp.items else {
        return cx.err(
            &rp.name.referenced,
            format!("permutation parameter `{name}` needs `items` (what it orders)"),
            Some("e.g. `items: [FOR_I, FOR_J, FOR_K]`"),
        );
    };
    if v.value.is_empty() || v.value.len() > MAX_ITEMS {
        return cx.err(
            &v.referenced,
            format!("`items` of `{name}` has {} items", v.value.len()),
            Some(&format!("a permutation orders 1 to {MAX_ITEMS} items")),
        );
    }
    check_unique(
        cx,
        &v.referenced,
        name,
        "items",
        &Kind::Categorical(v.value.clone()),
    )?;
    let separator = rp.separator.as_ref().map_or(" ", |s| s.value.as_str());
    let perm = Permutation::new(v.value.clone(), separator.to_string());
    if let Some(text) = perm.ambiguous() {
        return cx.err(
            &v.referenced,
            format!("`items` of `{name}` joined by `{separator}` write two orders alike: `{text}` twice"),
            Some("use a separator no item contains (`separator: \",\"`)"),
        );
    }
    Ok(Kind::Permutation(perm))
}

/// An integer range is a valid range with whole-number bounds within ±2^53.
fn integer(cx: &Ctx, rp: &RawParam) -> Result<Kind, Error> {
    let (lo, hi) = range(cx, rp)?;
    let name = &rp.name.value;
    let low = cx.valid(lo, &format!("low` of `{name}"), |&x| limits::whole(x))?;
    let high = cx.valid(hi, &format!("high` of `{name}"), |&x| limits::whole(x))?;
    Ok(Kind::Integer {
        low,
        high,
        log: rp.log,
    })
}

/// A real range is a valid range.
fn real(cx: &Ctx, rp: &RawParam) -> Result<Kind, Error> {
    let (lo, hi) = range(cx, rp)?;
    Ok(Kind::Real {
        low: lo.value,
        high: hi.value,
        log: rp.log,
    })
}

/// A range has `low` and `high`, `low` <= `high`, and `low` > 0 on a log scale.
fn range<'r>(cx: &Ctx, rp: &'r RawParam) -> Result<(&'r Spanned<f64>, &'r Spanned<f64>), Error> {
    let name = &rp.name.value;
    let (Some(lo), Some(hi)) = (&rp.low, &rp.high) else {
        return cx.err(
            &rp.name.referenced,
            format!("parameter `{name}` needs `low` and `high`"),
            None,
        );
    };
    cx.valid(lo, &format!("low` of `{name}"), |&x| limits::finite(x))?;
    cx.valid(hi, &format!("high` of `{name}"), |&x| limits::finite(x))?;
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
    Ok((lo, hi))
}

/// A given default is one of the parameter's values; none given picks
/// [`implicit_default`].
fn default_coord(cx: &Ctx, d: Option<&Spanned<RawScalar>>, p: &Param) -> Result<f64, Error> {
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
        Kind::Permutation(p) => format!("{}, e.g. `{}`", p.describe(), p.texts[0]),
        Kind::Boolean => "use `true` or `false`".to_string(),
        _ => "the default must lie within `low`..=`high`".to_string(),
    };
    cx.err(
        &d.referenced,
        format!("default `{shown}` is not a value of `{}`", p.name),
        Some(&hint),
    )
}

/// Conditions (`when`), once all parameters are known: a parent may come later in the
/// list than its child.
pub(super) fn add_conditions(
    cx: &Ctx,
    raws: &[RawParam],
    params: &mut [Param],
) -> Result<(), Error> {
    for (i, rp) in raws.iter().enumerate() {
        let Some(w) = &rp.when else { continue };
        let condition = condition(cx, w, i, params)?;
        params[i].condition = Some(condition);
    }
    Ok(())
}

/// The `when` of parameter `i` names exactly one parent, a known parameter other than
/// `i` itself, and only values of that parent.
fn condition(
    cx: &Ctx,
    w: &Spanned<BTreeMap<String, Vec<RawScalar>>>,
    i: usize,
    params: &[Param],
) -> Result<Condition, Error> {
    if w.value.len() != 1 {
        return cx.err(
            &w.referenced,
            "`when` must name exactly one parent parameter".into(),
            Some("e.g. `when: {P1: [\"#pragma omp interchange\"]}`"),
        );
    }
    let (parent_name, vals) = w.value.iter().next().expect("one entry");
    let Some(parent) = index_of(params, parent_name) else {
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
    let values = vals
        .iter()
        .map(|v| coord_in(cx, &w.referenced, &params[parent], v))
        .collect::<Result<Vec<f64>, Error>>()?;
    Ok(Condition { parent, values })
}

/// The parameters in dependency order, parents before children; conditions that form a
/// cycle are an error.
pub(super) fn dependency_order(
    cx: &Ctx,
    raws: &[RawParam],
    params: &[Param],
) -> Result<Vec<usize>, Error> {
    let n = params.len();
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    while order.len() < n {
        let before = order.len();
        place_ready(params, &mut placed, &mut order);
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
    Ok(order)
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

/// "choose one of `a`, `b`" for a default that is not among the values.
fn one_of<T: std::fmt::Display>(values: &[T]) -> String {
    let shown: Vec<String> = values.iter().map(|x| format!("`{x}`")).collect();
    format!("choose one of {}", shown.join(", "))
}

/// `[A-Za-z_][A-Za-z0-9_]*`: usable as a mold marker, a template variable and in a
/// constraint.
fn is_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn index_of(params: &[Param], name: &str) -> Option<usize> {
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

/// The coordinate of the YAML value `v` of parameter `p`; an error at `loc` when `v` is
/// not one of its values.
pub(super) fn coord_in(cx: &Ctx, loc: &Location, p: &Param, v: &RawScalar) -> Result<f64, Error> {
    let s: Scalar = v.clone().into();
    match p.coord_of(&s) {
        Some(c) => Ok(c),
        None => cx.err(loc, format!("`{s}` is not a value of `{}`", p.name), None),
    }
}
