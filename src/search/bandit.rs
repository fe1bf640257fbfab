//! `--learner auto`: which learner makes the next proposal, chosen by a multi-armed bandit
//! over the learners, in the manner of OpenTuner's AUC bandit (Ansel et al. 2014).
//!
//! All learners share one history, so switching costs nothing but a fit. A learner is
//! credited for what its proposal brings: 1 for a new best, else the share of the successes
//! so far that it beats, 0 for a failure (new bests alone are too rare in a short search to
//! tell learners apart: with them only, `auto` needed 36 evaluations to 5% on gemm-table,
//! with graded credit 22). Among its last uses in a sliding window, recent credits weigh more
//! (the area under its curve of credits). The next learner is the one with the highest
//! credit plus an exploration bonus that shrinks with its uses in the window. The GP starts
//! with one credited use: on the few observations of a search's start it is the most
//! sample-efficient model, and it keeps the turn while its proposals are good. Random search
//! is an arm too: it is how `auto` explores.

use std::collections::VecDeque;

use crate::search::settings::Learner;

/// The learners `auto` chooses from, in the order ties and first uses go.
pub const ARMS: [Learner; 5] = [
    Learner::Gp,
    Learner::Rf,
    Learner::Gbrt,
    Learner::Et,
    Learner::Random,
];

/// Uses remembered: older ones no longer count (the landscape a learner is good at changes
/// as the search narrows).
const WINDOW: usize = 50;

/// Weight of the exploration bonus (OpenTuner's default).
const EXPLORATION: f64 = 0.05;

/// The bandit's memory: the last [`WINDOW`] uses, oldest first, and whether each improved.
#[derive(Debug, Clone)]
pub struct Bandit {
    uses: VecDeque<(Learner, f64)>,
}

impl Default for Bandit {
    /// A bandit that starts with the GP, as if it had improved once: on the small samples
    /// of a search's start it is the most sample-efficient model (Bayesian optimisation's
    /// usual surrogate; results/search/), and it keeps the turn while it improves.
    fn default() -> Bandit {
        Bandit {
            uses: VecDeque::from([(Learner::Gp, 1.0)]),
        }
    }
}

impl Bandit {
    /// Records a use of `arm` and whether its proposal improved on the best so far.
    pub fn credit(&mut self, arm: Learner, reward: f64) {
        self.uses.push_back((arm, reward));
        if self.uses.len() > WINDOW {
            self.uses.pop_front();
        }
    }

    /// The learner for the next proposal.
    pub fn choose(&self) -> Learner {
        let n = self.uses.len() as f64;
        let score = |arm: Learner| {
            let k = self.uses(arm);
            self.auc(arm) + EXPLORATION * (2.0 * (n + 1.0).log2() / (k + 1) as f64).sqrt()
        };
        let mut best = (ARMS[0], score(ARMS[0]));
        for arm in &ARMS[1..] {
            let s = score(*arm);
            if s > best.1 {
                best = (*arm, s);
            }
        }
        best.0
    }

    /// Area under `arm`'s curve of credits in the window: its i-th use (oldest first) counts
    /// i times, normalised so that crediting every use gives 1.
    fn auc(&self, arm: Learner) -> f64 {
        let hits = self.uses.iter().filter(|u| u.0 == arm).map(|u| u.1);
        let (mut sum, mut k) = (0.0, 0.0);
        for hit in hits {
            k += 1.0;
            sum += k * hit;
        }
        if k == 0.0 {
            0.0
        } else {
            sum / (k * (k + 1.0) / 2.0)
        }
    }

    /// How many proposals `arm` made in the window.
    fn uses(&self, arm: Learner) -> usize {
        self.uses.iter().filter(|u| u.0 == arm).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gp_starts_and_an_arm_that_does_well_takes_over() {
        let mut b = Bandit::default();
        assert_eq!(b.choose(), Learner::Gp);
        let mut seen = Vec::new();
        for _ in 0..80 {
            let arm = b.choose();
            seen.push(arm);
            b.credit(arm, if arm == Learner::Et { 0.9 } else { 0.1 });
        }
        assert!(
            seen.contains(&Learner::Et),
            "every arm gets tried: {seen:?}"
        );
        assert_eq!(b.choose(), Learner::Et, "{seen:?}");
    }

    #[test]
    fn an_arm_that_stops_improving_loses_its_turn_to_exploration() {
        let mut b = Bandit::default();
        for arm in ARMS {
            b.credit(arm, if arm == Learner::Rf { 1.0 } else { 0.5 });
        }
        for _ in 0..30 {
            b.credit(Learner::Rf, 0.0);
        }
        assert_ne!(b.choose(), Learner::Rf);
    }

    #[test]
    fn recent_credit_counts_more_than_old() {
        let mut b = Bandit::default();
        b.credit(Learner::Gp, 1.0);
        b.credit(Learner::Gp, 0.0);
        b.credit(Learner::Rf, 0.0);
        b.credit(Learner::Rf, 1.0);
        assert!(b.auc(Learner::Rf) > b.auc(Learner::Gp));
    }

    #[test]
    fn the_window_forgets_old_uses() {
        let mut b = Bandit::default();
        b.credit(Learner::Gp, 1.0);
        for _ in 0..WINDOW {
            b.credit(Learner::Rf, 0.0);
        }
        assert_eq!(b.uses(Learner::Gp), 0);
    }
}
