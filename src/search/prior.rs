//! `--warm-start DIR`: what an earlier run of the same space (another dataset size, another
//! machine) tells this one, as HiPerBOT transfers from a smaller input (Menon et al. 2020).
//!
//! Its successes are not measurements of this problem: their log-objectives are
//! standardised (mean 0, sd 1 within the earlier run), so only how configurations rank
//! there carries over, and at each fit they are rescaled to this run's own mean and spread.
//! They enter the regression beside this run's observations, with a share that decays as
//! those arrive ([`Prior::share`]): half of them at [`HALF_LIFE`] observations of this run,
//! a third at twice that. Its best configurations go first in the initial design.

use crate::problem::space::Config;
use crate::problem::Goal;

/// Own observations at which half of the prior is still used.
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

    /// The share of the prior that enters a fit after `own` observations of this run.
    pub fn share(own: usize) -> f64 {
        HALF_LIFE / (HALF_LIFE + own as f64)
    }

    /// The points that enter a fit after `own` observations: an evenly spread
    /// [`Prior::share`] of them (by rank, so the best and the worst both stay represented).
    pub fn used(&self, own: usize) -> impl Iterator<Item = &(Config, f64)> {
        let share = Prior::share(own);
        (self.points.iter().enumerate())
            .filter(move |(i, _)| ((*i + 1) as f64 * share).floor() > (*i as f64 * share).floor())
            .map(|(_, p)| p)
    }
}

/// Mean and standard deviation (1 when there is no spread to scale by).
pub fn mean_sd(v: &[f64]) -> (f64, f64) {
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
    fn the_share_used_decays_with_own_observations() {
        let p = prior(&(1..=100).map(f64::from).collect::<Vec<_>>());
        assert_eq!(p.used(0).count(), 100);
        assert_eq!(p.used(20).count(), 50);
        let late = p.used(180).count();
        assert!((9..=11).contains(&late), "{late}");
    }
}
