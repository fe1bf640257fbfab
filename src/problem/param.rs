//! One parameter of the space: its kind and values (a value as written, the open values
//! mctree adds as its tree grows), its condition, and how one of its coordinates reads — as
//! text, a CSV cell, JSON, a typed value — and is encoded for the models.

use crate::problem::expr::Val;
use crate::problem::permutation::Permutation;

/// A value as written in the problem file (ordinal values may be numbers or strings).
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Int(i64),
    Real(f64),
    Str(String),
    Bool(bool),
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Real(x) => write!(f, "{x}"),
            Scalar::Str(s) => write!(f, "{s}"),
            Scalar::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// The values of an open categorical parameter: added while a search runs (mctree's
/// transformation stacks are found as its tree grows), shared by the space and the strategy
/// that adds them. A value's coordinate is the order of its first appearance.
#[derive(Debug, Clone, Default)]
pub struct OpenValues(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl OpenValues {
    fn list(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The coordinate of `value`, added if it is new.
    pub fn intern(&self, value: &str) -> f64 {
        let mut v = self.list();
        let i = v.iter().position(|x| x == value).unwrap_or_else(|| {
            v.push(value.to_string());
            v.len() - 1
        });
        i as f64
    }

    /// The value at `coord` ("" for a coordinate never handed out).
    pub fn get(&self, coord: f64) -> String {
        self.list().get(coord as usize).cloned().unwrap_or_default()
    }

    pub fn len(&self) -> usize {
        self.list().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PartialEq for OpenValues {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Ordinal(Vec<Scalar>),
    Categorical(Vec<String>),
    /// An order of items ([`Permutation`]): a categorical over its orders' texts whose
    /// models see the orders' pairs.
    Permutation(Permutation),
    /// A categorical parameter whose values are not known in advance ([`OpenValues`]); never
    /// written in a problem file.
    Open(OpenValues),
    Integer {
        low: i64,
        high: i64,
        log: bool,
    },
    Real {
        low: f64,
        high: f64,
        log: bool,
    },
    Boolean,
}

/// `name` is active only when parameter `parent` has one of the coordinates in `values`.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub parent: usize,
    pub values: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub kind: Kind,
    /// Default coordinate.
    pub default: f64,
    pub condition: Option<Condition>,
}

#[cfg(test)]
impl Kind {
    /// The ordinal `0, 1, …, n − 1` (tests build spaces from it).
    pub fn ints(n: i64) -> Kind {
        Kind::Ordinal((0..n).map(Scalar::Int).collect())
    }
}

impl Param {
    /// A parameter whose default is its first value (or its range's low end).
    pub fn new(name: &str, kind: Kind, condition: Option<Condition>) -> Param {
        Param {
            name: name.into(),
            kind,
            default: 0.0,
            condition,
        }
    }

    /// Number of distinct values, or `None` for a real range.
    pub fn cardinality(&self) -> Option<u128> {
        match &self.kind {
            Kind::Ordinal(v) => Some(v.len() as u128),
            Kind::Categorical(v) | Kind::Permutation(Permutation { texts: v, .. }) => {
                Some(v.len() as u128)
            }
            Kind::Integer { low, high, .. } => Some((high - low) as u128 + 1),
            Kind::Real { .. } | Kind::Open(_) => None,
            Kind::Boolean => Some(2),
        }
    }

    /// The text substituted for this parameter's marker in the mold ("" when inactive).
    pub fn text(&self, coord: f64) -> String {
        if coord.is_nan() {
            return String::new();
        }
        match &self.kind {
            Kind::Ordinal(v) => v[coord as usize].to_string(),
            Kind::Categorical(v) | Kind::Permutation(Permutation { texts: v, .. }) => {
                v[coord as usize].clone()
            }
            Kind::Open(v) => v.get(coord),
            Kind::Integer { .. } => format!("{}", coord as i64),
            Kind::Real { .. } => format!("{coord}"),
            Kind::Boolean => if coord != 0.0 { "1" } else { "0" }.to_string(),
        }
    }

    /// The value as written in results.csv (booleans as `true`/`false`, inactive as empty).
    pub fn cell(&self, coord: f64) -> String {
        match (&self.kind, coord.is_nan()) {
            (_, true) => String::new(),
            (Kind::Boolean, _) => (coord != 0.0).to_string(),
            _ => self.text(coord),
        }
    }

    /// The value given to command templates.
    pub fn json(&self, coord: f64) -> serde_json::Value {
        if coord.is_nan() {
            return serde_json::Value::String(String::new());
        }
        match &self.kind {
            Kind::Ordinal(v) => match &v[coord as usize] {
                Scalar::Int(i) => (*i).into(),
                Scalar::Real(x) => (*x).into(),
                Scalar::Str(s) => s.clone().into(),
                Scalar::Bool(b) => (*b).into(),
            },
            Kind::Categorical(v) | Kind::Permutation(Permutation { texts: v, .. }) => {
                v[coord as usize].clone().into()
            }
            Kind::Open(v) => v.get(coord).into(),
            Kind::Integer { .. } => (coord as i64).into(),
            Kind::Real { .. } => coord.into(),
            Kind::Boolean => (coord != 0.0).into(),
        }
    }

    /// The value seen by constraint expressions.
    pub fn val(&self, coord: f64) -> Option<Val> {
        if coord.is_nan() {
            return None;
        }
        Some(match &self.kind {
            Kind::Ordinal(v) => match &v[coord as usize] {
                Scalar::Int(i) => Val::Num(*i as f64),
                Scalar::Real(x) => Val::Num(*x),
                Scalar::Str(s) => Val::Str(s.clone()),
                Scalar::Bool(b) => Val::Bool(*b),
            },
            Kind::Categorical(v) | Kind::Permutation(Permutation { texts: v, .. }) => {
                Val::Str(v[coord as usize].clone())
            }
            Kind::Open(v) => Val::Str(v.get(coord)),
            Kind::Integer { .. } | Kind::Real { .. } => Val::Num(coord),
            Kind::Boolean => Val::Bool(coord != 0.0),
        })
    }

    /// The coordinate of a scalar written in the YAML (a default, a condition value, a
    /// forbidden value) or in a CSV cell; `None` if it is not a value of this parameter.
    pub fn coord_of(&self, s: &Scalar) -> Option<f64> {
        let as_f64 = |s: &Scalar| match s {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Real(x) => Some(*x),
            Scalar::Str(t) => t.trim().parse::<f64>().ok(),
            Scalar::Bool(_) => None,
        };
        match &self.kind {
            Kind::Ordinal(v) => v
                .iter()
                .position(|x| {
                    x == s
                        || (as_f64(x).is_some() && as_f64(x) == as_f64(s))
                        || x.to_string() == s.to_string()
                })
                .map(|i| i as f64),
            Kind::Permutation(p) => p.rank(&s.to_string()).map(|r| r as f64),
            Kind::Categorical(v) => {
                let t = s.to_string();
                v.iter().position(|x| *x == t).map(|i| i as f64)
            }
            Kind::Open(v) => Some(v.intern(&s.to_string())),
            Kind::Integer { low, high, .. } => {
                as_f64(s).filter(|x| x.fract() == 0.0 && *x >= *low as f64 && *x <= *high as f64)
            }
            Kind::Real { low, high, .. } => as_f64(s).filter(|x| *x >= *low && *x <= *high),
            Kind::Boolean => match s {
                Scalar::Bool(b) => Some(*b as u8 as f64),
                Scalar::Int(i @ (0 | 1)) => Some(*i as f64),
                Scalar::Str(t) if t == "true" || t == "1" => Some(1.0),
                Scalar::Str(t) if t == "false" || t == "0" => Some(0.0),
                _ => None,
            },
        }
    }

    /// The coordinate of a results.csv cell (inverse of [`Param::cell`] for active values).
    pub fn parse_cell(&self, cell: &str) -> Option<f64> {
        match &self.kind {
            Kind::Categorical(v) => v.iter().position(|x| x == cell).map(|i| i as f64),
            Kind::Permutation(p) => p.rank(cell).map(|r| r as f64),
            Kind::Open(v) => Some(v.intern(cell)),
            Kind::Ordinal(v) => v
                .iter()
                .position(|x| x.to_string() == cell)
                .map(|i| i as f64),
            _ => self.coord_of(&Scalar::Str(cell.to_string())),
        }
    }

    /// Feature value for the surrogate models: ordinal by index scaled to [0,1] (their order is
    /// kept), categorical by index (trees split on it), ranges scaled to [0,1] (log if log),
    /// booleans 0/1, inactive [`INACTIVE_FEATURE`]. Active values are never negative.
    pub fn encode(&self, coord: f64) -> f64 {
        if coord.is_nan() {
            return INACTIVE_FEATURE;
        }
        match &self.kind {
            Kind::Ordinal(v) if v.len() > 1 => coord / (v.len() - 1) as f64,
            Kind::Ordinal(_) => 0.0,
            Kind::Categorical(_) | Kind::Permutation(_) | Kind::Open(_) | Kind::Boolean => coord,
            Kind::Integer { low, high, log } => scale(coord, *low as f64, *high as f64, *log),
            Kind::Real { low, high, log } => scale(coord, *low, *high, *log),
        }
    }
}

/// `P0=32`, `P1='#pragma omp interchange'`, `P2=''`, `P3=-` (inactive).
pub(crate) fn name_value(p: &Param, x: f64) -> String {
    if x.is_nan() {
        return format!("{}=-", p.name);
    }
    let t = p.cell(x);
    if t.is_empty() || t.contains(char::is_whitespace) {
        format!("{}='{}'", p.name, t)
    } else {
        format!("{}={}", p.name, t)
    }
}

/// The feature value of an inactive parameter: below every active value (those are ≥ 0), so
/// one tree split can tell inactive from active.
pub const INACTIVE_FEATURE: f64 = -1.0;

fn scale(x: f64, low: f64, high: f64, log: bool) -> f64 {
    if high <= low {
        return 0.0;
    }
    if log && low > 0.0 {
        (x.ln() - low.ln()) / (high.ln() - low.ln())
    } else {
        (x - low) / (high - low)
    }
}
