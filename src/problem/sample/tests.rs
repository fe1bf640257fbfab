//! The sampling law's tests: hierarchical draws, constraints, uniformity.

use super::*;
use crate::problem::expr;
use crate::problem::param::Condition;
use crate::problem::space::Constraint;
use std::collections::HashSet;

fn range(low: i64, high: i64) -> Kind {
    Kind::Integer {
        low,
        high,
        log: false,
    }
}

/// A space over `params` (parents listed before children) with `constraints`.
fn space(params: Vec<Param>, constraints: &[&str]) -> Space {
    let lookup = |n: &str| params.iter().position(|p| p.name == n);
    let constraints = constraints
        .iter()
        .map(|t| Constraint {
            text: t.to_string(),
            expr: expr::parse(t, &lookup).unwrap(),
        })
        .collect();
    Space {
        order: (0..params.len()).collect(),
        params,
        forbidden: vec![],
        constraints,
    }
}

/// TILE (boolean) with three 10-value tile sizes under `TILE = true`, and `extra`.
fn switch_space(extra: Kind) -> Space {
    let on = || {
        Some(Condition {
            parent: 0,
            values: vec![1.0],
        })
    };
    space(
        vec![
            Param::new("TILE", Kind::Boolean, None),
            Param::new("X", extra, None),
            Param::new("T1", Kind::ints(10), on()),
            Param::new("T2", Kind::ints(10), on()),
            Param::new("T3", Kind::ints(10), on()),
        ],
        &[],
    )
}

fn take_all(_: &Config) -> bool {
    true
}

#[test]
fn a_switch_is_a_coin_whatever_its_sub_space() {
    let s = switch_space(Kind::ints(3));
    let sampler = Sampler::new(&s);
    let mut rng = Rng::new(1);
    let off = (0..2000)
        .map(|_| sampler.draw(&mut rng, &take_all).found().unwrap())
        .filter(|c| c.0[0] == 0.0)
        .inspect(|c| assert!(c.0[2..].iter().all(|x| x.is_nan())))
        .count();
    assert!((900..=1100).contains(&off), "{off} of 2000 untiled");
}

#[test]
fn draws_are_valid_and_reproducible() {
    let mut s = space(
        vec![
            Param::new("P0", Kind::ints(4), None),
            Param::new("P1", Kind::ints(2), None),
            Param::new(
                "P2",
                range(1, 4),
                Some(Condition {
                    parent: 1,
                    values: vec![1.0],
                }),
            ),
        ],
        &["(P0 + 1) * P2 <= 6"],
    );
    s.forbidden = vec![vec![(0, 0.0), (1, 1.0)]];
    let sampler = Sampler::new(&s);
    let draws = |seed| {
        let mut rng = Rng::new(seed);
        (0..300)
            .map(|_| sampler.draw(&mut rng, &take_all).found().unwrap())
            .collect::<Vec<_>>()
    };
    let keys = |v: &[Config]| v.iter().map(Config::key).collect::<Vec<_>>();
    let a = draws(5);
    assert!(a.iter().all(|c| s.is_valid(c)));
    assert_eq!(keys(&a), keys(&draws(5)), "same seed, same draws");
    let distinct: HashSet<Vec<u64>> = a.iter().map(Config::key).collect();
    assert_eq!(distinct.len(), s.enumerate().unwrap().len());
}

/// Ten integers 1..=100 whose sum is at most 185: about 1 configuration in 10^4.
fn sum_space() -> Space {
    let params = (0..10)
        .map(|i| Param::new(&format!("P{i}"), range(1, 100), None))
        .collect();
    let sum: Vec<String> = (0..10).map(|i| format!("P{i}")).collect();
    space(params, &[&format!("{} <= 185", sum.join(" + "))])
}

#[test]
fn a_tight_constraint_in_a_huge_space_is_met_without_rejection() {
    let s = sum_space();
    let sampler = Sampler::new(&s);
    let mut rng = Rng::new(2);
    for _ in 0..200 {
        let c = sampler.draw(&mut rng, &take_all).found().expect("a draw");
        assert!(s.is_valid(&c), "{}", s.describe(&c));
    }
}

#[test]
fn a_complete_search_proves_exhaustion_and_a_cut_one_does_not() {
    // Four integers 1..=100 summing to at most 6: 15 configurations of 10^8.
    let params = (0..4)
        .map(|i| Param::new(&format!("P{i}"), range(1, 100), None))
        .collect();
    let s = space(params, &["P0 + P1 + P2 + P3 <= 6"]);
    let sampler = Sampler::new(&s);
    let mut rng = Rng::new(3);
    let seen = std::cell::RefCell::new(HashSet::new());
    let fresh = |c: &Config| !seen.borrow().contains(&c.key());
    while let Draw::Found(c) = sampler.search(&mut rng, &fresh, 1_000_000) {
        assert!(s.is_valid(&c));
        seen.borrow_mut().insert(c.key());
    }
    assert_eq!(seen.borrow().len(), 15);
    assert_eq!(sampler.draw(&mut rng, &fresh), Draw::Exhausted);

    // A real parameter cannot be tried exhaustively: no proof.
    let s = space(
        vec![Param::new(
            "R",
            Kind::Real {
                low: 0.0,
                high: 1.0,
                log: false,
            },
            None,
        )],
        &[],
    );
    let sampler = Sampler::new(&s);
    assert_eq!(sampler.search(&mut rng, &|_| false, 10_000), Draw::GaveUp);
}

#[test]
fn retries_never_repeat_a_value_and_follow_the_weights() {
    let p = Param::new(
        "U",
        Kind::Integer {
            low: 1,
            high: 64,
            log: true,
        },
        None,
    );
    let Values::Finite {
        weights: Some(w), ..
    } = values_of(&p)
    else {
        panic!("a log-uniform integer has weights");
    };
    let mut rng = Rng::new(4);
    let mut tried = vec![false; w.len()];
    for _ in 0..w.len() {
        let left = tried.iter().filter(|&&t| !t).count();
        let j = pick_untried(&tried, left, Some(&w), &mut rng);
        assert!(!tried[j]);
        tried[j] = true;
    }
    // The weights are the law of `draw_value`: P(1) = ln 2 / ln 65.
    let mut hits = 0;
    for _ in 0..20_000 {
        hits += (draw_value(&p, &mut rng) == 1.0) as usize;
    }
    let want = w[0] / w.iter().sum::<f64>();
    assert!(
        (hits as f64 / 20_000.0 - want).abs() < 0.02,
        "{hits} {want}"
    );
}
