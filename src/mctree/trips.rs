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
/// negative, and [`crate::mctree::looptree::Loop::most_trips`] on every loop whose bounds are
/// bounded; `whole_program`: no other source calls the kernel.
pub fn check(unit: &Unit, kernel: &Function, tree: &mut LoopTree, whole_program: bool) {
    let mut env = kernel_env(unit, kernel, whole_program);
    let mut found = Trips::default();
    walk(&kernel.body, tree, &mut env, &mut vec![], &mut found);
    for (l, why) in found.unknown {
        if let Some(lp) = tree.loops.get_mut(l) {
            lp.trip_unknown = Some(why);
        }
    }
    for (l, most) in found.most {
        if let Some(lp) = tree.loops.get_mut(l) {
            lp.most_trips = Some(most);
        }
    }
}

/// The loops whose trip count may be negative, with why, and each bounded loop's most
/// iterations.
#[derive(Default)]
struct Trips {
    unknown: Vec<(usize, String)>,
    most: Vec<(usize, i64)>,
}

/// The most iterations between the first values `first` and the last values `last` of a
/// counter moving by `step`.
fn most_trips(first: Range, last: Range, step: i64) -> i64 {
    let span = match step > 0 {
        true => last.hi.saturating_sub(first.lo),
        false => first.hi.saturating_sub(last.lo),
    };
    match span < 0 {
        true => 0,
        false => (span / step.saturating_abs().max(1)).saturating_add(1),
    }
}

impl Visitor for Trips {
    fn bounds(&mut self, id: usize, h: &Header, lower: Option<Range>, upper: Option<Range>) {
        let (Some(lo), Some(up)) = (lower, upper) else {
            let why =
                "its bounds are not known to keep their order (a value the analysis cannot bound)";
            self.unknown.push((id, why.into()));
            return;
        };
        let (first, last) = ends(h, lo, up);
        self.most.push((id, most_trips(first, last, h.step)));
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
            self.unknown.push((id, why));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_trips_count_every_step_from_the_lowest_first_to_the_highest_last() {
        // for (i = 0; i < n; i++) with n in [10, 100]: last value 9..99.
        assert_eq!(most_trips(Range::of(0, 0), Range::of(9, 99), 1), 100);
        // Step 3 over 0..=99: 0, 3, …, 99.
        assert_eq!(most_trips(Range::of(0, 0), Range::of(99, 99), 3), 34);
        // Counting down from 50..=60 to 0.
        assert_eq!(most_trips(Range::of(50, 60), Range::of(0, 0), -1), 61);
        // A first value past the last: no iteration.
        assert_eq!(most_trips(Range::of(10, 10), Range::of(0, 0), 1), 0);
        assert_eq!(most_trips(Range::of(0, 0), Range::of(-1, -1), 3), 0);
    }
}
