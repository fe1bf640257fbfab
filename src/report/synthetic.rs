//! The synthetic tables `moldtune replay --synthetic` adds to the recorded ones: every
//! configuration of a small space with a known function (branin on a grid, a tile-size-like
//! space with a failure region), each recording no cost (their seconds are the learner's).

use crate::evaluate::outcome::{Measurement, Status};
use crate::problem::param::{Condition, Kind, Param, Scalar};
use crate::problem::space::{Config, Space};
use crate::problem::Goal;
use crate::report::replay::Table;

fn ordinal(name: &str, n: usize) -> Param {
    Param {
        name: name.into(),
        kind: Kind::Ordinal((0..n as i64).map(Scalar::Int).collect()),
        default: 0.0,
        condition: None,
    }
}

fn table_from(name: &str, space: Space, goal: Goal, f: impl Fn(&Config) -> Option<f64>) -> Table {
    let rows = space
        .enumerate()
        .expect("synthetic spaces are enumerable")
        .into_iter()
        .map(|c| {
            let m = match f(&c) {
                // A synthetic function records no cost: its seconds are the learner's alone.
                Some(y) => Measurement {
                    run_s: 0.0,
                    ..Measurement::single(y)
                },
                None => Measurement::failed(
                    Status::BuildError,
                    0.0,
                    0.0,
                    "synthetic build failure".into(),
                ),
            };
            (c, m)
        })
        .collect();
    Table {
        name: name.into(),
        space,
        rows,
        goal,
    }
}

/// Branin on a 64×64 grid over [−5, 10] × [0, 15], shifted to be positive (min ≈ 1.398).
pub fn branin() -> Table {
    let space = Space {
        params: vec![ordinal("X0", 64), ordinal("X1", 64)],
        order: vec![0, 1],
        forbidden: vec![],
        constraints: vec![],
    };
    table_from("branin (64x64 grid)", space, Goal::Minimize, |c| {
        let x = -5.0 + 15.0 * c.0[0] / 63.0;
        let y = 15.0 * c.0[1] / 63.0;
        let pi = std::f64::consts::PI;
        let b = 5.1 / (4.0 * pi * pi);
        Some(
            (y - b * x * x + 5.0 / pi * x - 6.0).powi(2)
                + 10.0 * (1.0 - 1.0 / (8.0 * pi)) * x.cos()
                + 10.0
                + 1.0,
        )
    })
}

/// A tile-size-like space: four tile sizes over the paper's 11-value list, a 3-way loop
/// order, an unroll choice active only for one order; a cache-model run time; configurations
/// whose two inner tiles are both large "do not compile" (about a quarter of the space).
pub fn tiles() -> Table {
    let sizes = [
        4.0, 8.0, 16.0, 20.0, 32.0, 50.0, 64.0, 80.0, 96.0, 100.0, 128.0,
    ];
    let mut params: Vec<Param> = (0..4).map(|i| ordinal(&format!("T{i}"), 11)).collect();
    params.push(ordinal("ORDER", 3));
    let mut unroll = ordinal("UNROLL", 3);
    unroll.condition = Some(Condition {
        parent: 4,
        values: vec![1.0],
    });
    params.push(unroll);
    let space = Space {
        params,
        order: vec![0, 1, 2, 3, 4, 5],
        forbidden: vec![],
        constraints: vec![],
    };
    table_from(
        "tiles (synthetic, 25% fail)",
        space,
        Goal::Minimize,
        move |c| {
            let t: Vec<f64> = (0..4).map(|i| sizes[c.0[i] as usize]).collect();
            if c.0[2] + c.0[3] >= 14.0 {
                return None;
            }
            let footprint = t[0] * t[1] + t[1] * t[2] + t[0] * t[2];
            let cache = 1.0 + ((footprint / 4096.0).ln()).powi(2) * 0.15;
            let overhead = 1.0 + 2.0 / t[3] + 1.0 / t[0];
            let order = [1.0, 0.8, 1.3][c.0[4] as usize];
            let unroll = if c.0[5].is_nan() {
                1.0
            } else {
                [1.0, 0.93, 0.97][c.0[5] as usize]
            };
            Some(0.1 * cache * overhead * order * unroll)
        },
    )
}
