//! What Polly does to the kernel, asked before anything is built into a program. Polly's own
//! report (`-Rpass-analysis=polly-scops`) of the untransformed file compiled as the root is:
//! where no SCoP begins in the kernel (a call Polly cannot handle, a loop it cannot model),
//! Polly's knobs differ only in how they schedule and parallelise SCoPs, so they build one
//! program and only `-mllvm -polly` is a candidate. (Not none: Polly's canonicalisation passes
//! can still change the kernel's code — TSVC_2's s291 has no SCoP and ran 0.047 s at `-O3`,
//! 0.014–0.027 s with it.) Then each candidate knob is compiled once, the file alone to an
//! object (not linked, not run), and a knob whose kernel machine code equals the plain
//! build's or an earlier knob's is not proposed: it cannot change the program.

use std::path::Path;

use crate::evaluate::reuse::kernel_code_of;
use crate::mctree::directive::Polly;
use crate::mctree::looptree::LoopTree;
use crate::mctree::setup::Recorded;
use crate::problem::CodeIdentity;
use crate::process::helper;
use crate::process::Exit;

/// The Polly knobs to propose and why the others are not.
#[derive(Debug, Default)]
pub struct Knobs {
    pub kept: Vec<Polly>,
    /// Polly's report finds no SCoP in the kernel (only `-mllvm -polly` was a candidate).
    pub no_scop: bool,
    /// Knobs that build the kernel another does (`Polly::Off`: the plain build).
    pub same: Vec<(Polly, Polly)>,
}

/// Compiles `r.file` alone to the object `obj` with `knob` (plus Polly's SCoP report when
/// `report`); its stderr, or `None` if the compile fails or takes too long.
fn compile(r: &Recorded, knob: Polly, obj: &Path, report: bool) -> Option<String> {
    let mut extra: Vec<String> = knob.flags().split_whitespace().map(String::from).collect();
    extra.extend([
        "-mllvm".into(),
        format!("-polly-only-func={}", r.polly_scope()),
    ]);
    extra.extend(report.then(|| "-Rpass-analysis=polly-scops".to_string()));
    let out = helper::output(
        &r.object_argv(&r.file, obj, &extra),
        r.compile_timeout(),
        1 << 26,
    );
    matches!(out.finished.exit, Exit::Code(0)).then(|| String::from_utf8_lossy(&out.stderr).into())
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

/// The Polly knobs worth a build (see the module's doc); `dir` holds the objects meanwhile.
/// A knob whose kernel code cannot be had (a failing compile, no disassembler) is kept.
pub fn knobs(r: &Recorded, tree: &LoopTree, id: Option<&CodeIdentity>, dir: &Path) -> Knobs {
    let _ = std::fs::create_dir_all(dir);
    let code = |knob: Polly, report: bool| {
        let obj = dir.join(format!("{knob:?}.o"));
        let stderr = compile(r, knob, &obj, report);
        let code = id
            .zip(stderr.as_ref())
            .and_then(|(id, _)| kernel_code_of(id, &obj));
        (stderr, code)
    };
    let (report, on) = code(Polly::On, true);
    let lines = report.map(|s| begins(&s, &r.file));
    let no_scop = !sees_the_kernel(lines.as_deref(), tree);
    let mut seen: Vec<(Polly, String)> = code(Polly::Off, false)
        .1
        .map(|c| (Polly::Off, c))
        .into_iter()
        .collect();
    let mut k = Knobs {
        no_scop,
        ..Knobs::default()
    };
    let candidates = match no_scop {
        true => vec![Polly::On],
        false => vec![Polly::On, Polly::NoReschedule, Polly::Parallel],
    };
    for knob in candidates {
        let c = if knob == Polly::On {
            on.clone()
        } else {
            code(knob, false).1
        };
        match c.as_ref().and_then(|c| seen.iter().find(|(_, s)| s == c)) {
            Some((same, _)) => k.same.push((knob, *same)),
            None => {
                seen.extend(c.map(|c| (knob, c)));
                k.kept.push(knob);
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    k
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
