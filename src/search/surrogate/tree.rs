//! One regression tree, grown on binned features (CART on variance reduction, or extra
//! trees' random cuts): what the forests ([`super::forest`]) and gradient boosting
//! ([`super::gbrt`]) are made of.
//!
//! Speed: features are binned once per fit (cut points are midpoints between the distinct
//! training values, at most `MAX_BINS`), so finding a split costs O(samples + bins) per
//! feature instead of a sort.

use crate::rng::Rng;

const MAX_BINS: usize = 64;
const LEAF: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub struct ForestParams {
    pub n_trees: usize,
    pub min_samples_leaf: usize,
    pub max_depth: usize,
    /// Extra trees (random cuts, no bootstrap) instead of a random forest.
    pub extra: bool,
}

impl ForestParams {
    /// scikit-optimize's defaults for its RF surrogate: 100 trees, 3 samples per leaf.
    pub fn random_forest() -> ForestParams {
        ForestParams {
            n_trees: 100,
            min_samples_leaf: 3,
            max_depth: 32,
            extra: false,
        }
    }
    pub fn extra_trees() -> ForestParams {
        ForestParams {
            extra: true,
            ..ForestParams::random_forest()
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Node {
    feature: u32,
    threshold: f64,
    /// Index of the left child; the right child is `left + 1`.
    left: u32,
    mean: f64,
    var: f64,
}

/// A fitted tree in flat arrays. A leaf points to itself with an infinite threshold, so a
/// lookup can take exactly `depth` branch-free steps: see [`Forest::predict`].
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    pub(super) feature: Vec<u32>,
    pub(super) threshold: Vec<f64>,
    pub(super) left: Vec<u32>,
    pub(super) mean: Vec<f64>,
    pub(super) var: Vec<f64>,
    pub(super) depth: usize,
}

impl Tree {
    /// The leaf a row falls into.
    pub(crate) fn leaf_of(&self, x: &[f64]) -> usize {
        let mut i = 0usize;
        while self.threshold[i] != f64::INFINITY {
            i = (self.left[i] + (x[self.feature[i] as usize] > self.threshold[i]) as u32) as usize;
        }
        i
    }

    pub(crate) fn set_value(&mut self, leaf: usize, v: f64) {
        self.mean[leaf] = v;
        self.var[leaf] = 0.0;
    }

    /// Predicted value (leaf mean) of one row.
    pub(crate) fn value(&self, x: &[f64]) -> f64 {
        self.mean[self.leaf_of(x)]
    }

    fn from_nodes(nodes: &[Node]) -> Tree {
        let mut t = Tree {
            feature: Vec::with_capacity(nodes.len()),
            threshold: Vec::with_capacity(nodes.len()),
            left: Vec::with_capacity(nodes.len()),
            mean: nodes.iter().map(|n| n.mean).collect(),
            var: nodes.iter().map(|n| n.var).collect(),
            depth: 0,
        };
        for (i, n) in nodes.iter().enumerate() {
            if n.feature == LEAF {
                t.feature.push(0);
                t.threshold.push(f64::INFINITY);
                t.left.push(i as u32);
            } else {
                t.feature.push(n.feature);
                t.threshold.push(n.threshold);
                t.left.push(n.left);
            }
        }
        // Depth = longest root-to-leaf path.
        let mut stack = vec![(0usize, 0usize)];
        while let Some((i, d)) = stack.pop() {
            if nodes[i].feature == LEAF {
                t.depth = t.depth.max(d);
            } else {
                stack.push((nodes[i].left as usize, d + 1));
                stack.push((nodes[i].left as usize + 1, d + 1));
            }
        }
        t
    }
}

/// One split of a fitted tree: its feature, its threshold (rows with a larger value go right)
/// and the decrease in the sum of squared errors it made (its impurity decrease).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeSplit {
    pub feature: usize,
    pub threshold: f64,
    pub gain: f64,
}

/// Grows one regression tree on the samples `idx` (repeats allowed); returns it with its
/// splits and the decrease in squared error each made.
pub(crate) fn grow_tree(
    b: &Binned,
    y: &[f64],
    d: usize,
    idx: &mut [u32],
    p: ForestParams,
    rng: &mut Rng,
) -> (Tree, Vec<NodeSplit>) {
    let mut builder = Builder {
        b,
        y,
        d,
        p,
        rng: Rng::new(rng.next_u64()),
        nodes: vec![Node {
            feature: LEAF,
            threshold: 0.0,
            left: 0,
            mean: 0.0,
            var: 0.0,
        }],
        cnt: vec![0.0; MAX_BINS + 1],
        sum: vec![0.0; MAX_BINS + 1],
        splits: Vec::new(),
    };
    builder.build(idx, 0, 0);
    (Tree::from_nodes(&builder.nodes), builder.splits)
}

pub(crate) struct Binned {
    /// Per feature: sorted cut points.
    cuts: Vec<Vec<f64>>,
    /// bins[f * n + i]: number of cuts below sample i's value of feature f.
    bins: Vec<u8>,
    n: usize,
}

pub(crate) fn bin_features(x: &[f64], n: usize, d: usize) -> Binned {
    let mut cuts = Vec::with_capacity(d);
    let mut bins = vec![0u8; n * d];
    for f in 0..d {
        let mut vals: Vec<f64> = (0..n).map(|i| x[i * d + f]).collect();
        vals.sort_by(|a, b| a.total_cmp(b));
        vals.dedup();
        let mut c: Vec<f64> = vals.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect();
        if c.len() > MAX_BINS - 1 {
            let m = MAX_BINS - 1;
            c = (0..m).map(|k| c[k * c.len() / m]).collect();
            c.dedup();
        }
        for i in 0..n {
            let v = x[i * d + f];
            bins[f * n + i] = c.partition_point(|&t| t < v) as u8;
        }
        cuts.push(c);
    }
    Binned { cuts, bins, n }
}

struct Builder<'a> {
    b: &'a Binned,
    y: &'a [f64],
    d: usize,
    p: ForestParams,
    rng: Rng,
    nodes: Vec<Node>,
    // Scratch histograms.
    cnt: Vec<f64>,
    sum: Vec<f64>,
    /// The splits made so far, with their variance reduction (mean decrease in impurity).
    splits: Vec<NodeSplit>,
}

