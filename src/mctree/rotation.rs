//! Pointers that take turns: ping-pong buffers (`s = p; p = q; q = s;` after each sweep of a
//! stencil, or `src = (t & 1) ? b : a; dst = (t & 1) ? a : b;` before it). Each pointer is set more than once, so [`super::memory`] alone cannot tell where
//! it points; but within one iteration of the loop that swaps them, each nest of that loop
//! sees the pointers fixed, each at one of the kernel's objects, and different pointers at
//! different objects. This module proves that, narrowly:
//! - the pointers (the *group*) are the kernel's own locals; every assignment to one is its
//!   initialiser or a statement of the kernel's body before the swapping loop `R` (a pointer
//!   to the start of an object, or another pointer of the group), or a statement directly in
//!   `R`'s body of the form `p = q` between pointers of the group or `p = c ? a : b` between
//!   the starts of two objects (`c` reading nothing the body assigns); none has its address
//!   taken or is moved (`++`, `+=`); `R` is a statement of the kernel's body itself and no
//!   iteration of it skips part of its body (`continue`, `goto`);
//! - the pointers' objects are followed through `R`'s body, iteration by iteration, until
//!   every state repeats ([`follow`]; choices on the same condition go the same way within
//!   one iteration, others fork): a nest directly in `R`'s body gets the states that reach it.
//!
//! Within a nest, an access through a pointer of the group lands in a place of its own
//! ([`Rotation::root`]): two of them are the same object, or different ones, *only within one
//! iteration of `R`* ([`Alias::SameInIteration`], [`Alias::DistinctInIteration`]); across
//! iterations, anything (the dependence test then assumes every direction). A pointer of the
//! group used anywhere else stays unknown.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::mctree::node::{decl_ref, inner, kind, loop_key, offset};

/// How two places of [`crate::mctree::memory::Memory`] relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alias {
    /// The same object.
    Same,
    /// Different objects.
    Distinct,
    /// The same object within one iteration of the loop keyed so; across, unknown.
    SameInIteration((usize, Option<usize>)),
    /// Different objects within one iteration of the loop keyed so; across, unknown.
    DistinctInIteration((usize, Option<usize>)),
    /// Not known.
    Maybe,
}

/// One state of the group: the object each pointer points at (`None`: not set yet).
type State = BTreeMap<String, Option<String>>;

/// A nest of the swapping loop: its byte span and the states that reach it.
type Nest = ((usize, usize), BTreeSet<State>);

/// The group's pointers, the swapping loop and what each of its nests sees.
#[derive(Debug, Default)]
pub struct Rotation {
    /// The swapping loop's key ([`loop_key`]).
    swapping: Option<(usize, Option<usize>)>,
    /// The nests of the swapping loop (its statements that are loops).
    nests: Vec<Nest>,
    /// The group's pointers.
    members: BTreeSet<String>,
}

/// The most iterations of the swapping loop followed before giving up.
const MAX_ROUNDS: usize = 16;

impl Rotation {
    /// The rotation in `body` among `candidates` (local pointers the memory model could not
    /// follow); `object`: the object a pointer value starts, if it is the start of one.
    pub fn of(
        body: &Value,
        candidates: &BTreeSet<String>,
        object: &dyn Fn(&Value) -> Option<String>,
    ) -> Rotation {
        let found = (|| {
            let stmts = inner(body);
            let swapping =
                |s: &Value| kind(s) == "ForStmt" && !steps(s, candidates, object).1.is_empty();
            let at = stmts.iter().position(swapping)?;
            let r = &stmts[at];
            if skips(inner(r).get(4)?, true) {
                return None;
            }
            let (steps, members) = steps(r, candidates, object);
            let start = initial(&stmts[..at], &members, object)?;
            if !only_assigned_where_allowed(body, &steps, &stmts[..at], &members) {
                return None;
            }
            let nests = follow(&steps, start)?;
            Some(Rotation {
                swapping: loop_key(r),
                nests,
                members,
            })
        })();
        found.unwrap_or_default()
    }

    /// The place an access through pointer `id` at byte `at` lands in, when the rotation
    /// fixes it there: `id#N` for nest N.
    pub fn root(&self, id: &str, at: usize) -> Option<String> {
        if !self.members.contains(id) {
            return None;
        }
        let n = self.nest_at(at)?;
        let set = self.nests[n]
            .1
            .iter()
            .all(|s| s.get(id).cloned().flatten().is_some());
        set.then(|| format!("{id}#{n}"))
    }

