//! `--set P=V`: a configuration written on the command line, as overrides of a base
//! configuration (the default, or an evaluation of a run).
//!
//! A value is read as the parameter's own values are written in the problem file:
//! `--set P0=32`, `--set VEC=true`, `--set P2='#pragma omp interchange'`, `--set P2=` for
//! the empty choice (the shell removes the quotes; quotes that reach moldtune are removed
//! too). The result must be a configuration the search could propose: every parameter that
//! is set is active, and the constraints and forbidden combinations hold. Anything else is
//! a usage error that names the value and what is allowed.

use crate::error::{did_you_mean, Error};
use crate::problem::param::{Kind, Param, Scalar};
use crate::problem::space::{Config, Space};

/// `base` with the `P=V` assignments of `sets` applied; inactive parameters of `base` that
/// a new value activates take their defaults.
pub fn apply(space: &Space, base: &Config, sets: &[String]) -> Result<Config, Error> {
    let mut coords: Vec<f64> = (base.0.iter().zip(&space.params))
        .map(|(&x, p)| if x.is_nan() { p.default } else { x })
        .collect();
    let mut set = Vec::new();
    for s in sets {
        let (i, coord) = parse(space, s)?;
        coords[i] = coord;
        set.push(i);
    }
    let mut c = Config(coords);
    space.apply_conditions(&mut c);
    if let Some(&i) = set.iter().find(|&&i| c.0[i].is_nan()) {
        return Err(inactive(space, &c, i));
    }
    match space.violation(&c) {
        None => Ok(c),
        Some(why) => Err(Error::usage(
            format!(
                "the configuration `{}` is not valid: {why}",
                space.describe(&c)
            ),
            Some("change a `--set`, or set another parameter as well"),
        )),
    }
}

/// One `P=V`: the parameter's index and the value's coordinate.
fn parse(space: &Space, s: &str) -> Result<(usize, f64), Error> {
    let Some((name, value)) = s.split_once('=') else {
        return Err(Error::usage(
            format!("`--set {s}` is not of the form P=V"),
            Some("e.g. `--set P0=32`, or `--set P2=` for an empty value"),
        ));
    };
    let names = || space.params.iter().map(|p| p.name.as_str());
    let Some(i) = space.index_of(name) else {
        let hint = match did_you_mean(name, names()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("parameters are {}", backticked(names())),
        };
        return Err(Error::Usage {
            message: format!("`--set {s}`: there is no parameter `{name}`"),
            hint: Some(hint),
        });
    };
    let p = &space.params[i];
    match coord(p, value) {
        Some(c) => Ok((i, c)),
        None => Err(Error::Usage {
            message: format!("`--set {s}`: `{value}` is not a value of `{name}`"),
            hint: Some(allowed(p)),
        }),
    }
}

