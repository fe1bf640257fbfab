//! `--learner auto`: which learner makes the next proposal, chosen by OpenTuner's AUC bandit
//! (Ansel et al. 2014) over the learners.
//!
//! All learners share one history, so switching costs nothing but a fit. Every learner is
//! tried once first, in [`ARMS`] order. A learner is credited 1 when its proposal is a new
//! best, else 0 (a failure 0). Among its uses in a sliding window of the last [`WINDOW`],
//! recent credits weigh more (the area under its curve of credits). The next learner is the
//! one with the highest credit plus an exploration bonus
//! `EXPLORATION · sqrt(2 log2(uses in the window + 1) / its uses)`. Random search is an arm
//! too. What this buys on the replay tables is measured in results/search/README.md: there
//! the GP alone is as good or better, so `gp` is the default and `auto` an option.

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
#[derive(Debug, Clone, Default)]
pub struct Bandit {
    uses: VecDeque<(Learner, f64)>,
}

impl Bandit {
    /// Records a use of `arm` and whether its proposal improved on the best so far.
    pub fn credit(&mut self, arm: Learner, reward: f64) {
        self.uses.push_back((arm, reward));
        if self.uses.len() > WINDOW {
            self.uses.pop_front();
        }
    }

    /// The learner for the next proposal: the first not used in the window, else the best
    /// by credit and exploration bonus.
    pub fn choose(&self) -> Learner {
        if let Some(&fresh) = ARMS.iter().find(|&&arm| self.uses(arm) == 0) {
            return fresh;
        }
        let n = self.uses.len() as f64;
        let score = |arm: Learner| {
            let k = self.uses(arm) as f64;
            self.auc(arm) + EXPLORATION * (2.0 * (n + 1.0).log2() / k).sqrt()
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
    fn every_arm_is_tried_first_then_one_that_does_well_takes_over() {
        let mut b = Bandit::default();
        let mut seen = Vec::new();
        for _ in 0..80 {
            let arm = b.choose();
            seen.push(arm);
            b.credit(arm, f64::from(u8::from(arm == Learner::Et)));
        }
        assert_eq!(seen[..ARMS.len()], ARMS, "each arm once, in order");
        assert_eq!(b.choose(), Learner::Et, "{seen:?}");
        let others = seen[ARMS.len()..].iter().filter(|&&a| a != Learner::Et);
        assert!(
            others.count() >= 1,
            "the others are explored now and then: {seen:?}"
        );
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
