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
