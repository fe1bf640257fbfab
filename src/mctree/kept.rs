//! The C file and what discovery found in it, read once and kept in the run directory
//! (`mctree.json`), so that reading the run later (`best`, `report`, a warm start) needs
//! neither clang nor the file as it was.

use std::path::Path;

use crate::error::Error;
use crate::mctree::discover::{kernel_loops, read_source};
use crate::mctree::looptree::LoopTree;
use crate::mctree::objects;
use crate::mctree::resolve::recorded_of;
use crate::mctree::setup;
use crate::problem::param::OpenValues;
use crate::problem::Problem;
use crate::run::log;
use crate::run::meta::{self, RunMeta};

/// What discovery found, kept in the run directory (`mctree.json`) so that reading the run
/// later (`best`, `report`) needs neither clang nor the C file as it was.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Discovered {
    /// The C file's text as tuned.
    source: String,
    /// The loop tree, its `file` relative to the run directory (as run.json's `problem`): the
    /// run directory names no directory of the machine that made it.
    loops: LoopTree,
}

pub(super) const DISCOVERED: &str = meta::MCTREE_JSON;

/// Where a run directory keeps the extra sources compiled once ([`objects::link_compiled`]).
pub(super) const OBJECTS: &str = "work/objects";

/// Writes `mctree.json` into a run directory that holds no other run's results.
pub(super) fn keep_discovered(
    out: &Path,
    resume: bool,
    text: &str,
    loops: &LoopTree,
) -> Result<(), Error> {
    if !resume && log::has_rows(out) {
        return Ok(()); // the driver refuses this directory; its file is not ours to replace
    }
    std::fs::create_dir_all(out)
        .map_err(|e| Error::io(format!("cannot create `{}`", out.display()), e))?;
    let mut loops = loops.clone();
    if let Some(rel) = meta::relative_to(Path::new(&loops.file), out) {
        loops.file = rel.display().to_string();
    }
    let d = Discovered {
        source: text.to_string(),
        loops,
    };
    let json = serde_json::to_vec(&d).map_err(|e| Error::Internal(e.to_string()))?;
    meta::write_atomic(&out.join(DISCOVERED), &json)
}

/// The problem of an mctree run directory: from its `mctree.json` and run.json, else (a run
/// recorded before it was kept) rebuilt by discovery on the C file.
pub fn problem_of_run(dir: &Path, meta: &RunMeta) -> Option<Result<Problem, Error>> {
    let r = recorded_of(meta)?;
    Some((|| {
        let labels = OpenValues::default();
        if let Ok(bytes) = std::fs::read(dir.join(DISCOVERED)) {
            let d: Discovered = serde_json::from_slice(&bytes).map_err(|e| {
                Error::usage(
                    format!("`{}` does not parse: {e}", dir.join(DISCOVERED).display()),
                    None,
                )
            })?;
            let mut loops = d.loops;
            loops.file = r.file.display().to_string(); // where run.json finds it now
            let mut problem = setup::problem(&r, &d.source, &loops, &labels)?;
            objects::link_kept(&r, &mut problem, &dir.join(OBJECTS));
            return Ok(problem);
        }
        let text = read_source(&r.file)?;
        let tree = kernel_loops(&r, &text)?;
        setup::problem(&r, &text, &tree, &labels)
    })())
}
