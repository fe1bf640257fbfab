//! Polly as a second prover. The kernel's file is compiled once more with Polly placed early,
//! no rescheduling, tiling, unrolling or inlining (`-O1`), so that the AST Polly prints keeps
//! the source's loops, and Polly marks each loop of it that carries a dependence
//! (`#pragma minimal dependence distance`, `-polly-ast-detect-parallel`). Where a SCoP's
//! loops match the source's one to one (count and nesting, located by the SCoP's lines from
//! `-Rpass-analysis=polly-scops`), a loop mctree's own test finds independent but Polly finds
//! carrying a dependence is a disagreement: `reverse` and `parallel for` of it — the two
//! verdicts this comparison speaks to — are then not proved ([`super::legality`]), and
//! `--list` prints it. A mark stands only where Polly's reference-wise dependences back it
//! with a dependence of the program, not merely the reuse of Polly's own temporaries
//! ([`super::carried`]); operand forwarding and simplification are off so that the
//! dependences printed are those of the AST's statements. Tiles and interchanges rest on direction vectors Polly's AST does not
//! show; they stay with mctree's test alone. A loop whose scalars mctree privatises is not
//! compared (Polly does not privatise), nor one holding a bound fixed only at run time
//! ([`symbolic`]: Polly does not assume subscripts stay in their dimension). Where Polly models nothing, or its compile fails or
//! takes over 10 s, mctree's test stands alone.

use std::path::Path;

use std::collections::HashMap;

use crate::mctree::carried::{loops_carrying, parse, Clause, Kind, Placement, Temporaries};
use crate::mctree::looptree::{Bound, Loop, LoopTree};
use crate::mctree::setup::Recorded;
use crate::process::{helper, Exit};

/// A loop of Polly's AST: its depth (by indentation) and whether Polly found a dependence it
/// carries.
#[derive(Debug, Clone, PartialEq)]
pub struct PollyLoop {
    pub indent: usize,
    pub carries: bool,
}

/// What Polly's report and AST say of `function` in `file`.
#[derive(Debug, Default, PartialEq)]
pub struct View {
    /// The source lines of every SCoP Polly kept, in order.
    pub ranges: Vec<(u32, u32)>,
    /// The loops of each AST printed for the function, in order.
    pub asts: Vec<Vec<PollyLoop>>,
}

/// At most this long for Polly's compile (floyd-warshall's does not finish in 30 s): past it,
/// mctree's test stands alone.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The compiler arguments that make Polly's AST keep the source's loops.
pub const FLAGS: [&str; 4] = [
    "-O1",
    "-fno-unroll-loops",
    "-fno-inline",
    "-Rpass-analysis=polly-scops",
];

/// The `-mllvm` options of that compile.
pub const MLLVM: [&str; 13] = [
    "-polly",
    "-polly-position=early",
    "-polly-reschedule=0",
    "-polly-postopts=0",
    "-polly-tiling=0",
    "-polly-process-unprofitable",
    "-polly-print-ast",
    "-polly-ast-detect-parallel",
    "-polly-print-scops",
    "-polly-print-deps",
    "-polly-dependences-analysis-level=reference-wise",
    "-polly-enable-optree=false",
    "-polly-enable-simplify=false",
];

/// Reads Polly's remarks (`stderr`) and printed ASTs (`stdout`) for `function` in `file`.
pub fn read(file: &Path, stderr: &str, stdout: &str, function: &str) -> View {
    let name = file.display().to_string();
    let mut v = View::default();
    let mut begin = None;
    for l in stderr.lines() {
        let Some(rest) = l.strip_prefix(&*name) else {
            continue;
        };
        let line: Option<u32> = rest.split(':').nth(1).and_then(|n| n.parse().ok());
        if l.contains("remark: SCoP begins here.") {
            begin = line;
        } else if l.contains("remark: SCoP ends here.") {
            v.ranges.extend(begin.take().zip(line));
        } else if l.contains("remark: SCoP ends here but was dismissed") {
            begin = None;
        }
    }
    v.asts = Reader::new(function).read(stdout);
    v
}

/// One printed AST of the kernel's function, as it is read.
#[derive(Default)]
struct Ast {
    loops: Vec<PollyLoop>,
    /// The enclosing loops of the line being read: (indent, index in `loops`, counter).
    open: Vec<(usize, usize, String)>,
    /// Where each statement runs; `None` once one is not placed with certainty.
    placement: Option<Placement>,
    clauses: Option<Vec<Clause>>,
    temporaries: Temporaries,
}

