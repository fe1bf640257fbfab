//! Values that have only ever failed, whatever they were combined with. For every value of
//! every discrete parameter (ordinal, categorical, boolean) the searcher counts the successes
//! and failures of the evaluated configurations that had it active, and the *contexts* of its
//! failures: the values the other discrete parameters had. A value is *condemned* when
//! * it has failed at least [`MIN_FAILURES`] times and never succeeded,
//! * in every context it was tried in: with at least [`contexts_needed`] different values of
//!   every other discrete parameter (half its values, at most [`CONTEXTS`]), so a value that
//!   fails with one or two loop orders is not a bad value — the failure belongs to the
//!   combination, which the feasibility classifier learns over whole configurations;
//! * and the rest of the parameter's evaluations make that unlikely to be bad luck: with `s`
//!   the smoothed success rate of its other values ((successes + 1) / (evaluations + 2)),
//!   `(1 − s)^failures` < [`ALPHA`].
//!
//! A proposal with a condemned value is not drawn by the initial design, the random steps or
//! the model's pool while anything else can be; the value is tried again only deliberately, as
//! an *exploration* (source `explore`) once [`RETRY_AFTER`] × 2^(failures − [`MIN_FAILURES`])
//! evaluations have passed since it was last tried, in the context most unlike those it failed
//! in ([`Condemned::fresh`]), so a value condemned by bad luck or by its company is found
//! again.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::problem::param::Kind;

use crate::problem::space::{Config, Space};

/// The fewest failures that condemn a value.
pub const MIN_FAILURES: u32 = 3;
/// How unlikely the failures must be, were the value as good as the parameter's others.
pub const ALPHA: f64 = 0.01;
/// Evaluations between a condemnation (at [`MIN_FAILURES`]) and its first re-test.
pub const RETRY_AFTER: usize = 15;
/// The most distinct values of another parameter a value must have failed with.
pub const CONTEXTS: usize = 3;

#[derive(Debug, Clone, Default)]
struct Tally {
    ok: u32,
    failed: u32,
    /// The number of evaluations told when it was last evaluated.
    last: usize,
    /// Per other discrete parameter, the values it had in this value's failures.
    contexts: BTreeMap<usize, HashSet<u64>>,
}

/// How many distinct values of parameter `j` a value must have failed with to be condemned:
/// half of them (rounded up), at most [`CONTEXTS`].
pub fn contexts_needed(space: &Space, j: usize) -> usize {
    let n = space.params[j].cardinality().unwrap_or(u128::MAX);
    (n.div_ceil(2)).min(CONTEXTS as u128) as usize
}

/// The books: per (parameter, value) the outcomes of the configurations that had it.
#[derive(Debug, Default)]
pub struct Condemned {
    tallies: HashMap<(usize, u64), Tally>,
    /// Evaluations told (not lost).
    told: usize,
    /// The values condemned now, judged again at every outcome (a pool asks about each of
    /// its candidates).
    now: HashSet<(usize, u64)>,
}

/// Whether parameter `i` is counted: a discrete one.
fn discrete(space: &Space, i: usize) -> bool {
    !matches!(
        space.params[i].kind,
        Kind::Integer { .. } | Kind::Real { .. }
    )
}

impl Condemned {
    /// An evaluation's outcome (`usable`: it succeeded, or counts as if).
    pub fn tell(&mut self, space: &Space, config: &Config, usable: bool) {
        self.told += 1;
        let active: Vec<(usize, u64)> = (config.0.iter().enumerate())
            .filter(|&(i, x)| !x.is_nan() && discrete(space, i))
            .map(|(i, x)| (i, x.to_bits()))
            .collect();
        for &(i, x) in &active {
            let t = self.tallies.entry((i, x)).or_default();
            match usable {
                true => t.ok += 1,
                false => t.failed += 1,
            }
            t.last = self.told;
            if !usable {
                for &(j, w) in active.iter().filter(|&&(j, _)| j != i) {
                    t.contexts.entry(j).or_default().insert(w);
                }
            }
        }
        self.now = (self.tallies.keys())
            .filter(|&&(i, v)| self.condemned(space, i, f64::from_bits(v)))
            .copied()
            .collect();
    }

    /// Whether value `x` of parameter `i` is condemned.
    fn condemned(&self, space: &Space, i: usize, x: f64) -> bool {
        let Some(t) = self.tallies.get(&(i, x.to_bits())) else {
            return false;
        };
        if t.ok > 0 || t.failed < MIN_FAILURES {
            return false;
        }
        let varied = (t.contexts.iter()).all(|(&j, seen)| seen.len() >= contexts_needed(space, j));
        if !varied {
            return false;
        }
        let (mut ok, mut n) = (0u32, 0u32);
        for (&(j, v), u) in &self.tallies {
            if j == i && v != x.to_bits() {
                ok += u.ok;
                n += u.ok + u.failed;
            }
        }
        let s = f64::from(ok + 1) / f64::from(n + 2);
        (1.0 - s).powi(t.failed as i32) < ALPHA
    }

    /// Whether `config` has a condemned value.
    pub fn vetoes(&self, config: &Config) -> bool {
        !self.now.is_empty()
            && (config.0.iter().enumerate())
                .any(|(i, &x)| !x.is_nan() && self.now.contains(&(i, x.to_bits())))
    }

