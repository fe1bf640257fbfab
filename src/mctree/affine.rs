//! The direction-vector test on affine subscripts (Wolfe 1996; Allen & Kennedy 2001, ch. 3):
//! whether two subscripts, affine in the loop counters and invariants, can be equal in two
//! iterations related by a direction on each loop — the GCD test, with `<` and `>` as
//! distances of at least one iteration in the order the loop runs. [`super::deps`] lists the
//! accesses and asks this for every pair.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The direction of a dependence on one loop: the source's iteration is before (`Lt`), the
/// same as (`Eq`) or after (`Gt`) the sink's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Dir {
    Lt,
    Eq,
    Gt,
}

impl Dir {
    pub const ALL: [Dir; 3] = [Dir::Lt, Dir::Eq, Dir::Gt];

    pub fn flip(self) -> Dir {
        match self {
            Dir::Lt => Dir::Gt,
            Dir::Eq => Dir::Eq,
            Dir::Gt => Dir::Lt,
        }
    }

    pub fn symbol(self) -> char {
        match self {
            Dir::Lt => '<',
            Dir::Eq => '=',
            Dir::Gt => '>',
        }
    }
}

/// `Σ loops + Σ params + c`: a subscript affine in the loop variables and invariants.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Affine {
    pub loops: BTreeMap<usize, i64>,
    pub params: BTreeMap<String, i64>,
    pub c: i64,
}

impl Affine {
    pub fn scaled(mut self, k: i64) -> Option<Affine> {
        for v in self.loops.values_mut().chain(self.params.values_mut()) {
            *v = v.checked_mul(k)?;
        }
        self.c = self.c.checked_mul(k)?;
        Some(self)
    }

    pub fn plus(mut self, o: Affine) -> Option<Affine> {
        for (k, v) in o.loops {
            *self.loops.entry(k).or_default() += v;
        }
        for (k, v) in o.params {
            *self.params.entry(k).or_default() += v;
        }
        self.c = self.c.checked_add(o.c)?;
        Some(self)
    }
}

/// The loops two accesses share, each loop's step, and a direction on each: `Lt` when the
/// first access's iteration runs before the second's.
pub struct Nest<'n> {
    pub loops: &'n [usize],
    pub steps: &'n [i64],
    pub dirs: &'n [Dir],
}

/// Whether `x(i) = y(i')` has an integer solution with `i` and `i'` related as `nest` says
/// (other variables free): the GCD test, with `<` and `>` as distances of at least one
/// iteration — `step` in the counter, so that a loop counting down flips the direction.
pub fn dimension(x: &Affine, y: &Affine, nest: &Nest) -> bool {
    let mut free = vec![];
    let mut distance = vec![];
    let coef = |a: &Affine, l: usize| a.loops.get(&l).copied().unwrap_or(0);
    let common = nest.loops;
    for ((&l, &d), &s) in common.iter().zip(nest.dirs).zip(nest.steps) {
        let (alpha, beta) = (coef(x, l), coef(y, l));
        free.push(alpha - beta);
        let term = match d {
            Dir::Eq => continue,
            // i' = i + s·d: α·i − β·(i + s·d)
            Dir::Lt => beta.checked_mul(-s),
            // i = i' + s·d: α·(i' + s·d) − β·i'
            Dir::Gt => alpha.checked_mul(s),
        };
        let Some(term) = term else { return true };
        distance.push(term);
    }
    for (l, &v) in &x.loops {
        if !common.contains(l) {
            free.push(v);
        }
    }
    for (l, &v) in &y.loops {
        if !common.contains(l) {
            free.push(-v);
        }
    }
    let params: BTreeSet<&String> = x.params.keys().chain(y.params.keys()).collect();
    for p in params {
        free.push(x.params.get(p).unwrap_or(&0) - y.params.get(p).unwrap_or(&0));
    }
    // Σ free·f + Σ distance·(1 + e) = y.c − x.c, e ≥ 0.
    let rhs = y.c - x.c - distance.iter().sum::<i64>();
    solvable(&free, &distance, rhs)
}

