//! A `for` header in OpenMP's canonical form (`iv = lower; iv < upper; iv += step`, a constant
//! step), and what a loop's body may do to it: assign its counter, change what its bound reads,
//! leave early.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::mctree::node::{bare, decl_ref, find_kind, inner, kind, literal, offset, refs};

/// The parts of a canonical `for` header.
pub(crate) struct Header {
    pub(crate) iv_id: String,
    pub(crate) iv: String,
    pub(crate) declared_in_loop: bool,
    pub(crate) lower: Value,
    pub(crate) upper: Value,
    pub(crate) inclusive: bool,
    pub(crate) step: i64,
    pub(crate) integer: bool,
}

pub(crate) fn header(for_stmt: &Value) -> Option<Header> {
    let parts = inner(for_stmt);
    let (init, cond, inc) = (parts.first()?, parts.get(2)?, parts.get(3)?);
    let (iv_id, iv, ty, lower, declared_in_loop) = match kind(init) {
        "DeclStmt" => {
            let [d] = inner(init) else { return None };
            let id = d.get("id")?.as_str()?.to_string();
            let name = d.get("name")?.as_str()?.to_string();
            let ty = d.get("type")?.get("qualType")?.as_str()?.to_string();
            (id, name, ty, inner(d).first()?.clone(), true)
        }
        "BinaryOperator" if init.get("opcode")?.as_str()? == "=" => {
            let (id, name, ty) = decl_ref(inner(init).first()?)?;
            let lower = inner(init).get(1)?.clone();
            (id.into(), name.into(), ty.into(), lower, false)
        }
        _ => return None,
    };
    let (upper, inclusive, down) = condition(cond, &iv_id)?;
    let step = increment(inc, &iv_id)?;
    if (step < 0) != down {
        return None;
    }
    let integer = !(ty.contains("float") || ty.contains("double") || ty.contains('*'));
    Some(Header {
        iv_id,
        iv,
        declared_in_loop,
        lower,
        upper,
        inclusive,
        step,
        integer,
    })
}

/// `iv < e`, `iv <= e`, `iv > e`, `iv >= e`: (e, inclusive, counts down).
fn condition(cond: &Value, iv: &str) -> Option<(Value, bool, bool)> {
    let op = cond.get("opcode")?.as_str()?;
    let [l, r] = inner(cond) else { return None };
    if decl_ref(l)?.0 != iv {
        return None;
    }
    let (inclusive, down) = match op {
        "<" => (false, false),
        "<=" => (true, false),
        ">" => (false, true),
        ">=" => (true, true),
        _ => return None,
    };
    Some((r.clone(), inclusive, down))
}

/// `iv++`, `++iv`, `iv--`, `iv += c`, `iv -= c`, `iv = iv + c`, `iv = c + iv`, `iv = iv - c`
/// (OpenMP's canonical increments, `c` a constant): the step.
fn increment(inc: &Value, iv: &str) -> Option<i64> {
    let op = inc.get("opcode")?.as_str()?;
    let target = inner(inc).first()?;
    if decl_ref(target)?.0 != iv {
        return None;
    }
    match (kind(inc), op) {
        ("UnaryOperator", "++") => Some(1),
        ("UnaryOperator", "--") => Some(-1),
        ("CompoundAssignOperator", "+=") => literal(inner(inc).get(1)?),
        ("CompoundAssignOperator", "-=") => literal(inner(inc).get(1)?).map(|s| -s),
        ("BinaryOperator", "=") => assigned_step(bare(inner(inc).get(1)?), iv),
        _ => None,
    }
    .filter(|&s| s != 0)
}

/// The step of `iv = iv + c`, `iv = c + iv` or `iv = iv - c`.
fn assigned_step(e: &Value, iv: &str) -> Option<i64> {
    let is_iv = |v: &Value| decl_ref(v).is_some_and(|(id, _, _)| id == iv);
    match (e.get("opcode")?.as_str()?, inner(e)) {
        ("+", [x, c]) if is_iv(x) => literal(c),
        ("+", [c, x]) if is_iv(x) => literal(c),
        ("-", [x, c]) if is_iv(x) => literal(c)?.checked_neg(),
        _ => None,
    }
}

