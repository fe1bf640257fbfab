//! Discovery end to end, in the order it works: the C file read ([`read_source`]) and
//! parsed with the user's flags on a thread of its own ([`kernel_loops`]), the translation
//! unit ([`unit`](crate::mctree::unit): the file's functions, the kernel's body), the kernel
//! and its loops ([`ast`]), the memory its names reach ([`memory`](crate::mctree::memory)),
//! its dependences ([`deps`]), which loops carry one ([`legality`]), and Polly's view of them
//! ([`second`]).

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::mctree::looptree::LoopTree;
use crate::mctree::memory::Memory;
use crate::mctree::setup::Recorded;
use crate::mctree::unit::{choose, Unit};
use crate::mctree::{
    ast, calls, constants, deps, extents, legality, second, trips, unit, unmodelled,
};
use crate::problem::mold;

/// The loop tree of the kernel (`wanted`, or the one [`choose`] finds) in the translation
/// unit `unit` of the file `file` (its text `text`), linked with the extra sources `others`.
pub fn kernel_tree(
    unit: &Unit,
    text: &str,
    file: &Path,
    wanted: Option<&str>,
    others: &[PathBuf],
) -> Result<LoopTree, Error> {
    let fns = &unit.functions;
    let mut k = calls::annotate(unit, choose(fns, wanted, text, file)?);
    constants::fold(unit, &mut k);
    let k = &k;
    let whole_program = !named_in(others, &k.name);
    let memory = Memory::of(unit, k, whole_program);
    let name = file.display().to_string();
    let mut t = ast::loop_tree(k, text, &name, ast::callers(fns, &k.name));
    t.deps = deps::analyse(k, &memory, text, &t.positions());
    unmodelled::check(k, &mut t, text);
    trips::check(unit, k, &mut t, whole_program);
    extents::check(unit, k, &mut t, text, whole_program);
    for id in 0..t.loops.len() {
        let scalars = t.deps.private.get(&id).cloned().unwrap_or_default();
        t.loops[id].private.extend(scalars);
        t.loops[id].independent = !legality::carries(&t, id);
    }
    Ok(t)
}

/// Whether one of the extra sources may call `name`: a C file that mentions it, or an object
/// or archive (not read).
fn named_in(others: &[PathBuf], name: &str) -> bool {
    others.iter().any(|p| {
        let c = p.extension().is_some_and(|e| e == "c");
        !c || std::fs::read_to_string(p).map_or(true, |t| t.contains(name))
    })
}

/// The C file's text (bytes that are not UTF-8 only in comments: [`mold::c_text`]).
pub fn read_source(file: &Path) -> Result<String, Error> {
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
pub fn kernel_loops(r: &Recorded, text: &str) -> Result<LoopTree, Error> {
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
