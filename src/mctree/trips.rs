//! Whether a loop's trip count is provably never negative — whether its initial value can
//! pass its bound (`for (l = k; l < n; l++)` with `k > n`). clang-22's `tile`, `reverse` and
//! `interchange` compute the trip count of such a loop as a huge unsigned number and run
//! wild (measured: a segmentation fault at `k = n + 1`, and at `0 < n` with `n = -1`), and so
//! does a `parallel for` above an `unroll partial`; `parallel for` and `unroll partial` alone
//! run it zero times, as the source does. So the others are proved only on loops whose bounds
//! are known ([`super::ranges`]) to keep their order.

use crate::mctree::header::Header;
use crate::mctree::looptree::LoopTree;
use crate::mctree::ranges::{ends, kernel_env, walk, Range, Visitor};
use crate::mctree::unit::{Function, Unit};

/// Sets [`crate::mctree::looptree::Loop::trip_unknown`] on every loop whose trip count may be
/// negative; `whole_program`: no other source calls the kernel.
pub fn check(unit: &Unit, kernel: &Function, tree: &mut LoopTree, whole_program: bool) {
    let mut env = kernel_env(unit, kernel, whole_program);
    let mut found = Trips(vec![]);
    walk(&kernel.body, tree, &mut env, &mut vec![], &mut found);
    for (l, why) in found.0 {
        if let Some(lp) = tree.loops.get_mut(l) {
            lp.trip_unknown = Some(why);
        }
    }
}

/// The loops whose trip count may be negative, with why.
struct Trips(Vec<(usize, String)>);

impl Visitor for Trips {
    fn bounds(&mut self, id: usize, h: &Header, lower: Option<Range>, upper: Option<Range>) {
        let (Some(lo), Some(up)) = (lower, upper) else {
            let why =
                "its bounds are not known to keep their order (a value the analysis cannot bound)";
            self.0.push((id, why.into()));
            return;
        };
        let (first, last) = ends(h, lo, up);
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
            self.0.push((id, why));
        }
    }
}
