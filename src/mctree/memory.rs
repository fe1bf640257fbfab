//! Which memory a name the kernel subscripts or dereferences refers to: the objects the
//! dependence test ([`super::deps`]) may tell apart, and the pointers it may not.
//!
//! An *object* is storage no other name of the kernel reaches: an array declared in the file
//! (global or local), a `restrict` pointer parameter, or a pointer parameter every caller in
//! the file passes an array or allocation of its own (one no other argument and no global the
//! kernel names reaches). A *view* is a pointer the kernel sets once, before its loops, to an
//! element of an object (`double *p = &b[1]`, `q = c + 1`, `r = A[i]`, casts to the same
//! element type): an access `p[e]` is `b[1 + e]`. Everything else is *unknown* — a global
//! pointer, a parameter whose callers are not all seen or may pass overlapping arrays, a
//! pointer moved in a loop or set more than once, one read from memory — and every access
//! through it may touch any memory: the test assumes dependences in every direction and says
//! why.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::Value;

use crate::mctree::calls::callee;
use crate::mctree::ctype::{
    array_rank, is_pointer, pointee, pointer_rank, pointer_rank_of, restrict, type_of,
};
use crate::mctree::node::{decl_ref, inner, kind, offset as node_offset};
use crate::mctree::rotation::{Alias, Rotation};
use crate::mctree::unit::{Function, Unit};

/// A subscript as written: the sum of `sign · expression` terms (empty: 0).
pub type Subscript = Vec<(i64, Value)>;

/// Where an access lands: in `root` (a declaration id), at `path` (one subscript per
/// dimension of the root; `None` when the access reinterprets the root's elements).
#[derive(Debug, Clone)]
pub struct Place {
    pub root: String,
    pub path: Option<Vec<Subscript>>,
}

/// What a declaration names.
#[derive(Debug, Clone)]
enum Name {
    /// An object of its own, whose elements take `rank` subscripts.
    Object { rank: usize },
    /// A pointer to the element `place` of an object.
    View(Place),
    /// A pointer whose target is not known.
    Unknown(String),
}

/// The names of one kernel.
#[derive(Debug, Default)]
pub struct Memory {
    names: HashMap<String, Name>,
    /// Declaration id → name as written.
    spelled: HashMap<String, String>,
    /// Pointers that take turns, where their nests see them fixed ([`Rotation`]).
    rotation: Rotation,
    /// The subscripts an element through each of the rotation's pointers takes.
    rotating_ranks: HashMap<String, usize>,
}

/// Functions that return fresh memory: those declared `__attribute__((malloc))` (glibc's
/// `malloc`, `calloc`, `aligned_alloc`, …) and PolyBench/C's allocator.
const ALLOCATORS: &[&str] = &["polybench_alloc_data"];

impl Memory {
    /// The names of `kernel`'s body: the file's global arrays and pointers, the kernel's
    /// parameters (judged by the calls in `unit`; `whole_program`: no other source can call
    /// it) and its local arrays and pointers.
    pub fn of(unit: &Unit, kernel: &Function, whole_program: bool) -> Memory {
        let mut m = Memory::default();
        let assigned = assignments(&kernel.body);
        for d in &unit.globals {
            m.declare(d, || "a global pointer: it may point into any array".into());
        }
        let callers = Callers::of(unit, kernel, whole_program);
        for p in &kernel.params {
            let why = callers.why_not_distinct(p, kernel);
            match (pointer_rank(p), restrict(p), why) {
                (Some(rank), true, _) | (Some(rank), _, None) => m.insert(p, Name::Object { rank }),
                (Some(_), false, Some(why)) => m.insert(p, Name::Unknown(why)),
                _ => {}
            }
        }
        let mut locals = vec![];
        declarations(&kernel.body, &mut locals);
        for d in &locals {
            m.declare(d, || "a pointer set in the kernel".into());
        }
        m.views(&locals, &assigned);
        m.rotations(&kernel.body, &locals);
        for (id, n) in &assigned {
            let reassigned = matches!(m.names.get(id), Some(Name::Object { .. }) if n.count > 0);
            if reassigned {
                let why = "a pointer parameter the kernel moves".to_string();
                m.names.insert(id.clone(), Name::Unknown(why));
            }
        }
        m
    }

