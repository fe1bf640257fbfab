//! Discovery end to end, in the order it works: the translation unit ([`unit`]: the file's
//! functions, the kernel's body), the kernel and its loops ([`ast`]), the memory its names
//! reach ([`memory`]), its dependences ([`deps`]), and which loops carry one ([`legality`]).

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::mctree::looptree::LoopTree;
use crate::mctree::memory::Memory;
use crate::mctree::unit::{choose, Unit};
use crate::mctree::{ast, deps, legality, trips, unmodelled};

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
    let k = choose(fns, wanted, text, file)?;
    let whole_program = !named_in(others, &k.name);
    let memory = Memory::of(unit, k, whole_program);
    let name = file.display().to_string();
    let mut t = ast::loop_tree(k, text, &name, ast::callers(fns, &k.name));
    t.deps = deps::analyse(k, &memory, text, &t.positions());
    unmodelled::check(k, &mut t, text);
    trips::check(unit, k, &mut t, whole_program);
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