fn mean_var(y: &[f64], idx: &[u32]) -> (f64, f64) {
    let n = idx.len() as f64;
    let s: f64 = idx.iter().map(|&i| y[i as usize]).sum();
    let m = s / n;
    let v = idx
        .iter()
        .map(|&i| (y[i as usize] - m).powi(2))
        .sum::<f64>()
        / n;
    (m, v)
}

/// The best split found so far: (score gain, feature, last bin sent left).
type Split = (f64, usize, usize);

/// What a split of one node gains: the decrease of the sum of squared errors, computed from
/// the count and target sum of the left side.
struct SplitGain {
    n: usize,
    total: f64,
    min_leaf: usize,
    /// total² / n: the score of not splitting.
    parent_score: f64,
}

impl SplitGain {
    /// The gain of sending `cl` samples summing to `sl` left, or `None` if a side would hold
    /// fewer than `min_leaf` samples.
    fn of(&self, cl: f64, sl: f64) -> Option<f64> {
        let (cr, sr) = (self.n as f64 - cl, self.total - sl);
        if cl < self.min_leaf as f64 || cr < self.min_leaf as f64 {
            None
        } else {
            Some(sl * sl / cl + sr * sr / cr - self.parent_score)
        }
    }
}

/// Keeps `(g, f, cut)` if it gains strictly more than the best so far (ties keep the first).
fn consider(best: &mut Option<Split>, g: f64, f: usize, cut: usize) {
    if best.is_none_or(|b| g > b.0) {
        *best = Some((g, f, cut));
    }
}