    fn insert(&mut self, d: &Value, n: Name) {
        if let (Some(id), Some(name)) = (id_of(d), d.get("name").and_then(Value::as_str)) {
            self.names.insert(id.into(), n);
            self.spelled.insert(id.into(), name.into());
        }
    }

    /// An array is an object; a pointer is unknown (`why`) until [`Memory::views`] says more.
    fn declare(&mut self, d: &Value, why: impl Fn() -> String) {
        let ty = type_of(d);
        if let Some(rank) = array_rank(&ty) {
            self.insert(d, Name::Object { rank });
        } else if pointer_rank_of(&ty).is_some() {
            self.insert(d, Name::Unknown(why()));
        }
    }

    /// The kernel's local pointers set exactly once, outside every loop, to a place in an
    /// object.
    fn views(&mut self, locals: &[Value], assigned: &HashMap<String, Assignments>) {
        for d in locals {
            let Some(id) = id_of(d) else { continue };
            if !matches!(self.names.get(id), Some(Name::Unknown(_))) {
                continue;
            }
            let a = assigned.get(id);
            let init = inner(d).iter().find(|c| !kind(c).ends_with("Attr"));
            let (count, in_loop, value) = match (init, a) {
                (Some(i), None) => (1, false, Some(i.clone())),
                (Some(_), Some(a)) => (1 + a.count, a.in_loop, None),
                (None, Some(a)) => (a.count, a.in_loop, a.value.clone()),
                (None, None) => (0, false, None),
            };
            let name = match (count, in_loop, value) {
                (_, _, _) if a.is_some_and(|a| a.address_taken) => {
                    Name::Unknown("a pointer whose address is taken".into())
                }
                (1, false, Some(v)) => match self.pointer(&v) {
                    Ok(place) => Name::View(place),
                    Err(why) => Name::Unknown(format!("set to {why}")),
                },
                (0, _, _) => Name::Unknown("a pointer the kernel never sets".into()),
                (_, true, _) => Name::Unknown("a pointer moved inside a loop".into()),
                _ => Name::Unknown("a pointer set more than once".into()),
            };
            self.names.insert(id.into(), name);
        }
    }

    /// The local pointers the kernel swaps between its objects ([`Rotation`]), where it does.
    fn rotations(&mut self, body: &Value, locals: &[Value]) {
        let mut candidates = BTreeSet::new();
        for d in locals {
            let (Some(id), Some(rank)) = (id_of(d), pointer_rank(d)) else {
                continue;
            };
            if matches!(self.names.get(id), Some(Name::Unknown(_))) {
                self.rotating_ranks.insert(id.to_string(), rank);
                candidates.insert(id.to_string());
            }
        }
        let object = |e: &Value| {
            let p = self.pointer(e).ok()?;
            let start = p.path.as_ref()?.iter().all(Vec::is_empty);
            let object = matches!(self.names.get(&p.root), Some(Name::Object { .. }));
            (start && object).then_some(p.root)
        };
        let rotation = Rotation::of(body, &candidates, &object);
        self.rotation = rotation;
    }

    /// How the places `x` and `y` (roots of [`Place`]s) relate.
    pub fn alias(&self, x: &str, y: &str) -> Alias {
        self.rotation.alias(x, y)
    }

    /// The name a declaration is written as.
    pub fn spelling(&self, id: &str) -> &str {
        let id = self.rotation.member_of(id).unwrap_or(id);
        self.spelled.get(id).map_or("?", String::as_str)
    }

    /// How many subscripts reach an element of object `root`.
    pub fn rank(&self, root: &str) -> Option<usize> {
        if let Some(m) = self.rotation.member_of(root) {
            return self.rotating_ranks.get(m).copied();
        }
        match self.names.get(root) {
            Some(Name::Object { rank }) => Some(*rank),
            _ => None,
        }
    }

