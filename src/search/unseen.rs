//! What is left to propose: the configurations evaluated so far, random draws of new ones and
//! the candidate pools the models score.
//!
//! Every random draw follows one law, the hierarchical, constraint-aware one of
//! [`sample`](crate::problem::sample), whether the space is enumerated or only sampled. An
//! enumerated space (at most [`ENUMERATION_LIMIT`] raw points, or the rows of a replayed
//! table) is kept as a candidate set too: it answers "not yet evaluated" exactly, serves as
//! the pool when it holds no more than a pool's worth, and proves exhaustion when nothing is
//! left. A draw that is taken or not a candidate is drawn again (the sampler backtracks);
//! only when that fails does a candidate set fall back to a hierarchical choice among the
//! remaining candidates themselves.
//!
//! A space that is only sampled is declared exhausted only when a complete backtracking
//! search proves that no valid configuration is left unevaluated.
//!
//! [`ENUMERATION_LIMIT`]: crate::problem::space::ENUMERATION_LIMIT

use std::collections::{HashMap, HashSet};

use crate::problem::sample::{Draw, Sampler};
use crate::problem::space::{Config, Space};
use crate::rng::Rng;

/// Value assignments of the backtracking search that looks for any configuration left when
/// random draws found none (about a second at most).
const SEARCH_WORK: usize = 2_000_000;
/// Draws of a pool that may find nothing new before the pool is taken as complete.
const POOL_MISSES: usize = 16;

/// Why there is nothing to propose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoProposal {
    /// Every valid configuration has been evaluated: known exactly for a candidate set,
    /// proved by a complete backtracking search otherwise.
    Exhausted,
    /// Neither a new configuration nor a proof that none is left was found within the
    /// bounds of the search.
    NotFound,
}

/// A known, finite candidate set with the evaluated ones marked, so that filtering the
/// remaining ones costs no hashing or allocation per candidate and step.
struct Candidates {
    configs: Vec<Config>,
    index: HashMap<Vec<u64>, usize>,
    taken: Vec<bool>,
}

impl Candidates {
    fn new(configs: Vec<Config>) -> Candidates {
        let index = configs
            .iter()
            .enumerate()
            .map(|(i, c)| (c.key(), i))
            .collect();
        let taken = vec![false; configs.len()];
        Candidates {
            configs,
            index,
            taken,
        }
    }

    fn left(&self) -> Vec<usize> {
        (0..self.configs.len())
            .filter(|&i| !self.taken[i])
            .collect()
    }

    /// A remaining candidate chosen hierarchically among the remaining ones: parameter by
    /// parameter in `order`, a value uniformly among those that a remaining candidate agreeing
    /// with the values chosen so far has.
    fn hierarchical_left(&self, order: &[usize], rng: &mut Rng) -> Option<usize> {
        let mut left = self.left();
        // NaN-safe identity of a coordinate, as in `Config::key`.
        let bits = |j: usize, i: usize| {
            let x = self.configs[j].0[i];
            if x.is_nan() {
                u64::MAX
            } else {
                x.to_bits()
            }
        };
        for &i in order {
            if left.len() <= 1 {
                break;
            }
            let mut values: Vec<u64> = left.iter().map(|&j| bits(j, i)).collect();
            values.sort_unstable();
            values.dedup();
            let v = values[rng.below(values.len())];
            left.retain(|&j| bits(j, i) == v);
        }
        left.first().copied()
    }
}

/// The evaluated configurations and the means to draw new ones.
pub struct Unseen<'s> {
    space: &'s Space,
    sampler: Sampler<'s>,
    seen: HashSet<Vec<u64>>,
    /// All valid configurations when the space is small enough to enumerate (or the rows of
    /// a replayed table).
    all: Option<Candidates>,
}

