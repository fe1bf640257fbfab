//! Drawing random configurations: one sampling law for every space, enumerated or not.
//!
//! **Hierarchical.** Parameters are drawn one at a time in dependency order
//! ([`Space::order`]), each active one uniformly over its values (ordinal, categorical,
//! boolean; integer and real ranges uniformly or log-uniformly), an inactive one not at all
//! (NaN). So a switch's values are equally likely whatever the size of the sub-space under
//! each (as ConfigSpace samples): with `TILE` and 1,000 tile combinations under `TILE = true`,
//! half the draws are untiled, where uniform sampling over whole configurations would give
//! 1 in 1,001.
//!
//! **Constraint-aware.** After each parameter is drawn, every forbidden combination and
//! constraint whose parameters are all drawn is checked, and every other constraint it
//! appears in is bounded over the ranges the undrawn parameters can still take
//! ([`bounds`]). On failure the draw backtracks, depth first (as
//! Kernel Tuner and ATF build constrained spaces parameter by parameter): the latest
//! parameter is re-drawn among its values not yet tried there (by the same law, without
//! replacement; an integer's ranges of values the bounds rule out are skipped as a whole),
//! and when none is left, the one before it. A parameter with more than [`EXHAUSTIVE`]
//! values (or a real range) is re-drawn at most [`REDRAWS`] times instead. A value therefore
//! ends up drawn from the law restricted to the values that can still lead to a valid
//! configuration (as far as the checks can tell by then).
//!
//! **Bounded, and honest about it.** A draw takes at most [`ATTEMPTS`] depth-first searches
//! of [`WORK`] assignments each, then gives up ([`Draw::GaveUp`]); [`Sampler::search`] is the
//! same search with a caller's budget, used to enumerate what is left of a small space. A
//! search that tried every value of every parameter (no range cut short, no budget hit)
//! without finding an acceptable configuration *proves* there is none ([`Draw::Exhausted`]).
//!
//! Every random choice comes from the caller's [`Rng`], so a draw is a function of its seed.

use crate::problem::bounds::{self, Bound};
use crate::problem::expr::Val;
use crate::problem::param::{Kind, Param};
use crate::problem::permutation::Permutation;
use crate::problem::space::{Config, Space};
use crate::rng::Rng;

/// A parameter with at most this many values is re-drawn among its untried values until
/// none is left; a larger one only [`REDRAWS`] times.
pub const EXHAUSTIVE: u128 = 4096;
/// Re-draws of a parameter with too many values to try them all.
pub const REDRAWS: usize = 64;
/// Value assignments per depth-first search of [`Sampler::draw`].
pub const WORK: usize = 5_000;
/// Fresh depth-first searches per [`Sampler::draw`] before it gives up.
pub const ATTEMPTS: usize = 8;
/// Integer value ranges this short are not bisected further by [`Sampler::prune`]: their
/// values are tried one by one.
const PRUNE_LEAF: usize = 8;

/// The result of a draw.
#[derive(Debug, Clone, PartialEq)]
pub enum Draw {
    /// A valid configuration the caller accepted.
    Found(Config),
    /// Proved: no valid configuration is acceptable.
    Exhausted,
    /// None found within the bounds; some may exist.
    GaveUp,
}

impl Draw {
    pub fn found(self) -> Option<Config> {
        match self {
            Draw::Found(c) => Some(c),
            _ => None,
        }
    }
}

/// A check that becomes exact once every parameter it reads is drawn.
#[derive(Debug, Clone, Copy)]
enum Rule {
    Forbidden(usize),
    Constraint(usize),
}

/// How the values of a parameter are tried at one position of a search.
#[derive(Debug, Clone)]
enum Values {
    /// Few enough to try all: index `j` is coordinate `offset + j`, with weight `weights[j]`
    /// (`None`: uniform).
    Finite {
        count: usize,
        offset: f64,
        weights: Option<Vec<f64>>,
        /// Whether index order is value order (integers), so that index ranges can be
        /// bounded as value ranges.
        ranged: bool,
    },
    /// Too many (or a real range): re-drawn with replacement, at most [`REDRAWS`] times.
    Many,
}

/// A space prepared for drawing: which checks apply after which parameter, and what each
/// parameter's values are.
pub struct Sampler<'s> {
    space: &'s Space,
    /// Position of each parameter in `space.order`.
    pos: Vec<usize>,
    /// Per position, the checks whose last parameter is drawn there.
    exact: Vec<Vec<Rule>>,
    /// Per position, the constraints that read the parameter drawn there and a later one.
    early: Vec<Vec<usize>>,
    /// Per position, for constraints whose first parameter is drawn there (and whose others
    /// are unconditional), which of its values the bounds allow: the bound check of `early`
    /// computed once per value instead of once per draw.
    unary: Vec<Vec<Vec<bool>>>,
    /// Per parameter, the bound of the values it can take.
    range: Vec<Bound>,
    values: Vec<Values>,
}

