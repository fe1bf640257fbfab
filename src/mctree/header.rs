//! A `for` header in OpenMP's canonical form (`iv = lower; iv < upper; iv += step`, a constant
//! step), and what a loop's body may do to it: assign its counter, change what its bound reads,
//! leave early.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::mctree::calls::is_pure;
use crate::mctree::node::{
    bare, decl_ref, find_kind, inner, is_write, kind, literal, offset, refs,
};

/// The parts of a canonical `for` header.
pub(crate) struct Header {
    pub(crate) iv_id: String,
    pub(crate) iv: String,
    pub(crate) declared_in_loop: bool,
    pub(crate) lower: Value,
    pub(crate) upper: Value,
    pub(crate) inclusive: bool,
    pub(crate) step: i64,
}

/// The header of `for_stmt` when it is canonical by every rule of [`checked`].
pub(crate) fn header(for_stmt: &Value) -> Option<Header> {
    checked(for_stmt).ok()
}

/// Why a header is not canonical: the grammar's rule it breaks (`None`: not even the shape
/// `iv = lower; iv < upper; iv += step`).
pub(crate) struct NotCanonical(pub(crate) Option<String>);

/// The header of `for_stmt` in OpenMP's canonical form, typed: a counter of an integer type;
/// an initial value and a bound of integer type (no floating-point value converted on the
/// way) that do not read the counter; the comparison made in the counter's type (or, for a
/// signed counter, a wider signed one: C and OpenMP then count the same iterations); a
/// constant integer step.
pub(crate) fn checked(for_stmt: &Value) -> Result<Header, NotCanonical> {
    let parts = inner(for_stmt);
    let shape = || NotCanonical(None);
    let (init, cond, inc) = match (parts.first(), parts.get(2), parts.get(3)) {
        (Some(i), Some(c), Some(s)) => (i, c, s),
        _ => return Err(shape()),
    };
    let (iv_id, iv, ty, lower, declared_in_loop) = counter(init).ok_or_else(shape)?;
    let (upper, inclusive, down, compared) = condition(cond, &iv_id).ok_or_else(shape)?;
    let step = increment(inc, &iv_id).ok_or_else(shape)?;
    if (step < 0) != down {
        return Err(shape());
    }
    let why = |w: String| Err(NotCanonical(Some(w)));
    let Some(signed) = integer_type(&ty) else {
        return why(format!("its counter `{iv}` is a `{ty}`, not an integer"));
    };
    if matches!(
        ty.as_str(),
        "char" | "signed char" | "unsigned char" | "short" | "unsigned short"
    ) {
        return why(format!("its counter `{iv}` is a `{ty}`: C converts each step back to it (a bound past its range never ends the loop), OpenMP counts in a wider type"));
    }
    if !signed && down && inclusive && literal(&upper).is_none_or(|b| b < 1) {
        return why(format!("its unsigned counter `{iv}` counts down to `>=` a bound that may be 0: C never ends it, OpenMP does"));
    }
    for (what, e) in [("initial value", &lower), ("bound", &upper)] {
        if let Some(t) = floating(e) {
            return why(format!("its {what} is computed in `{t}`: C compares in `{t}`, OpenMP converts it to `{ty}` first and may run another number of iterations"));
        }
        if reads_counter(e, &iv_id) {
            return why(format!("its {what} reads its own counter `{iv}`"));
        }
    }
    let same = type_of(compared) == Some(ty.as_str());
    let as_signed = integer_type(type_of(compared).unwrap_or(""));
    let wider = signed && as_signed == Some(true);
    // From a constant at or above 0 upwards, a signed counter compares the same as unsigned.
    let natural =
        signed && as_signed == Some(false) && step > 0 && literal(&lower).is_some_and(|c| c >= 0);
    if !same && !wider && !natural {
        let t = type_of(compared).unwrap_or("?");
        return why(format!(
            "its condition compares `{iv}` as `{t}`, not as its own `{ty}`"
        ));
    }
    Ok(Header {
        iv_id,
        iv,
        declared_in_loop,
        lower,
        upper,
        inclusive,
        step,
    })
}

