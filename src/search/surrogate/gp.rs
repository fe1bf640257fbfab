//! A Gaussian process for mixed inputs: a Matérn-5/2 kernel with one length scale per
//! ordinal/integer/real feature (ARD), multiplied by an exponentiated-overlap kernel on the
//! categorical features (two configurations lose similarity for each categorical parameter on
//! which they differ, at a learned rate) — ordinal order is kept, categories are not given a
//! spurious order. Hyperparameters (length scales, signal and noise variance) maximise the log
//! marginal likelihood (Rasmussen & Williams 2006, eq. 5.8) by a bounded pattern search in log
//! space. Targets are standardised.
//!
//! Prediction is split so that a pool of 10,000 candidates stays cheap: [`Gp::mean`] for all
//! (one kernel row and a dot product each) and [`Gp::std_at`] (a triangular solve) only for
//! the candidates whose acquisition bound could still win (see `search::Searcher`).

const MAX_NLL_EVALS: usize = 30;

#[derive(Debug, Clone)]
pub struct Gp {
    /// Training inputs, scaled by the length scales.
    x: Vec<f64>,
    n: usize,
    d: usize,
    cat: Vec<bool>,
    /// Weights of categorical mismatches.
    w: Vec<f64>,
    /// log length scales (per feature), log signal variance, log noise variance.
    theta: Vec<f64>,
    l: Vec<f64>,
    alpha: Vec<f64>,
    y_mean: f64,
    y_std: f64,
}

/// Inputs divided by their length scales (continuous features) so that the kernel needs no
/// division; categorical features are kept as they are.
fn scale_inputs(x: &[f64], d: usize, cat: &[bool], theta: &[f64]) -> Vec<f64> {
    let inv: Vec<f64> = (0..d)
        .map(|k| if cat[k] { 1.0 } else { (-theta[k]).exp() })
        .collect();
    x.chunks_exact(d)
        .flat_map(|row| row.iter().zip(&inv).map(|(v, s)| v * s).collect::<Vec<_>>())
        .collect()
}

/// Matérn 5/2 on the scaled continuous features times exp(−Σ w_k [a_k ≠ b_k]) on the
/// categorical ones, with signal variance `sf2`.
#[inline]
fn kernel(a: &[f64], b: &[f64], cat: &[bool], w: &[f64], sf2: f64) -> f64 {
    let mut r2 = 0.0;
    let mut mismatch = 0.0;
    for k in 0..a.len() {
        let t = a[k] - b[k];
        if cat[k] {
            if t != 0.0 {
                mismatch += w[k];
            }
        } else {
            r2 += t * t;
        }
    }
    let r = (5.0 * r2).sqrt();
    sf2 * (1.0 + r + r * r / 3.0) * (-r - mismatch).exp()
}

fn cat_weights(d: usize, cat: &[bool], theta: &[f64]) -> Vec<f64> {
    (0..d)
        .map(|k| if cat[k] { (-theta[k]).exp() } else { 0.0 })
        .collect()
}

/// Dot product with four accumulators (lets the compiler vectorise it).
#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let chunks = a.len() / 4;
    for c in 0..chunks {
        for l in 0..4 {
            acc[l] += a[4 * c + l] * b[4 * c + l];
        }
    }
    let mut s = acc[0] + acc[1] + acc[2] + acc[3];
    for k in 4 * chunks..a.len() {
        s += a[k] * b[k];
    }
    s
}

/// In-place Cholesky of an n×n row-major matrix; returns false if not positive definite.
fn cholesky(a: &mut [f64], n: usize) -> bool {
    for j in 0..n {
        let s = a[j * n + j] - dot(&a[j * n..j * n + j], &a[j * n..j * n + j]);
        if s <= 0.0 || !s.is_finite() {
            return false;
        }
        let ljj = s.sqrt();
        a[j * n + j] = ljj;
        for i in j + 1..n {
            let (top, bottom) = a.split_at_mut(i * n);
            let s = bottom[j] - dot(&bottom[..j], &top[j * n..j * n + j]);
            bottom[j] = s / ljj;
        }
        for k in j + 1..n {
            a[j * n + k] = 0.0;
        }
    }
    true
}

fn solve_lower(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let s = b[i] - dot(&l[i * n..i * n + i], &b[..i]);
        b[i] = s / l[i * n + i];
    }
}

