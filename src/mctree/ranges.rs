//! The values integer expressions of a kernel can take, as ranges: a constant; a parameter
//! every call of the kernel in the file passes a constant (a literal, a macro, or a local of
//! the caller initialised to one and never assigned); a local of the kernel initialised to a
//! constant and never assigned; the counter of an enclosing loop, over the values its own
//! bounds allow; and sums, differences, multiples and quotients of those by constants.
//! [`walk`] visits a kernel's body with the range of every counter in scope: trip counts
//! ([`super::trips`]) and subscripts ([`super::extents`]) are judged by it.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::mctree::header::{header, Header};
use crate::mctree::looptree::LoopTree;
use crate::mctree::memory::find_calls;
use crate::mctree::node::{bare, decl_ref, inner, is_write, kind, literal, loop_key};
use crate::mctree::unit::{Function, Unit};

/// The ranges of the names in scope, by declaration id.
pub(crate) type Env = HashMap<String, Range>;

/// An integer range `[lo, hi]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Range {
    pub(crate) lo: i64,
    pub(crate) hi: i64,
}

impl Range {
    pub(crate) fn of(lo: i64, hi: i64) -> Range {
        Range { lo, hi }
    }

    pub(crate) fn join(self, o: Range) -> Range {
        Range::of(self.lo.min(o.lo), self.hi.max(o.hi))
    }
}

/// What a walk of the kernel's body ([`walk`]) shows.
pub(crate) trait Visitor {
    /// The bounds of loop `id` (header `h`) where the analysis can bound them.
    fn bounds(&mut self, _id: usize, _h: &Header, _lower: Option<Range>, _upper: Option<Range>) {}
    /// A node of the body, with the counters in scope and the loops around it.
    fn node(&mut self, _v: &Value, _env: &Env, _loops: &[usize]) {}
}

/// The ranges known before the kernel's first statement: its parameters and constant locals
/// ([`Env`]); `whole_program`: no other source calls the kernel.
pub(crate) fn kernel_env(unit: &Unit, kernel: &Function, whole_program: bool) -> Env {
    let mut env = arguments(unit, kernel, whole_program);
    env.extend(constant_locals(&kernel.body));
    env
}

/// Visits `v` and below, each loop's body with its counter's range in `env` (when its bounds
/// are known) and its id on `loops`.
pub(crate) fn walk(
    v: &Value,
    tree: &LoopTree,
    env: &mut Env,
    loops: &mut Vec<usize>,
    to: &mut impl Visitor,
) {
    to.node(v, env, loops);
    if kind(v) != "ForStmt" {
        inner(v).iter().for_each(|c| walk(c, tree, env, loops, to));
        return;
    }
    let id = loop_key(v).and_then(|k| tree.id_at(k));
    if let Some(init) = inner(v).first() {
        walk(init, tree, env, loops, to);
    }
    let h = header(v);
    let counter = (id.zip(h.as_ref())).and_then(|(id, h)| {
        let (lower, upper) = (range(&h.lower, env), range(&h.upper, env));
        to.bounds(id, h, lower, upper);
        Some((h.iv_id.clone(), counter(h, lower?, upper?)))
    });
    let saved = counter.map(|(iv, r)| (iv.clone(), env.insert(iv, r)));
    loops.extend(id);
    (inner(v).iter().skip(1)).for_each(|c| walk(c, tree, env, loops, to));
    if id.is_some() {
        loops.pop();
    }
    if let Some((iv, old)) = saved {
        match old {
            Some(o) => env.insert(iv, o),
            None => env.remove(&iv),
        };
    }
}

/// The first and last values of the counter of header `h` with bounds `lo` and `up`.
pub(crate) fn ends(h: &Header, lo: Range, up: Range) -> (Range, Range) {
    match (h.step > 0, h.inclusive) {
        (true, false) => (lo, Range::of(up.lo - 1, up.hi - 1)),
        (false, false) => (lo, Range::of(up.lo + 1, up.hi + 1)),
        (_, true) => (lo, up),
    }
}

/// The values the counter of header `h` takes, its bounds ranging over `lo` and `up`.
fn counter(h: &Header, lo: Range, up: Range) -> Range {
    let (first, last) = ends(h, lo, up);
    match h.step > 0 {
        true => Range::of(first.lo, last.hi.max(first.lo)),
        false => Range::of(last.lo.min(first.hi), first.hi),
    }
}

