//! Data dependences of the kernel's loops, from clang-22's JSON AST: which iterations of
//! which loops must stay in order. [`super::legality`] decides from them whether a
//! transformation keeps every dependence (it is *proved* legal) or may break one.
//!
//! The test is the classic direction-vector test (Wolfe, *High Performance Compilers for
//! Parallel Computing*, 1996; Allen & Kennedy, 2001, ch. 3): for every pair of accesses to
//! the same array, one of them a write, and every direction (`<`, `=`, `>`) of each loop
//! both are in, it asks whether the subscripts can be equal — per dimension, an integer
//! equation in the two iterations, solved by the GCD test with the direction constraints
//! (a `<` is a distance of at least 1, the Banerjee bound of an unbounded loop). Loop bounds
//! are not used, so a dependence may be reported that bounds would rule out: the test errs
//! towards refusing, never towards accepting.
//!
//! What it cannot read it assumes the worst of, and says so (`exact: false`): a subscript
//! that is not affine in the loop variables and invariants (`A[B[i]]`, `A[i*n+j]`), a write
//! through a pointer or a member, a call to a function not known to be pure. Distinct named
//! arrays are assumed not to overlap (PolyBench passes distinct arrays; C gives no such
//! promise, so the output check stays on). A scalar written in the loops is a dependence in
//! every direction unless every iteration of some loop writes it before reading it and no
//! access lies outside that loop: then it is private to that loop (and its enclosing ones),
//! and a `parallel for` there lists it in `private(..)`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::mctree::accesses::{Access, Collector, Target};
use crate::mctree::affine::Dir;
use crate::mctree::affine::{dimension, Nest};
use crate::mctree::memory::Memory;
use crate::mctree::model::own_variables;
use crate::mctree::node::Positions;
use crate::mctree::rotation::Alias;
use crate::mctree::unit::Function;

/// One loop-carried dependence, oriented from the access that runs first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Dependence {
    /// The array or scalar (`memory` for an access the test cannot name).
    pub on: String,
    /// The loops both accesses are in, outermost first (loop ids).
    pub loops: Vec<usize>,
    /// The direction on each of `loops`; lexicographically positive.
    pub dirs: Vec<Dir>,
    /// Found by the test on affine subscripts; `false`: assumed, because an access could
    /// not be read.
    pub exact: bool,
}

impl Dependence {
    /// `(<,=,>)`.
    pub fn vector(&self) -> String {
        let d: Vec<String> = self.dirs.iter().map(|d| d.symbol().to_string()).collect();
        format!("({})", d.join(","))
    }
}

/// The kernel's loop-carried dependences and the scalars each loop must privatise.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Dependences {
    pub deps: Vec<Dependence>,
    /// Per loop: scalars declared outside it that every iteration of a loop in it (or of
    /// itself) writes before reading; a `parallel for` on it makes them private.
    pub private: BTreeMap<usize, Vec<String>>,
    /// Why the analysis gave up on the whole kernel (then nothing is proved).
    pub unanalysable: Option<String>,
    /// The accesses in loops the test could not model (`` `expr` at line:col: why ``): each
    /// is assumed to depend on others in every direction.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmodelled: Vec<String>,
    /// The accesses the test paired, kept for the tiles' working sets
    /// ([`crate::mctree::footprint`]).
    #[serde(skip)]
    pub(super) accesses: Vec<Access>,
}

/// Loops nested deeper than this in one pair are not enumerated (3^8 direction vectors).
const MAX_COMMON_LOOPS: usize = 8;

/// The dependences of `kernel`, over the loops `ids` names by their position.
pub fn analyse(kernel: &Function, memory: &Memory, text: &str, ids: &Positions) -> Dependences {
    let c = Collector::of(&kernel.body, memory, text, ids);
    let private_at = privatisable(&c.accesses, &own_variables(kernel));
    let mut found = BTreeSet::new();
    let mut unanalysable = None;
    let acc = &c.accesses;
    for i in 0..acc.len() {
        for j in i..acc.len() {
            let ctx = Context {
                private_at: &private_at,
                steps: &c.steps,
                memory,
                ids,
            };
            match pair(&acc[i], &acc[j], i == j, &ctx) {
                Ok(deps) => found.extend(deps),
                Err(why) => unanalysable = Some(why),
            }
        }
    }
    Dependences {
        deps: found.into_iter().collect(),
        private: private_lists(&c, &private_at),
        unanalysable,
        unmodelled: c.unmodelled.into_iter().collect(),
        accesses: c.accesses,
    }
}

