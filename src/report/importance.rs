//! `moldtune importance`: which parameters matter, from a random forest fitted to a run's
//! successes.

use std::path::Path;

use crate::error::Error;
use crate::run::log;

/// Parameter importance from a random forest fitted to the run's successes (log objective),
/// highest first.
pub fn importance(dir: &Path) -> Result<Vec<(String, f64)>, Error> {
    let (problem, records) = log::load_run(dir)?;
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