/// The counter an init sets: (id, name, type, initial value, declared in the loop).
fn counter(init: &Value) -> Option<(String, String, String, Value, bool)> {
    match kind(init) {
        "DeclStmt" => {
            let [d] = inner(init) else { return None };
            let id = d.get("id")?.as_str()?.to_string();
            let name = d.get("name")?.as_str()?.to_string();
            let ty = type_of(d)?.to_string();
            Some((id, name, ty, inner(d).first()?.clone(), true))
        }
        "BinaryOperator" if init.get("opcode")?.as_str()? == "=" => {
            let target = inner(init).first()?;
            let (id, name, _) = decl_ref(target)?;
            let ty = type_of(bare(target))?.to_string();
            let lower = inner(init).get(1)?.clone();
            Some((id.into(), name.into(), ty, lower, false))
        }
        _ => None,
    }
}

/// A node's type as C sees it: a typedef's underlying type (`size_t` is `unsigned long`).
pub(crate) fn type_of(v: &Value) -> Option<&str> {
    let t = v.get("type")?;
    t.get("desugaredQualType")
        .or_else(|| t.get("qualType"))
        .and_then(Value::as_str)
}

/// Whether `ty` is one of C's standard integer types, and whether it is signed (`char` is
/// signed on the targets clang-22 builds here). Not `_Bool`, enums, `__int128`, `_BitInt`,
/// or anything `volatile` or `_Atomic`.
pub(crate) fn integer_type(ty: &str) -> Option<bool> {
    let ty = ty.strip_prefix("const ").unwrap_or(ty);
    match ty {
        "char" | "signed char" | "short" | "int" | "long" | "long long" => Some(true),
        "unsigned char" | "unsigned short" | "unsigned int" | "unsigned long"
        | "unsigned long long" => Some(false),
        _ => None,
    }
}

/// The floating-point type a header expression is computed in, if any: its own type under
/// the implicit conversions, or one it converts from (`(int)(n * 0.5)` is explicit and
/// evaluated once: integer).
fn floating(e: &Value) -> Option<String> {
    let mut v = e;
    loop {
        let ty = type_of(v).unwrap_or("");
        if integer_type(ty).is_none() {
            return Some(ty.to_string());
        }
        match kind(v) {
            "ImplicitCastExpr" | "ParenExpr" | "ConstantExpr" => match inner(v).first() {
                Some(c) => v = c,
                None => return None,
            },
            _ => return None,
        }
    }
}

/// Whether `e` reads the counter `iv` anywhere.
fn reads_counter(e: &Value, iv: &str) -> bool {
    let mut ids = BTreeSet::new();
    refs(e, &mut ids);
    ids.contains(iv)
}

/// `iv < e`, `iv <= e`, `iv > e`, `iv >= e`: (e, inclusive, counts down, the counter's operand
/// as compared, conversions included).
fn condition<'c>(cond: &'c Value, iv: &str) -> Option<(Value, bool, bool, &'c Value)> {
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
    Some((r.clone(), inclusive, down, l))
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
/// once): the body assigns a variable it reads or an array it reads, or it calls a function
/// that is not pure ([`crate::mctree::calls`]).
pub(crate) fn moving_bound(upper: &Value, body: Option<&Value>) -> Option<String> {
    let mut ids = BTreeSet::new();
    refs(upper, &mut ids);
    if calls_with_effect(upper) {
        return Some("its bound calls a function, which may change while it runs".into());
    }
    let assigned = (ids.iter()).find(|id| assigns(body, id) || writes_array(body, id));
    assigned.map(|_| "its body changes what its bound reads (OpenMP needs it fixed)".to_string())
}

/// Whether `v` calls a function that is not pure.
fn calls_with_effect(v: &Value) -> bool {
    (kind(v) == "CallExpr" && !is_pure(v)) || inner(v).iter().any(calls_with_effect)
}

/// Whether anything below `v` writes an element of the array `id` (`id[..] = `, `op=`, `++`).
fn writes_array(v: Option<&Value>, id: &str) -> bool {
    let Some(v) = v else { return false };
    let target = inner(v).first().and_then(array_base);
    (is_write(v) && target == Some(id)) || inner(v).iter().any(|c| writes_array(Some(c), id))
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