/// Per scalar, the loop whose every iteration writes it before any read, when all its
/// accesses lie in that loop.
fn privatisable(accesses: &[Access], locals: &HashSet<String>) -> HashMap<String, usize> {
    let mut first: HashMap<&str, &Access> = HashMap::new();
    let mut all: HashMap<&str, Vec<&Access>> = HashMap::new();
    for a in accesses {
        if let Target::Scalar(id) = &a.target {
            first.entry(id).or_insert(a);
            all.entry(id).or_default().push(a);
        }
    }
    let mut out = HashMap::new();
    for (id, f) in first {
        let Some(&m) = f.loops.last() else { continue };
        if locals.contains(id)
            && f.write
            && f.defines
            && all[id].iter().all(|a| a.loops.contains(&m))
        {
            out.insert(id.to_string(), m);
        }
    }
    out
}

/// Per loop, the privatisable scalars declared outside it of the loops at or below it.
fn private_lists(
    c: &Collector,
    private_at: &HashMap<String, usize>,
) -> BTreeMap<usize, Vec<String>> {
    let chain = |mut l: Option<usize>| {
        let mut v = vec![];
        while let Some(x) = l {
            v.push(x);
            l = c.parent.get(&x).copied().flatten();
        }
        v
    };
    let mut out: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for (id, &m) in private_at {
        let declared = chain(c.declared_in.get(id).copied().flatten());
        let Some(name) = (c.accesses.iter()).find(|a| a.target == Target::Scalar(id.clone()))
        else {
            continue;
        };
        for l in chain(Some(m)) {
            if !declared.contains(&l) {
                out.entry(l).or_default().insert(name.name.clone());
            }
        }
    }
    out.into_iter()
        .map(|(l, s)| (l, s.into_iter().collect()))
        .collect()
}

/// What pairing two accesses reads besides them.
struct Context<'c> {
    /// Per scalar, the loop it is private to ([`privatisable`]).
    private_at: &'c HashMap<String, usize>,
    /// Each loop's step.
    steps: &'c HashMap<usize, i64>,
    memory: &'c Memory,
    ids: &'c Positions,
}

/// How the targets of two accesses relate: the same memory, other memory, either within one
/// iteration of a loop (across its iterations: unknown), or unknown.
fn relation(a: &Access, b: &Access, ctx: &Context) -> Alias {
    match (&a.target, &b.target) {
        (Target::Memory, _) | (_, Target::Memory) => Alias::Maybe,
        (Target::Array(x), Target::Array(y)) => ctx.memory.alias(x, y),
        (x, y) if x == y => Alias::Same,
        _ => Alias::Distinct,
    }
}

/// The loops around both `a` and `b`, outermost first, when they may touch the same memory
/// (`alias`) and one of them writes it (else none).
fn common_loops(a: &Access, b: &Access, same: bool, alias: Alias) -> Result<Vec<usize>, String> {
    let conflict = alias != Alias::Distinct;
    if !conflict || !(a.write || b.write) || (same && !a.write) {
        return Ok(vec![]);
    }
    let common: Vec<usize> = (a.loops.iter().zip(&b.loops))
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| *x)
        .collect();
    if common.len() > MAX_COMMON_LOOPS {
        return Err(format!(
            "more than {MAX_COMMON_LOOPS} loops around one access"
        ));
    }
    Ok(common)
}