impl<'s> Unseen<'s> {
    /// Nothing evaluated yet; `candidates`, when given, is every configuration there is.
    pub fn new(space: &'s Space, candidates: Option<Vec<Config>>) -> Unseen<'s> {
        Unseen {
            space,
            sampler: Sampler::new(space),
            seen: HashSet::new(),
            all: candidates.map(Candidates::new),
        }
    }

    /// Records an evaluated configuration.
    pub fn mark(&mut self, config: &Config) {
        let key = config.key();
        if let Some(a) = &mut self.all {
            if let Some(&i) = a.index.get(&key) {
                a.taken[i] = true;
            }
        }
        self.seen.insert(key);
    }

    /// Forgets an evaluation that did not happen (its job was lost): `config` may be drawn
    /// again.
    pub fn unmark(&mut self, config: &Config) {
        let key = config.key();
        if let Some(a) = &mut self.all {
            if let Some(&i) = a.index.get(&key) {
                a.taken[i] = false;
            }
        }
        self.seen.remove(&key);
    }

    pub fn is_seen(&self, config: &Config) -> bool {
        self.seen.contains(&config.key())
    }

    /// Whether `c` may be proposed at all: a candidate, or valid when there is no list.
    pub fn is_candidate(&self, c: &Config) -> bool {
        match &self.all {
            Some(all) => all.index.contains_key(&c.key()),
            None => self.space.is_valid(c),
        }
    }

    /// Whether a valid configuration drawn by the sampler may be proposed now: a candidate
    /// not yet evaluated.
    fn fresh(&self, c: &Config) -> bool {
        let key = c.key();
        match &self.all {
            Some(all) => all.index.get(&key).is_some_and(|&i| !all.taken[i]),
            None => !self.seen.contains(&key),
        }
    }

    /// A configuration not yet evaluated, drawn hierarchically.
    pub fn random(&self, rng: &mut Rng) -> Result<Config, NoProposal> {
        let fresh = |c: &Config| self.fresh(c);
        let draw = self.sampler.draw(rng, &fresh);
        match (draw, &self.all) {
            (Draw::Found(c), _) => Ok(c),
            (_, Some(all)) => all
                .hierarchical_left(&self.space.order, rng)
                .map(|j| all.configs[j].clone())
                .ok_or(NoProposal::Exhausted),
            (Draw::Exhausted, None) => Err(NoProposal::Exhausted),
            (Draw::GaveUp, None) => match self.sampler.search(rng, &fresh, SEARCH_WORK) {
                Draw::Found(c) => Ok(c),
                Draw::Exhausted => Err(NoProposal::Exhausted),
                Draw::GaveUp => Err(NoProposal::NotFound),
            },
        }
    }

    /// A pool of up to `size` distinct configurations not yet evaluated: every one left
    /// when a candidate set holds no more, else hierarchical draws.
    pub fn pool(&self, rng: &mut Rng, size: usize) -> Vec<Config> {
        if let Some(all) = &self.all {
            let mut left = all.left();
            if left.len() <= size {
                // Shuffled: a tree model predicts exactly equal values for many candidates,
                // and ties must not be broken by enumeration order.
                rng.shuffle(&mut left);
                return left.into_iter().map(|i| all.configs[i].clone()).collect();
            }
        }
        let mut out = Vec::with_capacity(size);
        let mut keys = HashSet::with_capacity(size);
        let mut misses = 0;
        while out.len() < size && misses < POOL_MISSES {
            let accept = |c: &Config| !keys.contains(&c.fingerprint()) && self.fresh(c);
            match self.sampler.draw(rng, &accept) {
                Draw::Found(c) => {
                    keys.insert(c.fingerprint());
                    out.push(c);
                }
                Draw::Exhausted => break,
                Draw::GaveUp => misses += 1,
            }
        }
        self.fill_pool(&mut out, &keys, rng, size);
        out
    }

    /// Tops a pool up with remaining candidates taken uniformly, when hierarchical draws
    /// rarely land on a candidate (a replayed table that covers a fraction of its space).
    fn fill_pool(&self, out: &mut Vec<Config>, keys: &HashSet<u64>, rng: &mut Rng, size: usize) {
        let Some(all) = &self.all else { return };
        if out.len() >= size {
            return;
        }
        let mut left = all.left();
        rng.shuffle(&mut left);
        for i in left {
            if out.len() >= size {
                break;
            }
            if !keys.contains(&all.configs[i].fingerprint()) {
                out.push(all.configs[i].clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::expr;
    use crate::problem::param::{Condition, Kind, Param};
    use crate::problem::space::Constraint;

    /// SWITCH with `tiles`³ configurations under `SWITCH = 1` and `x` beside it (and under it).
    fn switch_space(x: i64, tiles: i64) -> Space {
        let on = || {
            Some(Condition {
                parent: 0,
                values: vec![1.0],
            })
        };
        Space {
            params: vec![
                Param::new("SWITCH", Kind::Boolean, None),
                Param::new("X", Kind::ints(x), None),
                Param::new("A", Kind::ints(tiles), on()),
                Param::new("B", Kind::ints(tiles), on()),
                Param::new("C", Kind::ints(tiles), on()),
            ],
            order: vec![0, 1, 2, 3, 4],
            forbidden: vec![],
            constraints: vec![],
        }
    }

    /// Of 100 draws without repeats, how many have the switch off.
    fn off_in_100(space: &Space) -> usize {
        let mut u = Unseen::new(space, space.enumerate());
        let mut rng = Rng::new(9);
        let mut off = 0;
        for _ in 0..100 {
            let c = u.random(&mut rng).unwrap();
            assert!(!u.is_seen(&c));
            off += (c.0[0] == 0.0) as usize;
            u.mark(&c);
        }
        off
    }

    #[test]
    fn enumerated_and_sampled_spaces_draw_by_the_same_law() {
        // 2 × 100 × 1,000 = 200,000 raw points: enumerated; with 11 tile sizes: sampled.
        let small = switch_space(100, 10);
        assert!(small.enumerate().is_some());
        let large = switch_space(100, 11);
        assert!(large.enumerate().is_none());
        for space in [&small, &large] {
            let off = off_in_100(space);
            assert!((35..=65).contains(&off), "{off} of 100 off");
        }
    }

    #[test]
    fn pools_are_distinct_and_unseen_and_whole_when_little_is_left() {
        let space = switch_space(8, 10);
        let mut u = Unseen::new(&space, space.enumerate());
        let mut rng = Rng::new(1);
        let first = u.pool(&mut rng, 500);
        assert_eq!(first.len(), 500);
        for c in &first[..300] {
            u.mark(c);
        }
        let keys: HashSet<Vec<u64>> = u.pool(&mut rng, 500).iter().map(Config::key).collect();
        assert_eq!(keys.len(), 500);
        assert!(first[..300].iter().all(|c| !keys.contains(&c.key())));
        // 8,008 valid configurations, 300 seen: a pool of 10,000 is everything left.
        assert_eq!(u.pool(&mut rng, 10_000).len(), 8_008 - 300);
    }

    #[test]
    fn a_sampled_space_is_exhausted_only_when_proved() {
        // Three integers 1..=100 (10^6 raw points, never enumerated) summing to at most 5:
        // 10 valid configurations.
        let params = (0..3)
            .map(|i| {
                let kind = Kind::Integer {
                    low: 1,
                    high: 100,
                    log: false,
                };
                Param::new(&format!("P{i}"), kind, None)
            })
            .collect::<Vec<_>>();
        let text = "P0 + P1 + P2 <= 5";
        let expr = expr::parse(text, &|n| params.iter().position(|p| p.name == n)).unwrap();
        let space = Space {
            params,
            order: vec![0, 1, 2],
            forbidden: vec![],
            constraints: vec![Constraint {
                text: text.into(),
                expr,
            }],
        };
        assert!(space.enumerate().is_none());
        let mut u = Unseen::new(&space, None);
        let mut rng = Rng::new(2);
        for _ in 0..10 {
            let c = u.random(&mut rng).unwrap();
            u.mark(&c);
        }
        assert!(u.pool(&mut rng, 100).is_empty());
        assert_eq!(u.random(&mut rng), Err(NoProposal::Exhausted));
    }
}
