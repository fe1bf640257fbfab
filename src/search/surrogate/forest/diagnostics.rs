//! What a fit says about itself beside the trees (out-of-bag predictions, the splits), and
//! how it is collected tree by tree.

use crate::search::surrogate::tree::{NodeSplit, Tree};

/// What a fit says about itself, beside the trees: see [`crate::search::surrogate::Forest::fit_diagnosed`].
#[derive(Debug, Clone)]
pub struct Diagnostics {
    /// Per training row, the mean prediction of the trees whose bootstrap sample left it out
    /// (Breiman 2001), or `None` if every tree saw it (always so for extra trees).
    pub oob: Vec<Option<f64>>,
    /// Every split of every tree, in the order they were made.
    pub splits: Vec<NodeSplit>,
}

impl Diagnostics {
    /// Out-of-bag R² = 1 − Σ(y − ŷ_oob)² / Σ(y − ȳ)² over the rows that have an out-of-bag
    /// prediction: 1 is perfect, 0 no better than predicting the mean, negative worse.
    /// `None` without at least two such rows or when their targets do not vary.
    pub fn oob_r2(&self, y: &[f64]) -> Option<f64> {
        let pairs: Vec<(f64, f64)> = y
            .iter()
            .zip(&self.oob)
            .filter_map(|(&t, p)| p.map(|p| (t, p)))
            .collect();
        if pairs.len() < 2 {
            return None;
        }
        let mean = pairs.iter().map(|p| p.0).sum::<f64>() / pairs.len() as f64;
        let total: f64 = pairs.iter().map(|p| (p.0 - mean).powi(2)).sum();
        let residual: f64 = pairs.iter().map(|p| (p.0 - p.1).powi(2)).sum();
        (total > 0.0).then(|| 1.0 - residual / total)
    }
}

/// Collects [`Diagnostics`] tree by tree: running sums of each training row's out-of-bag
/// predictions, and the splits.
pub(super) struct Recorder<'a> {
    pub(super) x: &'a [f64],
    pub(super) sum: Vec<f64>,
    pub(super) count: Vec<u32>,
    pub(super) splits: Vec<NodeSplit>,
}

impl Recorder<'_> {
    /// Records `tree`'s splits and adds its prediction to every row that is not in its
    /// bootstrap sample `bag`.
    pub(super) fn record(&mut self, tree: &Tree, bag: &[u32], splits: &[NodeSplit]) {
        self.splits.extend_from_slice(splits);
        let n = self.sum.len();
        let d = self.x.len() / n;
        let mut in_bag = vec![false; n];
        bag.iter().for_each(|&i| in_bag[i as usize] = true);
        for i in (0..n).filter(|&i| !in_bag[i]) {
            self.sum[i] += tree.value(&self.x[i * d..(i + 1) * d]);
            self.count[i] += 1;
        }
    }

    pub(super) fn finish(self) -> Diagnostics {
        let oob = self
            .sum
            .iter()
            .zip(&self.count)
            .map(|(&s, &c)| (c > 0).then(|| s / c as f64))
            .collect();
        Diagnostics {
            oob,
            splits: self.splits,
        }
    }
}