/// Why the bound `upper` may change while the loop runs (OpenMP computes the trip count
/// once): the body assigns a variable it reads or an array it reads, or it calls a function.
pub(crate) fn moving_bound(upper: &Value, body: Option<&Value>) -> Option<String> {
    let mut ids = BTreeSet::new();
    refs(upper, &mut ids);
    let mut call = false;
    find_kind(Some(upper), &["CallExpr"], &mut call);
    if call {
        return Some("its bound calls a function, which may change while it runs".into());
    }
    let assigned = (ids.iter()).find(|id| assigns(body, id) || writes_array(body, id));
    assigned.map(|_| "its body changes what its bound reads (OpenMP needs it fixed)".to_string())
}

/// Whether anything below `v` writes an element of the array `id` (`id[..] = `, `op=`, `++`).
fn writes_array(v: Option<&Value>, id: &str) -> bool {
    let Some(v) = v else { return false };
    let target = inner(v).first().and_then(array_base);
    (is_write(v) && target == Some(id)) || inner(v).iter().any(|c| writes_array(Some(c), id))
}

/// Whether `v` writes its first operand: `=`, `op=`, `++` or `--`.
pub(crate) fn is_write(v: &Value) -> bool {
    let op = v.get("opcode").and_then(Value::as_str);
    match kind(v) {
        "BinaryOperator" => op == Some("="),
        "CompoundAssignOperator" => true,
        "UnaryOperator" => matches!(op, Some("++" | "--")),
        _ => false,
    }
}

/// The declaration an element access `A[i][j]` indexes.
fn array_base(v: &Value) -> Option<&str> {
    let v = bare(v);
    match kind(v) {
        "ArraySubscriptExpr" => array_base(inner(v).first()?),
        _ => decl_ref(v).map(|(id, _, _)| id),
    }
}

/// Whether anything below `v` assigns the variable `id` (`=`, `op=`, `++`, `--`) or takes
/// its address.
pub(crate) fn assigns(v: Option<&Value>, id: &str) -> bool {
    let Some(v) = v else { return false };
    let address = v.get("opcode").and_then(Value::as_str) == Some("&");
    let writes = is_write(v) || (kind(v) == "UnaryOperator" && address);
    let target = inner(v).first().and_then(decl_ref);
    (writes && target.is_some_and(|(t, _, _)| t == id))
        || inner(v).iter().any(|c| assigns(Some(c), id))
}

/// Whether control can leave the loop body `body` before its end: a `break` (not a nested
/// loop's), a `return`, or a `goto` to a label outside the body or at or before the `goto`
/// (a jump back would run part of an iteration again). TSVC_2's s161 jumps forward to labels
/// of its own body: the iterations still run whole, in order.
pub(crate) fn leaves_early(body: Option<&Value>) -> bool {
    let mut breaks = false;
    find_kind(body, &["BreakStmt", "ReturnStmt"], &mut breaks);
    let (mut labels, mut gotos) = (vec![], vec![]);
    nodes_of(body, "LabelStmt", &mut labels);
    nodes_of(body, "GotoStmt", &mut gotos);
    let begin = |v: &Value| v.get("range").and_then(|r| r.get("begin")).and_then(offset);
    let label_at = |id: &str| {
        (labels.iter())
            .find(|l| l.get("declId").and_then(Value::as_str) == Some(id))
            .and_then(|l| begin(l))
    };
    let out = |g: &&Value| {
        let target = g.get("targetLabelDeclId").and_then(Value::as_str);
        match (target.and_then(label_at), begin(g)) {
            (Some(label), Some(at)) => label <= at,
            _ => true,
        }
    };
    breaks || gotos.iter().any(out)
}

/// Every node of `kind_` below `v`, nested loops included.
pub(crate) fn nodes_of<'v>(v: Option<&'v Value>, kind_: &str, out: &mut Vec<&'v Value>) {
    let Some(v) = v else { return };
    if kind(v) == kind_ {
        out.push(v);
    }
    for c in inner(v) {
        nodes_of(Some(c), kind_, out);
    }
}
