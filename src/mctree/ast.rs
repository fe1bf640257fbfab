//! The kernel's loops, from its body in clang-22's JSON AST ([`crate::mctree::unit`]): each
//! `for` read as a canonical header (or the reason it is untouchable), its bounds and trip
//! count, the nests, and what each body writes. The dependences come after
//! ([`crate::mctree::discover`]).

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use crate::mctree::header::{assigns, checked, header, leaves_early, moving_bound, NotCanonical};
use crate::mctree::looptree::{Bound, Loop, LoopTree};
use crate::mctree::node::{decl_ref, inner, is_write, kind, literal, loop_key, refs, text_of};
use crate::mctree::unit::Function;
use crate::problem::mold::line_col;

/// The functions of the file that call `kernel`, directly or through one another: where
/// clang may inline the kernel's code (PolyBench's `static` kernels end up in `main`).
pub fn callers(fns: &[Function], kernel: &str) -> Vec<String> {
    let mut found: Vec<String> = vec![];
    let mut frontier = vec![kernel.to_string()];
    while let Some(callee) = frontier.pop() {
        for f in fns {
            let known = f.name == kernel || found.contains(&f.name);
            if !known && f.calls.contains(&callee) {
                found.push(f.name.clone());
                frontier.push(f.name.clone());
            }
        }
    }
    found
}

/// What the walk knows: the file's text and, per enclosing loop, its induction variable.
struct Walk<'t> {
    text: &'t str,
    loops: Vec<Loop>,
    /// Induction variable declaration id → loop id.
    ivs: HashMap<String, usize>,
    /// Whether the walk is inside an OpenMP directive of the user's.
    in_omp: bool,
}

