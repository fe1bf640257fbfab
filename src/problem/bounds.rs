//! Bounds on constraint expressions while a configuration is being drawn: given the values of
//! the parameters drawn so far and the range of values each other parameter can still take,
//! can a constraint still hold? The sampler asks after every parameter it draws, so that a
//! prefix no completion can repair (e.g. `P0 + … + P9 <= 185` after `P0 = 99, P1 = 95`) is
//! abandoned at once rather than after every remaining parameter has been tried — the forward
//! checking with interval bounds of constraint solvers.
//!
//! Sound, not complete: [`may_hold`] answers `false` only when every completion makes the
//! expression false or fail to evaluate (both reject a configuration, see
//! [`Space::is_valid`](crate::problem::space::Space::is_valid)). What it cannot bound — strings,
//! `%`, a division by a range holding 0, a parameter that may be inactive (a constraint that
//! reads an inactive parameter does not apply) — leaves the answer `true`.

use crate::problem::expr::{apply, num, truthy, Expr, Op, Val};

/// What is known of a value while a configuration is drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// Exactly this value (a parameter already drawn, a literal).
    Known(Val),
    /// A number in `[lo, hi]`.
    Num(f64, f64),
    /// `true` or `false`.
    AnyBool,
    /// Nothing useful (e.g. any of several strings).
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tri {
    True,
    False,
    Maybe,
}

impl Tri {
    fn of(b: bool) -> Tri {
        if b {
            Tri::True
        } else {
            Tri::False
        }
    }

    fn bound(self) -> Bound {
        match self {
            Tri::True => Bound::Known(Val::Bool(true)),
            Tri::False => Bound::Known(Val::Bool(false)),
            Tri::Maybe => Bound::AnyBool,
        }
    }
}

/// Whether `e` may still hold, with `get` giving each parameter's bound, or `None` for a
/// parameter that is or may become inactive.
pub fn may_hold(e: &Expr, get: &impl Fn(usize) -> Option<Bound>) -> bool {
    bound(e, get).is_none_or(|b| truth(&b) != Tri::False)
}

/// The bound of `e`, `None` if it reads a parameter that may be inactive.
fn bound(e: &Expr, get: &impl Fn(usize) -> Option<Bound>) -> Option<Bound> {
    Some(match e {
        Expr::Lit(v) => Bound::Known(v.clone()),
        Expr::Param(i) => get(*i)?,
        Expr::Neg(a) => match numeric(&bound(a, get)?) {
            Some((lo, hi)) => interval(-hi, -lo),
            None => Bound::Any,
        },
        Expr::Not(a) => match truth(&bound(a, get)?) {
            Tri::True => Tri::False.bound(),
            Tri::False => Tri::True.bound(),
            Tri::Maybe => Bound::AnyBool,
        },
        Expr::Bin(Op::Or, a, b) => {
            let (x, y) = (truth(&bound(a, get)?), truth(&bound(b, get)?));
            match (x, y) {
                (Tri::True, _) | (_, Tri::True) => Tri::True.bound(),
                (Tri::False, Tri::False) => Tri::False.bound(),
                _ => Bound::AnyBool,
            }
        }
        Expr::Bin(Op::And, a, b) => {
            let (x, y) = (truth(&bound(a, get)?), truth(&bound(b, get)?));
            match (x, y) {
                (Tri::False, _) | (_, Tri::False) => Tri::False.bound(),
                (Tri::True, Tri::True) => Tri::True.bound(),
                _ => Bound::AnyBool,
            }
        }
        Expr::Bin(op, a, b) => binary(*op, &bound(a, get)?, &bound(b, get)?),
    })
}

