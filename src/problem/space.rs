//! The parameter space: typed parameters, conditions, forbidden combinations and constraints;
//! validity, enumeration of small spaces, and the numeric encoding the surrogate models see.
//! Drawing random configurations is the [`sample`](crate::problem::sample) module's.
//!
//! A configuration is stored as one `f64` coordinate per parameter (an index for ordinal and
//! categorical parameters, the value for integer and real ones, 0/1 for booleans, NaN when the
//! parameter is inactive). That keeps candidate pools of 10,000 configurations cheap to build,
//! hash and encode.

use crate::problem::expr::Expr;
use crate::rng::fnv1a;

use crate::problem::param::name_value;
use crate::problem::param::{Kind, Param, INACTIVE_FEATURE};
use crate::problem::permutation::Permutation;

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
            Kind::Categorical(v) | Kind::Permutation(Permutation { texts: v, .. }) => v
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
                        Kind::Categorical(x) | Kind::Permutation(Permutation { texts: x, .. }) => {
                            (v * x.len() as f64).floor()
                        }
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
    /// Which of the [`Space::kernel_features`] are categorical (compared by equality only):
    /// categorical, open and boolean parameters, and a permutation's pairs.
    pub fn categorical_mask(&self) -> Vec<bool> {
        let mut mask = Vec::with_capacity(self.params.len());
        for p in &self.params {
            match &p.kind {
                Kind::Permutation(perm) => mask.extend(std::iter::repeat_n(true, perm.pairs())),
                k => mask.push(matches!(
                    k,
                    Kind::Categorical(_) | Kind::Open(_) | Kind::Boolean
                )),
            }
        }
        mask
    }

    /// Features for the GP: [`Space::encode`]'s, except that a permutation becomes its pairs
    /// ([`Permutation::push_pairs`]: the overlap kernel on them is a Mallows kernel).
    pub fn kernel_features(&self, c: &Config) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.params.len());
        for (p, &x) in self.params.iter().zip(&c.0) {
            match &p.kind {
                Kind::Permutation(perm) => perm.push_pairs(x, INACTIVE_FEATURE, &mut out),
                _ => out.push(p.encode(x)),
            }
        }
        out
    }

    /// Features for the tree models: like [`Space::encode`], except that a categorical
    /// parameter with more than two choices becomes one 0/1 column per choice (−1 everywhere
    /// when inactive), so that a single split can isolate any category (scikit-optimize
    /// one-hot encodes categories too), and a permutation its pairs (one split: "does k come
    /// before i"). Ordinals keep their single ordered column.
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
                Kind::Permutation(perm) => perm.push_pairs(x, INACTIVE_FEATURE, out),
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
                Kind::Permutation(perm) => perm.pairs(),
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

    /// The active parameters' values by name, typed as the problem file writes them
    /// (results.json's `config`, what `moldtune ask` offers).
    pub fn json(&self, c: &Config) -> serde_json::Map<String, serde_json::Value> {
        (self.params.iter().zip(&c.0))
            .filter(|(_, x)| !x.is_nan())
            .map(|(p, &x)| (p.name.clone(), p.json(x)))
            .collect()
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
mod tests;