    /// The place an lvalue (`A[i][j]`, `*p`, `p[i]`) lands, or why it cannot be told.
    pub fn lvalue(&self, e: &Value) -> Result<Place, String> {
        match (kind(e), op(e), inner(e)) {
            ("ParenExpr", _, [x]) => self.lvalue(x),
            ("ArraySubscriptExpr", _, [base, index]) => Ok(offset(self.pointer(base)?, 1, index)),
            ("UnaryOperator", Some("*"), [x]) => self.pointer(x),
            ("DeclRefExpr", _, _) => {
                let (id, name, _) = decl_ref(e).ok_or("an unnamed declaration")?;
                match self.names.get(id) {
                    Some(Name::Object { .. }) => Ok(Place {
                        root: id.into(),
                        path: Some(vec![]),
                    }),
                    _ => Err(format!("`{name}`, not an array")),
                }
            }
            ("MemberExpr", _, _) => Err("a member of a struct or union".into()),
            (k, _, _) => Err(format!("an expression ({k}) the test does not follow")),
        }
    }

    /// The element a pointer value points at.
    pub fn pointer(&self, e: &Value) -> Result<Place, String> {
        let cast = e.get("castKind").and_then(Value::as_str);
        match (kind(e), op(e), cast, inner(e)) {
            ("ParenExpr", _, _, [x]) => self.pointer(x),
            (_, _, Some("ArrayToPointerDecay"), [x]) => {
                let mut p = self.lvalue(x)?;
                if let Some(path) = &mut p.path {
                    path.push(vec![]);
                }
                Ok(p)
            }
            (_, _, Some("LValueToRValue"), [x]) => self.variable(x),
            (_, _, Some("NoOp"), [x]) => self.pointer(x),
            (_, _, Some("BitCast"), [x]) => {
                let mut p = self.pointer(x)?;
                if pointee(&type_of(e)) != pointee(&type_of(x)) {
                    p.path = None;
                }
                Ok(p)
            }
            ("BinaryOperator", Some(o @ ("+" | "-")), _, [x, y]) => {
                let sign = if o == "-" { -1 } else { 1 };
                match (is_pointer(x), is_pointer(y)) {
                    (true, false) => Ok(offset(self.pointer(x)?, sign, y)),
                    (false, true) if sign == 1 => Ok(offset(self.pointer(y)?, 1, x)),
                    _ => Err("pointer arithmetic the test does not follow".into()),
                }
            }
            ("UnaryOperator", Some("&"), _, [x]) => self.lvalue(x),
            ("DeclRefExpr", _, _, _) => self.variable(e),
            _ => Err("a pointer read from memory or computed".into()),
        }
    }

    /// The element the pointer variable `e` points at.
    fn variable(&self, e: &Value) -> Result<Place, String> {
        let Some((id, name, _)) = decl_ref(e) else {
            return self.pointer(e).map_err(|w| format!("{w} (loaded)"));
        };
        match self.names.get(id) {
            Some(Name::Object { .. }) => Ok(Place {
                root: id.into(),
                path: Some(vec![vec![]]),
            }),
            // `row = A[i]; row[j]`: j may run past the row, so the element is not known.
            Some(Name::View(p)) if p.path.as_ref().is_some_and(|path| path.len() > 1) => {
                Ok(Place {
                    root: p.root.clone(),
                    path: None,
                })
            }
            Some(Name::View(p)) => Ok(p.clone()),
            Some(Name::Unknown(why)) => {
                let at = e
                    .get("range")
                    .and_then(|r| r.get("begin"))
                    .and_then(node_offset);
                match at.and_then(|at| self.rotation.root(id, at)) {
                    Some(root) => Ok(Place {
                        root,
                        path: Some(vec![vec![]]),
                    }),
                    None => Err(format!("`{name}`, {why}")),
                }
            }
            None => Err(format!("`{name}`, not an array or a known pointer")),
        }
    }
}

/// `p` moved by `sign · e` elements along its last subscript.
fn offset(mut p: Place, sign: i64, e: &Value) -> Place {
    if let Some(last) = p.path.as_mut().and_then(|path| path.last_mut()) {
        last.push((sign, e.clone()));
    }
    p
}

fn op(e: &Value) -> Option<&str> {
    e.get("opcode").and_then(Value::as_str)
}

fn id_of(d: &Value) -> Option<&str> {
    d.get("id").and_then(Value::as_str)
}

/// Every variable declared in `v` (nested blocks and loop headers included).
fn declarations(v: &Value, out: &mut Vec<Value>) {
    if kind(v) == "VarDecl" {
        out.push(v.clone());
    }
    inner(v).iter().for_each(|c| declarations(c, out));
}

