//! Gradient-boosted regression trees with quantile loss (Friedman 2001), three of them at the
//! 16th, 50th and 84th percentiles, as scikit-optimize's GBRT surrogate: the median is the
//! prediction and half the 16–84 range its standard deviation (±1σ of a normal).
//!
//! Each stage fits a depth-3 tree to the negative gradient of the pinball loss (α where the
//! residual is positive, α − 1 otherwise), then sets each leaf to the α-quantile of the
//! residuals that fall into it, and adds it with learning rate 0.1.

use crate::rng::Rng;
use crate::search::surrogate::tree::{bin_features, grow_tree, ForestParams, Tree};

const STAGES: usize = 30;
const LEARNING_RATE: f64 = 0.1;
const QUANTILES: [f64; 3] = [0.16, 0.5, 0.84];

#[derive(Debug, Clone)]
struct Booster {
    base: f64,
    trees: Vec<Tree>,
}

#[derive(Debug, Clone)]
pub struct Gbrt {
    models: Vec<Booster>,
    d: usize,
}

fn quantile(v: &mut [f64], a: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let pos = a * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

impl Booster {
    fn predict_row(&self, x: &[f64]) -> f64 {
        self.base + LEARNING_RATE * self.trees.iter().map(|t| t.value(x)).sum::<f64>()
    }
}

impl Gbrt {
    pub fn fit(x: &[f64], d: usize, y: &[f64], rng: &mut Rng) -> Gbrt {
        let n = y.len();
        let b = bin_features(x, n, d);
        let params = ForestParams {
            n_trees: 1,
            min_samples_leaf: 1,
            max_depth: 3,
            extra: false,
        };
        let models = QUANTILES
            .iter()
            .map(|&a| {
                let base = quantile(&mut y.to_vec(), a);
                let mut f = vec![base; n];
                let mut trees = Vec::with_capacity(STAGES);
                for _ in 0..STAGES {
                    let resid: Vec<f64> = y.iter().zip(&f).map(|(yi, fi)| yi - fi).collect();
                    let grad: Vec<f64> = resid
                        .iter()
                        .map(|&r| if r > 0.0 { a } else { a - 1.0 })
                        .collect();
                    let mut idx: Vec<u32> = (0..n as u32).collect();
                    let (mut tree, _) = grow_tree(&b, &grad, d, &mut idx, params, rng);
                    // Leaf values: the α-quantile of the residuals in each leaf.
                    let mut by_leaf: std::collections::HashMap<usize, Vec<f64>> =
                        Default::default();
                    for i in 0..n {
                        by_leaf
                            .entry(tree.leaf_of(&x[i * d..(i + 1) * d]))
                            .or_default()
                            .push(resid[i]);
                    }
                    for (leaf, mut rs) in by_leaf {
                        tree.set_value(leaf, quantile(&mut rs, a));
                    }
                    for i in 0..n {
                        f[i] += LEARNING_RATE * tree.value(&x[i * d..(i + 1) * d]);
                    }
                    trees.push(tree);
                }
                Booster { base, trees }
            })
            .collect();
        Gbrt { models, d }
    }

    /// Median and (q84 − q16) / 2 for each row.
    pub fn predict(&self, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let mut mean = Vec::with_capacity(x.len() / self.d);
        let mut std = Vec::with_capacity(x.len() / self.d);
        for row in x.chunks_exact(self.d) {
            let q: Vec<f64> = self.models.iter().map(|m| m.predict_row(row)).collect();
            mean.push(q[1]);
            std.push(((q[2] - q[0]) / 2.0).max(0.0));
        }
        (mean, std)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_model_tracks_the_function_and_spread_is_sane() {
        let mut rng = Rng::new(4);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            let a = rng.f64();
            x.push(a);
            y.push(3.0 * a + 0.2 * (rng.f64() - 0.5));
        }
        let g = Gbrt::fit(&x, 1, &y, &mut rng);
        let (mu, sd) = g.predict(&[0.1, 0.9]);
        assert!(mu[1] - mu[0] > 1.0, "{mu:?}");
        assert!(
            sd.iter().all(|s| s.is_finite() && *s >= 0.0 && *s < 1.0),
            "{sd:?}"
        );
    }
}
