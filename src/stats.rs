//! Statistics every stage uses: medians, the least-squares line (`--warm-start`), and a
//! bootstrap confidence interval for the ratio of two medians (Efron & Tibshirani 1993, the
//! percentile interval), which is how moldtune states a speed-up: two programs timed
//! interleaved in the same rounds, the ratio of their medians, and how far it could
//! plausibly be from the truth.

use crate::rng::Rng;

/// The median (mean of the middle two for an even count); `None` for no samples.
pub fn median(samples: &[f64]) -> Option<f64> {
    central(samples, Central::Mean)
}

/// The lower median: the ⌈n/2⌉-th smallest sample; `None` for no samples. The median of a
/// censored count (evaluations to reach a target, "never" above every real value): "half
/// the seeds had reached it by then" is a value some seed reached, never a midpoint with
/// "never".
pub fn lower_median(samples: &[f64]) -> Option<f64> {
    central(samples, Central::Lower)
}

/// The `which` median of `samples`, `None` for none.
fn central(samples: &[f64], which: Central) -> Option<f64> {
    (!samples.is_empty()).then(|| median_in_place(&mut samples.to_vec(), which))
}

/// The `q`-quantile (0 ≤ q ≤ 1, linear between the two nearest samples); `None` for no samples.
pub fn quantile(samples: &[f64], q: f64) -> Option<f64> {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let at = q.clamp(0.0, 1.0) * (s.len().checked_sub(1)? as f64);
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    Some(s[lo] + (at - lo as f64) * (s[hi] - s[lo]))
}

/// The least-squares line through points (x, y): it passes through their means.
pub struct LeastSquares {
    pub x_mean: f64,
    pub y_mean: f64,
    /// 0 when the x do not vary.
    pub slope: f64,
}

impl LeastSquares {
    pub fn through(points: &[(f64, f64)]) -> LeastSquares {
        let n = points.len().max(1) as f64;
        let (x_mean, y_mean) =
            (points.iter()).fold((0.0, 0.0), |a, p| (a.0 + p.0 / n, a.1 + p.1 / n));
        let sxx: f64 = points.iter().map(|p| (p.0 - x_mean).powi(2)).sum();
        let sxy: f64 = points.iter().map(|p| (p.0 - x_mean) * (p.1 - y_mean)).sum();
        let slope = if sxx > 1e-12 { sxy / sxx } else { 0.0 };
        LeastSquares {
            x_mean,
            y_mean,
            slope,
        }
    }
}

/// A ratio with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ratio {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// The interval's confidence level (0.95).
    pub level: f64,
}

impl Ratio {
    /// The interval's half-width relative to the ratio, the wider side: 0.05 for
    /// 2.00 [1.90–2.10]; 0.34 for 2.22 [2.00–2.98].
    pub fn half_width(&self) -> f64 {
        (self.high / self.ratio).max(self.ratio / self.low) - 1.0
    }
}

/// Resamples of the bootstrap: enough for stable 2.5% / 97.5% quantiles.
pub const RESAMPLES: usize = 4000;

/// median(a) / median(b) with a 95% percentile-bootstrap interval: both sample sets are
/// resampled with replacement, independently, [`RESAMPLES`] times. Seeded, so the same
/// samples always give the same interval. `None` when either set is empty or a median is 0.
pub fn ratio_of_medians(a: &[f64], b: &[f64], seed: u64) -> Option<Ratio> {
    bootstrap(&[a, b], |m| Some(m[0] / nonzero(m[1])?), seed, RESAMPLES)
}

/// The median of `samples` with its 95% percentile-bootstrap interval ([`RESAMPLES`]
/// resamples, seeded): how far the median of this many samples moves from draw to draw
/// (e.g. a search's evaluations to 5% over seeds). `None` when `samples` is empty.
pub fn median_interval(samples: &[f64], seed: u64) -> Option<Ratio> {
    bootstrap(&[samples], |m| Some(m[0]), seed, RESAMPLES)
}