/// How a variable is written in the kernel: assignments (`=`, `op=`, `++`, `--`), the value
/// of the last plain `=`, whether any lies in a loop, whether its address is taken.
#[derive(Debug, Default)]
struct Assignments {
    count: usize,
    in_loop: bool,
    value: Option<Value>,
    address_taken: bool,
}

fn assignments(body: &Value) -> HashMap<String, Assignments> {
    let mut out = HashMap::new();
    walk_assignments(body, false, &mut out);
    out
}

fn walk_assignments(v: &Value, in_loop: bool, out: &mut HashMap<String, Assignments>) {
    let target = inner(v).first().and_then(decl_ref).map(|(id, _, _)| id);
    match (kind(v), op(v), target) {
        ("BinaryOperator", Some("="), Some(id)) => {
            let a = out.entry(id.into()).or_default();
            a.count += 1;
            a.in_loop |= in_loop;
            a.value = inner(v).get(1).cloned();
        }
        ("CompoundAssignOperator", _, Some(id))
        | ("UnaryOperator", Some("++" | "--"), Some(id)) => {
            let a = out.entry(id.into()).or_default();
            a.count += 1;
            a.in_loop |= in_loop;
        }
        ("UnaryOperator", Some("&"), Some(id)) => {
            out.entry(id.into()).or_default().address_taken = true;
        }
        _ => {}
    }
    let in_loop = in_loop || matches!(kind(v), "ForStmt" | "WhileStmt" | "DoStmt");
    inner(v)
        .iter()
        .for_each(|c| walk_assignments(c, in_loop, out));
}

/// What the calls of the kernel in the file pass its pointer parameters.
struct Callers {
    /// Per call, per parameter position: the object the argument points into, if known.
    calls: Vec<Vec<Option<String>>>,
    /// Why no call can be trusted to show every caller.
    unseen: Option<String>,
    /// Globals the kernel names.
    globals_used: HashSet<String>,
}

impl Callers {
    /// The calls of `kernel` in `unit`: every function that names the kernel has its body
    /// there ([`crate::mctree::unit`]).
    fn of(unit: &Unit, kernel: &Function, whole_program: bool) -> Callers {
        let globals: HashMap<String, Value> = (unit.globals.iter())
            .filter_map(|d| Some((id_of(d)?.to_string(), d.clone())))
            .collect();
        let mut used = HashSet::new();
        referenced(&kernel.body, &mut used);
        let globals_used = used
            .into_iter()
            .filter(|id| globals.contains_key(id))
            .collect();
        let mut calls = vec![];
        let mut escapes = unit.named_by_globals.contains(&kernel.name);
        for f in unit.functions.iter().filter(|f| f.mentions(&kernel.name)) {
            let locals = Locals::of(f, &unit.allocators);
            find_calls(
                &f.body,
                &kernel.name,
                &mut |args| calls.push(args.iter().map(|a| locals.root(a, &globals)).collect()),
                &mut escapes,
            );
        }
        let unseen = if escapes {
            Some("the kernel's address is taken, so its callers are not all seen".to_string())
        } else if !kernel.is_static && !whole_program {
            Some("the kernel is not static and an extra source may call it (it names it, or is an object file)".into())
        } else if calls.is_empty() {
            Some("no call of the kernel in the file shows what its callers pass".into())
        } else {
            None
        };
        Callers {
            calls,
            unseen,
            globals_used,
        }
    }

    /// Why parameter `p` may share memory with another name of the kernel (`None`: it may
    /// not).
    fn why_not_distinct(&self, p: &Value, kernel: &Function) -> Option<String> {
        if let Some(why) = &self.unseen {
            return Some(format!("a pointer parameter: {why}"));
        }
        let at = kernel.params.iter().position(|q| id_of(q) == id_of(p))?;
        for call in &self.calls {
            let Some(root) = call.get(at).cloned().flatten() else {
                return Some(
                    "a pointer parameter a caller passes a pointer the test cannot follow".into(),
                );
            };
            let pointer_at = |i: usize| kernel.params.get(i).and_then(pointer_rank).is_some();
            let shared = (call.iter().enumerate())
                .any(|(i, r)| i != at && r.as_deref() == Some(&root) && pointer_at(i));
            if shared || self.globals_used.contains(&root) {
                return Some("a pointer parameter a caller points into the same array as another name of the kernel".into());
            }
        }
        None
    }
}

