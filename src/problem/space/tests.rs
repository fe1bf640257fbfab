//! The space's tests: enumeration, cells, hashes, encodings.

use super::*;
use crate::problem::expr;
use crate::problem::param::{Condition, Scalar};

pub(crate) fn small_space() -> Space {
    let params = vec![
        Param {
            name: "P0".into(),
            kind: Kind::Ordinal(vec![
                Scalar::Int(4),
                Scalar::Int(8),
                Scalar::Int(16),
                Scalar::Int(32),
            ]),
            default: 2.0,
            condition: None,
        },
        Param {
            name: "P1".into(),
            kind: Kind::Categorical(vec!["".into(), "#pragma omp interchange".into()]),
            default: 0.0,
            condition: None,
        },
        Param {
            name: "P2".into(),
            kind: Kind::Integer {
                low: 1,
                high: 4,
                log: false,
            },
            default: 1.0,
            condition: Some(Condition {
                parent: 1,
                values: vec![1.0],
            }),
        },
    ];
    let lookup = |n: &str| params.iter().position(|p| p.name == n);
    let e = expr::parse("P0 * P2 <= 64", &lookup).unwrap();
    Space {
        order: vec![0, 1, 2],
        forbidden: vec![vec![(0, 0.0), (1, 1.0)]],
        constraints: vec![Constraint {
            text: "P0 * P2 <= 64".into(),
            expr: e,
        }],
        params,
    }
}

#[test]
fn enumeration_honours_conditions_forbidden_and_constraints() {
    let s = small_space();
    let all = s.enumerate().unwrap();
    // P1 off: 4 configs (P2 inactive). P1 on: P0 in {8,16,32} (4 forbidden with it),
    // P2 with P0*P2<=64: 8->4 values, 16->4, 32->2 = 10.
    assert_eq!(all.len(), 14);
    assert!(all.iter().all(|c| s.is_valid(c)));
    assert!(all
        .iter()
        .filter(|c| c.0[1] == 0.0)
        .all(|c| c.0[2].is_nan()));
}

#[test]
fn cells_round_trip() {
    let s = small_space();
    for c in s.enumerate().unwrap() {
        let cells: Vec<String> = s.params.iter().zip(&c.0).map(|(p, &x)| p.cell(x)).collect();
        let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
        assert_eq!(s.parse_cells(&refs).unwrap().key(), c.key());
    }
}

#[test]
fn describe_and_hash_are_stable() {
    let s = small_space();
    let d = s.default_config();
    assert_eq!(s.describe(&d), "P0=16 P1='' P2=-");
    assert_eq!(s.hash(&d), s.hash(&d.clone()));
}
