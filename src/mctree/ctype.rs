//! C types as clang-22's JSON AST spells them (`qualType`, desugared): pointers, arrays and
//! their ranks, `restrict`, the type pointed at.

use serde_json::Value;

/// A declaration's or expression's type, desugared (typedefs expanded).
pub(crate) fn type_of(v: &Value) -> String {
    crate::mctree::header::type_of(v).unwrap_or("").to_string()
}

pub(crate) fn is_pointer(e: &Value) -> bool {
    pointer_rank_of(&type_of(e)).is_some()
}

/// The subscripts an element of an array type takes (`double[10][20]` → 2).
pub(crate) fn array_rank(ty: &str) -> Option<usize> {
    (ty.ends_with(']') && !ty.contains('(') && !ty.contains('*')).then(|| ty.matches('[').count())
}

/// For a pointer type, the subscripts an element through it takes (`double *` → 1,
/// `double (*)[20]` → 2).
pub(crate) fn pointer_rank_of(ty: &str) -> Option<usize> {
    let mut ty = ty.trim_end();
    for q in ["restrict", "__restrict", "const", "volatile"] {
        ty = ty.trim_end_matches(q).trim_end();
    }
    if ty.ends_with('*') {
        return Some(1);
    }
    let simple = ty.contains("(*") && ty.ends_with(']') && ty.matches('(').count() == 1;
    simple.then(|| 1 + ty.matches('[').count())
}

pub(crate) fn pointer_rank(d: &Value) -> Option<usize> {
    pointer_rank_of(&type_of(d))
}

/// A pointer declared `restrict` (`double *restrict x`, `double (*restrict y)[N]`).
pub(crate) fn restrict(d: &Value) -> bool {
    let t = d.get("type").and_then(|t| t.get("qualType"));
    let ty = t.and_then(Value::as_str).unwrap_or("");
    ty.ends_with("*restrict") || ty.contains("*restrict)") || ty.contains("*__restrict")
}

/// The element type a pointer type points at, without qualifiers.
pub(crate) fn pointee(ty: &str) -> String {
    let words: Vec<&str> = (ty.split_whitespace())
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict"))
        .collect();
    words.join(" ")
}
