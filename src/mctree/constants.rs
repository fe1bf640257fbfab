//! Named integer constants read as the numbers they are: in the kernel's body, each use of an
//! `enum` constant, and each read of a `const`-qualified integer variable (global or the
//! kernel's own) initialised to a constant expression, becomes an `IntegerLiteral` with the
//! same source range. Every analysis after it ([`super::ast`], [`super::accesses`],
//! [`super::extents`]) then sees `A[i][FX]` as `A[i][0]` and `i < N` with `N` an `enum` as a
//! constant bound, exactly as it sees macros.

use std::collections::HashMap;

use serde_json::Value;

use crate::mctree::header::integer_type;
use crate::mctree::node::{inner, kind, literal};
use crate::mctree::unit::{Function, Unit};

/// Folds the named constants of `kernel`'s body (those of the file's `globals` and its own).
pub fn fold(unit: &Unit, kernel: &mut Function) {
    let mut values = HashMap::new();
    for d in &unit.globals {
        declared(d, &mut values);
    }
    for e in &unit.enums {
        declared(e, &mut values);
    }
    declared(&kernel.body, &mut values);
    if !values.is_empty() {
        replace(&mut kernel.body, &values);
    }
}

/// The constants `v` declares (the enumerators of its `enum`s, its `const` integers), by id.
fn declared(v: &Value, out: &mut HashMap<String, i64>) {
    match kind(v) {
        "EnumDecl" => enumerators(v, out),
        "VarDecl" => {
            let ty = v.get("type").and_then(|t| t.get("qualType"));
            let ty = ty.and_then(Value::as_str).unwrap_or("");
            let constant = ty.starts_with("const ") && integer_type(ty).is_some();
            let value = inner(v).first().and_then(|e| value_of(e, out));
            if let (true, Some(x), Some(id)) = (constant, value, v.get("id")) {
                out.insert(id.as_str().unwrap_or("").to_string(), x);
            }
        }
        _ => inner(v).iter().for_each(|c| declared(c, out)),
    }
}

/// The enumerators of an `enum`: each its value, else one more than the one before.
fn enumerators(e: &Value, out: &mut HashMap<String, i64>) {
    let mut next = Some(0i64);
    for c in inner(e).iter().filter(|c| kind(c) == "EnumConstantDecl") {
        let given = inner(c).first().map(|x| value_of(x, out));
        let value = match given {
            Some(v) => v,
            None => next,
        };
        if let (Some(x), Some(id)) = (value, c.get("id").and_then(Value::as_str)) {
            out.insert(id.to_string(), x);
        }
        next = value.and_then(|x| x.checked_add(1));
    }
}

/// The value of a constant expression: clang's own (`ConstantExpr`'s `value`), else the
/// literal arithmetic over constants already known.
fn value_of(e: &Value, known: &HashMap<String, i64>) -> Option<i64> {
    if let Some(v) = e.get("value").and_then(Value::as_str) {
        return v.parse().ok();
    }
    let mut e = e.clone();
    replace(&mut e, known);
    literal(&e)
}

/// Replaces every read of a known constant below `v` by its literal.
fn replace(v: &mut Value, values: &HashMap<String, i64>) {
    if let Some(x) = constant_read(v, values) {
        let range = v.get("range").cloned().unwrap_or(Value::Null);
        let ty = v.get("type").cloned().unwrap_or(Value::Null);
        *v = serde_json::json!({
            "kind": "IntegerLiteral",
            "range": range,
            "type": ty,
            "value": x.to_string(),
        });
        return;
    }
    if let Some(kids) = v.get_mut("inner").and_then(Value::as_array_mut) {
        kids.iter_mut().for_each(|c| replace(c, values));
    }
}

/// The value `v` reads, when it is an enumerator or the read (`LValueToRValue`) of a `const`
/// integer.
fn constant_read(v: &Value, values: &HashMap<String, i64>) -> Option<i64> {
    let id_of = |r: &Value| {
        let d = r.get("referencedDecl")?;
        Some((kind(d).to_string(), d.get("id")?.as_str()?.to_string()))
    };
    match kind(v) {
        "DeclRefExpr" => match id_of(v)? {
            (k, id) if k == "EnumConstantDecl" => values.get(&id).copied(),
            _ => None,
        },
        "ImplicitCastExpr"
            if v.get("castKind").and_then(Value::as_str) == Some("LValueToRValue") =>
        {
            let r = inner(v).first().filter(|r| kind(r) == "DeclRefExpr")?;
            values.get(&id_of(r)?.1).copied()
        }
        _ => None,
    }
}