fn solve_upper_t(l: &[f64], n: usize, b: &mut [f64]) {
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= l[k * n + i] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
}

struct Fit {
    nll: f64,
    l: Vec<f64>,
    alpha: Vec<f64>,
}

fn evaluate(x: &[f64], n: usize, d: usize, cat: &[bool], y: &[f64], theta: &[f64]) -> Option<Fit> {
    let mut k = vec![0.0; n * n];
    let noise = theta[d + 1].exp() + 1e-8;
    let xs = scale_inputs(x, d, cat, theta);
    let w = cat_weights(d, cat, theta);
    let sf2 = theta[d].exp();
    for i in 0..n {
        for j in 0..=i {
            let v = kernel(
                &xs[i * d..(i + 1) * d],
                &xs[j * d..(j + 1) * d],
                cat,
                &w,
                sf2,
            );
            k[i * n + j] = v;
            k[j * n + i] = v;
        }
        k[i * n + i] += noise;
    }
    if !cholesky(&mut k, n) {
        return None;
    }
    let mut alpha = y.to_vec();
    solve_lower(&k, n, &mut alpha);
    let quad: f64 = alpha.iter().map(|a| a * a).sum();
    solve_upper_t(&k, n, &mut alpha);
    let logdet: f64 = (0..n).map(|i| k[i * n + i].ln()).sum();
    Some(Fit {
        nll: 0.5 * quad + logdet,
        l: k,
        alpha,
    })
}

/// Standardised targets with the mean and standard deviation they were standardised by (a
/// standard deviation of 1 for constant targets).
fn standardise(y: &[f64]) -> (Vec<f64>, f64, f64) {
    let n = y.len();
    let y_mean = y.iter().sum::<f64>() / n as f64;
    let var = y.iter().map(|v| (v - y_mean).powi(2)).sum::<f64>() / n as f64;
    let y_std = if var > 1e-24 { var.sqrt() } else { 1.0 };
    let ys = y.iter().map(|v| (v - y_mean) / y_std).collect();
    (ys, y_mean, y_std)
}

/// Where the hyperparameter search starts (log space): length scale 0.5, categorical rate 1,
/// signal variance 1 (the targets are standardised), noise variance 0.01.
fn initial_theta(d: usize, cat: &[bool]) -> Vec<f64> {
    let mut theta: Vec<f64> = (0..d)
        .map(|k| if cat[k] { 0.0 } else { 0.5f64.ln() })
        .collect();
    theta.push(0.0); // signal variance 1 (standardised targets)
    theta.push(0.01f64.ln()); // noise variance
    theta
}

/// Lower and upper bounds of the hyperparameters (log space), in the order of `theta`.
fn theta_bounds(d: usize) -> (Vec<f64>, Vec<f64>) {
    let lo: Vec<f64> = (0..d)
        .map(|_| 0.01f64.ln())
        .chain([0.05f64.ln(), 1e-6f64.ln()])
        .collect();
    let hi: Vec<f64> = (0..d)
        .map(|_| 20f64.ln())
        .chain([20f64.ln(), 1f64.ln()])
        .collect();
    (lo, hi)
}

/// The training data of a fit, with standardised targets.
struct Data<'a> {
    x: &'a [f64],
    n: usize,
    d: usize,
    cat: &'a [bool],
    ys: &'a [f64],
}

impl Data<'_> {
    /// The fit at hyperparameters `theta`, or `None` if the kernel matrix is not positive
    /// definite.
    fn evaluate(&self, theta: &[f64]) -> Option<Fit> {
        evaluate(self.x, self.n, self.d, self.cat, self.ys, theta)
    }

    /// Coordinate pattern search from `theta` within the bounds: the first move of one
    /// coordinate by ±step that lowers the negative log marginal likelihood is taken; a sweep
    /// without one halves the step. Stops below a step of 0.2 or after `MAX_NLL_EVALS` fits.
    /// Leaves `theta` at the best fit found, which it returns (`None` if every fit failed).
    fn pattern_search(&self, theta: &mut Vec<f64>) -> Option<Fit> {
        let (lo, hi) = theta_bounds(self.d);
        let mut best = self.evaluate(theta);
        let mut evals = 1;
        let mut step = 1.0;
        'search: while step > 0.2 {
            let mut improved = false;
            for p in 0..theta.len() {
                for dir in [1.0, -1.0] {
                    if evals >= MAX_NLL_EVALS {
                        break 'search;
                    }
                    let mut t = theta.clone();
                    t[p] = (t[p] + dir * step).clamp(lo[p], hi[p]);
                    if t[p] == theta[p] {
                        continue;
                    }
                    evals += 1;
                    if let Some(f) = self.evaluate(&t) {
                        if best.as_ref().is_none_or(|b| f.nll < b.nll) {
                            best = Some(f);
                            *theta = t;
                            improved = true;
                            break;
                        }
                    }
                }
            }
            if !improved {
                step /= 2.0;
            }
        }
        best
    }
}

