//! Statistics every stage uses: medians, and a bootstrap confidence interval for the ratio
//! of two medians (Efron & Tibshirani 1993, the percentile interval), which is how moldtune
//! states a speed-up: two programs timed interleaved in the same rounds, the ratio of
//! their medians, and how far it could plausibly be from the truth.

use crate::rng::Rng;

/// The median (mean of the middle two for an even count); `None` for no samples.
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
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

/// Resamples of the bootstrap: enough for stable 2.5% / 97.5% quantiles.
const RESAMPLES: usize = 4000;

/// median(a) / median(b) with a 95% percentile-bootstrap interval: both sample sets are
/// resampled with replacement, independently, [`RESAMPLES`] times. Seeded, so the same
/// samples always give the same interval. `None` when either set is empty or a median is 0.
pub fn ratio_of_medians(a: &[f64], b: &[f64], seed: u64) -> Option<Ratio> {
    let ratio = median(a)? / nonzero(median(b)?)?;
    let mut rng = Rng::new(seed);
    let mut ratios = Vec::with_capacity(RESAMPLES);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    for _ in 0..RESAMPLES {
        resample(a, &mut ra, &mut rng);
        resample(b, &mut rb, &mut rng);
        if let Some(d) = median(&rb).and_then(nonzero) {
            ratios.push(median(&ra)? / d);
        }
    }
    ratios.sort_by(|x, y| x.total_cmp(y));
    let q = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
    Some(Ratio {
        ratio,
        low: q(0.025),
        high: q(0.975),
        level: 0.95,
    })
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
}
