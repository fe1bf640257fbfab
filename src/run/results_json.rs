//! results.json, rewritten after every evaluation: run.json's settings (paths relative to
//! the run directory), every evaluation with what results.csv has no column for (samples,
//! cause, hashes, commands, node, recorded quantities) and, with a tie rule, the preferred
//! configuration and the front ([`crate::run::prefer`]).

use std::path::Path;

use crate::error::Error;
use crate::problem::Problem;
use crate::run::log::{json_record, Record};
use crate::run::meta::{portable, write_atomic, RunMeta, FORMAT_VERSION, RESULTS_JSON};
use crate::run::prefer;

/// Writes `dir`'s results.json (atomically).
pub fn write(
    dir: &Path,
    problem: &Problem,
    meta: &RunMeta,
    records: &[Record],
) -> Result<(), Error> {
    let mut v = serde_json::json!({
        "format_version": FORMAT_VERSION,
        "run": portable(meta, dir),
        "evaluations": records.iter().map(|r| json_record(problem, r)).collect::<Vec<_>>(),
    });
    if problem.prefer.is_some() {
        let front = prefer::front(problem, records);
        v["preferred"] = serde_json::json!(prefer::preferred_json(problem, records));
        v["front"] = serde_json::json!(front.iter().map(|r| r.eval_id).collect::<Vec<_>>());
    }
    let text = serde_json::to_string_pretty(&v).expect("serializable");
    write_atomic(&dir.join(RESULTS_JSON), text.as_bytes())
}