impl Gp {
    /// `cat[k]` marks categorical features (compared by equality only).
    pub fn fit(x: &[f64], d: usize, y: &[f64], cat: &[bool]) -> Gp {
        let n = y.len();
        let (ys, y_mean, y_std) = standardise(y);
        let data = Data {
            x,
            n,
            d,
            cat,
            ys: &ys,
        };
        let mut theta = initial_theta(d, cat);
        let best = data.pattern_search(&mut theta);
        // A jittered fallback keeps the model usable if every Cholesky failed.
        let fit = best.unwrap_or_else(|| {
            theta[d + 1] = 0.0;
            data.evaluate(&theta)
                .expect("noise variance 1 is positive definite")
        });
        Gp {
            x: scale_inputs(x, d, cat, &theta),
            n,
            d,
            cat: cat.to_vec(),
            w: cat_weights(d, cat, &theta),
            theta,
            l: fit.l,
            alpha: fit.alpha,
            y_mean,
            y_std,
        }
    }

    /// The prior standard deviation: an upper bound of every posterior one.
    pub fn prior_std(&self) -> f64 {
        self.theta[self.d].exp().sqrt() * self.y_std
    }

    fn cross(&self, row: &[f64], out: &mut [f64]) {
        let sf2 = self.theta[self.d].exp();
        let d = self.d;
        for (i, o) in out.iter_mut().enumerate() {
            *o = kernel(&self.x[i * d..(i + 1) * d], row, &self.cat, &self.w, sf2);
        }
    }

    /// Posterior means of the rows of `xs` (cheap: one kernel row and a dot product each).
    pub fn mean(&self, xs: &[f64]) -> Vec<f64> {
        let scaled = scale_inputs(xs, self.d, &self.cat, &self.theta);
        let mut k = vec![0.0; self.n];
        scaled
            .chunks_exact(self.d)
            .map(|row| {
                self.cross(row, &mut k);
                dot(&k, &self.alpha) * self.y_std + self.y_mean
            })
            .collect()
    }

    /// Posterior standard deviation of one (unscaled) row.
    pub fn std_at(&self, row: &[f64]) -> f64 {
        let scaled = scale_inputs(row, self.d, &self.cat, &self.theta);
        let mut k = vec![0.0; self.n];
        self.cross(&scaled, &mut k);
        solve_lower(&self.l, self.n, &mut k);
        (self.theta[self.d].exp() - dot(&k, &k)).max(1e-12).sqrt() * self.y_std
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_and_is_uncertain_far_away() {
        let xs: Vec<f64> = (0..20).map(|i| i as f64 / 40.0).collect(); // data in [0, 0.5)
        let y: Vec<f64> = xs.iter().map(|x| (6.0 * x).sin()).collect();
        let gp = Gp::fit(&xs, 1, &y, &[false]);
        let mu = gp.mean(&[0.25, 1.0]);
        let sd = [gp.std_at(&[0.25]), gp.std_at(&[1.0])];
        assert!((mu[0] - 1.5f64.sin()).abs() < 0.05, "{mu:?}");
        assert!(sd[1] > 3.0 * sd[0], "{sd:?}");
    }

    #[test]
    fn categorical_feature_is_learned() {
        // y depends only on the category.
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..30 {
            let c = (i % 3) as f64;
            x.extend([i as f64 / 30.0, c]);
            y.push(c * 2.0);
        }
        let gp = Gp::fit(&x, 2, &y, &[false, true]);
        let mu = gp.mean(&[0.5, 2.0, 0.5, 0.0]);
        assert!(mu[0] > mu[1] + 2.0, "{mu:?}");
    }
}
