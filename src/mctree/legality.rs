//! Whether a directive keeps every dependence of [`super::deps`]: clang-22 applies OpenMP
//! loop transformations without checking, so mctree proves them before it builds them.
//!
//! Only dependences *relevant* to a directive above loop `L` matter: those between two
//! accesses inside `L` that no loop around `L` carries (their direction is `=` on every
//! enclosing loop). For those, with the components from `L` inwards:
//! - `tile` of a band: the band is fully permutable — no `>` on a tiled loop; a tile of one
//!   loop (strip-mining) reorders nothing and is always legal (mctree does not propose it
//!   on a loop that carries a dependence: nothing legal could stack on it);
//! - `interchange permutation(..)`: the permuted vector stays lexicographically positive
//!   (an interchange of a legal tile's floor loops is legal: the band is fully permutable);
//! - `reverse`: the loop carries none (`=` on it);
//! - `parallel for`: the loop it parallelises (the outermost one the directives below
//!   expose) carries none, scalars it privatises aside;
//! - `unroll partial`: always;
//! - a vector width (`#pragma clang loop vectorize_width(..) interleave_count(..)`): the loop
//!   carries none, as for `parallel for` (a reduction is not proved: clang reassociates it).
//!
//! The Polly knob needs no proof: Polly checks its own dependences.

use serde::{Deserialize, Serialize};

use crate::mctree::affine::Dir;
use crate::mctree::deps::{describe, Dependence, Dependences};
use crate::mctree::directive::{Op, Stacks};
use crate::mctree::looptree::LoopTree;

/// How a node's correctness is established, beyond the output check every node passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Legality {
    /// Every directive keeps every dependence.
    Proved,
    /// Not proved; proposed only under `--trust-output-check`, so the output check alone
    /// stands between it and a wrong answer.
    OutputChecked,
}

impl Legality {
    pub const ALL: [Legality; 2] = [Legality::Proved, Legality::OutputChecked];

    pub fn as_str(self) -> &'static str {
        match self {
            Legality::Proved => "proved",
            Legality::OutputChecked => "output-checked",
        }
    }
}

/// Why a directive is not proved legal.
#[derive(Debug, Clone, PartialEq)]
pub struct Unproved(pub String);

/// The legality of a whole node: every directive of every stack.
pub fn of(tree: &LoopTree, s: &Stacks) -> Result<(), Unproved> {
    for (&l, ops) in &s.ops {
        for i in 0..ops.len() {
            directive(tree, l, ops, i)?;
        }
    }
    Ok(())
}

/// Whether `ops[i]`, written above loop `l` over the directives `ops[..i]`, keeps every
/// dependence.
pub fn directive(tree: &LoopTree, l: usize, ops: &[Op], i: usize) -> Result<(), Unproved> {
    let deps = &tree.deps;
    let op = &ops[i];
    // Unrolling and strip-mining keep the iterations whole and in order.
    let strip_mine = matches!(op, Op::Tile(s) if s.len() == 1);
    let order_kept = strip_mine || matches!(op, Op::Unroll(_));
    let mut outside = tree.loops[l].outside.iter();
    if let Some(o) = outside.find(|o| !(o.keeps_order && order_kept)) {
        return Err(Unproved(format!(
            "L{l} holds what the dependence test does not model: {}",
            o.show(&tree.file)
        )));
    }
    if i > 0 || matches!(op, Op::Tile(_) | Op::Reverse | Op::Interchange(_)) {
        let width = ops.first().map_or(1, Op::width).max(op.width());
        let band = tree.perfect_nest(l).into_iter().take(width);
        if let Some((b, why)) = band
            .filter_map(|b| Some((b, tree.loops[b].trip_unknown.as_ref()?)))
            .next()
        {
            return Err(Unproved(format!(
                "`{}` on L{l}: L{b}'s trip count may be negative ({why}), which clang-22's tile, reverse, interchange and directives over a generated loop do not handle",
                op.text(),
            )));
        }
    }
    let second = match op {
        Op::Reverse | Op::Vectorize { .. } => Some(l),
        Op::Parallel => tree.perfect_nest(l).get(outermost(&ops[..i])).copied(),
        _ => None,
    };
    if let Some(why) = second.and_then(|x| Some((x, tree.loops[x].polly_disagrees.as_ref()?))) {
        return Err(Unproved(format!(
            "`{}` on L{l}: L{}: {}",
            op.text(),
            why.0,
            why.1
        )));
    }
    if order_kept || (matches!(op, Op::Interchange(_)) && i > 0) {
        return Ok(());
    }
    if let Some(why) = &deps.unanalysable {
        return Err(Unproved(format!("the dependence analysis gave up: {why}")));
    }
    match relevant(deps, l).find(|(_, v)| breaks(op, &ops[..i], v)) {
        None => Ok(()),
        Some((d, _)) => Err(Unproved(format!(
            "`{}` on L{l} may break {}",
            op.text(),
            describe(d)
        ))),
    }
}

