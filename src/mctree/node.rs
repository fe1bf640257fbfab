//! The AST's nodes as clang-22's JSON writes them, and the accessors every analysis shares:
//! a node's kind and children, a location's byte offset, what a `DeclRefExpr` names, a
//! literal's value, an expression's text.

use std::collections::BTreeSet;

use serde_json::Value;

/// The byte offset of a location (the expansion's, for a location inside a macro).
pub(crate) fn offset(loc: &Value) -> Option<usize> {
    loc.get("expansionLoc")
        .and_then(|l| l.get("offset"))
        .or_else(|| loc.get("offset"))
        .and_then(Value::as_u64)
        .map(|o| o as usize)
}

/// Loop ids by the position of their `for` ([`loop_key`]).
pub type Positions = std::collections::HashMap<(usize, Option<usize>), usize>;

/// A `for`'s identity: the byte offset of its `for` keyword (the expansion's, in a macro)
/// and, inside a macro, the spelling's too — a position no count of loops can shift.
pub(crate) fn loop_key(for_stmt: &Value) -> Option<(usize, Option<usize>)> {
    let begin = for_stmt.get("range")?.get("begin")?;
    let spelled = begin.get("spellingLoc").and_then(|l| l.get("offset"));
    Some((
        offset(begin)?,
        spelled.and_then(Value::as_u64).map(|o| o as usize),
    ))
}

pub(crate) fn kind(v: &Value) -> &str {
    v.get("kind").and_then(Value::as_str).unwrap_or("")
}

pub(crate) fn inner(v: &Value) -> &[Value] {
    v.get("inner")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Peels implicit casts and parentheses.
pub(crate) fn bare(v: &Value) -> &Value {
    match kind(v) {
        "ImplicitCastExpr" | "ParenExpr" | "ConstantExpr" => inner(v).first().map_or(v, bare),
        _ => v,
    }
}

/// The declaration a `DeclRefExpr` names: (id, name, type).
pub(crate) fn decl_ref(v: &Value) -> Option<(&str, &str, &str)> {
    let v = bare(v);
    if kind(v) != "DeclRefExpr" {
        return None;
    }
    let d = v.get("referencedDecl")?;
    let id = d.get("id")?.as_str()?;
    let name = d.get("name")?.as_str()?;
    let ty = d
        .get("type")
        .and_then(|t| t.get("qualType"))
        .and_then(Value::as_str)
        .unwrap_or("");
    Some((id, name, ty))
}

/// Every declaration an expression reads (the operand of `sizeof` or `_Alignof` is not
/// evaluated: not a read).
pub(crate) fn refs(v: &Value, out: &mut BTreeSet<String>) {
    if kind(v) == "UnaryExprOrTypeTraitExpr" {
        return;
    }
    if let Some((id, _, _)) = decl_ref(v) {
        out.insert(id.to_string());
    }
    for c in inner(v) {
        refs(c, out);
    }
}

/// The value of an integer constant expression (`N - 1` once `N` is expanded).
pub(crate) fn literal(v: &Value) -> Option<i64> {
    let v = bare(v);
    let op = v.get("opcode").and_then(Value::as_str);
    match (kind(v), op, inner(v)) {
        ("IntegerLiteral", _, _) => v.get("value")?.as_str()?.parse().ok(),
        ("UnaryOperator", Some("-"), [x]) => literal(x)?.checked_neg(),
        ("BinaryOperator", Some(op), [a, b]) => {
            let (a, b) = (literal(a)?, literal(b)?);
            match op {
                "+" => a.checked_add(b),
                "-" => a.checked_sub(b),
                "*" => a.checked_mul(b),
                "/" => a.checked_div(b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The source text of an expression, from its range's offsets.
pub(crate) fn text_of<'t>(v: &Value, text: &'t str) -> &'t str {
    let r = v.get("range");
    let b = r.and_then(|r| r.get("begin")).and_then(offset);
    let e = r.and_then(|r| r.get("end"));
    let end = e.and_then(offset).map(|o| {
        let len = e
            .and_then(|e| e.get("expansionLoc").or(Some(e)))
            .and_then(|l| l.get("tokLen"))
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        o + len
    });
    match (b, end) {
        (Some(b), Some(e)) if b <= e => text.get(b..e).unwrap_or("?"),
        _ => "?",
    }
}

/// Whether a node of one of `kinds` is anywhere below `v` (not counting nested loops'
/// `break`, which leaves only the nested loop).
pub(crate) fn find_kind(v: Option<&Value>, kinds: &[&str], found: &mut bool) {
    let Some(v) = v else { return };
    if kinds.contains(&kind(v)) {
        *found = true;
        return;
    }
    for c in inner(v) {
        let nested_loop = matches!(kind(c), "ForStmt" | "WhileStmt" | "DoStmt" | "SwitchStmt");
        if nested_loop {
            let outer: Vec<&str> = (kinds.iter().copied())
                .filter(|k| *k != "BreakStmt")
                .collect();
            // Every part: a `do`'s body comes first, a `while`'s last.
            inner(c)
                .iter()
                .for_each(|p| find_kind(Some(p), &outer, found));
        } else {
            find_kind(Some(c), kinds, found);
        }
    }
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
