//! What the parameter space forbids: `forbidden` combinations and `constraints`, read and
//! checked (every constraint evaluates on probed values, the default configuration is
//! allowed), so that a space that excludes every configuration is refused before anything
//! runs.

use std::collections::BTreeMap;

use serde_saphyr::Spanned;

use crate::error::Error;
use crate::problem::expr::{self, ParseError};
use crate::problem::locate::Ctx;
use crate::problem::param::{Kind, Param};
use crate::problem::params::{coord_in, index_of};
use crate::problem::permutation::Permutation;
use crate::problem::raw::RawValues;
use crate::problem::space::{Config, Constraint, Space};

/// The most combinations one forbidden entry's lists may stand for.
const MAX_FORBIDDEN_COMBINATIONS: usize = 10_000;

/// Coordinates worth probing a constraint with: every value of a parameter with at most 64,
/// else the first and last; the bounds of a range.
pub(super) fn probe_coords(kind: &Kind) -> Vec<f64> {
    let n = match kind {
        Kind::Ordinal(v) => v.len(),
        Kind::Categorical(v) | Kind::Permutation(Permutation { texts: v, .. }) => v.len(),
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
pub(super) fn shorten(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// The first constraint that on its own excludes `c`, with its YAML entry; `None` when only
/// a forbidden combination does.
pub(super) fn first_false_constraint<'s>(
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

/// Forbidden combinations name known parameters and values of them. An entry that
/// lists several values for a parameter forbids each of them (any-of): it stands for
/// every combination of its lists.
pub(super) fn forbidden(
    cx: &Ctx,
    raw: &[Spanned<BTreeMap<String, RawValues>>],
    params: &[Param],
) -> Result<Vec<Vec<(usize, f64)>>, Error> {
    let mut all = Vec::new();
    for f in raw {
        all.extend(combinations(cx, f, params)?);
    }
    Ok(all)
}

/// The combinations one forbidden entry stands for (the product of its lists).
pub(super) fn combinations(
    cx: &Ctx,
    f: &Spanned<BTreeMap<String, RawValues>>,
    params: &[Param],
) -> Result<Vec<Vec<(usize, f64)>>, Error> {
    let mut combos: Vec<Vec<(usize, f64)>> = vec![vec![]];
    for (k, v) in &f.value {
        let Some(i) = index_of(params, k) else {
            return cx.err(
                &f.referenced,
                format!("forbidden combination names unknown parameter `{k}`"),
                None,
            );
        };
        let coords = (v.values().iter())
            .map(|x| coord_in(cx, &f.referenced, &params[i], x))
            .collect::<Result<Vec<f64>, Error>>()?;
        if coords.is_empty() || combos.len() * coords.len() > MAX_FORBIDDEN_COMBINATIONS {
            let why = format!("a forbidden entry must list 1 to {MAX_FORBIDDEN_COMBINATIONS} combinations (`{k}` lists {})", coords.len());
            return cx.err(
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

/// Constraint expressions parse and name only known parameters.
pub(super) fn constraints(
    cx: &Ctx,
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
            Err(pe) => Err(constraint_error(cx, c, pe, params)),
        })
        .collect()
}

/// A constraint's parse error, at its column within the YAML scalar.
pub(super) fn constraint_error(
    cx: &Ctx,
    c: &Spanned<String>,
    pe: ParseError,
    params: &[Param],
) -> Error {
    let mut span = cx.span(&c.referenced);
    // The YAML position is the scalar's start; a quoted scalar starts one earlier.
    span.col += pe.col as u32 + 1;
    let names: Vec<String> = params.iter().map(|p| format!("`{}`", p.name)).collect();
    Error::Config {
        span,
        message: format!("in constraint `{}`: {}", shorten(&c.value), pe.message),
        hint: Some(format!(
            "parameters are {}; the machine's facts are `machine.<fact>` (`moldtune machine` lists them)",
            names.join(", ")
        )),
    }
}

/// Every constraint evaluates without a type error (`"a" * 2`) on the default
/// configuration and on each one-parameter change of it (every value of a parameter
/// with few values, the bounds of a range): a type error would otherwise silently
/// reject configurations as if the constraint were false.
pub(super) fn check_constraints_evaluate(
    cx: &Ctx,
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
                    return cx.err(
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
pub(super) fn check_default_is_valid(
    cx: &Ctx,
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
        Some((k, raw_k)) => cx.err(
            &raw_k.referenced,
            format!("{message}: `{}` is false for it", k.text),
            Some("change a parameter's `default` or relax the constraint"),
        ),
        None => {
            let holds = |f: &&Spanned<BTreeMap<String, RawValues>>| {
                let combos = combinations(cx, f, &space.params).unwrap_or_default();
                combos
                    .iter()
                    .any(|c| c.iter().all(|&(i, v)| default.0[i] == v))
            };
            let Some(at) = forbidden.iter().find(holds) else {
                return Err(Error::ConfigFile {
                    file: cx.file.to_path_buf(),
                    message,
                    hint: None,
                });
            };
            cx.err(
                &at.referenced,
                format!("{message}: it is this forbidden combination"),
                Some("change a parameter's `default` or the combination"),
            )
        }
    }
}
