//! The C file and what discovery found in it, read once and kept in the run directory
//! (`mctree.json`), so that reading the run later (`best`, `report`, a warm start) needs
//! neither clang nor the file as it was.

use std::path::Path;

use crate::error::Error;
use crate::mctree::discover::kernel_tree;
use crate::mctree::looptree::LoopTree;
use crate::mctree::resolve::recorded_of;
use crate::mctree::setup::{self, Recorded};
use crate::mctree::{objects, second, unit};
use crate::problem::space::OpenValues;
use crate::problem::{mold, Problem};
use crate::run::log;
use crate::run::meta::{self, RunMeta};

/// The C file's text (bytes that are not UTF-8 only in comments: [`mold::c_text`]).
pub(super) fn read_source(file: &Path) -> Result<String, Error> {
    let bytes = std::fs::read(file).map_err(|e| {
        Error::usage(
            format!("cannot read `{}`: {e}", file.display()),
            Some("give the C file that holds the kernel: `moldtune mctree kernel.c`"),
        )
    })?;
    mold::c_text(file, bytes)
}

/// The kernel's loop tree, from the AST of the file parsed with the user's flags. On a thread
/// of its own with a large stack: the AST is as deep as the code (clang compiles a 60-deep
/// nest or a 500-term expression), and reading it, walking it and dropping it all recurse.
pub(super) fn discover(r: &Recorded, text: &str) -> Result<LoopTree, Error> {
    const STACK: usize = 1 << 30; // reserved, not committed: only the pages touched count
    std::thread::scope(|s| {
        let t = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(s, || {
                let wanted = Some(r.kernel.as_str()).filter(|k| !k.is_empty());
                let (flags, timeout) = (r.parse_flags(), r.compile_timeout());
                let unit = unit::read(&r.compiler, &r.file, &flags, timeout, text, wanted)?;
                kernel_tree(&unit, text, &r.file, wanted, &r.sources)
            });
        let t = t.map_err(|e| Error::Internal(format!("cannot start discovery's thread: {e}")))?;
        let found = t.join();
        if crate::process::interrupted() {
            return Err(Error::Cancelled(
                "while the loops were read; nothing was run".into(),
            ));
        }
        found.unwrap_or_else(|_| Err(Error::Internal("discovery's thread panicked".into())))
    })
    .map(|mut t| {
        if let Some(v) = second::view(r, &t.kernel) {
            t.polly_compared = Some(second::apply(&mut t, &v));
        }
        t
    })
}

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
        let tree = discover(&r, &text)?;
        setup::problem(&r, &text, &tree, &labels)
    })())
}