    /// The pointer a root of [`Rotation::root`] is of.
    pub fn member_of<'r>(&self, root: &'r str) -> Option<&'r str> {
        self.nest_of(root).map(|(id, _)| id)
    }

    /// The pointer and nest of a root of [`Rotation::root`].
    fn nest_of<'r>(&self, root: &'r str) -> Option<(&'r str, usize)> {
        let (m, n) = root.split_once('#')?;
        let n: usize = n.parse().ok()?;
        (self.members.contains(m) && n < self.nests.len()).then_some((m, n))
    }

    fn nest_at(&self, at: usize) -> Option<usize> {
        (self.nests.iter()).position(|((b, e), _)| *b <= at && at <= *e)
    }

    /// How the places `x` and `y` relate (plain objects: the same or not).
    pub fn alias(&self, x: &str, y: &str) -> Alias {
        let key = match self.swapping {
            Some(k) => k,
            None => return if x == y { Alias::Same } else { Alias::Distinct },
        };
        let (nx, ny) = (self.nest_of(x), self.nest_of(y));
        match (nx, ny) {
            (None, None) => match x == y {
                true => Alias::Same,
                false => Alias::Distinct,
            },
            (Some((m, n)), None) | (None, Some((m, n))) => {
                let object = if nx.is_some() { y } else { x };
                let reaches = self.nests[n]
                    .1
                    .iter()
                    .any(|s| s.get(m).cloned().flatten().as_deref() == Some(object));
                match reaches {
                    true => Alias::Maybe,
                    false => Alias::Distinct,
                }
            }
            (Some((m1, n1)), Some((m2, n2))) if n1 == n2 => {
                let states = &self.nests[n1].1;
                let differ = states.iter().all(|s| s.get(m1) != s.get(m2));
                match (m1 == m2, differ) {
                    (true, _) => Alias::SameInIteration(key),
                    (false, true) => Alias::DistinctInIteration(key),
                    (false, false) => Alias::Maybe,
                }
            }
            _ => Alias::Maybe,
        }
    }
}

/// A statement directly in the swapping loop's body, as the rotation reads it.
enum Step<'v> {
    /// `p = q` between pointers of the group, or `p = c ? a : b` choosing between the starts
    /// of two objects (`c` numbered: equal conditions share a number).
    Copy(&'v Value, String, String),
    Choice(&'v Value, String, usize, String, String),
    /// A loop: a nest, by its span.
    Nest((usize, usize)),
    Other,
}

/// The steps of loop `r`'s body and the pointers its copies and choices set or read (none:
/// `r` swaps nothing).
fn steps<'v>(
    r: &'v Value,
    candidates: &BTreeSet<String>,
    object: &dyn Fn(&Value) -> Option<String>,
) -> (Vec<Step<'v>>, BTreeSet<String>) {
    let mut conditions: Vec<&Value> = vec![];
    let mut members = BTreeSet::new();
    let stmts = inner(r).get(4).map_or(&[][..], inner);
    let out = (stmts.iter())
        .map(|s| match assignment(s, candidates) {
            Some((l, r)) => match kind(crate::mctree::node::bare(r)) {
                "ConditionalOperator" => {
                    let Some((c, x, y)) = choice(r, object).filter(|(c, ..)| fixed(c, stmts))
                    else {
                        return Step::Other;
                    };
                    let n = conditions
                        .iter()
                        .position(|k| same(k, c))
                        .unwrap_or_else(|| {
                            conditions.push(c);
                            conditions.len() - 1
                        });
                    members.insert(l.clone());
                    Step::Choice(s, l, n, x, y)
                }
                _ => match decl_ref(r).map(|(id, _, _)| id.to_string()) {
                    Some(q) if candidates.contains(&q) => {
                        members.insert(l.clone());
                        members.insert(q.clone());
                        Step::Copy(s, l, q)
                    }
                    _ => Step::Other,
                },
            },
            None if kind(s) == "ForStmt" => span(s).map_or(Step::Other, Step::Nest),
            None => Step::Other,
        })
        .collect();
    (out, members)
}

/// `p = e` with `p` one of `among` (a plain name on the left): (p, e).
fn assignment<'v>(s: &'v Value, among: &BTreeSet<String>) -> Option<(String, &'v Value)> {
    let op = s.get("opcode").and_then(Value::as_str);
    if kind(s) != "BinaryOperator" || op != Some("=") {
        return None;
    }
    let [l, r] = inner(s) else { return None };
    let (lid, _, _) = decl_ref(l).filter(|_| kind(l) == "DeclRefExpr")?;
    among.contains(lid).then(|| (lid.to_string(), r))
}

