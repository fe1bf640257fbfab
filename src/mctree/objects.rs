//! The extra sources (`-- … common.c`) compiled once, to objects every variant links, instead
//! of once per variant: they hold no kernel function, so no directive or Polly knob (Polly acts
//! only on `-polly-only-func`'s functions) changes what they compile to. TSVC_2's `common.c`
//! took 1.5 s of each variant's 1.8 s build.
//!
//! Not done when the output check builds with flags of its own (`check: build_flags`,
//! PolyBench's `-DPOLYBENCH_DUMP_ARRAYS`): those could change an extra source too.

use std::path::{Path, PathBuf};

use crate::mctree::setup::Recorded;
use crate::problem::Problem;
use crate::process::helper;
use crate::process::Exit;

/// Compiles `r.sources` into `dir` and makes `problem` link the objects; a source that does not
/// compile alone stays a source (compiled with each variant, as before). Returns the objects.
pub fn link_compiled(r: &Recorded, problem: &mut Problem, dir: &Path) -> Vec<PathBuf> {
    if !links_objects(r) || std::fs::create_dir_all(dir).is_err() {
        return vec![];
    }
    for (i, src) in r.sources.iter().enumerate() {
        let obj = dir.join(object_name(i, src));
        if compilable(src) && !compile(r, src, &obj) {
            let _ = std::fs::remove_file(&obj);
        }
    }
    link_kept(r, problem, dir)
}

/// Makes `problem` link the objects [`link_compiled`] left in `dir` (a Slurm worker builds
/// the variants as the run does); a source without one stays a source. Returns the objects.
pub fn link_kept(r: &Recorded, problem: &mut Problem, dir: &Path) -> Vec<PathBuf> {
    if !links_objects(r) {
        return vec![];
    }
    let mut objects = vec![];
    let sources = (r.sources.iter().enumerate()).map(|(i, src)| {
        let obj = dir.join(object_name(i, src));
        match compilable(src) && obj.is_file() {
            true => {
                objects.push(obj.clone());
                obj
            }
            false => src.clone(),
        }
    });
    problem.sources = sources.collect();
    objects
}

/// Whether the extra sources are compiled once (not with a check build's own flags).
fn links_objects(r: &Recorded) -> bool {
    !r.sources.is_empty() && r.check_build_flags.is_empty()
}

/// Whether `src` is C (or C++) source: objects and archives are linked as they are.
fn compilable(src: &Path) -> bool {
    let ext = src.extension().map(|e| e.to_string_lossy().to_string());
    matches!(ext.as_deref(), Some("c" | "cc" | "cpp" | "cxx" | "C"))
}

/// `3-common.o` for the fourth source `…/common.c`: distinct even for equal file names.
fn object_name(i: usize, src: &Path) -> String {
    let stem = src
        .file_stem()
        .map_or("source".into(), |s| s.to_string_lossy());
    format!("{i}-{stem}.o")
}

/// Whether `src` compiled to `obj` with the variants' flags (within the compile timeout).
fn compile(r: &Recorded, src: &Path, obj: &Path) -> bool {
    let out = helper::output(&r.object_argv(src, obj, &[]), r.compile_timeout(), 1 << 20);
    matches!(out.finished.exit, Exit::Code(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_of_sources_with_one_name_do_not_collide() {
        let a = object_name(0, Path::new("/x/common.c"));
        let b = object_name(1, Path::new("/y/common.c"));
        assert_ne!(a, b);
        assert_eq!(a, "0-common.o");
        assert!(compilable(Path::new("x.c")) && !compilable(Path::new("lib.a")));
        assert!(!compilable(Path::new("x.o")));
    }
}
