//! `--warm-start DIR`: what an earlier run of the same space (another dataset size, another
//! machine) tells this one, as HiPerBOT transfers from a smaller input (Menon et al. 2020).
//!
//! Its successes are not measurements of this problem: their log-objectives are
//! standardised (mean 0, sd 1 within the earlier run), so only how configurations rank
//! there carries over. The searcher fits a forest to them once, and every model step starts
//! from that forest's prediction as its prior mean, mapped onto this run's own targets by
//! least squares (a slope ≥ 0) and shrunk as this run's successes arrive ([`Prior::share`]:
//! by half at [`HALF_LIFE`] of them, by two thirds at twice that); the step's model learns
//! what the prior does not explain. Its best configurations go first in the initial design.

use crate::problem::space::Config;
use crate::problem::Goal;

/// Successes of this run at which the prior mean keeps half its slope.
pub const HALF_LIFE: f64 = 20.0;

/// The earlier run's successes, by standardised target (smaller is better), best first.
#[derive(Debug, Clone, Default)]
pub struct Prior {
    pub points: Vec<(Config, f64)>,
}

impl Prior {
    /// The prior of an earlier run's successes (`config`, objective) under `goal`.
    pub fn new(successes: Vec<(Config, f64)>, goal: Goal) -> Prior {
        let positive = successes.iter().all(|s| s.1 > 0.0);
        let t = |v: f64| {
            let v = if positive { v.ln() } else { v };
            if goal == Goal::Maximize {
                -v
            } else {
                v
            }
        };
        let ys: Vec<f64> = successes.iter().map(|s| t(s.1)).collect();
        let (mean, sd) = mean_sd(&ys);
        let mut points: Vec<(Config, f64)> = (successes.into_iter().zip(ys))
            .map(|((c, _), y)| (c, (y - mean) / sd))
            .collect();
        points.sort_by(|a, b| a.1.total_cmp(&b.1));
        Prior { points }
    }

    /// The `k` best configurations of the earlier run.
    pub fn best(&self, k: usize) -> impl Iterator<Item = &Config> {
        self.points.iter().take(k).map(|p| &p.0)
    }

    /// How much of the prior mean a fit keeps after `own` successes of this run.
    pub fn share(own: usize) -> f64 {
        HALF_LIFE / (HALF_LIFE + own as f64)
    }
}

/// Mean and standard deviation (1 when there is no spread to scale by).
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    let sd = var.sqrt();
    (mean, if sd > 1e-12 { sd } else { 1.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prior(ys: &[f64]) -> Prior {
        let pts = ys
            .iter()
            .enumerate()
            .map(|(i, &y)| (Config(vec![i as f64]), y))
            .collect();
        Prior::new(pts, Goal::Minimize)
    }

    #[test]
    fn ranks_carry_over_scale_does_not() {
        let a = prior(&[1.0, 2.0, 4.0, 8.0]);
        let b = prior(&[10.0, 20.0, 40.0, 80.0]);
        for (p, q) in a.points.iter().zip(&b.points) {
            assert!((p.1 - q.1).abs() < 1e-9);
        }
        assert_eq!(a.best(1).next(), Some(&Config(vec![0.0])));
    }

    #[test]
    fn the_share_decays_with_own_observations() {
        assert_eq!(Prior::share(0), 1.0);
        assert_eq!(Prior::share(HALF_LIFE as usize), 0.5);
        assert!(Prior::share(100) < Prior::share(40));
    }
}
