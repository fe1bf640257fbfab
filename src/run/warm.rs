//! `--warm-start DIR`: an earlier run of the same space as the prior of this one (see
//! [`crate::search::prior`]). Its successes enter the model, rescaled; nothing of it is
//! written to this run's log. run.json says what was transferred.

use std::path::Path;

use crate::error::Error;
use crate::evaluate::outcome::Status;
use crate::problem::space::{Config, Space};
use crate::problem::{Goal, Problem};
use crate::run::front_ends::FrontEnds;
use crate::run::meta::WarmStart;
use crate::search::prior::Prior;

fn goal_word(g: Goal) -> &'static str {
    match g {
        Goal::Minimize => "minimize",
        Goal::Maximize => "maximize",
    }
}

/// The successes a warm start recorded, as configurations (an inactive parameter: NaN).
fn successes_of(w: &WarmStart) -> Vec<(Config, f64)> {
    let config = |c: &[Option<f64>]| Config(c.iter().map(|x| x.unwrap_or(f64::NAN)).collect());
    w.prior.iter().map(|(c, y)| (config(c), *y)).collect()
}

/// Whether two priors hold the same successes (numbers equal to 1e-12: run.json's text need
/// not give back the last bit).
fn same_prior(a: &[(Vec<Option<f64>>, f64)], b: &[(Vec<Option<f64>>, f64)]) -> bool {
    let near = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0);
    let same_x = |x: &Option<f64>, y: &Option<f64>| match (x, y) {
        (Some(x), Some(y)) => near(*x, *y),
        (x, y) => x.is_none() && y.is_none(),
    };
    a.len() == b.len()
        && (a.iter().zip(b)).all(|((ca, ya), (cb, yb))| {
            near(*ya, *yb) && ca.len() == cb.len() && ca.iter().zip(cb).all(|(x, y)| same_x(x, y))
        })
}

/// The prior of a run: the one a resumed run recorded (a `--warm-start` given again must
/// hold the same successes, wherever it lies now), else the run `given` names.
pub fn for_run(
    given: Option<&Path>,
    recorded: Option<&WarmStart>,
    problem: &Problem,
    fronts: &FrontEnds,
) -> Result<Option<(Prior, WarmStart)>, Error> {
    let (space, goal, this) = (&problem.space, problem.metric.goal, Some(problem));
    match (recorded, given) {
        (Some(w), given) if !w.prior.is_empty() => {
            if let Some(g) = given {
                let (_, fresh) = load(g, space, goal, this, fronts)?;
                if !same_prior(&fresh.prior, &w.prior) {
                    return Err(Error::usage(
                        format!(
                            "this run was warm-started from `{}` ({} successes), and `{}` holds others",
                            w.from.display(),
                            w.successes,
                            g.display()
                        ),
                        Some("a resumed run keeps the prior run.json records: leave out `--warm-start`"),
                    ));
                }
            }
            Ok(Some((Prior::new(successes_of(w), goal), w.clone())))
        }
        (Some(w), None) => load(&w.from, space, goal, this, fronts).map(Some),
        (Some(w), Some(g)) if w.from != g => Err(Error::usage(
            format!(
                "this run was warm-started from `{}`, not `{}`",
                w.from.display(),
                g.display()
            ),
            Some("a resumed run keeps its prior: leave out `--warm-start`"),
        )),
        (_, Some(g)) => load(g, space, goal, this, fronts).map(Some),
        (None, None) => Ok(None),
    }
}

/// An earlier run as the prior reads it: its problem's name, its goal, its records.
type Earlier = (String, Goal, Vec<crate::run::log::Record>);

/// A run directory whose problem file is not where run.json says (copied alone), read with
/// `this` run's problem: its name, goal and records (`None`: not such a run).
fn alone(dir: &Path, this: Option<&Problem>) -> Option<Result<Earlier, Error>> {
    let meta = crate::run::dir::read_meta(dir).ok()?;
    let this = this.filter(|_| meta.mctree.is_none() && !meta.problem.exists())?;
    eprintln!(
        "warning: `{}`'s problem file `{}` is not there: its results.csv is read with this run's parameters",
        dir.display(),
        meta.problem.display()
    );
    let records = crate::run::log::read_run_records(dir, this);
    Some(records.map(|r| (meta.problem_name, meta.goal, r)))
}

/// The prior of `dir`, a run of `space` towards `goal`: refused (exit 2) when it is not a run
/// directory, when its space differs in parameters or values (the first difference named),
/// when its goal differs, or when none of its evaluations succeeded. A run copied without its
/// problem file is read with `this` run's problem, when there is one: its results.csv must
/// then hold values of this run's parameters.
pub fn load(
    dir: &Path,
    space: &Space,
    goal: Goal,
    this: Option<&Problem>,
    fronts: &FrontEnds,
) -> Result<(Prior, WarmStart), Error> {
    let refuse = |why: String, hint: &str| {
        Error::usage(
            format!("cannot warm-start from `{}`: {why}", dir.display()),
            Some(hint),
        )
    };
    let same = "give a run of the same parameters and values (another dataset size or machine)";
    let not_a_run =
        "give the directory of a finished `moldtune run` (it holds run.json and results.csv)";
    let (name, earlier_goal, records) = earlier(dir, space, this, fronts)
        .map_err(|(why, other_space)| refuse(why, if other_space { same } else { not_a_run }))?;
    if earlier_goal != goal {
        let why = format!(
            "its goal is to {}, this run's to {}",
            goal_word(earlier_goal),
            goal_word(goal)
        );
        return Err(refuse(why, same));
    }
    let successes: Vec<_> = (records.iter())
        .filter(|r| r.m.status == Status::Ok)
        .filter_map(|r| r.m.objective.map(|y| (r.config.clone(), y)))
        .collect();
    if successes.is_empty() {
        let why = "none of its evaluations succeeded".into();
        return Err(refuse(why, "a prior needs successes"));
    }
    let coordinates = |c: &Config| c.0.iter().map(|x| x.is_finite().then_some(*x)).collect();
    let record = WarmStart {
        from: dir.to_path_buf(),
        problem_name: name,
        evaluations: records.len(),
        successes: successes.len(),
        prior: (successes.iter())
            .map(|(c, y)| (coordinates(c), *y))
            .collect(),
    };
    Ok((Prior::new(successes, goal), record))
}

/// The earlier run in `dir`, of `space` (read with `this` run's problem when it was copied
/// without its own); the refusal says why, and whether the run is one of another space
/// (`true`) or none at all.
fn earlier(
    dir: &Path,
    space: &Space,
    this: Option<&Problem>,
    fronts: &FrontEnds,
) -> Result<Earlier, (String, bool)> {
    match crate::run::dir::RunDir::open(dir, fronts) {
        Ok(run) => match space.first_difference(&run.problem.space) {
            Some(d) => Err((format!("its space differs: {d}"), true)),
            None => Ok((run.problem.name, run.problem.metric.goal, run.records)),
        },
        Err(e) => match alone(dir, this) {
            None => Err((e.message(), false)),
            Some(read) => read.map_err(|e| (e.message(), true)),
        },
    }
}
