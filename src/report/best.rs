//! Reports over a finished (or running) run directory: `moldtune best` (the paper's findMin).
//! Reads `results.csv` on its own, so it works without the problem file.

use std::path::Path;

use crate::error::Error;
use crate::problem::Goal;
use crate::run::log;

#[derive(Debug, serde::Serialize)]
pub struct Best {
    pub eval_id: usize,
    pub objective: f64,
    pub config: Vec<(String, String)>,
    pub config_hash: String,
    pub best_c: Option<String>,
    pub evaluations: usize,
    pub ok: usize,
}

pub fn best(dir: &Path) -> Result<Option<Best>, Error> {
    let meta = log::read_run_json(dir)?;
    let path = dir.join(log::RESULTS_CSV);
    let mut rd = csv::Reader::from_path(&path)
        .map_err(|e| Error::usage(format!("cannot read `{}`: {e}", path.display()), None))?;
    let hdr: Vec<String> = rd
        .headers()
        .map_err(|e| Error::Internal(e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    let col = |name: &str| {
        hdr.iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::Internal(format!("results.csv has no `{name}` column")))
    };
    let (obj, status, id, hash) = (
        col("objective")?,
        col("status")?,
        col("eval_id")?,
        col("config_hash")?,
    );
    let mut best: Option<Best> = None;
    let (mut n, mut ok) = (0, 0);
    for rec in rd.records() {
        // A torn last row (a run killed mid-write) is not an evaluation.
        let Ok(rec) = rec else { continue };
        if rec.len() != hdr.len() {
            continue;
        }
        n += 1;
        if &rec[status] != "ok" {
            continue;
        }
        ok += 1;
        let Ok(v) = rec[obj].parse::<f64>() else {
            continue;
        };
        let better = match (&best, meta.goal) {
            (None, _) => true,
            (Some(b), Goal::Minimize) => v < b.objective,
            (Some(b), Goal::Maximize) => v > b.objective,
        };
        if better {
            best = Some(Best {
                eval_id: rec[id].parse().unwrap_or(0),
                objective: v,
                config: hdr[..obj]
                    .iter()
                    .cloned()
                    .zip(rec.iter().take(obj).map(str::to_string))
                    .collect(),
                config_hash: rec[hash].to_string(),
                best_c: None,
                evaluations: 0,
                ok: 0,
            });
        }
    }
    Ok(best.map(|mut b| {
        let p = dir.join(log::BEST_C);
        b.best_c = p.is_file().then(|| p.display().to_string());
        b.evaluations = n;
        b.ok = ok;
        b
    }))
}

/// Loads a run directory's problem and records.
fn load_run(dir: &Path) -> Result<(crate::problem::Problem, Vec<log::Record>), Error> {
    let meta = log::read_run_json(dir)?;
    let problem = crate::problem::Problem::load(&meta.problem)?;
    let records = log::read_records(dir, &problem)?;
    Ok((problem, records))
}

/// The run's outcomes as a replayable table.
pub fn table_of(dir: &Path) -> Result<crate::report::replay::Table, Error> {
    let (problem, records) = load_run(dir)?;
    let name = format!(
        "{} ({} recorded evaluations, {})",
        problem.name,
        records.len(),
        dir.display()
    );
    Ok(crate::report::replay::from_records(
        &name,
        problem.space.clone(),
        problem.metric.goal,
        &records,
    ))
}

/// Parameter importance from a random forest fitted to the run's successes (log objective),
/// highest first.
pub fn importance(dir: &Path) -> Result<Vec<(String, f64)>, Error> {
    let (problem, records) = load_run(dir)?;
    let oks: Vec<&log::Record> = records
        .iter()
        .filter(|r| r.m.status == crate::evaluate::outcome::Status::Ok && r.m.objective.is_some())
        .collect();
    if oks.len() < 3 {
        return Err(Error::usage(
            format!(
                "`{}` has {} successful evaluations; importance needs at least 3",
                dir.display(),
                oks.len()
            ),
            None,
        ));
    }
    let positive = oks.iter().all(|r| r.m.objective.unwrap_or(0.0) > 0.0);
    let d = problem.space.params.len();
    let x: Vec<f64> = oks
        .iter()
        .flat_map(|r| problem.space.encode(&r.config))
        .collect();
    let y: Vec<f64> = oks
        .iter()
        .map(|r| {
            let v = r.m.objective.unwrap_or(0.0);
            if positive {
                v.ln()
            } else {
                v
            }
        })
        .collect();
    let forest = crate::search::surrogate::Forest::fit(
        &x,
        d,
        &y,
        crate::search::surrogate::ForestParams::random_forest(),
        &mut crate::rng::Rng::new(0),
    );
    let mut rows: Vec<(String, f64)> = problem
        .space
        .params
        .iter()
        .map(|p| p.name.clone())
        .zip(forest.importance().iter().copied())
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok(rows)
}

#[derive(Debug, serde::Serialize)]
pub struct Measured {
    pub config: String,
    pub status: String,
    pub objective: Option<f64>,
    pub samples: Vec<f64>,
    pub spread: Option<f64>,
    pub cause: Option<String>,
}

/// Builds, checks and times one configuration in a scratch directory.
pub fn measure(
    problem_path: &Path,
    from: Option<&Path>,
    eval: Option<usize>,
    repeats: u32,
) -> Result<Measured, Error> {
    use crate::evaluate::{Evaluated, Evaluator, RealEvaluator};
    let mut problem = crate::problem::Problem::load(problem_path)?;
    if repeats == 0 {
        return Err(Error::usage("`--repeats` must be at least 1", None));
    }
    problem.repeats = repeats;
    let config = match from {
        None => problem.default_config(),
        Some(dir) => {
            let records = log::read_records(dir, &problem)?;
            let pick = match eval {
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
    let scratch = std::env::temp_dir().join(format!("moldtune-measure-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| Error::io("cannot create a scratch directory", e))?;
    crate::evaluate::child::install_signal_handlers();
    let mut ev = RealEvaluator::new();
    let result = ev
        .prepare(&problem, &scratch)
        .map(|_| ev.evaluate(&problem, &config, 0));
    let _ = std::fs::remove_dir_all(&scratch);
    match result? {
        Evaluated::Interrupted => Err(Error::Interrupted(scratch)),
        Evaluated::Done(m) => Ok(Measured {
            config: problem.space.describe(&config),
            status: m.status.to_string(),
            objective: m.objective,
            samples: m.samples,
            spread: m.spread,
            cause: m.cause,
        }),
    }
}