/// What one position of a depth-first search has tried.
#[derive(Debug, Default)]
struct Frame {
    /// Values handed out so far.
    attempts: usize,
    /// Index of the last value handed out (finite domains).
    last: usize,
    /// Which value indices were tried (or ruled out), allocated at the first retry.
    tried: Vec<bool>,
    /// How many are not.
    left: usize,
    /// Whether values were left untried (too many to try them all).
    cut: bool,
}

impl<'s> Sampler<'s> {
    pub fn new(space: &'s Space) -> Sampler<'s> {
        let n = space.order.len();
        let mut pos = vec![0; space.params.len()];
        for (k, &i) in space.order.iter().enumerate() {
            pos[i] = k;
        }
        let mut s = Sampler {
            space,
            pos,
            exact: vec![Vec::new(); n],
            early: vec![Vec::new(); n],
            unary: vec![Vec::new(); n],
            range: space.params.iter().map(range_of).collect(),
            values: space.params.iter().map(values_of).collect(),
        };
        s.place_checks();
        s
    }

    /// Attaches each check to the positions where it can first be decided or bounded.
    fn place_checks(&mut self) {
        if self.exact.is_empty() {
            return;
        }
        for (k, combo) in self.space.forbidden.iter().enumerate() {
            let last = combo.iter().map(|&(i, _)| self.pos[i]).max().unwrap_or(0);
            self.exact[last].push(Rule::Forbidden(k));
        }
        for (k, c) in self.space.constraints.iter().enumerate() {
            let mut reads = Vec::new();
            c.expr.params(&mut reads);
            let mut at: Vec<usize> = reads.iter().map(|&i| self.pos[i]).collect();
            at.sort_unstable();
            at.dedup();
            let last = at.last().copied().unwrap_or(0);
            self.exact[last].push(Rule::Constraint(k));
            for &p in at.iter().filter(|&&p| p < last) {
                match self.tabulate(k, p, &reads) {
                    Some(table) if p == at[0] => self.unary[p].push(table),
                    _ => self.early[p].push(k),
                }
            }
        }
    }

    /// For constraint `k` whose first parameter (reading `reads`) is drawn at position `p`:
    /// whether each value of that parameter may satisfy it, if that does not depend on
    /// anything drawn before (the other parameters are unconditional) and the values are few.
    fn tabulate(&self, k: usize, p: usize, reads: &[usize]) -> Option<Vec<bool>> {
        let i = self.space.order[p];
        let Values::Finite { count, offset, .. } = &self.values[i] else {
            return None;
        };
        if reads
            .iter()
            .any(|&j| j != i && self.space.params[j].condition.is_some())
        {
            return None;
        }
        let expr = &self.space.constraints[k].expr;
        let table = (0..*count)
            .map(|j| {
                let own = self.space.params[i]
                    .val(offset + j as f64)
                    .map(Bound::Known);
                let get = |r: usize| {
                    if r == i {
                        own.clone()
                    } else {
                        Some(self.range[r].clone())
                    }
                };
                bounds::may_hold(expr, &get)
            })
            .collect();
        Some(table)
    }

    /// One hierarchical draw of a valid configuration that `accept` takes: up to
    /// [`ATTEMPTS`] depth-first searches of [`WORK`] assignments.
    pub fn draw(&self, rng: &mut Rng, accept: &dyn Fn(&Config) -> bool) -> Draw {
        for _ in 0..ATTEMPTS {
            match self.search(rng, accept, WORK) {
                Draw::GaveUp => continue,
                d => return d,
            }
        }
        Draw::GaveUp
    }

    /// One depth-first search in random value order, up to `work` value assignments: the
    /// first valid configuration `accept` takes, or proof that there is none, or neither.
    pub fn search(&self, rng: &mut Rng, accept: &dyn Fn(&Config) -> bool, work: usize) -> Draw {
        let n = self.space.order.len();
        let mut c = Config(vec![f64::NAN; self.space.params.len()]);
        if n == 0 {
            return if accept(&c) {
                Draw::Found(c)
            } else {
                Draw::Exhausted
            };
        }
        let mut frames: Vec<Frame> = (0..n).map(|_| Frame::default()).collect();
        let (mut k, mut done, mut cut) = (0, 0, false);
        loop {
            let i = self.space.order[k];
            let Some(v) = self.next_value(k, &c, &mut frames[k], rng) else {
                // Every value tried here: back to the previous parameter.
                cut |= frames[k].cut;
                c.0[i] = f64::NAN;
                if k == 0 {
                    return if cut { Draw::GaveUp } else { Draw::Exhausted };
                }
                k -= 1;
                continue;
            };
            c.0[i] = v;
            done += 1;
            if self.consistent(k, &c) {
                if k + 1 < n {
                    k += 1;
                    frames[k] = Frame::default();
                } else if accept(&c) {
                    return Draw::Found(c);
                }
            }
            if done >= work {
                return Draw::GaveUp;
            }
        }
    }

    /// The next value to try at position `k` (parameter `i`) in frame `f`, `None` when
    /// none is left.
    fn next_value(&self, k: usize, c: &Config, f: &mut Frame, rng: &mut Rng) -> Option<f64> {
        let i = self.space.order[k];
        let p = &self.space.params[i];
        if !self.space.active(c, i) {
            f.attempts += 1;
            return (f.attempts == 1).then_some(f64::NAN);
        }
        match &self.values[i] {
            Values::Many => {
                f.cut = f.attempts == REDRAWS;
                f.attempts += 1;
                (!f.cut).then(|| draw_value(p, rng))
            }
            Values::Finite { offset, .. } if f.attempts == 0 => {
                f.attempts = 1;
                let v = draw_value(p, rng);
                f.last = (v - offset) as usize;
                Some(v)
            }
            Values::Finite { .. } => self.redraw(k, c, f, rng),
        }
    }

    /// A value of the finite domain at position `k` not yet tried in frame `f`, by the
    /// parameter's law restricted to the untried values.
    fn redraw(&self, k: usize, c: &Config, f: &mut Frame, rng: &mut Rng) -> Option<f64> {
        let Values::Finite {
            count,
            offset,
            weights,
            ranged,
        } = &self.values[self.space.order[k]]
        else {
            unreachable!("called for finite domains only");
        };
        if f.tried.is_empty() {
            // First retry: rule out at once the ranges of values no completion can repair.
            f.tried = vec![false; *count];
            for table in &self.unary[k] {
                for (t, ok) in f.tried.iter_mut().zip(table) {
                    *t |= !ok;
                }
            }
            if *ranged {
                self.prune(k, c, &mut f.tried, *offset);
            }
            f.tried[f.last] = true;
            f.left = f.tried.iter().filter(|&&t| !t).count();
        } else if !f.tried[f.last] {
            f.tried[f.last] = true;
            f.left -= 1;
        }
        if f.left == 0 {
            return None;
        }
        f.attempts += 1;
        f.last = pick_untried(&f.tried, f.left, weights.as_deref(), rng);
        Some(offset + f.last as f64)
    }

    /// Marks as tried the values of the integer at position `k` that no completion can make
    /// valid: its index range is bisected while interval bounds can rule a half out. Only
    /// values the exact checks would reject anyway are ruled out (interval bounds only get
    /// tighter on a sub-range), so the law is unchanged; the work is a few bound evaluations
    /// instead of a re-draw per rejected value.
    fn prune(&self, k: usize, c: &Config, tried: &mut [bool], offset: f64) {
        let mut ranges = vec![(0, tried.len() - 1)];
        while let Some((lo, hi)) = ranges.pop() {
            let own = Bound::Num(offset + lo as f64, offset + hi as f64);
            if !self.range_may_hold(k, c, own) {
                tried[lo..=hi].fill(true);
            } else if hi - lo >= PRUNE_LEAF {
                let mid = (lo + hi) / 2;
                ranges.push((lo, mid));
                ranges.push((mid + 1, hi));
            }
        }
    }

    /// Whether the constraints checked or bounded at position `k` may hold with that
    /// position's parameter anywhere in `own`.
    fn range_may_hold(&self, k: usize, c: &Config, own: Bound) -> bool {
        let i = self.space.order[k];
        let get = |j: usize| {
            if j == i {
                Some(own.clone())
            } else {
                self.bound(k, c, j)
            }
        };
        let exact = self.exact[k].iter().filter_map(|ch| match *ch {
            Rule::Constraint(j) => Some(j),
            Rule::Forbidden(_) => None,
        });
        exact
            .chain(self.early[k].iter().copied())
            .all(|j| bounds::may_hold(&self.space.constraints[j].expr, &get))
    }

    /// Whether the configuration drawn up to position `k` may still become valid: the
    /// checks decided there hold, and the constraints bounded there may still hold.
    fn consistent(&self, k: usize, c: &Config) -> bool {
        if self.exact[k].is_empty() && self.early[k].is_empty() && self.unary[k].is_empty() {
            return true;
        }
        let i = self.space.order[k];
        let x = c.0[i];
        if let (false, Values::Finite { offset, .. }) = (x.is_nan(), &self.values[i]) {
            let j = (x - offset) as usize;
            if !self.unary[k].iter().all(|t| t[j]) {
                return false;
            }
        }
        let exact = self.exact[k].iter().all(|ch| match *ch {
            Rule::Forbidden(j) => !self.space.forbids(j, c),
            Rule::Constraint(j) => self.space.satisfies(j, c),
        });
        exact
            && self.early[k].iter().all(|&j| {
                let get = |i: usize| self.bound(k, c, i);
                bounds::may_hold(&self.space.constraints[j].expr, &get)
            })
    }

    /// What is known of parameter `i` once the parameter at position `k` is drawn: its
    /// value if drawn, its range if it will be active, `None` if it is or may be inactive.
    fn bound(&self, k: usize, c: &Config, i: usize) -> Option<Bound> {
        let p = &self.space.params[i];
        if self.pos[i] <= k {
            return p.val(c.0[i]).map(Bound::Known);
        }
        match &p.condition {
            None => Some(self.range[i].clone()),
            Some(cond) if self.pos[cond.parent] <= k && self.space.active(c, i) => {
                Some(self.range[i].clone())
            }
            Some(_) => None,
        }
    }
}

/// A uniform (or, with `weights`, weighted) choice among the `left` indices not yet
/// `tried` (at least one).
fn pick_untried(tried: &[bool], left: usize, weights: Option<&[f64]>, rng: &mut Rng) -> usize {
    let mut untried = (0..tried.len()).filter(|&j| !tried[j]);
    let Some(w) = weights else {
        return untried
            .nth(rng.below(left))
            .expect("`left` values are untried");
    };
    let total: f64 = untried.clone().map(|j| w[j]).sum();
    let mut u = rng.f64() * total;
    let mut last = 0;
    for j in untried {
        last = j;
        if u < w[j] {
            return j;
        }
        u -= w[j];
    }
    last
}

/// One value of `p` from its law: uniform over the values, or log-uniform over a range
/// with `log: true`.
pub fn draw_value(p: &Param, rng: &mut Rng) -> f64 {
    match &p.kind {
        Kind::Ordinal(v) => rng.below(v.len()) as f64,
        Kind::Categorical(v) | Kind::Permutation(Permutation { texts: v, .. }) => {
            rng.below(v.len()) as f64
        }
        Kind::Open(v) if v.is_empty() => f64::NAN,
        Kind::Open(v) => rng.below(v.len()) as f64,
        Kind::Boolean => rng.below(2) as f64,
        Kind::Integer { low, high, log } => {
            if *log && *low > 0 {
                let (a, b) = ((*low as f64).ln(), ((*high + 1) as f64).ln());
                ((a + rng.f64() * (b - a)).exp().floor() as i64).clamp(*low, *high) as f64
            } else {
                (*low + rng.below((high - low + 1) as usize) as i64) as f64
            }
        }
        Kind::Real { low, high, log } => {
            if *log && *low > 0.0 {
                let (a, b) = (low.ln(), high.ln());
                (a + rng.f64() * (b - a)).exp().clamp(*low, *high)
            } else {
                low + rng.f64() * (high - low)
            }
        }
    }
}

/// How the values of `p` are tried (see [`Values`]); the weights of a log-uniform integer
/// are those [`draw_value`] gives each value: ln((v + 1) / v).
fn values_of(p: &Param) -> Values {
    let Some(count) = p.cardinality().filter(|&n| n <= EXHAUSTIVE) else {
        return Values::Many;
    };
    let (offset, weights, ranged) = match &p.kind {
        Kind::Integer { low, log, .. } => {
            let w = (*log && *low > 0).then(|| {
                (0..count as i64)
                    .map(|j| (((low + j + 1) as f64) / ((low + j) as f64)).ln())
                    .collect()
            });
            (*low as f64, w, true)
        }
        _ => (0.0, None, false),
    };
    Values::Finite {
        count: count as usize,
        offset,
        weights,
        ranged,
    }
}

/// The bound of every value `p` can take (numbers as a range, strings as nothing known).
fn range_of(p: &Param) -> Bound {
    match &p.kind {
        Kind::Integer { low, high, .. } => Bound::Num(*low as f64, *high as f64),
        Kind::Real { low, high, .. } => Bound::Num(*low, *high),
        Kind::Boolean => Bound::AnyBool,
        Kind::Categorical(_) | Kind::Permutation(_) | Kind::Open(_) => Bound::Any,
        Kind::Ordinal(v) => {
            let nums: Option<Vec<f64>> = (0..v.len())
                .map(|j| match p.val(j as f64) {
                    Some(Val::Num(x)) => Some(x),
                    _ => None,
                })
                .collect();
            match nums {
                Some(x) if !x.is_empty() => Bound::Num(
                    x.iter().copied().fold(f64::INFINITY, f64::min),
                    x.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ),
                _ => Bound::Any,
            }
        }
    }
}

#[cfg(test)]
mod tests;