/// The range of an integer expression, when the analysis can bound it.
pub(crate) fn range(e: &Value, env: &Env) -> Option<Range> {
    if let Some(c) = literal(e) {
        return Some(Range::of(c, c));
    }
    let e = bare(e);
    if let Some((id, _, _)) = decl_ref(e) {
        return env.get(id).copied();
    }
    let op = e.get("opcode").and_then(Value::as_str);
    let sum =
        |a: Range, b: Range| Some(Range::of(a.lo.checked_add(b.lo)?, a.hi.checked_add(b.hi)?));
    match (kind(e), op, inner(e)) {
        ("BinaryOperator", Some("+"), [x, y]) => sum(range(x, env)?, range(y, env)?),
        ("BinaryOperator", Some("-"), [x, y]) => {
            let y = range(y, env)?;
            sum(
                range(x, env)?,
                Range::of(y.hi.checked_neg()?, y.lo.checked_neg()?),
            )
        }
        ("BinaryOperator", Some(o @ ("*" | "/")), [x, y]) => {
            let (x, k) = match (literal(x), literal(y)) {
                (_, Some(k)) => (range(x, env)?, k),
                (Some(k), _) if o == "*" => (range(y, env)?, k),
                _ => return None,
            };
            let f = |v: i64| {
                if o == "*" {
                    v.checked_mul(k)
                } else {
                    v.checked_div(k)
                }
            };
            let (a, b) = (f(x.lo)?, f(x.hi)?);
            Some(Range::of(a.min(b), a.max(b)))
        }
        ("UnaryOperator", Some("-"), [x]) => {
            let x = range(x, env)?;
            Some(Range::of(x.hi.checked_neg()?, x.lo.checked_neg()?))
        }
        _ => None,
    }
}

/// The kernel's integer parameters that every call in the file passes a constant.
fn arguments(unit: &Unit, kernel: &Function, whole_program: bool) -> Env {
    let mut out: HashMap<String, Range> = HashMap::new();
    let seen = kernel.is_static || whole_program;
    if !seen || unit.named_by_globals.contains(&kernel.name) {
        return out;
    }
    let mut calls: Vec<Vec<Option<Range>>> = vec![];
    for f in unit.functions.iter().filter(|f| f.mentions(&kernel.name)) {
        if f.names.contains(&kernel.name) || !f.has_body() {
            return out; // its address is taken: not every call is seen
        }
        let locals = constant_locals(&f.body);
        let mut escapes = false;
        let mut each =
            |args: &[Value]| calls.push(args.iter().map(|a| range(a, &locals)).collect());
        find_calls(&f.body, &kernel.name, &mut each, &mut escapes);
        if escapes {
            return out;
        }
    }
    if calls.is_empty() {
        return out;
    }
    let mut assigned = HashSet::new();
    writes(&kernel.body, &mut assigned);
    for (i, p) in kernel.params.iter().enumerate() {
        let Some(id) = p.get("id").and_then(Value::as_str) else {
            continue;
        };
        let each: Option<Vec<Range>> = calls.iter().map(|c| c.get(i).copied().flatten()).collect();
        if let Some(r) = each.and_then(|v| v.into_iter().reduce(Range::join)) {
            if !assigned.contains(id) {
                out.insert(id.into(), r);
            }
        }
    }
    out
}

/// The integer locals of a body initialised to a constant and never assigned or
/// address-taken after.
fn constant_locals(body: &Value) -> Env {
    let mut decls = vec![];
    fn collect<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
        if kind(v) == "VarDecl" {
            out.push(v);
        }
        inner(v).iter().for_each(|c| collect(c, out));
    }
    collect(body, &mut decls);
    let mut touched = HashSet::new();
    writes(body, &mut touched);
    let mut out = HashMap::new();
    for d in decls {
        let class = d.get("storageClass").and_then(Value::as_str);
        let Some(id) = d.get("id").and_then(Value::as_str) else {
            continue;
        };
        let value = inner(d).first().and_then(literal);
        if let (Some(c), None, false) = (value, class, touched.contains(id)) {
            out.insert(id.to_string(), Range::of(c, c));
        }
    }
    out
}

/// Every variable written (`=`, `op=`, `++`, `--`) or whose address is taken below `v`.
fn writes(v: &Value, out: &mut HashSet<String>) {
    let address =
        kind(v) == "UnaryOperator" && v.get("opcode").and_then(Value::as_str) == Some("&");
    if is_write(v) || address {
        if let Some((id, _, _)) = inner(v).first().and_then(decl_ref) {
            out.insert(id.into());
        }
    }
    inner(v).iter().for_each(|c| writes(c, out));
}