/// `c ? a : b` with `a` and `b` the starts of two different objects and `c` without effect:
/// (c, a's object, b's object).
fn choice<'v>(
    e: &'v Value,
    object: &dyn Fn(&Value) -> Option<String>,
) -> Option<(&'v Value, String, String)> {
    let [c, x, y] = inner(crate::mctree::node::bare(e)) else {
        return None;
    };
    let (x, y) = (object(x)?, object(y)?);
    let effect = crate::mctree::model::effect(c).is_some();
    (x != y && !effect).then_some((c, x, y))
}

/// Whether condition `c` keeps its value through an iteration of the body `stmts`: it reads
/// only names the body never assigns (the loop's own counter: its header's), through
/// operators, casts and constants.
fn fixed(c: &Value, stmts: &[Value]) -> bool {
    let plain = matches!(
        kind(c),
        "BinaryOperator"
            | "UnaryOperator"
            | "ParenExpr"
            | "ImplicitCastExpr"
            | "CStyleCastExpr"
            | "IntegerLiteral"
            | "ConditionalOperator"
            | "DeclRefExpr"
    );
    let kept = match decl_ref(c).filter(|_| kind(c) == "DeclRefExpr") {
        Some((id, _, _)) => !stmts
            .iter()
            .any(|s| crate::mctree::header::assigns(Some(s), id)),
        None => true,
    };
    let write = crate::mctree::node::is_write(c)
        || (kind(c) == "UnaryOperator" && c.get("opcode").and_then(Value::as_str) == Some("*"));
    plain && kept && !write && inner(c).iter().all(|x| fixed(x, stmts))
}

/// Whether two expressions are the same: kinds, operators, values, names and parts.
fn same(a: &Value, b: &Value) -> bool {
    let key = |v: &Value, k: &str| v.get(k).cloned();
    let name = |v: &Value| v.get("referencedDecl").and_then(|d| d.get("id")).cloned();
    let fields = ["kind", "opcode", "value", "castKind"];
    fields.iter().all(|k| key(a, k) == key(b, k))
        && name(a) == name(b)
        && inner(a).len() == inner(b).len()
        && inner(a).iter().zip(inner(b)).all(|(x, y)| same(x, y))
}

/// The group's state before the swapping loop, from the statements before it: each
/// declaration or `p = …` of a member sets it to an object's start or another member's.
fn initial(
    before: &[Value],
    members: &BTreeSet<String>,
    object: &dyn Fn(&Value) -> Option<String>,
) -> Option<State> {
    let mut s: State = members.iter().map(|m| (m.clone(), None)).collect();
    let value = |e: &Value, s: &State| match decl_ref(e) {
        Some((id, _, _)) if members.contains(id) => Some(s.get(id).cloned().flatten()),
        _ => object(e).map(Some),
    };
    for st in before {
        let sets: Vec<(&str, &Value)> = match kind(st) {
            "DeclStmt" => (inner(st).iter())
                .filter_map(|d| Some((d.get("id")?.as_str()?, inner(d).first()?)))
                .collect(),
            "BinaryOperator" => match (inner(st), st.get("opcode").and_then(Value::as_str)) {
                ([l, r], Some("=")) => decl_ref(l)
                    .map(|(id, _, _)| vec![(id, r)])
                    .unwrap_or_default(),
                _ => vec![],
            },
            _ => vec![],
        };
        for (id, e) in sets.into_iter().filter(|(id, _)| members.contains(*id)) {
            let v = value(e, &s)?;
            s.insert(id.to_string(), v);
        }
    }
    Some(s)
}

