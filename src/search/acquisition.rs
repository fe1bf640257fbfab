//! Acquisition functions: how promising a candidate is, given the surrogate's predicted mean
//! and standard deviation (of the "smaller is better" target) and its probability of
//! succeeding. Lower scores are better, so every function here is minimised.

use crate::search::settings::{Acquisition, Settings};

/// Standard normal density and distribution function.
fn phi(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

fn big_phi(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// Complementary error function (Chebyshev fit, relative error < 1.2e-7; Press et al.).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The acquisition function of one model step, with what it needs of the settings and the
/// training targets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scorer {
    acquisition: Acquisition,
    kappa: f64,
    xi: f64,
    /// The best (smallest) regression target so far, which EI and PI try to improve on.
    y_best: f64,
    /// The worst: what a failure is worth to LCB.
    y_worst: f64,
}

impl Scorer {
    /// The acquisition of `s` against the regression targets `y`.
    pub(crate) fn new(s: &Settings, y: &[f64]) -> Scorer {
        Scorer {
            acquisition: s.acquisition,
            kappa: s.kappa,
            xi: s.xi,
            y_best: y.iter().copied().fold(f64::INFINITY, f64::min),
            y_worst: y.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }

    /// The lower confidence bound μ − κσ alone (mctree's tree search ranks its pool by it).
    pub(crate) fn lcb(kappa: f64) -> Scorer {
        Scorer {
            acquisition: Acquisition::Lcb,
            kappa,
            xi: 0.0,
            y_best: f64::INFINITY,
            y_worst: f64::NEG_INFINITY,
        }
    }

    /// Score of a candidate with predicted mean `mu`, standard deviation `sd` and probability
    /// `p` of succeeding (lower is better). LCB is that of the expected outcome, a failure
    /// counting as the worst target so far: p·(μ − κσ) + (1 − p)·worst, so a candidate the
    /// classifier doubts must promise more than a sure one; EI and PI are weighted by `p`
    /// (a failure improves nothing). Both are monotone in σ.
    pub(crate) fn score(&self, mu: f64, sd: f64, p: f64) -> f64 {
        match self.acquisition {
            Acquisition::Lcb => {
                let lcb = mu - self.kappa * sd;
                p * lcb + (1.0 - p) * self.y_worst.max(lcb)
            }
            Acquisition::Ei | Acquisition::Pi => -(self.improvement(mu, sd).max(0.0) * p),
        }
    }

    /// Expected improvement or probability of improvement on `y_best` by a margin `xi`.
    fn improvement(&self, mu: f64, sd: f64) -> f64 {
        let imp = self.y_best - mu - self.xi;
        let s = sd.max(1e-12);
        let z = imp / s;
        if self.acquisition == Acquisition::Ei {
            imp * big_phi(z) + s * phi(z)
        } else {
            big_phi(z)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Goal;
    use crate::search::settings::Learner;

    fn scorer(acquisition: Acquisition) -> Scorer {
        let s = Settings {
            acquisition,
            ..Settings::new(Learner::Gp, 0, Goal::Minimize)
        };
        // Targets so far: best 0, worst 10.
        Scorer::new(&s, &[0.0, 4.0, 10.0])
    }

    #[test]
    fn a_candidate_the_classifier_doubts_must_promise_more_than_a_sure_one() {
        for acq in [Acquisition::Lcb, Acquisition::Ei] {
            let s = scorer(acq);
            // Slightly better by the model, but a 30% chance of failing.
            let doubted = s.score(-0.5, 1.0, 0.7);
            let sure = s.score(-0.4, 1.0, 1.0);
            assert!(sure < doubted, "{acq:?}: sure {sure} doubted {doubted}");
            // Far better by the model: worth the risk.
            assert!(s.score(-8.0, 1.0, 0.7) < sure, "{acq:?}");
        }
    }

    #[test]
    fn lcb_is_the_plain_bound_when_success_is_certain_and_monotone_in_sigma() {
        let s = scorer(Acquisition::Lcb);
        assert_eq!(s.score(1.0, 0.5, 1.0), 1.0 - s.kappa * 0.5);
        for p in [0.2, 0.6, 1.0] {
            assert!(s.score(1.0, 2.0, p) <= s.score(1.0, 1.0, p));
        }
    }
}