impl Walk<'_> {
    fn bound(&self, e: &Value) -> Bound {
        let mut ids = BTreeSet::new();
        refs(e, &mut ids);
        let loops: Vec<usize> = ids
            .iter()
            .filter_map(|i| self.ivs.get(i).copied())
            .collect();
        let text = text_of(e, self.text).to_string();
        match (literal(e), loops.is_empty()) {
            (Some(value), _) => Bound::Constant { value },
            (None, true) => Bound::Invariant { text },
            (None, false) => Bound::Depends { loops, text },
        }
    }

    /// Records the loop `v` (a `ForStmt`) below `parent`, then everything in its body.
    fn for_stmt(&mut self, v: &Value, parent: Option<usize>) -> usize {
        let id = self.loops.len();
        let (at, spelled_at) = loop_key(v).unwrap_or((0, None));
        let at = at.min(self.text.len());
        let (line, col) = line_col(self.text, at);
        let line_start = self.text[..at].rfind('\n').map_or(0, |n| n + 1);
        let before = &self.text[line_start..at];
        let h = header(v);
        let mut l = Loop {
            id,
            iv: h.as_ref().map_or("?".into(), |h| h.iv.clone()),
            iv_declared_in_loop: h.as_ref().is_some_and(|h| h.declared_in_loop),
            line,
            col,
            offset: at,
            spelled_at,
            indent: before.chars().take_while(|c| c.is_whitespace()).collect(),
            lower: Bound::Invariant { text: "?".into() },
            upper: Bound::Invariant { text: "?".into() },
            inclusive: false,
            step: 1,
            trip: None,
            canonical: h.is_some(),
            untouchable: None,
            parent,
            children: vec![],
            statements: 0,
            perfect: 1,
            rectangular: 1,
            shared_writes: vec![],
            private: vec![],
            outside: vec![],
            trip_unknown: None,
            most_trips: None,
            polly_disagrees: None,
            independent: false,
        };
        if let Some(h) = &h {
            l.lower = self.bound(&h.lower);
            l.upper = self.bound(&h.upper);
            l.inclusive = h.inclusive;
            l.step = h.step;
            l.trip = trip(&l.lower, &l.upper, h.inclusive, h.step);
        }
        l.untouchable = self.why_untouchable(&l, before, v);
        self.loops.push(l);
        if let Some(p) = parent {
            self.loops[p].children.push(id);
        }
        if let Some(h) = h {
            self.ivs.insert(h.iv_id, id);
        }
        if let Some(body) = inner(v).get(4) {
            self.body(body, id);
        }
        id
    }

    fn why_untouchable(&self, l: &Loop, before: &str, v: &Value) -> Option<String> {
        if self.in_omp {
            return Some("inside or under a directive of the source (`#pragma omp`, `#pragma clang loop`, `#pragma unroll`)".into());
        }
        if !before.trim().is_empty() || !self.text[l.offset..].starts_with("for") {
            return Some("the `for` does not start its line (a macro or a one-line nest)".into());
        }
        if let Err(NotCanonical(why)) = checked(v) {
            let why = why.unwrap_or_else(|| "its header has another shape".into());
            return Some(format!("not in OpenMP's canonical loop form: {why}"));
        }
        let moved = header(v).is_some_and(|h| assigns(inner(v).get(4), &h.iv_id));
        if moved {
            return Some(format!(
                "its body assigns the induction variable `{}`",
                l.iv
            ));
        }
        if let Some(why) = header(v).and_then(|h| moving_bound(&h.upper, inner(v).get(4))) {
            return Some(why);
        }
        leaves_early(inner(v).get(4)).then(|| {
            "leaves the loop early (break, return, or a goto out of its body or backwards)".into()
        })
    }

    /// The statements of a loop body (a block or a single statement).
    fn body(&mut self, body: &Value, owner: usize) {
        let stmts: Vec<&Value> = if kind(body) == "CompoundStmt" {
            inner(body).iter().collect()
        } else {
            vec![body]
        };
        for s in stmts {
            match kind(s) {
                "ForStmt" => {
                    self.for_stmt(s, Some(owner));
                }
                "NullStmt" => {}
                _ => {
                    self.loops[owner].statements += 1;
                    self.nested(s, owner);
                }
            }
        }
    }

    /// Loops inside a statement that is not itself a loop (an `if`, a block, a directive).
    fn nested(&mut self, v: &Value, owner: usize) {
        let was = self.in_omp;
        self.in_omp |= directive(v);
        for c in inner(v) {
            match kind(c) {
                "ForStmt" => _ = self.for_stmt(c, Some(owner)),
                _ => self.nested(c, owner),
            }
        }
        self.in_omp = was;
    }
}

/// Whether `v` is a directive of the source above the statements in it: OpenMP's, or a loop
/// hint (`#pragma clang loop`, `#pragma unroll`: an attributed statement).
fn directive(v: &Value) -> bool {
    kind(v).starts_with("OMP") || kind(v) == "AttributedStmt"
}

fn trip(lower: &Bound, upper: &Bound, inclusive: bool, step: i64) -> Option<i64> {
    let (Bound::Constant { value: lo }, Bound::Constant { value: hi }) = (lower, upper) else {
        return None;
    };
    let span = (hi - lo) + if inclusive { step.signum() } else { 0 };
    Some((span + step - step.signum()) / step).map(|t| t.max(0))
}

/// The loop tree of `kernel`, with nests, rectangularity and the variables a `parallel
/// for` must privatise worked out.
pub fn loop_tree(kernel: &Function, text: &str, file: &str, callers: Vec<String>) -> LoopTree {
    let mut w = Walk {
        text,
        loops: vec![],
        ivs: HashMap::new(),
        in_omp: false,
    };
    let mut roots = Vec::new();
    walk_roots(&kernel.body, &mut w, &mut roots);
    let mut t = LoopTree {
        kernel: kernel.name.clone(),
        callers,
        deps: Default::default(),
        file: file.into(),
        line: line_col(text, kernel.at).0,
        loops: w.loops,
        roots,
        polly_compared: None,
        depth1: None,
    };
    nests(&mut t);
    writes(&mut t, &kernel.body);
    t
}