/// Whether `op`, above the directives `below`, breaks a dependence whose components from
/// its loop inwards are `v`.
fn breaks(op: &Op, below: &[Op], v: &[Dir]) -> bool {
    let carried = |at: usize| v.get(at).is_some_and(|&d| d != Dir::Eq);
    match op {
        Op::Tile(s) if s.len() == 1 => false,
        Op::Tile(s) => v.iter().take(s.len()).any(|&d| d == Dir::Gt),
        Op::Interchange(p) => {
            let permuted = p.iter().map(|&x| v.get(x - 1).copied().unwrap_or(Dir::Eq));
            permuted.into_iter().find(|&d| d != Dir::Eq) == Some(Dir::Gt)
        }
        Op::Reverse | Op::Vectorize { .. } => carried(0),
        Op::Parallel => carried(outermost(below)),
        Op::Unroll(_) => false,
    }
}

/// Which loop of the nest (0: `l` itself) the directives `below` put outermost.
fn outermost(below: &[Op]) -> usize {
    let interchanged = below.iter().rev().find_map(|o| match o {
        Op::Interchange(p) => Some(p[0] - 1),
        _ => None,
    });
    interchanged.unwrap_or(0)
}

/// The dependences between accesses inside loop `l` that no enclosing loop carries, with
/// their components from `l` inwards.
fn relevant(deps: &Dependences, l: usize) -> impl Iterator<Item = (&Dependence, &[Dir])> {
    deps.deps.iter().filter_map(move |d| {
        let at = d.loops.iter().position(|&x| x == l)?;
        d.dirs[..at]
            .iter()
            .all(|&x| x == Dir::Eq)
            .then(|| (d, &d.dirs[at..]))
    })
}

/// Whether loop `l` carries a dependence (privatisable scalars aside): `reverse` and a
/// `parallel for` directly above it are then not proved.
pub fn carries(tree: &LoopTree, l: usize) -> bool {
    directive(tree, l, &[Op::Parallel], 0).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mctree::affine::Dir::*;

    fn dep(loops: &[usize], dirs: &[Dir]) -> Dependence {
        Dependence {
            on: "path".into(),
            loops: loops.to_vec(),
            dirs: dirs.to_vec(),
            exact: true,
        }
    }

    fn check(deps: Vec<Dependence>, l: usize, ops: &[Op]) -> bool {
        let mut tree = crate::mctree::transform::tests::tree();
        tree.deps.deps = deps;
        directive(&tree, l, ops, ops.len() - 1).is_ok()
    }

    #[test]
    fn floyd_warshalls_k_loop_is_kept_and_its_i_j_band_may_be_tiled() {
        // k, i, j = L0, L1, L2: the dependences of path[i][j] = min(path[i][j], path[i][k] + path[k][j]).
        let fw = vec![
            dep(&[0, 1, 2], &[Lt, Gt, Eq]),
            dep(&[0, 1, 2], &[Lt, Lt, Eq]),
            dep(&[0, 1, 2], &[Lt, Eq, Gt]),
            dep(&[0, 1, 2], &[Eq, Lt, Eq]),
            dep(&[0, 1, 2], &[Eq, Eq, Lt]),
        ];
        assert!(!check(fw.clone(), 0, &[Op::Tile(vec![8, 8])]));
        assert!(!check(fw.clone(), 0, &[Op::Interchange(vec![2, 1, 3])]));
        assert!(!check(fw.clone(), 0, &[Op::Reverse]));
        assert!(!check(fw.clone(), 0, &[Op::Parallel]));
        assert!(
            check(fw.clone(), 0, &[Op::Tile(vec![8])]),
            "strip-mining reorders nothing"
        );
        assert!(check(fw.clone(), 1, &[Op::Tile(vec![8, 8])]));
        assert!(check(fw.clone(), 1, &[Op::Interchange(vec![2, 1])]));
        assert!(!check(fw.clone(), 1, &[Op::Parallel]));
        assert!(check(fw.clone(), 0, &[Op::Unroll(4)]));
        let vector = Op::Vectorize {
            width: 8,
            interleave: 2,
        };
        assert!(
            !check(fw.clone(), 2, std::slice::from_ref(&vector)),
            "j carries path[i][j]"
        );
        assert!(check(fw[3..4].to_vec(), 2, &[vector]), "only i carries it");
    }

    #[test]
    fn a_reduction_band_tiles_and_interchanges_but_its_loop_is_not_parallel() {
        // C[i][j] += A[i][k] * B[k][j]: carried by k only.
        let gemm = vec![dep(&[0, 1, 2], &[Eq, Eq, Lt])];
        assert!(check(gemm.clone(), 0, &[Op::Tile(vec![32, 32, 32])]));
        assert!(check(gemm.clone(), 0, &[Op::Interchange(vec![3, 1, 2])]));
        assert!(check(gemm.clone(), 0, &[Op::Parallel]));
        let tiled = [
            Op::Tile(vec![8, 8, 8]),
            Op::Interchange(vec![3, 1, 2]),
            Op::Parallel,
        ];
        assert!(!check(gemm.clone(), 0, &tiled), "k's floor loop outermost");
        assert!(!check(gemm.clone(), 2, &[Op::Reverse]));
        assert!(check(gemm.clone(), 0, &[Op::Tile(vec![8])]));
        assert!(
            check(gemm, 2, &[Op::Tile(vec![8])]),
            "strip-mining reorders nothing"
        );
    }
}
