//! Which configuration a command about one variant (`measure`, `show`) is about: the
//! default, or an evaluation of a run directory (its verified best unless `--eval N`, or the
//! tie rule's preferred one with `--preferred`), with `--set P=V` overrides applied on top.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::problem::overrides;
use crate::problem::space::Config;
use crate::problem::Problem;
use crate::run::dir::RunDir;
use crate::run::log;

/// The flags that choose the configuration, declared once for `measure` and `show`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Which {
    /// Take the configuration from this run directory (its best unless `--eval` or
    /// `--preferred`).
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// The evaluation of `--from` to use.
    #[arg(long, requires = "from", conflicts_with = "preferred")]
    pub eval: Option<usize>,
    /// The configuration the problem's tie rule (`prefer:`) prefers in `--from`'s run.
    #[arg(long, requires = "from")]
    pub preferred: bool,
    /// Set a parameter, e.g. `--set P0=32 --set P2='#pragma omp interchange'` (on top of the
    /// default or the `--from` configuration).
    #[arg(long = "set", value_name = "P=V")]
    pub set: Vec<String>,
}

impl Which {
    /// A run directory's best.
    pub fn best_of(dir: &Path) -> Which {
        Which {
            from: Some(dir.to_path_buf()),
            ..Which::default()
        }
    }
}

/// The configuration chosen by `--from DIR [--eval N | --preferred]` and `--set P=V …`.
pub fn configuration(problem: &Problem, which: &Which) -> Result<Config, Error> {
    let (eval, sets) = (which.eval, &which.set);
    let base = match which.from.as_deref() {
        None => problem.default_config(),
        Some(dir) if which.preferred => preferred(problem, dir)?,
        Some(dir) => {
            let records = RunDir::records_under(dir, problem)?;
            let pick = match eval {
                Some(id) => records.iter().find(|r| r.eval_id == id),
                None => {
                    // A run's best is its verified winner when it has one (what `best`
                    // reports), by the goal of the problem given.
                    let winner = (RunDir::metadata(dir).ok()).and_then(|m| m.winner());
                    log::claimed(&records, problem.metric.goal, winner, log::succeeded)
                }
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

/// The tie rule's preferred configuration in the run at `dir`.
fn preferred(problem: &Problem, dir: &Path) -> Result<Config, Error> {
    if problem.prefer.is_none() {
        let why = "`--preferred` needs a tie rule, and the problem has no `prefer:`";
        return Err(Error::usage(
            why,
            Some("see `prefer:` in docs/problem-file.md"),
        ));
    }
    let records = RunDir::records_under(dir, problem)?;
    match crate::run::prefer::preferred(problem, &records) {
        Some(r) => Ok(r.config.clone()),
        None => Err(Error::usage(
            format!(
                "no evaluation of `{}` has the tie rule's quantity",
                dir.display()
            ),
            Some("see `moldtune best DIR`"),
        )),
    }
}
