//! Reports over a finished (or running) run directory: `moldtune best` (the paper's findMin).
//! Reads `results.csv` as text ([`RunDir::table`]), so it works without the problem file.

use std::path::Path;

use crate::error::Error;
use crate::evaluate::roofline::Reach;
use crate::run::dir::RunDir;
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
    /// Evaluations stopped early by `progress:` (not failures: see docs/applications.md, pruning).
    pub pruned: usize,
    /// The end-of-run (or `--verify`) re-measurement that chose it, when there was one.
    pub verification: Option<Verification>,
    /// The configuration the problem's tie rule prefers (results.json's `preferred`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred: Option<Preferred>,
    /// Where the best and the default (`source` default) stand on the roofline, when the problem
    /// declares its work (`work:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reach: Option<Reach>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_reach: Option<Reach>,
}

/// One complete row of results.csv: its cells by column.
struct Row {
    cells: Vec<String>,
}

pub fn best(dir: &Path) -> Result<Option<Best>, Error> {
    let (meta, t) = RunDir::table(dir)?;
    let (obj, status, id, hash) = (
        t.column("objective")?,
        t.column("status")?,
        t.column("eval_id")?,
        t.column("config_hash")?,
    );
    let (mut n, mut pruned) = (0, 0);
    let mut oks: Vec<(usize, f64, Row)> = Vec::new();
    for rec in t.complete_rows() {
        let rec = rec?;
        n += 1;
        pruned += usize::from(&rec[status] == "pruned");
        if &rec[status] != "ok" {
            continue;
        }
        let v = log::objective_of(meta.metric, rec[obj].parse::<f64>().ok())
            .map_err(|why| t.bad(format!("row {}: {why}", n + 1)))?;
        let cells: Vec<String> = rec.iter().map(str::to_string).collect();
        oks.push((cells[id].parse().unwrap_or(0), v, Row { cells }));
    }
    let winner = meta.winner();
    let claim = log::claimed(&oks, meta.goal, winner, |(id, v, _)| Some((*id, *v)));
    let Some((eval_id, objective, row)) = claim else {
        return Ok(None);
    };
    let (eval_id, objective, ok) = (*eval_id, *objective, oks.len());
    let reach = |v: f64| meta.roofline.and_then(|r| r.reach(v));
    let source = t.column("source")?;
    let default_reach = (oks.iter())
        .find(|(_, _, row)| row.cells[source] == "default")
        .and_then(|(_, v, _)| reach(*v));
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
        pruned,
        reach: reach(objective),
        default_reach,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `best` prints the double that was evaluated: results.json's shortest form read back
    /// exactly (serde_json's default parser was off by one unit in the last place for about
    /// one real in nine: `0.09568912910677865` read as `…864`).
    #[test]
    fn a_real_value_reads_back_as_the_double_evaluated() {
        let evaluated = [
            0.09568912910677865,
            0.051602125099136004,
            0.00037782579751785187,
        ];
        for x in evaluated {
            let json = serde_json::json!({"evaluations": [{"eval_id": 3, "config": {"LR": x}}]});
            let text = serde_json::to_string(&json).unwrap();
            let json = Some(serde_json::from_str(&text).unwrap());
            let (config, _) = config_of(&json, 3, &["LR".into()], &[String::new()]);
            assert_eq!(config["LR"].as_f64(), Some(x), "{text}");
        }
    }
}