/// [`lower_median`] of `samples` with its 95% percentile-bootstrap interval, as
/// [`median_interval`].
pub fn lower_median_interval(samples: &[f64], seed: u64) -> Option<Ratio> {
    bootstrap_by(&[samples], Central::Lower, |m| Some(m[0]), seed, RESAMPLES)
}

/// Which median a bootstrap resamples.
#[derive(Clone, Copy)]
enum Central {
    /// The mean of the middle two for an even count ([`median`]).
    Mean,
    /// The lower of them ([`lower_median`]).
    Lower,
}

/// How far a ratio of medians moved from a recorded one:
/// (median(a)/median(b)) / (median(a0)/median(b0)), with a 95% interval from resampling
/// all four sets, so the recording's own uncertainty is counted too.
pub fn change_of_ratio(
    now: (&[f64], &[f64]),
    then: (&[f64], &[f64]),
    seed: u64,
    resamples: usize,
) -> Option<Ratio> {
    let stat = |m: &[f64]| {
        let then = nonzero(m[2] / nonzero(m[3])?)?;
        Some(m[0] / nonzero(m[1])? / then)
    };
    bootstrap(&[now.0, now.1, then.0, then.1], stat, seed, resamples)
}

/// A statistic of the medians of `sets` with its 95% percentile-bootstrap interval:
/// every set resampled with replacement, independently, `resamples` times.
pub fn bootstrap(
    sets: &[&[f64]],
    stat: impl Fn(&[f64]) -> Option<f64>,
    seed: u64,
    resamples: usize,
) -> Option<Ratio> {
    bootstrap_by(sets, Central::Mean, stat, seed, resamples)
}

/// [`bootstrap`] of the `central` medians.
fn bootstrap_by(
    sets: &[&[f64]],
    central: Central,
    stat: impl Fn(&[f64]) -> Option<f64>,
    seed: u64,
    resamples: usize,
) -> Option<Ratio> {
    let medians: Option<Vec<f64>> = sets.iter().map(|s| self::central(s, central)).collect();
    let value = stat(&medians?)?;
    let mut rng = Rng::new(seed);
    let mut scratch: Vec<Vec<f64>> = sets.iter().map(|s| vec![0.0; s.len()]).collect();
    let mut m = vec![0.0; sets.len()];
    let mut values = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for ((set, buf), mi) in sets.iter().zip(&mut scratch).zip(&mut m) {
            resample(set, buf, &mut rng);
            *mi = median_in_place(buf, central);
        }
        values.extend(stat(&m));
    }
    if values.is_empty() {
        return None;
    }
    values.sort_by(|x, y| x.total_cmp(y));
    let q = |p: f64| values[((values.len() - 1) as f64 * p).round() as usize];
    Some(Ratio {
        ratio: value,
        low: q(0.025),
        high: q(0.975),
        level: 0.95,
    })
}