/// `x op y` for an arithmetic or comparison operator.
fn binary(op: Op, x: &Bound, y: &Bound) -> Bound {
    if let (Bound::Known(a), Bound::Known(b)) = (x, y) {
        // An error rejects every completion; `Any` claims nothing, which is never wrong.
        return apply(op, a, b).map_or(Bound::Any, Bound::Known);
    }
    let (Some((a, b)), Some((c, d))) = (numeric(x), numeric(y)) else {
        // A string may be compared as text, or fail to parse: nothing to say.
        return if is_comparison(op) {
            Bound::AnyBool
        } else {
            Bound::Any
        };
    };
    match op {
        Op::Add => interval(a + c, b + d),
        Op::Sub => interval(a - d, b - c),
        Op::Mul => hull([a * c, a * d, b * c, b * d]),
        Op::Div if c > 0.0 || d < 0.0 => hull([a / c, a / d, b / c, b / d]),
        Op::Lt => compare(b < c, a >= d),
        Op::Le => compare(b <= c, a > d),
        Op::Gt => compare(a > d, b <= c),
        Op::Ge => compare(a >= d, b < c),
        Op::Eq => compare(a == b && c == d && a == c, b < c || d < a),
        Op::Ne => compare(b < c || d < a, a == b && c == d && a == c),
        _ => Bound::Any,
    }
}

fn is_comparison(op: Op) -> bool {
    matches!(op, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
}

/// A comparison's bound: `sure` when it holds for every value in the ranges, `never` when
/// for none.
fn compare(sure: bool, never: bool) -> Bound {
    if sure {
        Tri::True.bound()
    } else if never {
        Tri::False.bound()
    } else {
        Bound::AnyBool
    }
}

/// `[lo, hi]`, or nothing known if an end is NaN (0 × ∞, ∞ − ∞).
fn interval(lo: f64, hi: f64) -> Bound {
    if lo.is_nan() || hi.is_nan() {
        Bound::Any
    } else {
        Bound::Num(lo, hi)
    }
}

/// The smallest interval holding the four corner values of a product or quotient.
fn hull(v: [f64; 4]) -> Bound {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if v.iter().any(|x| x.is_nan()) {
        Bound::Any
    } else {
        interval(lo, hi)
    }
}

/// The numeric range a bound stands for, when it cannot be a string (a string may be
/// compared as text, so ranges say nothing about it).
fn numeric(b: &Bound) -> Option<(f64, f64)> {
    match b {
        Bound::Known(v @ (Val::Num(_) | Val::Bool(_))) => num(v).ok().map(|x| (x, x)),
        Bound::Num(lo, hi) => Some((*lo, *hi)),
        Bound::AnyBool => Some((0.0, 1.0)),
        Bound::Known(Val::Str(_)) | Bound::Any => None,
    }
}

fn truth(b: &Bound) -> Tri {
    match b {
        Bound::Known(v) => Tri::of(truthy(v)),
        Bound::Num(lo, hi) if *lo > 0.0 || *hi < 0.0 => Tri::True,
        Bound::Num(lo, hi) if *lo == 0.0 && *hi == 0.0 => Tri::False,
        _ => Tri::Maybe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::expr::parse;

    fn names(n: &str) -> Option<usize> {
        ["A", "B", "C", "S"].iter().position(|x| *x == n)
    }

    /// `may_hold` of `src` with A drawn as `a` and B, C in 1..=100, S any string.
    fn may(src: &str, a: f64) -> bool {
        let e = parse(src, &names).unwrap();
        may_hold(&e, &|i| {
            Some(match i {
                0 => Bound::Known(Val::Num(a)),
                3 => Bound::Any,
                _ => Bound::Num(1.0, 100.0),
            })
        })
    }

    #[test]
    fn prunes_only_what_no_completion_satisfies() {
        assert!(may("A + B + C <= 30", 28.0));
        assert!(!may("A + B + C <= 30", 29.0));
        assert!(may("A * B <= 25", 25.0));
        assert!(!may("A * B <= 25", 26.0));
        assert!(!may("A * B <= 25 and C > 0", 26.0));
        assert!(may("A * B <= 25 or S == 'x'", 26.0));
        assert!(may("A % B == 0", 7.0), "`%` is not bounded");
        assert!(
            may("A / (B - 1) > 0", -3.0),
            "a divisor range holding 0 bounds nothing"
        );
        assert!(!may("A / B > 200", 100.0));
        assert!(!may("not (A < B + 1000)", 5.0));
        assert!(may("B == 50", 0.0));
        assert!(!may("B == 500", 0.0));
        assert!(!may("-B > 0", 0.0));
    }

    #[test]
    fn a_parameter_that_may_be_inactive_bounds_nothing() {
        let e = parse("A + B <= 2", &names).unwrap();
        let get = |i: usize| (i == 0).then_some(Bound::Known(Val::Num(50.0)));
        assert!(may_hold(&e, &get));
    }
}