impl Ast {
    fn line(&mut self, indent: usize, t: &str, carries: bool) {
        self.open.retain(|&(i, _, _)| i < indent);
        if let Some(head) = t.strip_prefix("for (") {
            let head = head.strip_prefix("int ").unwrap_or(head);
            let counter = head.split(' ').next().unwrap_or_default().to_string();
            self.open.push((indent, self.loops.len(), counter));
            self.loops.push(PollyLoop { indent, carries });
        } else if let Some((stmt, args)) = t.strip_suffix(");").and_then(|c| c.split_once('(')) {
            let dims: Option<Vec<usize>> = (args.split(", ").filter(|a| !a.is_empty()))
                .map(|a| self.open.iter().find(|o| o.2 == a).map(|o| o.1))
                .collect();
            let placed = dims.filter(|d| d.iter().eq(self.open.iter().map(|o| &o.1)));
            let inserted = match (self.placement.as_mut(), placed) {
                (Some(p), Some(d)) => p.insert(stmt.to_string(), d).is_none(),
                _ => false,
            };
            if !inserted {
                self.placement = None;
            }
        }
    }

    /// The loops, each mark kept only where a dependence on the program's memory backs it.
    fn finish(mut self) -> Vec<PollyLoop> {
        let n = self.loops.len();
        let backed = (self.clauses.as_ref())
            .zip(self.placement.as_ref())
            .and_then(|(c, p)| loops_carrying(c, &self.temporaries, p, n));
        for (l, b) in self.loops.iter_mut().zip(backed.unwrap_or(vec![true; n])) {
            l.carries &= b;
        }
        self.loops
    }
}

/// Reads Polly's printed SCoPs, reference-wise dependences and ASTs for one function.
#[derive(Default)]
struct Reader<'a> {
    function: &'a str,
    /// The temporaries of each SCoP of the function, by region.
    temporaries: HashMap<String, Temporaries>,
    /// The region of the SCoP being printed, when it is the function's.
    scop: Option<String>,
    scalar_next: bool,
    /// The dependences printed last (they precede their AST), and the kind of the next map.
    clauses: Option<Vec<Clause>>,
    kind: Option<Kind>,
    ast: Option<Ast>,
    carries: bool,
    asts: Vec<Vec<PollyLoop>>,
}

impl<'a> Reader<'a> {
    fn new(function: &'a str) -> Self {
        Reader {
            function,
            ..Reader::default()
        }
    }

    fn read(mut self, stdout: &str) -> Vec<Vec<PollyLoop>> {
        for l in stdout.lines() {
            let t = l.trim_start();
            if t.starts_with("Printing analysis") {
                self.header(t);
            } else if let Some(kind) = self.kind.take() {
                self.clauses = self.clauses.take().and_then(|mut c| {
                    c.extend(parse(kind, t)?);
                    Some(c)
                });
            } else if std::mem::take(&mut self.scalar_next) {
                self.temporary(t);
            } else {
                self.line(l.len() - t.len(), t);
            }
        }
        self.end_ast();
        self.asts
    }

    fn header(&mut self, t: &str) {
        self.end_ast();
        let ours = t.ends_with(&format!("in function '{}':", self.function));
        let region = t.split('\'').nth(if t.contains("(isl)") { 2 } else { 3 });
        if t.contains("polyhedral description of Scops") {
            self.scop = region.filter(|_| ours).map(str::to_string);
        } else if t.contains("Generate an AST") && ours {
            let temporaries = (region.and_then(|r| self.temporaries.remove(r))).unwrap_or_default();
            self.ast = Some(Ast {
                placement: Some(Placement::new()),
                clauses: self.clauses.take(),
                temporaries,
                ..Ast::default()
            });
        }
        self.clauses = None;
    }

