//! `--warm-start DIR`: an earlier run of the same space as the prior of this one (see
//! [`crate::search::prior`]). Its successes enter the model, rescaled; nothing of it is
//! written to this run's log. run.json says what was transferred.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::evaluate::outcome::Status;
use crate::problem::space::Space;
use crate::problem::Goal;
use crate::search::prior::Prior;

fn goal_word(g: Goal) -> &'static str {
    match g {
        Goal::Minimize => "minimize",
        Goal::Maximize => "maximize",
    }
}

/// What run.json records of a warm start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarmStart {
    /// The earlier run's directory, as given.
    pub from: PathBuf,
    /// Its problem's name.
    pub problem_name: String,
    /// Its evaluations, and the successes that became the prior.
    pub evaluations: usize,
    pub successes: usize,
}

/// The prior of `dir`, a run of `space` towards `goal`: refused (exit 2) when it is not a run
/// directory, when its space differs in parameters or values (the first difference named),
/// when its goal differs, or when none of its evaluations succeeded.
pub fn load(dir: &Path, space: &Space, goal: Goal) -> Result<(Prior, WarmStart), Error> {
    let refuse = |why: String, hint: &str| {
        Error::usage(
            format!("cannot warm-start from `{}`: {why}", dir.display()),
            Some(hint),
        )
    };
    let (earlier, records) = crate::report::load_run(dir).map_err(|e| {
        refuse(
            e.to_string(),
            "give the directory of a finished `moldtune run` (it holds run.json and results.csv)",
        )
    })?;
    let same = "give a run of the same parameters and values (another dataset size or machine)";
    if let Some(d) = space.first_difference(&earlier.space) {
        return Err(refuse(format!("its space differs: {d}"), same));
    }
    if earlier.metric.goal != goal {
        return Err(refuse(
            format!(
                "its goal is to {}, this run's to {}",
                goal_word(earlier.metric.goal),
                goal_word(goal)
            ),
            same,
        ));
    }
    let successes: Vec<_> = (records.iter())
        .filter(|r| r.m.status == Status::Ok)
        .filter_map(|r| r.m.objective.map(|y| (r.config.clone(), y)))
        .collect();
    if successes.is_empty() {
        return Err(refuse(
            "none of its evaluations succeeded".into(),
            "a prior needs successes",
        ));
    }
    let record = WarmStart {
        from: dir.to_path_buf(),
        problem_name: earlier.name.clone(),
        evaluations: records.len(),
        successes: successes.len(),
    };
    Ok((Prior::new(successes, goal), record))
}
