//! Reports over a finished (or running) run directory: `moldtune best` (the paper's findMin).
//! Reads `results.csv` as text ([`log::read_table`]), so it works without the problem file.

use std::path::Path;

use crate::error::Error;
use crate::run::log;
use crate::run::meta;
use crate::run::prefer::Preferred;
use crate::run::verification::Verification;

#[derive(Debug, serde::Serialize)]
pub struct Best {
    pub eval_id: usize,
    /// The objective the search recorded for it.
    pub objective: f64,
    /// Active parameters by name (results.json's values; an inactive parameter is absent).
    pub config: serde_json::Map<String, serde_json::Value>,
    /// Parameters inactive in this configuration (their condition is false).
    pub inactive: Vec<String>,
    pub config_hash: String,
    pub best_c: Option<String>,
    pub evaluations: usize,
    pub ok: usize,
    /// The end-of-run (or `--verify`) re-measurement that chose it, when there was one.
    pub verification: Option<Verification>,
    /// The configuration the problem's tie rule prefers (results.json's `preferred`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred: Option<Preferred>,
}

/// One complete row of results.csv: its cells by column.
struct Row {
    cells: Vec<String>,
}

pub fn best(dir: &Path) -> Result<Option<Best>, Error> {
    let meta = meta::read_run_json(dir)?;
    let t = log::read_table(dir, false)?;
    let (obj, status, id, hash) = (
        t.column("objective")?,
        t.column("status")?,
        t.column("eval_id")?,
        t.column("config_hash")?,
    );
    let (mut n, mut ok) = (0, 0);
    let mut best: Option<(f64, Row)> = None;
    let mut winner: Option<(f64, Row)> = None;
    let verified = meta.verification.as_ref().and_then(|v| v.winner_eval_id);
    for rec in t.complete_rows() {
        let rec = rec?;
        n += 1;
        if &rec[status] != "ok" {
            continue;
        }
        ok += 1;
        let v = log::objective_of(meta.metric, rec[obj].parse::<f64>().ok())
            .map_err(|why| t.bad(format!("row {}: {why}", n + 1)))?;
        let row = || Row {
            cells: rec.iter().map(str::to_string).collect(),
        };
        if verified.is_some_and(|w| rec[id].parse() == Ok(w)) {
            winner = Some((v, row()));
        }
        if best.as_ref().is_none_or(|b| meta.goal.better(v, b.0)) {
            best = Some((v, row()));
        }
    }
    // The verified winner is the claim; without a verification, the search's best.
    let Some((objective, row)) = winner.or(best) else {
        return Ok(None);
    };
    let eval_id = row.cells[id].parse().unwrap_or(0);
    let json = std::fs::read(dir.join(meta::RESULTS_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
    let (config, inactive) = config_of(&json, eval_id, &t.header[..obj], &row.cells[..obj]);
    let preferred =
        (json.as_ref()).and_then(|v| serde_json::from_value(v.get("preferred")?.clone()).ok());
    let p = meta::best_file_in(dir).unwrap_or_default();
    Ok(Some(Best {
        eval_id,
        objective,
        config,
        inactive,
        config_hash: row.cells[hash].clone(),
        best_c: p.is_file().then(|| p.display().to_string()),
        evaluations: n,
        ok,
        verification: meta.verification,
        preferred,
    }))
}

/// The configuration of `eval_id` as results.json holds it (typed values, inactive
/// parameters absent); from the CSV's cells when results.json cannot say.
fn config_of(
    json: &Option<serde_json::Value>,
    eval_id: usize,
    names: &[String],
    cells: &[String],
) -> (serde_json::Map<String, serde_json::Value>, Vec<String>) {
    let from_json = (json.as_ref())
        .and_then(|v| {
            let evals = v.get("evaluations")?.as_array()?.clone();
            evals.into_iter().find(|e| e["eval_id"] == eval_id)
        })
        .and_then(|e| e.get("config").and_then(|c| c.as_object().cloned()));
    match from_json {
        Some(config) => {
            let inactive = (names.iter())
                .filter(|n| !config.contains_key(*n))
                .cloned()
                .collect();
            (config, inactive)
        }
        None => {
            let config = (names.iter().zip(cells))
                .map(|(n, c)| (n.clone(), serde_json::Value::String(c.clone())))
                .collect();
            (config, vec![])
        }
    }
}
