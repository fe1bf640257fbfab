//! The grammar the dependence test ([`super::deps`]) is sound for: the one description of it,
//! an allow-list of node kinds and types of clang's AST. A loop's transformations are *proved*
//! only when everything that can reach the loop — its header, its body, the loops nested in
//! it, the functions it calls — is of a form listed here; anything else, a construct nobody
//! thought of included, makes them unproved (tried only under `--trust-output-check`, guarded by the output check alone),
//! and `--list` names it and where it is. Adding a form means adding it here, with a test.
//!
//! - **Headers.** A transformed loop is canonical and typed ([`super::header::checked`]: an
//!   integer counter; an integer initial value and bound, no floating-point value converted on
//!   the way, neither reading the counter; the comparison in the counter's type; a constant
//!   step). The initial value and the bound of every canonical loop call no function but the
//!   pure ones ([`super::calls`]) and assign nothing; a bound that reads memory or a variable
//!   that is not the kernel's own reads nothing a call or a write through a pointer in the loop
//!   may change. (The header of a loop that is not canonical is ordinary code of the loop
//!   around it, analysed in the order it runs: condition, body, increment.)
//! - **Counters.** A counter declared outside its loop is the kernel's own (a parameter, or an
//!   automatic variable of its body) and is read nowhere outside the loop except inside a
//!   later loop that counts with it and sets it first: a transformed loop leaves its counter
//!   at another value.
//! - **Statements**: blocks, declarations of automatic variables (and of types), expression
//!   statements, `if`, `switch` with `case`/`default`, `for`/`while`/`do`, `continue`, and
//!   `break`/`return` (a loop they leave is not transformable at all: [`super::header`]).
//!   A GNU statement expression with no loop and no jump in it (glibc's `assert`) is a block.
//!   Not: `goto` or labels, inline assembly, `static` or `extern` declarations, and the
//!   source's own directives (`#pragma omp …`, `#pragma clang loop`, `#pragma unroll`).
//! - **Expressions**: literals, names, casts, parentheses, unary, binary, compound and
//!   conditional operators, the comma, subscripts, members, calls (resolved to their
//!   declaration by [`super::calls`]: one not proved pure reads and writes any memory; a call
//!   through a pointer is never pure), `sizeof`, initialiser lists; `enum` constants and
//!   `const` integers are numbers ([`super::constants`]). Not: statement expressions holding
//!   a loop or a jump, `_Generic`, `__builtin_choose_expr`, compound literals, `va_arg`,
//!   atomics.
//! - **Scalars**: a `volatile` or `_Atomic` object is not modelled; a scalar whose address is
//!   taken anywhere in the kernel, or that the kernel declares `static` or `extern`, is not
//!   modelled in a loop (a pointer may reach it; its value outlives the kernel); only the
//!   kernel's own variables may be private to a loop ([`own_variables`]).
//! - **Subscripts**: the test compares subscripts dimension by dimension, so a subscript of an
//!   inner dimension (`j` in `A[i][j]`) is modelled only where its values are known to lie in
//!   the size its type gives ([`super::extents`]): `A[i][j + 1]` at `j = N - 1` is `A[i + 1][0]`.
//!
//! [`super::unmodelled`] and [`super::extents`] apply this description to a kernel. Loops are named by their
//! source position ([`super::looptree::LoopTree::id_at`]), the same
//! key the dependence test and the transformation use.

use std::collections::HashSet;

use serde_json::Value;

use crate::mctree::calls::{callee, is_pure};
use crate::mctree::node::{bare, decl_ref, inner, is_write, kind};
use crate::mctree::unit::Function;

/// Statements and declarations the model knows.
pub(crate) const STATEMENTS: &[&str] = &[
    "CompoundStmt",
    "DeclStmt",
    "NullStmt",
    "IfStmt",
    "ForStmt",
    "WhileStmt",
    "DoStmt",
    "SwitchStmt",
    "CaseStmt",
    "DefaultStmt",
    "BreakStmt",
    "ContinueStmt",
    "ReturnStmt",
    "VarDecl",
    "TypedefDecl",
    "RecordDecl",
    "FieldDecl",
    "EnumDecl",
    "EnumConstantDecl",
];