/// Every declaration id an expression names.
fn referenced(v: &Value, out: &mut HashSet<String>) {
    if let Some((id, _, _)) = decl_ref(v) {
        out.insert(id.into());
    }
    inner(v).iter().for_each(|c| referenced(c, out));
}

/// Calls `found` with the arguments of every call of `name` below `v`; sets `escapes` when
/// `name` is used other than as a callee.
pub(crate) fn find_calls(
    v: &Value,
    name: &str,
    found: &mut dyn FnMut(&[Value]),
    escapes: &mut bool,
) {
    if kind(v) == "CallExpr" {
        let kids = inner(v);
        let callee = callee(v).map(|(_, n)| n);
        if callee == Some(name) {
            found(&kids[1..]);
        }
        kids.iter()
            .skip(callee.is_some() as usize)
            .for_each(|c| find_calls(c, name, found, escapes));
        return;
    }
    if decl_ref(v).is_some_and(|(_, n, _)| n == name) {
        *escapes = true;
    }
    inner(v)
        .iter()
        .for_each(|c| find_calls(c, name, found, escapes));
}

/// A caller's arrays and the pointers it sets once to fresh memory.
struct Locals {
    objects: HashSet<String>,
}

impl Locals {
    fn of(f: &Function, allocators: &HashSet<String>) -> Locals {
        let assigned = assignments(&f.body);
        let mut decls = vec![];
        declarations(&f.body, &mut decls);
        let mut objects = HashSet::new();
        for d in &decls {
            let Some(id) = id_of(d) else { continue };
            let a = assigned.get(id);
            let init = inner(d).iter().find(|c| !kind(c).ends_with("Attr"));
            let fresh = match (init, a) {
                _ if a.is_some_and(|a| a.address_taken) => false,
                (Some(i), None) => allocates(i, allocators),
                (None, Some(a)) if a.count == 1 => {
                    a.value.as_ref().is_some_and(|v| allocates(v, allocators))
                }
                _ => false,
            };
            if fresh || array_rank(&type_of(d)).is_some() {
                objects.insert(id.to_string());
            }
        }
        Locals { objects }
    }

    /// The object an argument points into: a global or local array, or a pointer set once to
    /// fresh memory.
    fn root(&self, e: &Value, globals: &HashMap<String, Value>) -> Option<String> {
        match (kind(e), op(e), inner(e)) {
            ("ParenExpr" | "ImplicitCastExpr" | "CStyleCastExpr", _, [x]) => self.root(x, globals),
            ("UnaryOperator", Some("&" | "*"), [x]) => self.root(x, globals),
            ("ArraySubscriptExpr", _, [base, _]) => self.root(base, globals),
            ("BinaryOperator", Some("+" | "-"), [x, y]) => match (is_pointer(x), is_pointer(y)) {
                (true, false) => self.root(x, globals),
                (false, true) => self.root(y, globals),
                _ => None,
            },
            ("DeclRefExpr", _, _) => {
                let (id, _, _) = decl_ref(e)?;
                let global_array = globals
                    .get(id)
                    .is_some_and(|d| array_rank(&type_of(d)).is_some());
                (global_array || self.objects.contains(id)).then(|| id.to_string())
            }
            _ => None,
        }
    }
}

/// Whether `e` is (a cast of) a call of an allocator.
fn allocates(e: &Value, allocators: &HashSet<String>) -> bool {
    match kind(e) {
        "ParenExpr" | "ImplicitCastExpr" | "CStyleCastExpr" => {
            inner(e).first().is_some_and(|x| allocates(x, allocators))
        }
        "CallExpr" => {
            callee(e).is_some_and(|(_, n)| allocators.contains(n) || ALLOCATORS.contains(&n))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_of_types() {
        assert_eq!(array_rank("double[10][20]"), Some(2));
        assert_eq!(array_rank("double *"), None);
        assert_eq!(pointer_rank_of("double *"), Some(1));
        assert_eq!(pointer_rank_of("double *restrict"), Some(1));
        assert_eq!(pointer_rank_of("double (*)[20]"), Some(2));
        assert_eq!(pointer_rank_of("double (*restrict)[20][30]"), Some(3));
        assert_eq!(pointer_rank_of("double"), None);
        assert_eq!(pointer_rank_of("int (*)(int)"), None);
    }
}
