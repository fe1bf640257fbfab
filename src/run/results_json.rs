//! results.json, rewritten as the run grows ([`crate::run::observe::ResultsJson`]) and at its end: run.json's settings (paths relative to
//! the run directory), every evaluation with what results.csv has no column for (samples,
//! cause, hashes, commands, node, recorded quantities) and, with a tie rule, the preferred
//! configuration and the front ([`crate::run::prefer`]).

use std::path::Path;

use crate::error::Error;
use crate::problem::Problem;
use crate::run::log::{json_record, JsonRecord, Record};
use crate::run::meta::{portable, write_atomic, RunMeta, FORMAT_VERSION, RESULTS_JSON};
use crate::run::prefer;

/// results.json's contents, serialized as they are (no intermediate `serde_json::Value`
/// tree: building, serializing and dropping that tree led a profile of a long mock run).
#[derive(serde::Serialize)]
struct ResultsFile {
    format_version: u32,
    run: RunMeta,
    evaluations: Vec<JsonRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preferred: Option<Option<prefer::Preferred>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    front: Option<Vec<usize>>,
}

/// Writes `dir`'s results.json (atomically).
pub fn write(
    dir: &Path,
    problem: &Problem,
    meta: &RunMeta,
    records: &[Record],
) -> Result<(), Error> {
    let rule = problem.prefer.is_some();
    let file = ResultsFile {
        format_version: FORMAT_VERSION,
        run: portable(meta, dir),
        evaluations: records.iter().map(|r| json_record(problem, r)).collect(),
        preferred: rule.then(|| prefer::preferred_json(problem, records)),
        front: rule.then(|| {
            (prefer::front(problem, records).iter())
                .map(|r| r.eval_id)
                .collect()
        }),
    };
    let text = serde_json::to_vec_pretty(&file).expect("serializable");
    write_atomic(&dir.join(RESULTS_JSON), &text)
}