/// Expressions the model knows.
pub(crate) const EXPRESSIONS: &[&str] = &[
    "IntegerLiteral",
    "FloatingLiteral",
    "CharacterLiteral",
    "StringLiteral",
    "ImplicitCastExpr",
    "CStyleCastExpr",
    "ParenExpr",
    "ConstantExpr",
    "BinaryOperator",
    "CompoundAssignOperator",
    "UnaryOperator",
    "ConditionalOperator",
    "ArraySubscriptExpr",
    "DeclRefExpr",
    "CallExpr",
    "MemberExpr",
    "UnaryExprOrTypeTraitExpr",
    "InitListExpr",
    "ImplicitValueInitExpr",
    "PredefinedExpr",
];

/// What a construct outside the model is called in `--list`.
pub(crate) fn name_of(k: &str) -> String {
    match k {
        "GotoStmt" | "IndirectGotoStmt" => "a `goto`".into(),
        "LabelStmt" => "a label (a `goto` may enter or skip part of the body)".into(),
        "StmtExpr" => "a GNU statement expression `({ … })`".into(),
        "AttributedStmt" => "a loop directive of the source (`#pragma clang loop`/`unroll`)".into(),
        "GCCAsmStmt" | "MSAsmStmt" => "inline assembly".into(),
        k if k.starts_with("OMP") => format!("a directive of the source (`{k}`)"),
        k => format!("a construct the dependence test does not model (`{k}`)"),
    }
}

/// The kernel's own variables: its parameters and the variables of its body that are neither
/// `static` nor `extern`. Only these may be private to a loop: any other keeps its last value
/// after the kernel returns, which a reordered loop would change.
pub fn own_variables(kernel: &Function) -> HashSet<String> {
    fn walk(v: &Value, out: &mut HashSet<String>) {
        let class = v.get("storageClass").and_then(Value::as_str);
        if kind(v) == "VarDecl" && !matches!(class, Some("static" | "extern")) {
            out.extend(v.get("id").and_then(Value::as_str).map(String::from));
        }
        inner(v).iter().for_each(|c| walk(c, out));
    }
    let mut out = HashSet::new();
    walk(&kernel.body, &mut out);
    let params = kernel.params.iter().filter_map(|p| p.get("id")?.as_str());
    out.extend(params.map(String::from));
    out
}

pub(crate) fn op(v: &Value) -> Option<&str> {
    v.get("opcode").and_then(Value::as_str)
}

/// Why evaluating `e` has an effect: a call of a function not known to be pure, an assignment.
pub(crate) fn effect(e: &Value) -> Option<String> {
    if effect_of_call(e) {
        let called = callee(e).map_or("calls through a pointer".into(), |(_, n)| {
            format!("calls `{n}`")
        });
        return Some(format!(
            "{called} (evaluated another number of times once transformed)"
        ));
    }
    if is_write(e) {
        return Some("assigns a variable".into());
    }
    inner(e).iter().find_map(effect)
}

/// Whether `e` reads memory: an element, a member, through a pointer, or a variable that is
/// not the kernel's own.
pub(crate) fn reads_memory(e: &Value, own: &HashSet<String>) -> bool {
    let deref = kind(e) == "UnaryOperator" && op(e) == Some("*");
    let element = matches!(kind(e), "ArraySubscriptExpr" | "MemberExpr") || deref;
    let foreign = decl_ref(e).is_some_and(|(id, _, ty)| !ty.contains('(') && !own.contains(id));
    element || foreign || inner(e).iter().any(|c| reads_memory(c, own))
}

/// Whether `v` calls a function not known to be pure or writes through a pointer or a member.
pub(crate) fn changes_memory(v: &Value) -> bool {
    if effect_of_call(v) {
        return true;
    }
    let through = is_write(v) && !inner(v).first().is_some_and(named);
    through || inner(v).iter().any(changes_memory)
}

/// Whether an lvalue is a variable or an element of a declared array (not through a pointer).
fn named(t: &Value) -> bool {
    decl_ref(t).is_some() || array_of(t).is_some()
}

/// The declared array an lvalue or subscript is an element of (`A` of `A[i][j]`), when it is
/// one and not reached through a pointer.
pub(crate) fn array_of(v: &Value) -> Option<&str> {
    let v = bare(v);
    if kind(v) == "ArraySubscriptExpr" {
        return array_of(inner(v).first()?);
    }
    let (id, _, ty) = decl_ref(v)?;
    (ty.contains('[') && !ty.contains('*')).then_some(id)
}

/// Whether `v` is a call of a function not known to be pure.
pub(crate) fn effect_of_call(v: &Value) -> bool {
    kind(v) == "CallExpr" && !is_pure(v)
}
