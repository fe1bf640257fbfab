//! `progress:` — intermediate values a program prints while it runs (a training's validation
//! accuracy after each epoch), read as it runs so that a hopeless configuration can be
//! stopped early and recorded as `pruned` (see [`crate::evaluate::prune`]).
//!
//! ```yaml
//! progress:
//!   regex: 'epoch (\d+) val_acc ([0-9.]+)'   # two groups: the step, then the value
//!   startup: 5     # completed configurations' values at a step before it prunes (default 5)
//!   warmup: 1      # steps up to this one are never pruned (default 0)
//!   goal: maximize # which way the value is better (default: the metric's goal)
//! ```

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::error::Error;
use crate::problem::locate::Ctx;
use crate::problem::Goal;

/// The columns of results.csv holding the last step a run reported and its value.
pub const STEP: &str = "progress_step";
pub const VALUE: &str = "progress_value";

/// Completed configurations that must have reported a value at a step before a run is pruned
/// there, unless the file says otherwise.
pub const DEFAULT_STARTUP: usize = 5;

/// The problem's `progress:`.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Two capture groups: the step, then the value; `None` in a problem whose evaluations
    /// are told (`moldtune tell --step` reports each value).
    pub regex: Option<regex::Regex>,
    /// Which way the value is better.
    pub goal: Goal,
    /// Completed configurations that must have reported a value at a step before a run is
    /// pruned there.
    pub startup: usize,
    /// Steps up to this one are never pruned.
    pub warmup: f64,
}

impl Progress {
    /// Every (step, value) in `text`, in order; lines whose numbers do not read are skipped.
    pub fn points(&self, text: &str) -> Vec<(f64, f64)> {
        let number = |c: &regex::Captures, k| {
            let m: Option<regex::Match> = c.get(k);
            m.and_then(|m| m.as_str().trim().parse::<f64>().ok())
                .filter(|x| x.is_finite())
        };
        let Some(regex) = &self.regex else {
            return Vec::new();
        };
        (regex.captures_iter(text))
            .filter_map(|c| Some((number(&c, 1)?, number(&c, 2)?)))
            .collect()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProgress {
    /// Absent only in a problem whose evaluations are told.
    pub regex: Option<Spanned<String>>,
    pub startup: Option<Spanned<u64>>,
    pub warmup: Option<Spanned<f64>>,
    pub goal: Option<Goal>,
}

/// `progress:`: a regex with exactly two capture groups (step, value), unless the
/// evaluations are `told`; `startup` at least 1; `warmup` a finite number.
pub(super) fn progress(
    cx: &Ctx,
    raw: &RawProgress,
    metric_goal: Goal,
    told: bool,
) -> Result<Progress, Error> {
    let regex = match &raw.regex {
        Some(r) => Some(progress_regex(cx, r)?),
        None if told => None,
        None => {
            let message = "`progress:` has no `regex:`: nothing would read the values the program prints while it runs".to_string();
            let hint = "e.g. `regex: 'epoch (\\d+) val_acc ([0-9.]+)'` (the step, then the value)";
            return Err(Error::ConfigFile {
                file: cx.file.to_path_buf(),
                message,
                hint: Some(hint.into()),
            });
        }
    };
    let startup = match &raw.startup {
        Some(s) => cx.valid(s, "progress.startup", |&n| match n {
            0 => Err("is 0: give at least 1 configuration to compare with".to_string()),
            n => Ok(n as usize),
        })?,
        None => DEFAULT_STARTUP,
    };
    let warmup = match &raw.warmup {
        Some(w) => cx.valid(w, "progress.warmup", |&x: &f64| {
            x.is_finite()
                .then_some(x)
                .ok_or(format!("is {x}: give a step"))
        })?,
        None => 0.0,
    };
    let goal = raw.goal.unwrap_or(metric_goal);
    Ok(Progress {
        regex,
        goal,
        startup,
        warmup,
    })
}

/// `progress.regex`: it compiles and has exactly two capture groups.
fn progress_regex(cx: &Ctx, r: &Spanned<String>) -> Result<regex::Regex, Error> {
    let regex = regex::Regex::new(&r.value).or_else(|e| {
        let message = format!("invalid `progress.regex` `{}`: {e}", r.value);
        cx.err(&r.referenced, message, None)
    })?;
    if regex.captures_len() != 3 {
        let message = format!(
            "`progress.regex` `{}` has {} capture groups; it needs exactly two: the step, then the value",
            r.value,
            regex.captures_len() - 1
        );
        let hint = "e.g. `'epoch (\\d+) val_acc ([0-9.]+)'`; write other groups as `(?:…)`";
        return cx.err(&r.referenced, message, Some(hint));
    }
    Ok(regex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_read_every_step_and_skip_what_does_not_parse() {
        let p = Progress {
            regex: Some(regex::Regex::new(r"epoch (\d+) acc ([0-9.na]+)").unwrap()),
            goal: Goal::Maximize,
            startup: 1,
            warmup: 0.0,
        };
        let text = "epoch 1 acc 0.5\nnoise\nepoch 2 acc nan\nepoch 3 acc 0.75\n";
        assert_eq!(p.points(text), vec![(1.0, 0.5), (3.0, 0.75)]);
    }
}
