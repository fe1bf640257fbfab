//! Whether a loop's trip count is provably never negative — whether its initial value can
//! pass its bound (`for (l = k; l < n; l++)` with `k > n`). clang-22's `tile`, `reverse` and
//! `interchange` compute the trip count of such a loop as a huge unsigned number and run
//! wild (measured: a segmentation fault at `k = n + 1`, and at `0 < n` with `n = -1`), and so
//! does a `parallel for` above an `unroll partial`; `parallel for` and `unroll partial` alone
//! run it zero times, as the source does. So the others are proved only on loops whose bounds
//! are known to keep their order ([`check`]).
//!
//! Values are ranges: a constant; a parameter every call of the kernel in the file passes a
//! constant (a literal, a macro, or a local of the caller initialised to one and never
//! assigned); a local of the kernel initialised to a constant and never assigned; the counter
//! of an enclosing loop, over the values its own bounds allow; and sums, differences,
//! multiples and quotients of those by constants.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::mctree::header::{header, is_write, Header};
use crate::mctree::looptree::LoopTree;
use crate::mctree::memory::find_calls;
use crate::mctree::node::{bare, decl_ref, inner, kind, literal, loop_key};
use crate::mctree::unit::{Function, Unit};

/// An integer range `[lo, hi]`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Range {
    lo: i64,
    hi: i64,
}

impl Range {
    fn of(lo: i64, hi: i64) -> Range {
        Range { lo, hi }
    }

    fn join(self, o: Range) -> Range {
        Range::of(self.lo.min(o.lo), self.hi.max(o.hi))
    }
}

/// Sets [`crate::mctree::looptree::Loop::trip_unknown`] on every loop whose trip count may be
/// negative; `whole_program`: no other source calls the kernel.
pub fn check(unit: &Unit, kernel: &Function, tree: &mut LoopTree, whole_program: bool) {
    let mut env = arguments(unit, kernel, whole_program);
    env.extend(constant_locals(&kernel.body));
    let mut found = vec![];
    walk(&kernel.body, tree, &mut env, &mut found);
    for (l, why) in found {
        if let Some(lp) = tree.loops.get_mut(l) {
            lp.trip_unknown = Some(why);
        }
    }
}

fn walk(
    v: &Value,
    tree: &LoopTree,
    env: &mut HashMap<String, Range>,
    found: &mut Vec<(usize, String)>,
) {
    if kind(v) != "ForStmt" {
        inner(v).iter().for_each(|c| walk(c, tree, env, found));
        return;
    }
    let id = loop_key(v).and_then(|k| tree.id_at(k));
    let counter = header(v).and_then(|h| Some((counter(id?, &h, env, found)?, h.iv_id)));
    let saved = counter.map(|(r, iv)| (iv.clone(), env.insert(iv, r)));
    inner(v)
        .iter()
        .skip(1)
        .for_each(|c| walk(c, tree, env, found));
    if let Some((iv, old)) = saved {
        match old {
            Some(o) => env.insert(iv, o),
            None => env.remove(&iv),
        };
    }
}

/// The values the counter of loop `id` (header `h`) takes, when its bounds are known; a
/// trip count that may be negative is noted in `found`.
fn counter(
    id: usize,
    h: &Header,
    env: &HashMap<String, Range>,
    found: &mut Vec<(usize, String)>,
) -> Option<Range> {
    let (Some(lo), Some(up)) = (range(&h.lower, env), range(&h.upper, env)) else {
        let why =
            "its bounds are not known to keep their order (a value the analysis cannot bound)";
        found.push((id, why.into()));
        return None;
    };
    let (first, last) = match (h.step > 0, h.inclusive) {
        (true, false) => (lo, Range::of(up.lo - 1, up.hi - 1)),
        (false, false) => (lo, Range::of(up.lo + 1, up.hi + 1)),
        (_, true) => (lo, up),
    };
    // Never negative: the first value cannot pass the last by more than one step.
    let ordered = match h.step > 0 {
        true => first.hi <= last.lo + 1,
        false => first.lo >= last.hi - 1,
    };
    if !ordered {
        let why = format!(
            "its initial value may pass its bound (values {}..{} against {}..{})",
            lo.lo, lo.hi, up.lo, up.hi
        );
        found.push((id, why));
    }
    Some(match h.step > 0 {
        true => Range::of(first.lo, last.hi.max(first.lo)),
        false => Range::of(last.lo.min(first.hi), first.hi),
    })
}

/// The range of an integer expression, when the analysis can bound it.
fn range(e: &Value, env: &HashMap<String, Range>) -> Option<Range> {
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
fn arguments(unit: &Unit, kernel: &Function, whole_program: bool) -> HashMap<String, Range> {
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
fn constant_locals(body: &Value) -> HashMap<String, Range> {
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