/// The coordinate of `value` (quotes around it removed if it is not a value as it is).
fn coord(p: &Param, value: &str) -> Option<f64> {
    let of = |v: &str| p.coord_of(&Scalar::Str(v.to_string()));
    of(value).or_else(|| {
        let unquoted = (value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .or_else(|| value.strip_prefix('"').and_then(|v| v.strip_suffix('"')))?;
        of(unquoted)
    })
}

/// What `p` accepts, as a hint.
fn allowed(p: &Param) -> String {
    match &p.kind {
        Kind::Ordinal(v) => format!(
            "choose one of {}",
            backticked(v.iter().map(|x| x.to_string()))
        ),
        Kind::Categorical(v) => format!("choose one of {}", backticked(v.iter())),
        Kind::Permutation(p) => p.describe(),
        Kind::Open(_) => "any text".into(),
        Kind::Integer { low, high, .. } => format!("an integer from {low} to {high}"),
        Kind::Real { low, high, .. } => format!("a number from {low} to {high}"),
        Kind::Boolean => "`true` or `false`".into(),
    }
}

/// `P4` set, but its condition is false in `c`.
fn inactive(space: &Space, c: &Config, i: usize) -> Error {
    let p = &space.params[i];
    let cond = p
        .condition
        .as_ref()
        .expect("only a conditional parameter is inactive");
    let parent = &space.params[cond.parent];
    let values = backticked(cond.values.iter().map(|&v| parent.cell(v)));
    Error::Usage {
        message: format!(
            "`{}` is inactive in this configuration: it is active only when `{}` is one of {values} (here `{}`)",
            p.name,
            parent.name,
            shell_word(&parent.cell(c.0[cond.parent]))
        ),
        hint: Some(format!(
            "set `{}` as well: `--set {}={}`",
            parent.name,
            parent.name,
            shell_word(&parent.cell(cond.values[0]))
        )),
    }
}

/// "`a`, `b`, `''`" (the empty value shown as `''`).
fn backticked<S: AsRef<str>>(items: impl Iterator<Item = S>) -> String {
    let v: Vec<String> = items
        .map(|s| format!("`{}`", shell_word(s.as_ref())))
        .collect();
    v.join(", ")
}

/// A value as it is typed after `--set P=`: quoted when empty or holding whitespace.
fn shell_word(v: &str) -> String {
    if v.is_empty() || v.contains(char::is_whitespace) {
        format!("'{v}'")
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::param::{Condition, Param};

    /// OPT categorical (with an empty choice), VEC boolean, T in 1..=8 active when VEC;
    /// `{OPT: -O0, VEC: true}` is forbidden.
    fn space() -> Space {
        let params = vec![
            Param {
                name: "OPT".into(),
                kind: Kind::Categorical(vec!["-O0".into(), "-O3".into(), "".into()]),
                default: 1.0,
                condition: None,
            },
            Param {
                name: "VEC".into(),
                kind: Kind::Boolean,
                default: 0.0,
                condition: None,
            },
            Param {
                name: "T".into(),
                kind: Kind::Integer {
                    low: 1,
                    high: 8,
                    log: false,
                },
                default: 2.0,
                condition: Some(Condition {
                    parent: 1,
                    values: vec![1.0],
                }),
            },
        ];
        Space {
            params,
            order: vec![0, 1, 2],
            forbidden: vec![vec![(0, 0.0), (1, 1.0)]],
            constraints: vec![],
        }
    }

    fn set(sets: &[&str]) -> Result<String, String> {
        let s = space();
        let sets: Vec<String> = sets.iter().map(|x| x.to_string()).collect();
        apply(&s, &s.default_config(), &sets)
            .map(|c| s.describe(&c))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn values_read_as_the_parameter_writes_them() {
        assert_eq!(set(&[]).unwrap(), "OPT=-O3 VEC=false T=-");
        assert_eq!(set(&["VEC=true"]).unwrap(), "OPT=-O3 VEC=true T=2");
        assert_eq!(
            set(&["VEC=1", "T=8", "OPT="]).unwrap(),
            "OPT='' VEC=true T=8"
        );
        assert_eq!(set(&["OPT='-O0'"]).unwrap(), "OPT=-O0 VEC=false T=-");
    }

    #[test]
    fn mistakes_name_the_value_and_what_is_allowed() {
        let e = set(&["OPT=-O2"]).unwrap_err();
        assert!(
            e.contains("`-O2` is not a value of `OPT`") && e.contains("`-O0`, `-O3`, `''`"),
            "{e}"
        );
        let e = set(&["VECT=true"]).unwrap_err();
        assert!(
            e.contains("no parameter `VECT`") && e.contains("did you mean `VEC`?"),
            "{e}"
        );
        let e = set(&["T=4"]).unwrap_err();
        assert!(
            e.contains("`T` is inactive") && e.contains("--set VEC=true"),
            "{e}"
        );
        let e = set(&["T=9", "VEC=true"]).unwrap_err();
        assert!(e.contains("an integer from 1 to 8"), "{e}");
        let e = set(&["OPT=-O0", "VEC=true"]).unwrap_err();
        assert!(
            e.contains("forbidden combination `OPT=-O0 VEC=true`"),
            "{e}"
        );
        assert!(set(&["OPT"]).unwrap_err().contains("not of the form P=V"));
    }
}