    /// How unlike the contexts of value `x` of parameter `i`'s failures `config` is: the
    /// number of other parameters whose value in it the failures never had.
    pub fn fresh(&self, i: usize, x: f64, config: &Config) -> usize {
        let Some(t) = self.tallies.get(&(i, x.to_bits())) else {
            return 0;
        };
        (t.contexts.iter())
            .filter(|(&j, seen)| {
                let w = config.0[j];
                !w.is_nan() && !seen.contains(&w.to_bits())
            })
            .count()
    }

    /// A condemned value due for its re-test, if one is (the first by parameter and value).
    pub fn due(&self) -> Option<(usize, f64)> {
        let mut due: Vec<(usize, f64)> = (self.tallies.iter())
            .filter(|(&(i, v), t)| {
                let wait = RETRY_AFTER << (t.failed.saturating_sub(MIN_FAILURES)).min(16);
                self.now.contains(&(i, v)) && self.told >= t.last + wait
            })
            .map(|(&(i, v), _)| (i, f64::from_bits(v)))
            .collect();
        due.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        due.into_iter().next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::param::{Param, Scalar};

    fn space() -> Space {
        let p = |name: &str| Param {
            name: name.into(),
            kind: Kind::Ordinal(vec![Scalar::Int(0), Scalar::Int(1)]),
            default: 0.0,
            condition: None,
        };
        Space {
            params: vec![p("A"), p("B")],
            order: vec![0, 1],
            forbidden: vec![],
            constraints: vec![],
        }
    }

    #[test]
    fn a_value_that_only_fails_where_its_sibling_succeeds_is_condemned_then_retried() {
        let s = space();
        let mut c = Condemned::default();
        for _ in 0..8 {
            c.tell(&s, &Config(vec![0.0, 0.0]), true);
        }
        c.tell(&s, &Config(vec![1.0, 1.0]), false);
        c.tell(&s, &Config(vec![1.0, 0.0]), false);
        assert!(
            !c.vetoes(&Config(vec![1.0, 0.0])),
            "two failures condemn nothing"
        );
        c.tell(&s, &Config(vec![1.0, 0.0]), false);
        // A=1 failed three times, A=0 succeeded 8 of 8: (1 − 9/10)³ = 0.001 < 0.01.
        assert!(c.vetoes(&Config(vec![1.0, 0.0])));
        // B=1 failed once only; B=0 has succeeded.
        assert!(!c.vetoes(&Config(vec![0.0, 1.0])));
        assert_eq!(c.due(), None);
        for _ in 0..RETRY_AFTER * 2 {
            c.tell(&s, &Config(vec![0.0, 0.0]), true);
        }
        assert_eq!(c.due(), Some((0, 1.0)));
        c.tell(&s, &Config(vec![1.0, 0.0]), true);
        assert!(!c.vetoes(&Config(vec![1.0, 0.0])), "a success lifts it");
    }

    #[test]
    fn failures_everywhere_condemn_nothing() {
        let s = space();
        let mut c = Condemned::default();
        for a in [0.0, 1.0, 0.0, 1.0] {
            c.tell(&s, &Config(vec![a, 0.0]), false);
        }
        // Each value of A failed twice, but so did the other: nothing to tell them apart.
        assert!(!c.vetoes(&Config(vec![1.0, 0.0])));
        assert!(c.now.is_empty());
    }

    /// A parallel setting (A, two values) that races with two of six loop orders (B).
    fn loops() -> Space {
        let p = |name: &str, n: i64| Param {
            name: name.into(),
            kind: Kind::Ordinal((0..n).map(Scalar::Int).collect()),
            default: 0.0,
            condition: None,
        };
        Space {
            params: vec![p("A", 2), p("B", 6)],
            order: vec![0, 1],
            forbidden: vec![],
            constraints: vec![],
        }
    }

    #[test]
    fn a_value_that_fails_with_two_loop_orders_is_not_a_bad_value() {
        // Issue 57: every failure of A=1 so far was with a loop order that puts the reduction
        // outermost; the value books condemned A=1, and with it the optimum (A=1 with another
        // order).
        let s = loops();
        let mut c = Condemned::default();
        for b in 0..6 {
            c.tell(&s, &Config(vec![0.0, f64::from(b)]), true);
            c.tell(&s, &Config(vec![0.0, f64::from(b)]), true);
        }
        for b in [4.0, 5.0, 4.0, 5.0, 4.0] {
            c.tell(&s, &Config(vec![1.0, b]), false);
        }
        assert!(!c.vetoes(&Config(vec![1.0, 0.0])), "two contexts of six");
        // A third loop order fails too: half of them, so A=1 is condemned ...
        c.tell(&s, &Config(vec![1.0, 2.0]), false);
        assert!(c.vetoes(&Config(vec![1.0, 0.0])));
        // ... and re-tested where it has not failed.
        assert_eq!(c.fresh(0, 1.0, &Config(vec![1.0, 0.0])), 1);
        assert_eq!(c.fresh(0, 1.0, &Config(vec![1.0, 4.0])), 0);
    }
}
