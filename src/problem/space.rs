//! The parameter space: typed parameters, conditions, forbidden combinations and constraints;
//! validity, enumeration of small spaces, and the numeric encoding the surrogate models see.
//! Drawing random configurations is the [`sample`](crate::problem::sample) module's.
//!
//! A configuration is stored as one `f64` coordinate per parameter (an index for ordinal and
//! categorical parameters, the value for integer and real ones, 0/1 for booleans, NaN when the
//! parameter is inactive). That keeps candidate pools of 10,000 configurations cheap to build,
//! hash and encode.

use crate::problem::expr::{Expr, Val};
use crate::rng::fnv1a;

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
            Kind::Categorical(v) => Some(v.len() as u128),
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
            Kind::Categorical(v) => v[coord as usize].clone(),
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
            Kind::Categorical(v) => v[coord as usize].clone().into(),
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
            Kind::Categorical(v) => Val::Str(v[coord as usize].clone()),
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
            Kind::Categorical(_) | Kind::Open(_) | Kind::Boolean => coord,
            Kind::Integer { low, high, log } => scale(coord, *low as f64, *high as f64, *log),
            Kind::Real { low, high, log } => scale(coord, *low, *high, *log),
        }
    }
}

/// `P0=32`, `P1='#pragma omp interchange'`, `P2=''`, `P3=-` (inactive).
fn name_value(p: &Param, x: f64) -> String {
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

/// One configuration: a coordinate per parameter, NaN when inactive.
#[derive(Debug, Clone, PartialEq)]
pub struct Config(pub Vec<f64>);

impl Config {
    /// A 64-bit fingerprint of [`Config::key`], for fast de-duplication of candidate pools.
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for x in &self.0 {
            let b = if x.is_nan() { u64::MAX } else { x.to_bits() };
            h = (h ^ b).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
        }
        h
    }

    /// Exact identity for de-duplication (NaN-safe).
    pub fn key(&self) -> Vec<u64> {
        self.0
            .iter()
            .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Constraint {
    pub text: String,
    pub expr: Expr,
}

#[derive(Debug, Clone)]
pub struct Space {
    pub params: Vec<Param>,
    /// Parameter indices with every parent before its children.
    pub order: Vec<usize>,
    /// Each entry: a combination `(param, coord)` that may not occur together.
    pub forbidden: Vec<Vec<(usize, f64)>>,
    pub constraints: Vec<Constraint>,
}

/// Spaces with at most this many raw configurations are enumerated (exact bookkeeping of what
/// is left, exact "nothing left" detection); larger ones are only ever sampled. Random draws
/// follow the same law either way ([`sample`](crate::problem::sample)).
pub const ENUMERATION_LIMIT: u128 = 200_000;

/// What differs first between the values of two parameters of the same name: "values
/// `8, 32` here, `8, 64` there".
fn kind_difference(a: &Kind, b: &Kind) -> String {
    let list = |k: &Kind| -> String {
        match k {
            Kind::Ordinal(v) => v
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            Kind::Categorical(v) => v
                .iter()
                .map(|s| format!("\"{s}\""))
                .collect::<Vec<_>>()
                .join(", "),
            other => format!("{other:?}"),
        }
    };
    format!("values `{}` here, `{}` there", list(a), list(b))
}

impl Space {
    /// The first way `other` differs from this space in its parameters or their values
    /// (`None` when a configuration of one is a configuration of the other).
    pub fn first_difference(&self, other: &Space) -> Option<String> {
        for (k, p) in self.params.iter().enumerate() {
            let Some(q) = other.params.get(k) else {
                return Some(format!("parameter `{}` is not there", p.name));
            };
            if p.name != q.name {
                return Some(format!(
                    "parameter {} is `{}` here, `{}` there",
                    k + 1,
                    p.name,
                    q.name
                ));
            }
            if p.kind != q.kind {
                return Some(format!(
                    "parameter `{}`: {}",
                    p.name,
                    kind_difference(&p.kind, &q.kind)
                ));
            }
        }
        (other.params.get(self.params.len()))
            .map(|q| format!("parameter `{}` is there but not here", q.name))
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name == name)
    }

    pub fn default_config(&self) -> Config {
        let mut c = Config(self.params.iter().map(|p| p.default).collect());
        self.apply_conditions(&mut c);
        c
    }

    /// Whether parameter `i` is active, given its parent's coordinate in `c`.
    pub fn active(&self, c: &Config, i: usize) -> bool {
        match &self.params[i].condition {
            None => true,
            Some(cond) => {
                let v = c.0[cond.parent];
                !v.is_nan() && cond.values.contains(&v)
            }
        }
    }

    /// Sets the coordinates of inactive parameters to NaN (in dependency order).
    pub fn apply_conditions(&self, c: &mut Config) {
        for &i in &self.order {
            if !self.active(c, i) {
                c.0[i] = f64::NAN;
            }
        }
    }

    /// Whether a configuration with correct activity satisfies forbidden and constraints.
    /// A constraint that reads an inactive parameter does not apply (as ConfigSpace's
    /// forbidden clauses); one that fails to evaluate (type error) rejects.
    pub fn is_valid(&self, c: &Config) -> bool {
        (0..self.forbidden.len()).all(|k| !self.forbids(k, c))
            && (0..self.constraints.len()).all(|k| self.satisfies(k, c))
    }

    /// Why a configuration with correct activity is not valid: the first forbidden
    /// combination it contains or constraint it breaks; `None` when it is valid.
    pub fn violation(&self, c: &Config) -> Option<String> {
        if self.is_valid(c) {
            return None;
        }
        if let Some(combo) = (0..self.forbidden.len())
            .find(|&k| self.forbids(k, c))
            .map(|k| &self.forbidden[k])
        {
            let parts: Vec<String> = combo
                .iter()
                .map(|&(i, v)| name_value(&self.params[i], v))
                .collect();
            return Some(format!(
                "it holds the forbidden combination `{}`",
                parts.join(" ")
            ));
        }
        let broken =
            self.constraints
                .iter()
                .find(|k| match k.expr.eval(&|i| self.params[i].val(c.0[i])) {
                    Ok(v) => !crate::problem::expr::truthy(&v),
                    Err(e) => e != "inactive parameter",
                });
        Some(match broken {
            Some(k) => format!("the constraint `{}` is false for it", k.text),
            None => "it breaks a constraint".into(),
        })
    }

    /// Whether `c` holds every value of forbidden combination `k`.
    pub fn forbids(&self, k: usize, c: &Config) -> bool {
        self.forbidden[k].iter().all(|&(i, v)| c.0[i] == v)
    }

    /// Whether `c` satisfies constraint `k` (see [`Space::is_valid`]).
    pub fn satisfies(&self, k: usize, c: &Config) -> bool {
        match self.constraints[k]
            .expr
            .eval(&|i| self.params[i].val(c.0[i]))
        {
            Ok(v) => crate::problem::expr::truthy(&v),
            Err(e) => e == "inactive parameter",
        }
    }

    /// Number of raw configurations (ignoring conditions and constraints), `None` if a real
    /// parameter makes it infinite or it overflows.
    pub fn raw_size(&self) -> Option<u128> {
        self.params
            .iter()
            .try_fold(1u128, |acc, p| acc.checked_mul(p.cardinality()?))
    }

    /// All valid configurations, if the space is small enough to enumerate.
    pub fn enumerate(&self) -> Option<Vec<Config>> {
        let size = self.raw_size()?;
        if size > ENUMERATION_LIMIT {
            return None;
        }
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let n = self.params.len();
        let cards: Vec<u128> = self
            .params
            .iter()
            .map(|p| p.cardinality().unwrap())
            .collect();
        for mut k in 0..size {
            let mut c = Config(vec![0.0; n]);
            for i in (0..n).rev() {
                let d = (k % cards[i]) as f64;
                k /= cards[i];
                c.0[i] = match &self.params[i].kind {
                    Kind::Integer { low, .. } => *low as f64 + d,
                    _ => d,
                };
            }
            self.apply_conditions(&mut c);
            if self.is_valid(&c) && seen.insert(c.key()) {
                out.push(c);
            }
        }
        Some(out)
    }

    /// Maps a point of the unit cube (one coordinate per parameter) to a configuration, for
    /// Latin-hypercube designs; conditions are applied, validity is not checked.
    pub fn from_unit(&self, u: &[f64]) -> Config {
        let mut c = Config(
            self.params
                .iter()
                .zip(u)
                .map(|(p, &v)| {
                    let v = v.clamp(0.0, 1.0 - 1e-12);
                    match &p.kind {
                        Kind::Ordinal(x) => (v * x.len() as f64).floor(),
                        Kind::Categorical(x) => (v * x.len() as f64).floor(),
                        Kind::Open(x) => (v * x.len() as f64).floor(),
                        Kind::Boolean => (v * 2.0).floor(),
                        Kind::Integer { low, high, log } => {
                            let (a, b) = (*low as f64, (*high + 1) as f64);
                            let x = if *log && *low > 0 {
                                (a.ln() + v * (b.ln() - a.ln())).exp()
                            } else {
                                a + v * (b - a)
                            };
                            (x.floor() as i64).clamp(*low, *high) as f64
                        }
                        Kind::Real { low, high, log } => {
                            if *log && *low > 0.0 {
                                (low.ln() + v * (high.ln() - low.ln()))
                                    .exp()
                                    .clamp(*low, *high)
                            } else {
                                low + v * (high - low)
                            }
                        }
                    }
                })
                .collect(),
        );
        self.apply_conditions(&mut c);
        c
    }

    /// Which encoded features are categorical (compared by equality only).
    pub fn categorical_mask(&self) -> Vec<bool> {
        self.params
            .iter()
            .map(|p| matches!(p.kind, Kind::Categorical(_) | Kind::Open(_) | Kind::Boolean))
            .collect()
    }

    /// Features for the tree models: like [`Space::encode`], except that a categorical
    /// parameter with more than two choices becomes one 0/1 column per choice (−1 everywhere
    /// when inactive), so that a single split can isolate any category (scikit-optimize
    /// one-hot encodes categories too). Ordinals keep their single ordered column.
    pub fn tree_features(&self, c: &Config) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.tree_width());
        self.push_tree_features(c, &mut out);
        out
    }

    /// Appends [`Space::tree_features`] to `out` (no allocation per configuration).
    pub fn push_tree_features(&self, c: &Config, out: &mut Vec<f64>) {
        for (p, &x) in self.params.iter().zip(&c.0) {
            match &p.kind {
                Kind::Categorical(v) if v.len() > 2 => {
                    for k in 0..v.len() {
                        out.push(if x.is_nan() {
                            -1.0
                        } else {
                            (x as usize == k) as u8 as f64
                        });
                    }
                }
                _ => out.push(p.encode(x)),
            }
        }
    }

    /// Number of tree features (see [`Space::tree_features`]).
    pub fn tree_width(&self) -> usize {
        self.params
            .iter()
            .map(|p| match &p.kind {
                Kind::Categorical(v) if v.len() > 2 => v.len(),
                _ => 1,
            })
            .sum()
    }

    pub fn encode(&self, c: &Config) -> Vec<f64> {
        self.params
            .iter()
            .zip(&c.0)
            .map(|(p, &x)| p.encode(x))
            .collect()
    }

    /// The stable identity written to results.csv: a hash of `name=value` pairs in space order.
    pub fn hash(&self, c: &Config) -> String {
        format!("{:016x}", fnv1a(self.describe(c).as_bytes()))
    }

    /// `P0=32 P1='#pragma omp interchange' P2=-` (inactive shown as `-`).
    pub fn describe(&self, c: &Config) -> String {
        self.params
            .iter()
            .zip(&c.0)
            .map(|(p, &x)| name_value(p, x))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Rebuilds a configuration from results.csv cells (space order); `None` if a cell is not
    /// a value of its parameter or the activity does not match the conditions.
    pub fn parse_cells(&self, cells: &[&str]) -> Option<Config> {
        let mut c = Config(vec![f64::NAN; self.params.len()]);
        for &i in &self.order {
            if self.active(&c, i) {
                c.0[i] = self.params[i].parse_cell(cells[i])?;
            } else if !cells[i].is_empty() {
                return None;
            }
        }
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::expr;

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
}
