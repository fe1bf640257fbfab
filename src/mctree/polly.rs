//! What Polly sees of the kernel, asked before anything is built: Polly's own report
//! (`-Rpass-analysis=polly-scops`) of the untransformed file compiled as the root is. Where no
//! SCoP begins in the kernel (a call Polly cannot handle, a loop it cannot model), Polly's
//! knobs differ only in how they schedule and parallelise SCoPs, so they build one program:
//! only `-mllvm -polly` is tried. (Not none: Polly's canonicalisation passes still change the
//! kernel's code — TSVC_2's s291 has no SCoP and ran 0.047 s at `-O3`, 0.014–0.027 s with it.)

use std::path::Path;

use crate::evaluate::child::{self, Exit};
use crate::evaluate::reuse::HELPER_TIMEOUT;
use crate::mctree::looptree::LoopTree;
use crate::mctree::setup::Recorded;
use crate::mctree::transform::Polly;

/// The lines of `file` where Polly's report says a SCoP begins (`None`: the report could not
/// be had — a compile that fails or takes too long says nothing either way).
pub fn scop_lines(r: &Recorded) -> Option<Vec<u32>> {
    let mut argv = vec![r.compiler.clone()];
    argv.extend(r.parse_flags());
    argv.extend(["-fopenmp", "-mllvm", "-polly", "-mllvm"].map(String::from));
    argv.push(format!("-polly-only-func={}", r.polly_scope()));
    argv.extend(["-Rpass-analysis=polly-scops", "-c", "-o", "/dev/null"].map(String::from));
    argv.push(r.file.display().to_string());
    let out = child::output(&argv, HELPER_TIMEOUT, 1 << 26);
    if !matches!(out.finished.exit, Exit::Code(0)) {
        return None;
    }
    Some(begins(&String::from_utf8_lossy(&out.stderr), &r.file))
}

/// The lines of `file` in `FILE:LINE:COL: remark: SCoP begins here.` remarks.
fn begins(report: &str, file: &Path) -> Vec<u32> {
    let name = file.display().to_string();
    (report.lines())
        .filter(|l| l.ends_with("remark: SCoP begins here. [-Rpass-analysis=polly-scops]"))
        .filter_map(|l| {
            l.strip_prefix(name.as_str())?
                .split(':')
                .nth(1)?
                .parse()
                .ok()
        })
        .collect()
}

/// The Polly knobs worth a build: all of them where a SCoP begins in the kernel (or where
/// Polly's report could not be had), else `-mllvm -polly` alone.
pub fn knobs(r: &Recorded, tree: &LoopTree) -> Vec<Polly> {
    match sees_the_kernel(scop_lines(r).as_deref(), tree) {
        true => vec![Polly::On, Polly::NoReschedule, Polly::Parallel],
        false => vec![Polly::On],
    }
}

/// Whether a SCoP begins in the kernel: between its first line and its last loop's header
/// (where a loop nest of it starts). Unknown (`None`) counts as yes.
fn sees_the_kernel(lines: Option<&[u32]>, tree: &LoopTree) -> bool {
    let last = tree.loops.iter().map(|l| l.line).max().unwrap_or(tree.line);
    lines.is_none_or(|ls| ls.iter().any(|&l| l >= tree.line && l <= last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_is_read_for_this_file_only() {
        let report = "/k/a.c:91:27: remark: SCoP begins here. [-Rpass-analysis=polly-scops]\n\
                      /k/a.c:116:3: remark: SCoP ends here. [-Rpass-analysis=polly-scops]\n\
                      /k/common.c:12:3: remark: SCoP begins here. [-Rpass-analysis=polly-scops]\n";
        assert_eq!(begins(report, Path::new("/k/a.c")), vec![91]);
        assert!(begins("", Path::new("/k/a.c")).is_empty());
    }
}
