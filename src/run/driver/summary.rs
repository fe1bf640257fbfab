//! What a run ends with: its summary for the command line (`run`, `mctree`).

use std::path::PathBuf;

use super::Session;
use crate::problem::progress::VALUE;
use crate::run::log;
use crate::run::meta::Termination;
use crate::run::verification::Verification;

#[derive(Debug)]
pub struct Summary {
    pub dir: PathBuf,
    pub evaluations: usize,
    pub best: Option<(usize, f64, String)>,
    pub default_objective: Option<f64>,
    pub termination: Termination,
    pub verification: Option<Verification>,
    /// The best configuration by parameter name (inactive parameters absent).
    pub best_config: Option<serde_json::Map<String, serde_json::Value>>,
    pub counts: String,
    /// With `--learner auto`: how many evaluations each learner proposed ("gp 31, rf 12").
    pub proposers: Option<String>,
    /// Evaluations that spent budget (all of them, or only the valid ones: [`Budget`]).
    pub spent: usize,
    /// How two objectives compare (for the summary's gain by the search's own numbers).
    pub objective: crate::problem::objective::Objective,
    /// The configuration the problem's tie rule prefers (`prefer:`).
    pub preferred: Option<crate::run::prefer::Preferred>,
    /// The tie rule's quantity when the problem has a rule but no success reported it.
    pub tie_rule_unfed: Option<String>,
    /// The `progress:` regex when no evaluation's output matched it (nothing could be pruned).
    pub progress_unfed: Option<String>,
    /// The problem's work and the machine's limits (`work:`): GFLOP/s and the roofline.
    pub roofline: Option<crate::evaluate::roofline::Roofline>,
}

impl Summary {
    /// The run's summary as it ended with `termination`.
    pub(super) fn of(s: &Session, termination: Termination) -> Summary {
        let space = &s.problem.space;
        Summary {
            dir: s.dir.clone(),
            evaluations: s.records.len(),
            best: s.best_id.map(|i| {
                let r = &s.records[i];
                let obj = r.m.objective.unwrap_or(f64::NAN);
                (i, obj, space.describe(&r.config))
            }),
            default_objective: log::default_record(&s.records).and_then(|r| r.m.objective),
            termination,
            verification: s.meta.verification.clone(),
            best_config: (s.best_id).map(|i| log::json_record(s.problem, &s.records[i]).config),
            counts: s.progress.summary_counts(),
            proposers: (s.s.learner == crate::search::Learner::Auto)
                .then(|| log::proposer_counts(&s.records)),
            spent: s.spent,
            objective: crate::problem::objective::Objective::of(&s.problem.metric),
            preferred: crate::run::prefer::preferred_json(s.problem, &s.records),
            tie_rule_unfed: (s.problem.prefer.as_ref())
                .filter(|_| crate::run::prefer::preferred(s.problem, &s.records).is_none())
                .map(|p| p.quantity.clone()),
            progress_unfed: (s.problem.progress.as_ref())
                .filter(|_| !s.records.iter().any(|r| r.m.recorded.contains_key(VALUE)))
                .and_then(|p| Some(p.regex.as_ref()?.as_str().to_string())),
            roofline: s.meta.roofline,
        }
    }
}