/// The `central` median of a non-empty buffer, reordering it (linear-time selection).
fn median_in_place(s: &mut [f64], central: Central) -> f64 {
    let n = s.len();
    let (_, &mut hi, _) = s.select_nth_unstable_by(n / 2, |a, b| a.total_cmp(b));
    if n % 2 == 1 {
        return hi;
    }
    let lo = s[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match central {
        Central::Mean => (lo + hi) / 2.0,
        Central::Lower => lo,
    }
}

fn nonzero(x: f64) -> Option<f64> {
    (x != 0.0 && x.is_finite()).then_some(x)
}

fn resample(from: &[f64], into: &mut [f64], rng: &mut Rng) {
    for x in into.iter_mut() {
        *x = from[rng.below(from.len())];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lower_median_of_a_censored_count_is_a_value_reached() {
        assert_eq!(lower_median(&[]), None);
        assert_eq!(lower_median(&[3.0, 1.0, 2.0]), Some(2.0));
        // Half the seeds reached (at 10, 20), half never (201): reached by 20, not "110.5".
        let hits = [201.0, 10.0, 201.0, 20.0];
        assert_eq!(lower_median(&hits), Some(20.0));
        assert_eq!(median(&hits), Some(110.5));
        let i = lower_median_interval(&hits, 0).unwrap();
        assert_eq!(i.ratio, 20.0);
        assert!(i.low >= 10.0 && i.high <= 201.0);
    }

    #[test]
    fn a_median_s_interval_holds_it_and_narrows_with_more_samples() {
        assert!(median_interval(&[], 0).is_none());
        let same = median_interval(&[7.0; 9], 0).unwrap();
        assert_eq!((same.ratio, same.low, same.high), (7.0, 7.0, 7.0));
        let few: Vec<f64> = (0..10).map(f64::from).collect();
        let many: Vec<f64> = (0..1000).map(|i| f64::from(i % 10)).collect();
        let (a, b) = (
            median_interval(&few, 1).unwrap(),
            median_interval(&many, 1).unwrap(),
        );
        assert!(a.low <= a.ratio && a.ratio <= a.high);
        assert!(b.high - b.low < a.high - a.low, "{b:?} {a:?}");
    }

    #[test]
    fn the_least_squares_line_recovers_a_line_and_is_flat_without_spread() {
        let line = LeastSquares::through(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0), (3.0, 7.0)]);
        assert!((line.slope - 2.0).abs() < 1e-12 && (line.y_mean - 4.0).abs() < 1e-12);
        assert_eq!(LeastSquares::through(&[(1.0, 0.0), (1.0, 9.0)]).slope, 0.0);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn the_interval_holds_the_ratio_and_narrows_with_less_noise() {
        let mut rng = Rng::new(3);
        let noisy = |m: f64, sd: f64, rng: &mut Rng| -> Vec<f64> {
            (0..15)
                .map(|_| m * (1.0 + sd * (rng.f64() - 0.5)))
                .collect()
        };
        let (a, b) = (noisy(4.0, 0.4, &mut rng), noisy(1.0, 0.4, &mut rng));
        let wide = ratio_of_medians(&a, &b, 1).unwrap();
        assert!(
            wide.low <= wide.ratio && wide.ratio <= wide.high,
            "{wide:?}"
        );
        assert!(wide.low < 4.0 && 4.0 < wide.high, "{wide:?}");
        let (a, b) = (noisy(4.0, 0.02, &mut rng), noisy(1.0, 0.02, &mut rng));
        let narrow = ratio_of_medians(&a, &b, 1).unwrap();
        assert!(
            narrow.high - narrow.low < (wide.high - wide.low) / 4.0,
            "{narrow:?} vs {wide:?}"
        );
        assert_eq!(ratio_of_medians(&a, &b, 1), Some(narrow), "seeded");
        assert_eq!(ratio_of_medians(&a, &[], 1), None);
    }

    #[test]
    fn selection_gives_the_sorted_median() {
        let mut rng = Rng::new(9);
        for n in 1..40 {
            let v: Vec<f64> = (0..n).map(|_| (rng.f64() * 10.0).floor()).collect();
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let (lo, hi) = (sorted[(n - 1) / 2], sorted[n / 2]);
            assert_eq!(median(&v), Some((lo + hi) / 2.0), "{v:?}");
            assert_eq!(lower_median(&v), Some(lo), "{v:?}");
        }
    }

    #[test]
    fn a_changed_ratio_is_measured_against_the_recorded_one() {
        let mut rng = Rng::new(5);
        let mut noisy = |m: f64| -> Vec<f64> {
            (0..30)
                .map(|_| m * (1.0 + 0.1 * (rng.f64() - 0.5)))
                .collect()
        };
        let (t0, r0) = (noisy(1.0), noisy(4.0));
        let (t, r) = (noisy(2.4), noisy(8.0));
        let c = change_of_ratio((&t, &r), (&t0, &r0), 1, 2000).unwrap();
        assert!(c.low < 1.2 && 1.2 < c.high && c.high < 1.3, "{c:?}");
        assert_eq!(change_of_ratio((&t, &r), (&t0, &[]), 1, 2000), None);
    }
}
