//! What the search has seen: one observation per evaluated (or pending) configuration, and
//! the counts the searcher asks of it at every step, kept as observations come and go so
//! that a step costs the same after 10,000 evaluations as after 10.

use crate::evaluate::outcome::{Source, Status};
use crate::problem::Goal;

#[derive(Debug, Clone)]
pub(super) struct Observation {
    /// Features for the GP ([`Space::kernel_features`]: one column per parameter, a
    /// permutation's pairs) and for the tree models (one-hot categories).
    ///
    /// [`Space::kernel_features`]: crate::problem::space::Space::kernel_features
    pub(super) encoded: Vec<f64>,
    pub(super) tree: Vec<f64>,
    pub(super) status: Status,
    pub(super) objective: Option<f64>,
    /// Wall seconds of the timed runs and their number (for censoring timeouts).
    pub(super) run_s: f64,
    pub(super) repeats: u32,
    pub(super) source: Source,
    /// Proposed and not yet evaluated: its objective is a lie (the best so far, a constant
    /// liar) until [`History::settle`] removes it, so that proposals made ahead differ.
    pub(super) pending: bool,
}

/// The observations in the order they came, with their counts.
pub(super) struct History {
    goal: Goal,
    obs: Vec<Observation>,
    /// Observations by (source, pending), and by status.
    by_source: Vec<(Source, bool, usize)>,
    by_status: Vec<(Status, usize)>,
    /// The best objective evaluated (pending proposals aside): the earliest of equals.
    best: Option<f64>,
    /// Pending observations by configuration (its encoding's bits).
    pending: std::collections::HashMap<Vec<u64>, usize>,
}

impl History {
    pub(super) fn new(goal: Goal) -> History {
        History {
            goal,
            obs: Vec::new(),
            by_source: Vec::new(),
            by_status: Vec::new(),
            best: None,
            pending: Default::default(),
        }
    }

    pub(super) fn push(&mut self, o: Observation) {
        self.count(&o, 1);
        if o.pending {
            *self.pending.entry(bits(&o.encoded)).or_default() += 1;
        }
        if let (Status::Ok, Some(v), false) = (o.status, o.objective, o.pending) {
            if self.best.is_none_or(|b| self.goal.better(v, b)) {
                self.best = Some(v);
            }
        }
        self.obs.push(o);
    }

    /// Removes the pending observations of the configuration encoded as `encoded`, if there
    /// are any (pending ones are few and recent: looked for from the end).
    pub(super) fn settle(&mut self, encoded: &[f64]) {
        let n = self.pending.remove(&bits(encoded)).unwrap_or(0);
        for _ in 0..n {
            if let Some(k) = (self.obs.iter()).rposition(|o| o.pending && o.encoded == encoded) {
                let o = self.obs.remove(k);
                self.count(&o, -1);
            }
        }
    }

    fn count(&mut self, o: &Observation, by: isize) {
        let key = (o.source, o.pending);
        match self.by_source.iter_mut().find(|e| (e.0, e.1) == key) {
            Some(e) => e.2 = e.2.saturating_add_signed(by),
            None => self
                .by_source
                .push((o.source, o.pending, by.max(0) as usize)),
        }
        match self.by_status.iter_mut().find(|e| e.0 == o.status) {
            Some(e) => e.1 = e.1.saturating_add_signed(by),
            None => self.by_status.push((o.status, by.max(0) as usize)),
        }
    }

    /// Observations from `source`, pending ones included.
    pub(super) fn from(&self, source: Source) -> usize {
        (self.by_source.iter())
            .filter(|e| e.0 == source)
            .map(|e| e.2)
            .sum()
    }

    /// Pending observations from `source` (all sources with `None`).
    pub(super) fn pending_from(&self, source: Option<Source>) -> usize {
        (self.by_source.iter())
            .filter(|e| e.1 && source.is_none_or(|s| s == e.0))
            .map(|e| e.2)
            .sum()
    }