    fn line(&mut self, indent: usize, t: &str) {
        let kinds = [("RAW", Kind::Raw), ("WAR", Kind::War), ("WAW", Kind::Waw)];
        if let Some(&(name, kind)) = kinds
            .iter()
            .find(|(n, _)| t.starts_with(&format!("{n} dependences:")))
        {
            if name == "RAW" {
                self.clauses = Some(vec![]);
            }
            self.kind = Some(kind);
        } else if t.starts_with("ReadAccess") && t.contains("[Scalar: 1]") {
            self.scalar_next = true;
        } else if t.starts_with("#pragma minimal dependence distance") {
            self.carries = true;
        } else if t.starts_with("for (") || t.starts_with("Stmt") {
            // A pragma belongs to the `for` after it, in whichever function.
            if let Some(ast) = self.ast.as_mut() {
                ast.line(indent, t, self.carries);
            }
            self.carries &= !t.starts_with("for (");
        }
    }

    /// Records a read of a temporary: `{ Stmt1[i0, i1] -> MemRef3[] };`.
    fn temporary(&mut self, t: &str) {
        let map = t
            .split_once('{')
            .map(|(_, m)| m.split(" -> ").collect::<Vec<_>>());
        let name = |s: &str| s.split('[').next().unwrap_or_default().trim().to_string();
        if let (Some(region), Some([stmt, array])) = (&self.scop, map.as_deref()) {
            let scop = self.temporaries.entry(region.clone()).or_default();
            scop.entry(name(array)).or_default().insert(name(stmt));
        }
    }

    fn end_ast(&mut self) {
        if let Some(ast) = self.ast.take() {
            self.asts.push(ast.finish());
        }
    }
}

/// Per loop of `tree` that a SCoP of `view` matches, whether Polly finds it carrying a
/// dependence: `(loop id, carries)`.
pub fn matched(tree: &LoopTree, view: &View) -> Vec<(usize, bool)> {
    let first = tree.loops.iter().map(|l| l.line).min().unwrap_or(0);
    let last = tree.loops.iter().map(|l| l.line).max().unwrap_or(0);
    let kernels = (view.ranges.iter()).filter(|&&(b, e)| e >= first && b <= last);
    let mut out = vec![];
    for (&(begin, end), polly) in kernels.zip(&view.asts) {
        let ours: Vec<&Loop> = (tree.loops.iter())
            .filter(|l| l.line >= begin && l.line <= end)
            .collect();
        let depth = |l: &Loop| {
            std::iter::successors(l.parent, |&p| tree.loops[p].parent)
                .filter(|&p| tree.loops[p].line >= begin)
                .count()
        };
        let mut indents: Vec<usize> = polly.iter().map(|p| p.indent).collect();
        indents.sort_unstable();
        indents.dedup();
        let polly_depth = |p: &PollyLoop| indents.iter().position(|&i| i == p.indent);
        let same_shape = ours.len() == polly.len()
            && (ours.iter().zip(polly)).all(|(o, p)| Some(depth(o)) == polly_depth(p));
        if same_shape {
            out.extend(ours.iter().zip(polly).map(|(o, p)| (o.id, p.carries)));
        }
    }
    out
}

/// Polly's view of the kernel of `r`, or `None` when the compile fails.
pub fn view(r: &Recorded, function: &str) -> Option<View> {
    let mut extra: Vec<String> = FLAGS.iter().map(|f| f.to_string()).collect();
    extra.extend(
        MLLVM
            .iter()
            .flat_map(|m| ["-mllvm".to_string(), m.to_string()]),
    );
    let argv = r.object_argv(&r.file, Path::new("/dev/null"), &extra);
    let out = helper::output(&argv, r.compile_timeout().min(LIMIT), 1 << 26);
    if !matches!(out.finished.exit, Exit::Code(0)) {
        return None;
    }
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Some(read(
        &r.file,
        &text(&out.stderr),
        &text(&out.stdout),
        function,
    ))
}

/// Marks the loops mctree finds independent and Polly finds carrying a dependence
/// ([`Loop::polly_disagrees`]); returns how many loops were compared.
pub fn apply(tree: &mut LoopTree, view: &View) -> usize {
    let pairs: Vec<(usize, bool)> = (matched(tree, view).into_iter())
        .filter(|&(id, _)| !symbolic(tree, id))
        .collect();
    for &(id, carries) in &pairs {
        let privatised = !tree.deps.private.get(&id).is_none_or(Vec::is_empty);
        let l = &mut tree.loops[id];
        if carries && l.independent && !privatised && l.untouchable.is_none() {
            l.polly_disagrees =
                Some("mctree's test finds no dependence it carries; Polly finds one".into());
        }
    }
    pairs.len()
}