/// Whether `Σ free·f + Σ pos·e = rhs` has integers `f` and `e ≥ 0`.
fn solvable(free: &[i64], pos: &[i64], rhs: i64) -> bool {
    let g_free = free.iter().fold(0, |g, &c| gcd(g, c));
    let g_all = pos.iter().fold(g_free, |g, &c| gcd(g, c));
    if g_all == 0 {
        return rhs == 0;
    }
    if rhs % g_all != 0 {
        return false;
    }
    if g_free != 0 {
        return true;
    }
    let nonzero: Vec<i64> = pos.iter().copied().filter(|&c| c != 0).collect();
    if nonzero.iter().all(|&c| c > 0) {
        rhs >= 0
    } else if nonzero.iter().all(|&c| c < 0) {
        rhs <= 0
    } else {
        true
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aff(loops: &[(usize, i64)], c: i64) -> Affine {
        Affine {
            loops: loops.iter().copied().collect(),
            params: BTreeMap::new(),
            c,
        }
    }

    /// `dimension` on one loop with step `s` and direction `d`.
    fn one(x: &Affine, y: &Affine, s: i64, d: Dir) -> bool {
        let nest = Nest {
            loops: &[0],
            steps: &[s],
            dirs: &[d],
        };
        dimension(x, y, &nest)
    }

    #[test]
    fn the_gcd_test_with_directions() {
        use Dir::*;
        // A[i] written, A[i] read: only the same iteration.
        let (w, r) = (aff(&[(0, 1)], 0), aff(&[(0, 1)], 0));
        assert!(one(&w, &r, 1, Eq));
        assert!(!one(&w, &r, 1, Lt));
        assert!(!one(&w, &r, 1, Gt));
        // A[i] written, A[i-1] read: the write comes first (distance 1).
        let r = aff(&[(0, 1)], -1);
        assert!(one(&w, &r, 1, Lt));
        assert!(!one(&w, &r, 1, Eq));
        assert!(!one(&w, &r, 1, Gt));
        // A[2i] and A[2i+1] never meet.
        let (e, o) = (aff(&[(0, 2)], 0), aff(&[(0, 2)], 1));
        assert!(Dir::ALL.iter().all(|&d| !one(&e, &o, 1, d)));
        // A[i] and A[j] (j an inner loop): any direction on i.
        let (x, y) = (aff(&[(0, 1)], 0), aff(&[(1, 1)], 0));
        assert!(Dir::ALL.iter().all(|&d| one(&x, &y, 1, d)));
    }

    #[test]
    fn a_loop_counting_down_flips_the_direction() {
        use Dir::*;
        // for (i = n; i >= 1; i--): A[i] written, A[i-1] read. The read's iteration i-1
        // runs after the write's, so the write still comes first: `<` in execution order.
        let (w, r) = (aff(&[(0, 1)], 0), aff(&[(0, 1)], -1));
        assert!(!one(&w, &r, -1, Lt));
        assert!(
            one(&w, &r, -1, Gt),
            "the read (sink) runs first in counter order"
        );
        // A[i] written, A[i+1] read, counting down: i+1 ran before i wrote A[i]... the
        // read of A[i+1] at iteration i meets the write of iteration i+1, which ran first.
        let r = aff(&[(0, 1)], 1);
        assert!(one(&w, &r, -1, Lt));
        assert!(!one(&w, &r, -1, Gt));
        // Step -2: A[i] and A[i-1] never meet (i keeps its parity).
        let r = aff(&[(0, 1)], -1);
        assert!(Dir::ALL.iter().all(|&d| !one(&w, &r, -2, d)));
        // Step -2: A[i] written, A[i-2] read: iteration i-2 runs next and reads it.
        let r = aff(&[(0, 1)], -2);
        assert!(one(&w, &r, -2, Gt) && !one(&w, &r, -2, Lt));
    }

    #[test]
    fn solvable_respects_the_sign_of_distances() {
        assert!(solvable(&[], &[1], 3));
        assert!(!solvable(&[], &[1], -1));
        assert!(!solvable(&[], &[-2], 3));
        assert!(solvable(&[], &[2, -3], 1));
        assert!(solvable(&[3], &[2], 1));
        assert!(!solvable(&[4], &[2], 1));
        assert!(!solvable(&[], &[], 1));
    }
}