/// Whether every write of a member is one [`Rotation`] allows: in the statements before the
/// swapping loop `r` (at their top), or a `p = q` directly in `r`'s body; never `&p`, `p++`.
fn only_assigned_where_allowed(
    body: &Value,
    steps: &[Step],
    before: &[Value],
    members: &BTreeSet<String>,
) -> bool {
    let mut allowed: Vec<&Value> = before.iter().filter(|s| kind(s) != "ForStmt").collect();
    allowed.extend(steps.iter().filter_map(|s| match s {
        Step::Copy(v, ..) | Step::Choice(v, ..) => Some(*v),
        _ => None,
    }));
    // The very statements (not their positions: one macro expands to several at one offset).
    let allowed: Vec<*const Value> = allowed.into_iter().map(|s| s as *const Value).collect();
    fn writes(v: &Value, members: &BTreeSet<String>, allowed: &[*const Value]) -> bool {
        let op = v.get("opcode").and_then(Value::as_str);
        let target = inner(v).first().and_then(decl_ref).map(|(id, _, _)| id);
        let write = match kind(v) {
            "BinaryOperator" => op == Some("="),
            "CompoundAssignOperator" => true,
            "UnaryOperator" => matches!(op, Some("++" | "--" | "&")),
            _ => false,
        };
        let bad = write
            && target.is_some_and(|t| members.contains(t))
            && !allowed.contains(&(v as *const Value));
        bad || inner(v).iter().any(|c| writes(c, members, allowed))
    }
    let declared_late = |v: &Value| {
        let mut found = false;
        declared_in_loop(v, members, false, &mut found);
        found
    };
    !writes(body, members, &allowed) && !declared_late(body)
}

/// Whether an iteration of the swapping loop may skip part of its body (`continue` of it, a
/// `goto` or label anywhere in it): its states would not follow the body in order.
/// `own`: `v` is in the swapping loop itself, not in a loop nested in it.
fn skips(v: &Value, own: bool) -> bool {
    let jump = match kind(v) {
        "ContinueStmt" => own,
        "GotoStmt" | "IndirectGotoStmt" | "LabelStmt" => true,
        _ => false,
    };
    let own = own && !matches!(kind(v), "ForStmt" | "WhileStmt" | "DoStmt");
    jump || inner(v).iter().any(|c| skips(c, own))
}

/// Whether a member is declared inside a loop (its initialiser would run each iteration).
fn declared_in_loop(v: &Value, members: &BTreeSet<String>, in_loop: bool, found: &mut bool) {
    let id = v.get("id").and_then(Value::as_str);
    if in_loop && kind(v) == "VarDecl" && id.is_some_and(|i| members.contains(i)) {
        *found = true;
    }
    let in_loop = in_loop || matches!(kind(v), "ForStmt" | "WhileStmt" | "DoStmt");
    inner(v)
        .iter()
        .for_each(|c| declared_in_loop(c, members, in_loop, found));
}

fn span(v: &Value) -> Option<(usize, usize)> {
    let r = v.get("range")?;
    Some((offset(r.get("begin")?)?, offset(r.get("end")?)?))
}

/// Follows the states through the swapping loop's body until they repeat: the states that
/// reach each of its nests. A choice whose condition the iteration has not met yet forks the
/// state both ways; one it has met goes the same way (the condition has not changed: nothing
/// between assigns but the group's pointers).
fn follow(steps: &[Step], start: State) -> Option<Vec<Nest>> {
    let mut at_nest: BTreeMap<(usize, usize), BTreeSet<State>> = BTreeMap::new();
    let mut heads: BTreeSet<State> = BTreeSet::from([start.clone()]);
    let mut todo = vec![start];
    let mut rounds = 0;
    while let Some(head) = todo.pop() {
        rounds += 1;
        if rounds > MAX_ROUNDS {
            return None;
        }
        for end in iteration(steps, head, &mut at_nest) {
            if heads.insert(end.clone()) {
                todo.push(end);
            }
        }
    }
    Some(at_nest.into_iter().collect())
}

/// One iteration of the body from `head`: the states it may end in, recording the states
/// that reach each nest.
fn iteration(
    steps: &[Step],
    head: State,
    at_nest: &mut BTreeMap<(usize, usize), BTreeSet<State>>,
) -> Vec<State> {
    let mut paths = vec![(head, BTreeMap::<usize, bool>::new())];
    for step in steps {
        let mut next = vec![];
        for (mut s, met) in paths {
            match step {
                Step::Copy(_, l, r) => {
                    let v = s.get(r).cloned().flatten();
                    s.insert(l.clone(), v);
                    next.push((s, met));
                }
                Step::Choice(_, l, c, x, y) => {
                    let ways = met.get(c).map_or(vec![true, false], |&w| vec![w]);
                    for w in ways {
                        let (mut s, mut met) = (s.clone(), met.clone());
                        s.insert(l.clone(), Some(if w { x.clone() } else { y.clone() }));
                        met.insert(*c, w);
                        next.push((s, met));
                    }
                }
                Step::Nest(span) => {
                    at_nest.entry(*span).or_default().insert(s.clone());
                    next.push((s, met));
                }
                Step::Other => next.push((s, met)),
            }
        }
        paths = next;
    }
    paths.into_iter().map(|(s, _)| s).collect()
}
