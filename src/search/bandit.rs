//! `--learner auto`: which learner makes the next proposal, chosen by OpenTuner's AUC bandit
//! (Ansel et al. 2014) over the learners.
//!
//! All learners share one history, so switching costs nothing but a fit. Every learner is
//! tried once first, in [`ARMS`] order. A learner is credited 1 when its proposal is a new
//! best, else 0 (a failure 0). Among its uses in a sliding window of the last [`WINDOW`],
//! recent credits weigh more (the area under its curve of credits). That credit is per second
//! of the user's time: it is scaled by the window's mean seconds per evaluation over the
//! learner's own (an arm whose proposals build and run in half the time earns twice the credit
//! for the same new bests; the seconds are the evaluation's compile and run time, as measured,
//! so a resumed search chooses as the uninterrupted one did). The next learner is the one with
//! the highest credit plus an exploration bonus
//! `EXPLORATION · sqrt(2 log2(uses in the window + 1) / its uses)`. Random search is an arm
//! too. What this buys on the replay tables is measured in results/search/README.md and, with
//! the per-second credit against the per-evaluation one, identical-rules.md (docs/deciding.md, `auto`):
//! the GP alone is as good or better on most tables, so `gp` is the default and `auto` an option.

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

/// The most an arm's credit is multiplied or divided by for the speed of its evaluations.
const SPEED_CAP: f64 = 4.0;

/// Weight of the exploration bonus (OpenTuner's default).
const EXPLORATION: f64 = 0.05;

/// One proposal of a learner: whether it improved (its reward) and the seconds it cost.
#[derive(Debug, Clone, Copy)]
struct Use {
    arm: Learner,
    reward: f64,
    seconds: f64,
}

/// The bandit's memory: the last [`WINDOW`] uses, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Bandit {
    uses: VecDeque<Use>,
}

impl Bandit {
    /// Records a use of `arm`: whether its proposal improved on the best so far, and what its
    /// evaluation cost in seconds.
    pub fn credit(&mut self, arm: Learner, reward: f64, seconds: f64) {
        let seconds = if seconds.is_finite() {
            seconds.max(0.0)
        } else {
            0.0
        };
        self.uses.push_back(Use {
            arm,
            reward,
            seconds,
        });
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
            self.auc(arm) * self.speed(arm) + EXPLORATION * (2.0 * (n + 1.0).log2() / k).sqrt()
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
        let hits = self.uses.iter().filter(|u| u.arm == arm).map(|u| u.reward);
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
        self.uses.iter().filter(|u| u.arm == arm).count()
    }

    /// How much faster `arm`'s evaluations were than the window's: the window's mean seconds
    /// per use over `arm`'s, within [1/[`SPEED_CAP`], [`SPEED_CAP`]]; 1 when either costs
    /// nothing measurable (a replay of a table without times, the mock).
    fn speed(&self, arm: Learner) -> f64 {
        let mean_seconds = |of: &dyn Fn(&Use) -> bool| {
            let used = self.uses.iter().filter(|u| of(u));
            let (sum, n) = used.fold((0.0, 0.0), |(s, n), u| (s + u.seconds, n + 1.0));
            sum / n
        };
        let all = mean_seconds(&|_| true);
        let own = mean_seconds(&|u| u.arm == arm);
        if all > 0.0 && own > 0.0 {
            (all / own).clamp(1.0 / SPEED_CAP, SPEED_CAP)
        } else {
            1.0
        }
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
            b.credit(arm, f64::from(u8::from(arm == Learner::Et)), 1.0);
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
            b.credit(arm, if arm == Learner::Rf { 1.0 } else { 0.5 }, 1.0);
        }
        for _ in 0..30 {
            b.credit(Learner::Rf, 0.0, 1.0);
        }
        assert_ne!(b.choose(), Learner::Rf);
    }

    #[test]
    fn recent_credit_counts_more_than_old() {
        let mut b = Bandit::default();
        b.credit(Learner::Gp, 1.0, 1.0);
        b.credit(Learner::Gp, 0.0, 1.0);
        b.credit(Learner::Rf, 0.0, 1.0);
        b.credit(Learner::Rf, 1.0, 1.0);
        assert!(b.auc(Learner::Rf) > b.auc(Learner::Gp));
    }

    #[test]
    fn the_window_forgets_old_uses() {
        let mut b = Bandit::default();
        b.credit(Learner::Gp, 1.0, 1.0);
        for _ in 0..WINDOW {
            b.credit(Learner::Rf, 0.0, 1.0);
        }
        assert_eq!(b.uses(Learner::Gp), 0);
    }

    #[test]
    fn of_two_arms_finding_new_bests_as_often_the_one_with_faster_evaluations_leads() {
        let mut b = Bandit::default();
        for _ in 0..10 {
            b.credit(Learner::Gp, 1.0, 4.0);
            b.credit(Learner::Rf, 1.0, 1.0);
        }
        assert!(b.speed(Learner::Rf) > 1.0 && b.speed(Learner::Gp) < 1.0);
        assert_eq!(
            b.choose(),
            Learner::Gbrt,
            "an arm never used is tried first"
        );
        for arm in [Learner::Gbrt, Learner::Et, Learner::Random] {
            b.credit(arm, 0.0, 1.0);
        }
        assert_eq!(b.choose(), Learner::Rf);
    }

    #[test]
    fn without_measured_seconds_the_credit_is_per_evaluation() {
        let mut b = Bandit::default();
        b.credit(Learner::Gp, 1.0, 0.0);
        b.credit(Learner::Rf, 1.0, 0.0);
        assert_eq!(b.speed(Learner::Gp), 1.0);
        assert_eq!(b.speed(Learner::Rf), 1.0);
        b.credit(Learner::Gp, 1.0, f64::NAN);
        assert_eq!(b.speed(Learner::Gp), 1.0);
    }
}