/// Whether loop `id` or a loop inside it has a bound fixed only at run time (`j < nj`): Polly
/// cannot then rule out that a subscript runs past its dimension (`C[i][j]` over
/// `double C[NI][NJ]` reaching row `i + 1`), which mctree rules out from the values every call
/// passes ([`super::extents`]) — measured: Polly marks the outer loop of PolyBench/C 4.2.1's
/// gemm carried.
fn symbolic(tree: &LoopTree, id: usize) -> bool {
    let l = &tree.loops[id];
    let run_time = |b: &Bound| matches!(b, Bound::Invariant { .. });
    let own = l.canonical && (run_time(&l.lower) || run_time(&l.upper));
    own || l.children.iter().any(|&c| symbolic(tree, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pragma_marks_the_loop_after_it_in_the_kernel_only() {
        let stderr = "/k/a.c:3:3: remark: SCoP begins here. [-Rpass-analysis=polly-scops]\n\
                      /k/a.c:6:1: remark: SCoP ends here. [-Rpass-analysis=polly-scops]\n";
        let stdout =
            "Printing analysis 'Polly - Generate an AST of the SCoP (isl)'x' in function 'kernel_a':\n\
                      #pragma minimal dependence distance: 1\n\
                      for (int c0 = 0; c0 <= 9; c0 += 1)\n\
                      \x20 for (int c1 = 0; c1 <= 9; c1 += 1)\n\
                      Printing analysis 'Polly - Generate an AST of the SCoP (isl)'y' in function 'main':\n\
                      for (int c0 = 0; c0 <= 9; c0 += 1)\n";
        let v = read(Path::new("/k/a.c"), stderr, stdout, "kernel_a");
        assert_eq!(v.ranges, vec![(3, 6)]);
        let carries: Vec<bool> = v.asts[0].iter().map(|p| p.carries).collect();
        assert_eq!(carries, vec![true, false]);
        assert_eq!(v.asts.len(), 1);
    }

    /// Two SCoPs of one function, printed as clang-22 prints them: both SCoPs first, then each
    /// one's dependences before its AST (the same loops in both). `MemRef3` is a temporary of
    /// the second SCoP only.
    fn two_scops() -> String {
        let scop = |region: &str, array: &str| {
            format!(
                "Printing analysis 'Polly - Create polyhedral description of Scops' for region: \
                 '{region}' in function 'kernel':\n\
                 \x20           ReadAccess :=\t[Reduction Type: NONE] [Scalar: 1]\n\
                 \x20               {{ Stmt1[i0, i1] -> {array}[] }};\n"
            )
        };
        let ast = |region: &str| {
            format!(
                "\tRAW dependences:\n\t\t{{  }}\n\tWAR dependences:\n\
                 \t\t{{ [Stmt1[i0, i1] -> MemRef3[]] -> [Stmt0[1 + i0] -> MemRef3[]] : 0 <= i0 <= 254 }}\n\
                 \tWAW dependences:\n\t\t{{  }}\n\tReduction dependences:\n\t\t{{  }}\n\
                 Printing analysis 'Polly - Generate an AST of the SCoP (isl)'{region}' in function 'kernel':\n\
                 \x20   #pragma minimal dependence distance: 1\n\
                 \x20   for (int c0 = 0; c0 <= 254; c0 += 1) {{\n\
                 \x20     Stmt0(c0);\n\
                 \x20     #pragma minimal dependence distance: 1\n\
                 \x20     for (int c1 = 0; c1 <= 255; c1 += 1)\n\
                 \x20       Stmt1(c0, c1);\n\
                 \x20   }}\n"
            )
        };
        let (first, second) = ("%28 => %47", "%1 => %27");
        [
            scop(first, "MemRef1"),
            scop(second, "MemRef3"),
            ast(first),
            ast(second),
        ]
        .concat()
    }

    #[test]
    fn a_mark_is_kept_unless_only_its_own_scops_temporaries_back_it() {
        let v = read(Path::new("/k/a.c"), "", &two_scops(), "kernel");
        let carries: Vec<Vec<bool>> = (v.asts.iter())
            .map(|a| a.iter().map(|p| p.carries).collect())
            .collect();
        // The first SCoP's MemRef3 is an array: its reuse across `c0` counts. In the second
        // it is a temporary read only inside `c0`. Neither backs the inner loop's mark.
        assert_eq!(carries, vec![vec![true, false], vec![false, false]]);
    }
}
