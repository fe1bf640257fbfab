//! Which configuration a command about one variant (`measure`, `show`) is about: the
//! default, or an evaluation of a run directory (its verified best unless `--eval N`), with `--set
//! P=V` overrides applied on top.

use std::path::Path;

use crate::error::Error;
use crate::problem::overrides;
use crate::problem::space::Config;
use crate::problem::Problem;
use crate::run::log;
use crate::run::meta;

/// The configuration chosen by `--from DIR [--eval N]` and `--set P=V …`.
pub fn configuration(
    problem: &Problem,
    from: Option<&Path>,
    eval: Option<usize>,
    sets: &[String],
) -> Result<Config, Error> {
    let base = match from {
        None => problem.default_config(),
        Some(dir) => {
            let records = log::read_run_records(dir, problem)?;
            // A run's best is its verified winner when it has one (what `best` reports).
            let verified =
                (meta::read_run_json(dir).ok()).and_then(|m| m.verification?.winner_eval_id);
            let pick = match eval.or(verified) {
                Some(id) => records.iter().find(|r| r.eval_id == id),
                None => log::best(&records, problem.metric.goal),
            };
            pick.ok_or_else(|| {
                Error::usage(
                    format!("no such evaluation in `{}`", dir.display()),
                    Some("see `moldtune best DIR`"),
                )
            })?
            .config
            .clone()
        }
    };
    overrides::apply(&problem.space, &base, sets)
}