impl Builder<'_> {
    /// Makes node `at` a leaf of the samples `idx`, then splits it if a split is allowed and
    /// gains enough, growing both children.
    fn build(&mut self, idx: &mut [u32], depth: usize, at: usize) {
        let (mean, var) = mean_var(self.y, idx);
        self.nodes[at] = Node {
            feature: LEAF,
            threshold: 0.0,
            left: 0,
            mean,
            var,
        };
        let n = idx.len();
        let min_leaf = self.p.min_samples_leaf.max(1);
        if n < 2 * min_leaf || depth >= self.p.max_depth || var <= 1e-300 {
            return;
        }
        let total: f64 = idx.iter().map(|&i| self.y[i as usize]).sum();
        let split_gain = SplitGain {
            n,
            total,
            min_leaf,
            parent_score: total * total / n as f64,
        };
        let Some((g, f, cut)) = self.best_split(idx, &split_gain) else {
            return;
        };
        if g <= 1e-12 * split_gain.parent_score.abs().max(1e-300) {
            return;
        }
        self.splits.push(NodeSplit {
            feature: f,
            threshold: self.b.cuts[f][cut],
            gain: g,
        });
        let split = self.partition(idx, f, cut);
        let left = self.split_node(at, f, cut);
        let (l, r) = idx.split_at_mut(split);
        self.build(l, depth + 1, left);
        self.build(r, depth + 1, left + 1);
    }

    /// The best split of the samples `idx` over all features, if any is allowed.
    fn best_split(&mut self, idx: &[u32], split_gain: &SplitGain) -> Option<Split> {
        let mut best = None;
        for f in 0..self.d {
            let nb = self.b.cuts[f].len() + 1;
            if nb < 2 {
                continue;
            }
            let Some((lo, hi)) = self.histogram(idx, f, nb) else {
                continue;
            };
            if self.p.extra {
                self.random_cut(f, lo, hi, split_gain, &mut best);
            } else {
                self.every_cut(f, lo, hi, split_gain, &mut best);
            }
        }
        best
    }

    /// Fills the scratch histograms with the count and target sum of the samples `idx` in
    /// each of the `nb` bins of feature `f`; returns the lowest and highest occupied bins, or
    /// `None` if they are the same (nothing to split).
    fn histogram(&mut self, idx: &[u32], f: usize, nb: usize) -> Option<(usize, usize)> {
        let bins = &self.b.bins[f * self.b.n..(f + 1) * self.b.n];
        self.cnt[..nb].iter_mut().for_each(|c| *c = 0.0);
        self.sum[..nb].iter_mut().for_each(|c| *c = 0.0);
        let (mut lo, mut hi) = (usize::MAX, 0);
        for &i in idx.iter() {
            let k = bins[i as usize] as usize;
            self.cnt[k] += 1.0;
            self.sum[k] += self.y[i as usize];
            lo = lo.min(k);
            hi = hi.max(k);
        }
        (lo != hi).then_some((lo, hi))
    }

    /// Extra trees: one uniformly random cut of feature `f` between the node's smallest and
    /// largest value.
    fn random_cut(
        &mut self,
        f: usize,
        lo: usize,
        hi: usize,
        split_gain: &SplitGain,
        best: &mut Option<Split>,
    ) {
        let cut = lo + self.rng.below(hi - lo);
        let (cl, sl) = (0..=cut).fold((0.0, 0.0), |(c, s), k| (c + self.cnt[k], s + self.sum[k]));
        if let Some(g) = split_gain.of(cl, sl) {
            consider(best, g, f, cut);
        }
    }

    /// Random forest: every cut of feature `f` between the occupied bins.
    fn every_cut(
        &self,
        f: usize,
        lo: usize,
        hi: usize,
        split_gain: &SplitGain,
        best: &mut Option<Split>,
    ) {
        let (mut cl, mut sl) = (0.0, 0.0);
        for k in lo..hi {
            cl += self.cnt[k];
            sl += self.sum[k];
            if let Some(g) = split_gain.of(cl, sl) {
                consider(best, g, f, k);
            }
        }
    }

    /// Moves the samples of `idx` whose feature `f` falls in a bin up to `cut` to the front;
    /// returns how many there are.
    fn partition(&self, idx: &mut [u32], f: usize, cut: usize) -> usize {
        let bins = &self.b.bins[f * self.b.n..(f + 1) * self.b.n];
        let mut split = 0;
        for j in 0..idx.len() {
            if (bins[idx[j] as usize] as usize) <= cut {
                idx.swap(j, split);
                split += 1;
            }
        }
        split
    }

    /// Turns leaf `at` into a split on feature `f` at `cut` (keeping its mean and variance)
    /// with two new leaves as children; returns the index of the left one.
    fn split_node(&mut self, at: usize, f: usize, cut: usize) -> usize {
        let left = self.nodes.len();
        self.nodes.push(self.nodes[at]);
        self.nodes.push(self.nodes[at]);
        self.nodes[at] = Node {
            feature: f as u32,
            threshold: self.b.cuts[f][cut],
            left: left as u32,
            ..self.nodes[at]
        };
        left
    }
}