/// The loop-carried dependences between accesses `a` and `b` (`same`: one access with
/// itself), lexicographically positive in the order the iterations run (`steps`: each
/// loop's step; a loop without one has no affine subscripts).
fn pair(a: &Access, b: &Access, same: bool, ctx: &Context) -> Result<Vec<Dependence>, String> {
    let alias = relation(a, b, ctx);
    let common = common_loops(a, b, same, alias)?;
    if common.is_empty() {
        return Ok(vec![]);
    }
    let (private_at, steps) = (ctx.private_at, ctx.steps);
    // A private scalar carries nothing on its loop and the loops around it.
    let fixed = match &a.target {
        Target::Scalar(id) if a.target == b.target => private_at
            .get(id)
            .and_then(|m| common.iter().position(|l| l == m))
            .map_or(0, |p| p + 1),
        _ => 0,
    };
    let exact = matches!(alias, Alias::Same | Alias::SameInIteration(_))
        && a.subs.len() == b.subs.len()
        && a.subs.iter().chain(&b.subs).all(Option::is_some);
    let swapping = swapping_at(alias, &common, ctx);
    let on = if a.target == Target::Memory {
        &b.name
    } else {
        &a.name
    };
    let steps: Vec<i64> = common
        .iter()
        .map(|l| steps.get(l).copied().unwrap_or(1))
        .collect();
    let mut out = vec![];
    for dirs in vectors(common.len()) {
        let nest = Nest {
            loops: &common,
            steps: &steps,
            dirs: &dirs,
        };
        let (possible, within) = possible(alias, swapping, &dirs, || feasible(a, b, &nest));
        if dirs[..fixed].iter().any(|&d| d != Dir::Eq) || !possible {
            continue;
        }
        let dirs = match dirs.iter().find(|&&d| d != Dir::Eq) {
            None => continue,
            Some(Dir::Gt) => dirs.iter().map(|d| d.flip()).collect(),
            Some(_) => dirs,
        };
        out.push(Dependence {
            on: on.clone(),
            loops: common.clone(),
            dirs,
            exact: exact && within != Some(false),
        });
    }
    Ok(out)
}

/// For pointers that take turns, where the loop swapping them stands in `common` (`None`
/// inside: not among them); `None` for any other pair.
fn swapping_at(alias: Alias, common: &[usize], ctx: &Context) -> Option<Option<usize>> {
    match alias {
        Alias::SameInIteration(k) | Alias::DistinctInIteration(k) => Some(
            ctx.ids
                .get(&k)
                .and_then(|l| common.iter().position(|c| c == l)),
        ),
        _ => None,
    }
}

/// Whether a dependence in the direction `dirs` is possible between targets related by
/// `alias` (`subscripts`: whether the subscripts can be equal), and for pointers that take
/// turns whether `dirs` stays within one iteration of the loop swapping them (then they are
/// as named; across it, anything is possible).
fn possible(
    alias: Alias,
    swapping: Option<Option<usize>>,
    dirs: &[Dir],
    subscripts: impl Fn() -> bool,
) -> (bool, Option<bool>) {
    let within = swapping.map(|at| at.is_some_and(|at| dirs[..=at].iter().all(|&d| d == Dir::Eq)));
    let possible = match (alias, within) {
        (Alias::Same, _) | (Alias::SameInIteration(_), Some(true)) => subscripts(),
        (Alias::DistinctInIteration(_), Some(true)) | (Alias::Distinct, _) => false,
        _ => true,
    };
    (possible, within)
}

/// Every direction vector over `m` loops.
fn vectors(m: usize) -> Vec<Vec<Dir>> {
    let mut out = vec![vec![]];
    for _ in 0..m {
        out = (out.into_iter())
            .flat_map(|v| {
                Dir::ALL.iter().map(move |&d| {
                    let mut w = v.clone();
                    w.push(d);
                    w
                })
            })
            .collect();
    }
    out
}

/// Whether `a` in one iteration and `b` in another, related as `nest` says, can touch the
/// same element: every dimension's subscripts can be equal.
fn feasible(a: &Access, b: &Access, nest: &Nest) -> bool {
    if a.subs.len() != b.subs.len() {
        return true;
    }
    (a.subs.iter().zip(&b.subs)).all(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => dimension(x, y, nest),
        _ => true,
    })
}

/// `a dependence on `path` (<,>,=) over L0,L1,L2`.
pub fn describe(d: &Dependence) -> String {
    let loops: Vec<String> = d.loops.iter().map(|l| format!("L{l}")).collect();
    let how = if d.exact {
        ""
    } else {
        " (assumed: an access the analysis cannot read)"
    };
    format!(
        "a dependence on `{}` {} over {}{how}",
        d.on,
        d.vector(),
        loops.join(",")
    )
}
