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
}

impl Scorer {
    /// The acquisition of `s` against the regression targets `y`.
    pub(crate) fn new(s: &Settings, y: &[f64]) -> Scorer {
        Scorer {
            acquisition: s.acquisition,
            kappa: s.kappa,
            xi: s.xi,
            y_best: y.iter().copied().fold(f64::INFINITY, f64::min),
        }
    }

    /// The lower confidence bound μ − κσ alone (mctree's tree search ranks its pool by it).
    pub(crate) fn lcb(kappa: f64) -> Scorer {
        Scorer {
            acquisition: Acquisition::Lcb,
            kappa,
            xi: 0.0,
            y_best: f64::INFINITY,
        }
    }

    /// Score of a candidate with predicted mean `mu`, standard deviation `sd` and probability
    /// `p` of succeeding (lower is better). LCB ignores `p`: infeasible candidates are
    /// filtered out before scoring; EI and PI are weighted by it.
    pub(crate) fn score(&self, mu: f64, sd: f64, p: f64) -> f64 {
        match self.acquisition {
            Acquisition::Lcb => mu - self.kappa * sd,
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
