//! Every call in the kernel resolved to its declaration, and the ones without an effect
//! marked ([`PURE_MARK`] on the `CallExpr`), so that the grammar ([`super::model`]) and the
//! accesses ([`super::accesses`]) read a call's effect from the tree itself. A call is pure
//! when its callee is named directly (never through a pointer, a parameter or a variable,
//! whatever its name) and is
//! - a function of the C library known to have no effect but its value ([`LIBRARY`]), as
//!   declared in a system header (a file's own `log` is not libm's), its `__builtin_` form or
//!   `__builtin_expect`, or `assert`'s failure handler (it ends the program: a failed
//!   assertion is outside the program's meaning); or
//! - a function the file defines whose body the grammar itself shows reads nothing but its
//!   parameters and its own variables and writes nothing but its own variables, calling only
//!   pure functions ([`body_is_pure`]).
//!
//! Any other call may read and write any memory: the dependence test pairs it with every
//! access.

use std::collections::HashSet;

use serde_json::Value;

use crate::mctree::node::{bare, inner, is_write, kind};
use crate::mctree::unit::{Function, Unit};

/// The field set on a pure `CallExpr`.
pub(crate) const PURE_MARK: &str = "moldtunePure";

/// Functions of the C library without side effects on memory (as declared in a system header).
pub(crate) const LIBRARY: &[&str] = &[
    "sqrt", "exp", "log", "pow", "fabs", "fmin", "fmax", "sin", "cos", "tan", "floor", "ceil",
    "abs", "labs", "sqrtf", "expf", "logf", "powf", "fabsf", "fminf", "fmaxf", "sinf", "cosf",
    "tanf", "floorf", "ceilf", "exp2", "log2", "log10", "atan", "atan2", "tanh", "cbrt", "round",
    "fmod", "hypot", "trunc", "asin", "acos", "sinh", "cosh", "expm1", "log1p", "copysign",
];

/// The C library's handlers of a failed `assert`: they do not return.
const ASSERT_FAILS: &[&str] = &["__assert_fail", "__assert_perror_fail", "__assert"];

/// The function a call names directly (a `DeclRefExpr` of a `FunctionDecl` under the decay to
/// a pointer): its declaration's id and name.
pub(crate) fn callee(call: &Value) -> Option<(&str, &str)> {
    let f = inner(call).first()?;
    let cast = f.get("castKind").and_then(Value::as_str);
    let decays = kind(f) == "ImplicitCastExpr"
        && matches!(cast, Some("FunctionToPointerDecay" | "BuiltinFnToFnPtr"));
    let r = bare(f);
    let d = r.get("referencedDecl")?;
    let direct = decays && kind(r) == "DeclRefExpr" && kind(d) == "FunctionDecl";
    direct.then_some((d.get("id")?.as_str()?, d.get("name")?.as_str()?))
}

/// Whether `v` is a call marked pure.
pub(crate) fn is_pure(v: &Value) -> bool {
    v.get(PURE_MARK).and_then(Value::as_bool) == Some(true)
}

/// `kernel` with every pure call of its body marked.
pub fn annotate(unit: &Unit, kernel: &Function) -> Function {
    let mut k = kernel.clone();
    let judge = Judge {
        unit,
        visiting: vec![],
    };
    mark(&mut k.body, &judge);
    k
}

fn mark(v: &mut Value, judge: &Judge) {
    if kind(v) == "CallExpr" && judge.clone().pure_call(v) {
        if let Some(o) = v.as_object_mut() {
            o.insert(PURE_MARK.into(), Value::Bool(true));
        }
    }
    if let Some(kids) = v.get_mut("inner").and_then(Value::as_array_mut) {
        kids.iter_mut().for_each(|c| mark(c, judge));
    }
}

/// Decides calls, with the functions of the file whose purity is being decided (a recursive
/// function is not proved pure).
#[derive(Clone)]
struct Judge<'u> {
    unit: &'u Unit,
    visiting: Vec<String>,
}

impl Judge<'_> {
    fn pure_call(mut self, call: &Value) -> bool {
        let Some((id, name)) = callee(call) else {
            return false;
        };
        // The compiler's own: a name no program may define.
        if let Some(b) = name.strip_prefix("__builtin_") {
            return LIBRARY.contains(&b) || b == "expect";
        }
        if self.unit.library.contains(id) {
            return LIBRARY.contains(&name) || ASSERT_FAILS.contains(&name);
        }
        let f = self.unit.functions.iter().find(|f| f.name == name);
        let Some(f) = f.filter(|f| f.has_body() && !self.visiting.contains(&f.name)) else {
            return false;
        };
        self.visiting.push(f.name.clone());
        self.body_is_pure(f)
    }

    /// Whether `f`'s body is in the grammar of a pure function: statements and expressions
    /// over its parameters, its own automatic variables, constants and pure calls; no element,
    /// member or pointer access, no global, no `static`, no jump but `return`, `break` and
    /// `continue`.
    fn body_is_pure(&self, f: &Function) -> bool {
        let mut own: HashSet<&str> = (f.params.iter())
            .filter_map(|p| p.get("id")?.as_str())
            .collect();
        locals(&f.body, &mut own);
        self.pure_node(&f.body, &own)
    }

    fn pure_node(&self, v: &Value, own: &HashSet<&str>) -> bool {
        let op = v.get("opcode").and_then(Value::as_str);
        let ok = match kind(v) {
            "CompoundStmt"
            | "DeclStmt"
            | "NullStmt"
            | "IfStmt"
            | "ForStmt"
            | "WhileStmt"
            | "DoStmt"
            | "ReturnStmt"
            | "BreakStmt"
            | "ContinueStmt"
            | "ParenExpr"
            | "ImplicitCastExpr"
            | "CStyleCastExpr"
            | "IntegerLiteral"
            | "FloatingLiteral"
            | "CharacterLiteral"
            | "ConditionalOperator"
            | "BinaryOperator"
            | "CompoundAssignOperator"
            | "ConstantExpr" => true,
            "" => v.as_object().is_some_and(|o| o.is_empty()),
            "UnaryOperator" => !matches!(op, Some("*" | "&")),
            "VarDecl" => v.get("storageClass").is_none(),
            "DeclRefExpr" => self.pure_name(v, own),
            "CallExpr" => self.clone().pure_call(v),
            _ => false,
        };
        let writes_own = !is_write(v) || inner(v).first().is_some_and(|t| own_name(t, own));
        ok && writes_own && inner(v).iter().all(|c| self.pure_node(c, own))
    }

    /// A name a pure body may use: its own variable, a function, an enum constant.
    fn pure_name(&self, v: &Value, own: &HashSet<&str>) -> bool {
        let d = v.get("referencedDecl");
        let k = d.map(kind).unwrap_or("");
        matches!(k, "FunctionDecl" | "EnumConstantDecl") || own_name(v, own)
    }
}

fn own_name(v: &Value, own: &HashSet<&str>) -> bool {
    let id = bare(v).get("referencedDecl").and_then(|d| d.get("id"));
    id.and_then(Value::as_str)
        .is_some_and(|id| own.contains(id))
}

/// The automatic variables declared in `v`.
fn locals<'v>(v: &'v Value, out: &mut HashSet<&'v str>) {
    if kind(v) == "VarDecl" && v.get("storageClass").is_none() {
        out.extend(v.get("id").and_then(Value::as_str));
    }
    inner(v).iter().for_each(|c| locals(c, out));
}
