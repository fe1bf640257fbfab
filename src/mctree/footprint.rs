//! How many bytes one tile touches: the working set that the cache bound on tile sizes
//! ([`super::transform`]) compares with the machine's L2 cache ([`crate::host`]).
//!
//! A tile of the band of loops `band` with sizes `sizes` runs `min(size, most iterations)` of
//! each band loop and every iteration of each loop inside the band (at most
//! [`crate::mctree::looptree::Loop::most_trips`]); the loops around the band stay fixed. An
//! access touches, per dimension, `1 + Σ |a_l·step_l|·(n_l − 1)` elements (`a_l` the loop's
//! coefficient in the subscript, `step_l` its step, `n_l` its iterations in the tile); accesses
//! of an array with the same coefficients touch one block, shifted (the most of them counts),
//! and accesses with other coefficients other blocks (each counts). An element counts 8 bytes
//! (a double: the kernel's element types are not read, so a `float` array's set is
//! overestimated). Unknown (`None`) when a subscript is not affine, an access is not through a
//! named array, or a loop inside the band is not bounded. The accesses are the dependence
//! test's ([`crate::mctree::deps::Dependences`]).

use std::collections::BTreeMap;

use crate::mctree::accesses::{Access, Target};
use crate::mctree::looptree::LoopTree;

const ELEMENT_BYTES: u64 = 8;

/// The bytes one tile of `band` (a perfect nest, outermost first) with `sizes` touches.
pub fn bytes(tree: &LoopTree, band: &[usize], sizes: &[u32]) -> Option<u64> {
    let inner = *band.last()?;
    let mut per_block: BTreeMap<(&str, Vec<Pattern>), u64> = BTreeMap::new();
    for t in (tree.deps.accesses.iter()).filter(|t| t.loops.contains(&inner)) {
        let array = match &t.target {
            Target::Array(name) => name.as_str(),
            Target::Scalar(_) => continue,
            Target::Memory => return None,
        };
        let n = elements(tree, t, band, sizes)?;
        let most = per_block.entry((array, pattern(t)?)).or_default();
        *most = (*most).max(n);
    }
    (per_block.values()).try_fold(0u64, |sum, &n| {
        sum.checked_add(n.checked_mul(ELEMENT_BYTES)?)
    })
}

/// A subscript's loop coefficients (its constant and invariants left out).
type Pattern = Vec<(usize, i64)>;

/// Per dimension of access `t`, its loop coefficients: accesses with the same pattern touch
/// the same block, shifted (`A[i-1][j]`, `A[i+1][j]`); others another (`C[k][j]`, `C[i][j]`).
fn pattern(t: &Access) -> Option<Vec<Pattern>> {
    let each = |s: &Option<crate::mctree::affine::Affine>| {
        Some(s.as_ref()?.loops.iter().map(|(&l, &a)| (l, a)).collect())
    };
    t.subs.iter().map(each).collect()
}

/// The elements access `t` touches in one tile.
fn elements(tree: &LoopTree, t: &Access, band: &[usize], sizes: &[u32]) -> Option<u64> {
    let inner = band.last()?;
    let below = t.loops.iter().position(|l| l == inner)?;
    let iterations = |l: usize| -> Option<i64> {
        let most = tree.loops[l].most_trips;
        match band.iter().position(|&b| b == l) {
            Some(k) => {
                let size = *sizes.get(k)? as i64;
                Some(most.map_or(size, |m| m.min(size)))
            }
            None if t.loops[below..].contains(&l) => most,
            None => Some(1),
        }
    };
    let mut product: u64 = 1;
    for sub in &t.subs {
        let mut extent: i64 = 1;
        for (&l, &a) in &sub.as_ref()?.loops {
            // The coefficient is on the counter's value, which moves by the step.
            let per_iteration = a.checked_mul(tree.loops[l].step)?.checked_abs()?;
            let n = iterations(l)?.max(1);
            extent = extent.checked_add(per_iteration.checked_mul(n - 1)?)?;
        }
        product = product.checked_mul(extent as u64)?;
    }
    Some(product)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mctree::affine::Affine;
    use crate::mctree::transform::tests::tree;

    fn sub(loops: &[(usize, i64)]) -> Option<Affine> {
        Some(Affine {
            loops: loops.iter().copied().collect(),
            ..Affine::default()
        })
    }

    /// The test tree's L0 i { L1 j { L2 k } } as gemm: C[i][j] += A[i][k] * B[k][j].
    pub(crate) fn gemm() -> LoopTree {
        let mut t = tree();
        let touch = |a: &str, s: Vec<Option<Affine>>| Access {
            target: Target::Array(a.into()),
            name: a.into(),
            subs: s,
            write: a == "C",
            loops: vec![0, 1, 2],
            defines: false,
        };
        t.deps.accesses = vec![
            touch("C", vec![sub(&[(0, 1)]), sub(&[(1, 1)])]),
            touch("A", vec![sub(&[(0, 1)]), sub(&[(2, 1)])]),
            touch("B", vec![sub(&[(2, 1)]), sub(&[(1, 1)])]),
            touch("C", vec![sub(&[(0, 1)]), sub(&[(1, 1)])]),
        ];
        t
    }

    #[test]
    fn a_tile_touches_its_blocks_and_the_loops_inside_it_whole() {
        let t = gemm();
        // All three tiled 8 x 16 x 32: C 8x16, A 8x32, B 32x16 doubles.
        let three = (8 * 16 + 8 * 32 + 32 * 16) * 8;
        assert_eq!(bytes(&t, &[0, 1, 2], &[8, 16, 32]), Some(three));
        // i and j tiled, k inside sweeps its 100 iterations.
        let two = (8 * 16 + 8 * 100 + 100 * 16) * 8;
        assert_eq!(bytes(&t, &[0, 1], &[8, 16]), Some(two));
        // A size past the loop's 100 iterations counts 100.
        assert_eq!(bytes(&t, &[0], &[4096]), Some((100 * 100 * 3) * 8));
    }

    #[test]
    fn a_step_widens_the_block_and_another_pattern_of_an_array_adds_one() {
        let mut t = gemm();
        t.loops[2].step = 4;
        // k moves by 4: A's and B's k extents are 4 * 31 + 1 = 125 elements.
        let stepped = (8 * 16 + 8 * 125 + 125 * 16) * 8;
        assert_eq!(bytes(&t, &[0, 1, 2], &[8, 16, 32]), Some(stepped));
        let mut t = gemm();
        // C[k][j] beside C[i][j]: a second block of C (k x j), not the same one.
        let touch = &t.deps.accesses[0];
        t.deps.accesses.push(Access {
            subs: vec![sub(&[(2, 1)]), sub(&[(1, 1)])],
            ..touch.clone()
        });
        let two_blocks = (8 * 16 + 32 * 16 + 8 * 32 + 32 * 16) * 8;
        assert_eq!(bytes(&t, &[0, 1, 2], &[8, 16, 32]), Some(two_blocks));
        // Sizes shorter than the band: unknown, not a panic.
        assert_eq!(bytes(&t, &[0, 1, 2], &[8]), None);
    }

    #[test]
    fn a_subscript_not_affine_or_a_loop_not_bounded_leaves_it_unknown() {
        let mut t = gemm();
        t.loops[2].most_trips = None;
        assert_eq!(bytes(&t, &[0, 1], &[8, 16]), None);
        assert!(bytes(&t, &[0, 1, 2], &[8, 16, 32]).is_some());
        let mut t = gemm();
        t.deps.accesses[1].subs[1] = None;
        assert_eq!(bytes(&t, &[0, 1, 2], &[8, 16, 32]), None);
    }
}