    /// Observations with `status` (a pending one counts as a success).
    pub(super) fn with(&self, status: Status) -> usize {
        (self.by_status.iter())
            .filter(|e| e.0 == status)
            .map(|e| e.1)
            .sum()
    }

    /// Whether some observation's status is not among `kept`.
    pub(super) fn any_besides(&self, kept: impl Fn(Status) -> bool) -> bool {
        (self.by_status.iter()).any(|e| e.1 > 0 && !kept(e.0))
    }

    pub(super) fn best(&self) -> Option<f64> {
        self.best
    }

    pub(super) fn iter(&self) -> std::slice::Iter<'_, Observation> {
        self.obs.iter()
    }

    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.obs.is_empty()
    }
}

/// A configuration's encoding as a key.
fn bits(encoded: &[f64]) -> Vec<u64> {
    encoded.iter().map(|x| x.to_bits()).collect()
}

impl std::ops::Index<usize> for History {
    type Output = Observation;

    fn index(&self, k: usize) -> &Observation {
        &self.obs[k]
    }
}

#[cfg(test)]
mod tests {
    use super::{History, Observation};
    use crate::evaluate::outcome::{Source, Status};
    use crate::problem::Goal;
    use crate::rng::Rng;

    fn obs(k: usize, rng: &mut Rng, pending: bool) -> Observation {
        let sources = [
            Source::Default,
            Source::Initial,
            Source::Model,
            Source::Explore,
        ];
        let statuses = [Status::Ok, Status::RunError, Status::Pruned, Status::Ok];
        Observation {
            encoded: vec![k as f64],
            tree: vec![k as f64],
            status: if pending {
                Status::Ok
            } else {
                statuses[rng.below(4)]
            },
            objective: Some(rng.f64()),
            run_s: 0.0,
            repeats: 1,
            source: sources[rng.below(4)],
            pending,
        }
    }

    /// The counts kept as observations come and go are those a count over them gives, and
    /// the best is the earliest of the best successes, pending ones aside.
    #[test]
    fn the_books_kept_equal_a_recount() {
        let mut rng = Rng::for_step(7, 0, 0);
        let mut h = History::new(Goal::Minimize);
        let mut pending: Vec<usize> = Vec::new();
        for k in 0..400 {
            match (rng.below(3), pending.is_empty()) {
                (0, false) => {
                    let p = pending.swap_remove(rng.below(pending.len()));
                    h.settle(&[p as f64]);
                    h.push(obs(p, &mut rng, false));
                }
                (1, _) => {
                    pending.push(k);
                    h.push(obs(k, &mut rng, true));
                }
                _ => h.push(obs(k, &mut rng, false)),
            }
            let count = |f: &dyn Fn(&Observation) -> bool| h.iter().filter(|o| f(o)).count();
            for s in [
                Source::Default,
                Source::Initial,
                Source::Model,
                Source::Explore,
            ] {
                assert_eq!(h.from(s), count(&|o| o.source == s));
                assert_eq!(
                    h.pending_from(Some(s)),
                    count(&|o| o.pending && o.source == s)
                );
            }
            assert_eq!(h.with(Status::Ok), count(&|o| o.status == Status::Ok));
            let oks = h.iter().filter(|o| o.status == Status::Ok && !o.pending);
            let best = oks.filter_map(|o| o.objective).reduce(f64::min);
            assert_eq!(h.best(), best);
        }
        assert!(h.any_besides(|s| s == Status::Ok));
        assert!(!h.any_besides(|_| true));
        // A configuration pending twice (lost, proposed again) is settled at once.
        let pending_now = h.pending_from(None);
        h.push(obs(9999, &mut rng, true));
        h.push(obs(9999, &mut rng, true));
        h.settle(&[9999.0]);
        assert_eq!(h.pending_from(None), pending_now);
        assert!(h.iter().all(|o| !(o.pending && o.encoded == [9999.0])));
    }
}
