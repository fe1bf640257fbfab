//! Pointers that take turns: ping-pong buffers (`s = p; p = q; q = s;` after each sweep of a
//! stencil). Each pointer is set more than once, so [`super::memory`] alone cannot tell where
//! it points; but within one iteration of the loop that swaps them, each nest of that loop
//! sees the pointers fixed, each at one of the kernel's objects, and different pointers at
//! different objects. This module proves that, narrowly:
//! - the pointers (the *group*) are the kernel's own locals; every assignment to one is its
//!   initialiser or a statement of the kernel's body before the swapping loop `R` (a pointer
//!   to the start of an object, or another pointer of the group), or a statement directly in
//!   `R`'s body of the form `p = q` between pointers of the group; none has its address
//!   taken or is moved (`++`, `+=`); `R` is a statement of the kernel's body itself;
//! - the pointers' objects are followed through `R`'s body, iteration by iteration, until
//!   every state repeats ([`Rotation::states`]): a nest directly in `R`'s body gets the states
//!   that reach it.
//!
//! Within a nest, an access through a pointer of the group lands in a place of its own
//! ([`Rotation::root`]): two of them are the same object, or different ones, *only within one
//! iteration of `R`* ([`Alias::SameInIteration`], [`Alias::DistinctInIteration`]); across
//! iterations, anything (the dependence test then assumes every direction). A pointer of the
//! group used anywhere else stays unknown.

use std::collections::{BTreeMap, BTreeSet, HashMap};

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
            let at = stmts.iter().position(|s| swaps(s, candidates))?;
            let r = &stmts[at];
            if skips(inner(r).get(4)?, true) {
                return None;
            }
            let members = group(inner(r).get(4)?, candidates);
            let start = initial(&stmts[..at], &members, object)?;
            if !only_assigned_where_allowed(body, r, &stmts[..at], &members) {
                return None;
            }
            let nests = follow(inner(r).get(4)?, start)?;
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
        let (id, _) = root.split_once('#')?;
        self.members.contains(id).then_some(id)
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

/// Whether `s` is a loop whose body swaps pointers among `candidates` (`p = q`).
fn swaps(s: &Value, candidates: &BTreeSet<String>) -> bool {
    kind(s) == "ForStmt"
        && inner(s)
            .get(4)
            .is_some_and(|b| !group(b, candidates).is_empty())
}

/// The pointers of `candidates` that a statement directly in `body` assigns or reads in a
/// `p = q` between two of them.
fn group(body: &Value, candidates: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in inner(body) {
        if let Some((l, r)) = copy(s, candidates) {
            out.insert(l);
            out.insert(r);
        }
    }
    out
}

/// `p = q` with both in `among`: (p, q).
fn copy(s: &Value, among: &BTreeSet<String>) -> Option<(String, String)> {
    let op = s.get("opcode").and_then(Value::as_str);
    if kind(s) != "BinaryOperator" || op != Some("=") {
        return None;
    }
    let [l, r] = inner(s) else { return None };
    let (lid, _, _) = decl_ref(l).filter(|_| kind(l) == "DeclRefExpr")?;
    let (rid, _, _) = decl_ref(r)?;
    (among.contains(lid) && among.contains(rid)).then(|| (lid.to_string(), rid.to_string()))
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
    r: &Value,
    before: &[Value],
    members: &BTreeSet<String>,
) -> bool {
    let mut allowed: Vec<&Value> = before.iter().filter(|s| kind(s) != "ForStmt").collect();
    if let Some(b) = inner(r).get(4) {
        allowed.extend(inner(b).iter().filter(|s| copy(s, members).is_some()));
    }
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
/// reach each of its nests (its statements that are loops), by span.
fn follow(body: &Value, start: State) -> Option<Vec<Nest>> {
    let stmts = inner(body);
    let mut at_nest: HashMap<usize, BTreeSet<State>> = HashMap::new();
    let mut heads: BTreeSet<State> = BTreeSet::from([start.clone()]);
    let mut todo = vec![start];
    let mut rounds = 0;
    while let Some(mut s) = todo.pop() {
        rounds += 1;
        if rounds > MAX_ROUNDS {
            return None;
        }
        for (k, st) in stmts.iter().enumerate() {
            if let Some((l, r)) = copy(st, &s.keys().cloned().collect()) {
                let v = s.get(&r).cloned().flatten();
                s.insert(l, v);
            } else if kind(st) == "ForStmt" {
                at_nest.entry(k).or_default().insert(s.clone());
            }
        }
        if heads.insert(s.clone()) {
            todo.push(s);
        }
    }
    let mut nests = vec![];
    for (k, states) in at_nest {
        nests.push((span(&stmts[k])?, states));
    }
    nests.sort_by_key(|(s, _)| *s);
    Some(nests)
}