fn walk_roots(v: &Value, w: &mut Walk, roots: &mut Vec<usize>) {
    for c in inner(v) {
        if kind(c) == "ForStmt" {
            roots.push(w.for_stmt(c, None));
        } else {
            let was = w.in_omp;
            w.in_omp |= directive(c);
            walk_roots(c, w, roots);
            w.in_omp = was;
        }
    }
}

/// Perfect-nest depth and rectangular prefix of every loop (innermost first).
fn nests(t: &mut LoopTree) {
    for id in (0..t.loops.len()).rev() {
        let l = &t.loops[id];
        let perfect_child = match (l.statements, l.children.as_slice()) {
            (0, [c]) if t.loops[*c].untouchable.is_none() => Some(*c),
            _ => None,
        };
        t.loops[id].perfect = perfect_child.map_or(1, |c| 1 + t.loops[c].perfect);
    }
    for id in 0..t.loops.len() {
        let nest = t.perfect_nest(id);
        let mut rect = 1;
        while rect < nest.len() {
            let inner_loop = &t.loops[nest[rect]];
            let outer = &nest[..rect];
            let depends = |b: &Bound| matches!(b, Bound::Depends { loops, .. } if loops.iter().any(|l| outer.contains(l)));
            if depends(&inner_loop.lower) || depends(&inner_loop.upper) {
                break;
            }
            rect += 1;
        }
        t.loops[id].rectangular = rect;
    }
}

/// For every loop: the scalars declared outside it that its body writes, and what a
/// `parallel for` on it must make private of them (inner induction variables declared
/// outside it; the dependence analysis adds the scalars it finds privatisable).
fn writes(t: &mut LoopTree, body: &Value) {
    let mut found = Vec::new();
    collect_fors(body, &mut found);
    let numbered = found
        .into_iter()
        .filter_map(|v| Some((t.id_at(loop_key(v)?)?, v)));
    for (id, v) in numbered.collect::<Vec<_>>() {
        let mut declared = BTreeSet::new();
        declarations(inner(v).get(4), &mut declared);
        let mut written = BTreeSet::new();
        assigned(inner(v).get(4), &mut written);
        let inner_ivs: BTreeSet<String> = descendants(t, id)
            .filter(|&d| !t.loops[d].iv_declared_in_loop && t.loops[d].iv != "?")
            .map(|d| t.loops[d].iv.clone())
            .collect();
        let own = &t.loops[id].iv;
        t.loops[id].shared_writes = (written.into_iter())
            .filter(|(did, name)| {
                !declared.contains(did) && name != own && !inner_ivs.contains(name)
            })
            .map(|(_, name)| name)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        t.loops[id].private = inner_ivs.into_iter().collect();
    }
}

fn descendants(t: &LoopTree, id: usize) -> impl Iterator<Item = usize> + '_ {
    let mut stack = t.loops[id].children.clone();
    std::iter::from_fn(move || {
        let d = stack.pop()?;
        stack.extend(t.loops[d].children.iter().copied());
        Some(d)
    })
}

/// The `ForStmt`s below `v`.
fn collect_fors<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
    for c in inner(v) {
        if kind(c) == "ForStmt" {
            out.push(c);
        }
        collect_fors(c, out);
    }
}

fn declarations(v: Option<&Value>, out: &mut BTreeSet<String>) {
    let Some(v) = v else { return };
    if kind(v) == "VarDecl" {
        if let Some(id) = v.get("id").and_then(Value::as_str) {
            out.insert(id.into());
        }
    }
    for c in inner(v) {
        declarations(Some(c), out);
    }
}

/// Scalars (not array elements) assigned, compound-assigned, incremented or decremented.
fn assigned(v: Option<&Value>, out: &mut BTreeSet<(String, String)>) {
    let Some(v) = v else { return };
    if is_write(v) {
        if let Some((id, name, _)) = inner(v).first().and_then(decl_ref) {
            out.insert((id.into(), name.into()));
        }
    }
    for c in inner(v) {
        assigned(Some(c), out);
    }
}
