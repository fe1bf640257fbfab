//! The problem file's `search:` and `slurm:` sections: the defaults of the run's flags,
//! validated (a flag or run.json overrides them: [`crate::run::settings`]).

use serde_saphyr::Spanned;

use crate::error::{Error, Span};
use crate::problem::limits;
use crate::problem::locate::Ctx;
use crate::problem::raw::{RawSearch, RawSlurm};

/// The problem file's `search:` defaults, validated (the learner's name is checked where
/// learners are known, in the run's settings, and keeps its position for that message).
#[derive(Debug, Default, Clone)]
pub struct SearchDefaults {
    pub learner: Option<(String, Span)>,
    pub max_evals: Option<usize>,
    pub initial: Option<usize>,
    pub kappa: Option<f64>,
    pub seed: Option<u64>,
    pub pool: Option<usize>,
    /// `search.verify` and `search.verify_rounds`: the end-of-run verification's plan.
    pub verify: Option<usize>,
    pub verify_rounds: Option<usize>,
    /// `search.executor` as written, with its position.
    pub executor: Option<(String, Span)>,
    /// The `slurm:` section.
    pub slurm: SlurmDefaults,
}

/// The problem file's `slurm:` section (`--executor slurm`'s job settings).
#[derive(Debug, Clone, Default)]
pub struct SlurmDefaults {
    pub workers: Option<usize>,
    pub partition: Option<String>,
    pub time: Option<String>,
    pub account: Option<String>,
}

/// The `search:` defaults and the `slurm:` section: counts at least 1, κ a finite
/// number >= 0.
pub(super) fn search(cx: &Ctx, s: RawSearch, slurm: RawSlurm) -> Result<SearchDefaults, Error> {
    let count = |v: Option<&Spanned<usize>>, key: &str, min: usize| {
        v.map(|v| cx.valid(v, key, |&n| limits::at_least(n, min)))
            .transpose()
    };
    Ok(SearchDefaults {
        learner: s.learner.map(|l| (l.value, cx.span(&l.referenced))),
        max_evals: count(s.max_evals.as_ref(), "search.max_evals", 1)?,
        initial: count(s.initial.as_ref(), "search.initial", 0)?,
        kappa: (s.kappa.as_ref())
            .map(|k| cx.valid(k, "search.kappa", |&x| limits::non_negative(x)))
            .transpose()?,
        seed: s.seed,
        pool: count(s.pool.as_ref(), "search.pool", 1)?,
        verify: count(s.verify.as_ref(), "search.verify", 0)?,
        verify_rounds: count(s.verify_rounds.as_ref(), "search.verify_rounds", 2)?,
        executor: s.executor.map(|e| (e.value, cx.span(&e.referenced))),
        slurm: SlurmDefaults {
            workers: count(slurm.workers.as_ref(), "slurm.workers", 1)?,
            partition: slurm.partition,
            time: slurm.time,
            account: slurm.account,
        },
    })
}
