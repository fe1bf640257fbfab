#!/usr/bin/env python3
"""scripts/layering.py must catch every form an import can take (issue 40).

A small crate that follows the rules is written to a temporary directory and must pass; then
each case plants one import (or one shape) into it, and the check must fail naming it (a file
named `tests/...` is written beside `src/`, as the integration tests are); each of `PASSES`
plants a shape the rules allow, and the check must still pass. Run by scripts/test.sh.

    python3 scripts/test_layering.py
"""

import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "layering.py"
CLEAN = {
    "lib.rs": "pub mod error;\npub mod process;\npub mod problem;\npub mod search;\npub mod run;\npub mod report;\npub mod mctree;\n",
    "process/mod.rs": "static INTERRUPTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);\n"
                      "static GUARD: std::sync::Mutex<()> = std::sync::Mutex::new(());\npub fn spawn() {}\n",
    "search/mod.rs": "use crate::problem::Space;\npub fn ask(_: &Space) {}\n",
    "mctree/mod.rs": "use crate::run::driver::drive;\nmacro_rules! here { () => {} }\npub fn tune() { here!(); drive(todo!(), todo!()); }\n",
    "error.rs": "pub struct Error;\n",
    "problem/mod.rs": "pub mod space;\npub use space::Space;\n",
    "problem/space.rs": "pub struct Space;\n",
    "run/mod.rs": "pub mod dir;\npub mod driver;\npub mod log;\npub mod meta;\npub mod slurm;\npub struct Limits;\n",
    "run/slurm/mod.rs": "use crate::process::spawn;\nuse crate::run::meta::RUN_JSON;\n"
                        "pub fn submit(d: &std::path::Path) -> bool { spawn(); d.join(RUN_JSON).is_file() }\n",
    "run/meta.rs": "pub const RUN_JSON: &str = \"run.json\";\n",
    "run/dir.rs": "use crate::run::meta::RUN_JSON;\npub fn read(d: &std::path::Path) { let _ = std::fs::read(d.join(RUN_JSON)); }\n",
    "run/driver.rs": "use super::log::Log;\nuse crate::problem::Space;\nuse crate::search::ask;\npub fn drive(s: Space, _: Log) { ask(&s); }\n",
    "run/log.rs": "pub struct Log;\n"
                  "pub fn nonce() -> u64 {\n    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);\n"
                  "    COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)\n}\n"
                  "#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::report::best;\n}\n",
    "report/mod.rs": "pub mod best;\npub mod sub;\n",
    "report/best.rs": "use crate::run::log::Log;\npub fn best(_: &Log) {}\n",
    "report/sub/mod.rs": "pub mod deep;\n",
    "report/sub/deep.rs": "pub fn deep() {}\n",
    "tests/main.rs": "mod common;\n#[test]\nfn short() {\n    common::helper();\n    assert!(true);\n}\n",
    "tests/common/mod.rs": "pub fn helper() {}\n",
}
LONG_BODY = "    let _ = 1;\n" * 61
# A type with a lifetime and a type parameter, as problem/locate.rs's `Ctx`; a name two modules define.
CTX = {"problem/mod.rs": "pub mod commands;\npub mod locate;\n",
       "problem/locate.rs": "pub struct Ctx<'a, F = fn(&str) -> Option<u8>> {\n    pub at: &'a str,\n    pub f: F,\n}\n"
                            "impl<'a, F> Ctx<'a, F> {}\n"}
TABLES = {"report/best.rs": "pub struct Table;\n", "report/sub/mod.rs": "pub struct Table;\n"}
# (what it plants, {file: text appended}, what the finding must say)
CASES = [
    ("a crate:: path against the stages", {"run/driver.rs": "use crate::report::best::best;\n"}, "run/ may not use report/"),
    ("a super:: path against the stages", {"run/driver.rs": "use super::super::report::best::best;\n"}, "run/ may not use report/"),
    ("a glob import", {"run/driver.rs": "use crate::report::*;\n"}, "run/ may not use report/"),
    ("a grouped import", {"run/driver.rs": "use crate::{error::Error, report::{sub::deep::deep}};\n"}, "run/ may not use report/"),
    ("an inline path", {"run/driver.rs": "fn f() { crate::report::best::best(todo()); }\n"}, "run/ may not use report/"),
    ("a path through an imported module name", {"run/driver.rs": "use crate::report;\nfn f() { report::sub::deep::deep(); }\n"},
     "run/ may not use report/"),
    ("an import laundered through a re-export",
     {"problem/mod.rs": "pub use crate::run::Limits;\n", "problem/space.rs": "use super::Limits;\n"}, "imports run"),
    ("a laundering re-export itself", {"problem/mod.rs": "pub use crate::run::Limits;\n"}, "from outside problem/"),
    ("a re-export outside a mod.rs", {"run/driver.rs": "pub use crate::problem::space::Space as S;\n"}, "outside a folder's module"),
    ("a circle through a mod.rs", {"run/mod.rs": "fn g() { driver::drive(); }\n", "run/driver.rs": "use super::Limits;\n"},
     "circle: run <-> run/driver"),
    ("a circle across folder depths", {"report/best.rs": "use super::sub::deep::deep;\n",
                                       "report/sub/deep.rs": "use crate::report::best::best;\n"},
     "circle: report/best <-> report/sub/deep"),
    ("a circle between folders", {"run/log.rs": "use crate::run::driver::drive;\n"}, "circle: run/driver <-> run/log"),
    ("a glob of the parent", {"run/log.rs": "use super::*;\n"}, "`use super::*` outside a test module"),
    ("a process-wide registry", {"run/log.rs": "static FRONT: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();\n"},
     "process-wide state outside process/"),
    ("run.json read past the door", {"report/best.rs": "fn meta(d: &std::path::Path) { let _ = std::fs::read_to_string(d.join(crate::run::meta::RUN_JSON)); }\n"},
     "run.json read outside run/dir.rs"),
    ("a long function", {"error.rs": "fn long() {\n" + LONG_BODY + "}\n"}, "fn long has 63 lines"),
    # issue 56 item 5: the blind spots a tester found
    ("an exported macro of a later stage", {"run/log.rs": "#[macro_export]\nmacro_rules! boom { () => {} }\n",
                                           "problem/space.rs": "fn f() { boom!(); }\n"}, "problem/ may not use run/"),
    ("a macro of a later stage by its crate:: path", {"run/log.rs": "#[macro_export]\nmacro_rules! boom { () => {} }\n",
                                                     "problem/space.rs": "fn f() { crate::boom![]; }\n"},
     "problem/ may not use run/"),
    ("a macro_rules! of a later stage", {"run/mod.rs": "macro_rules! limit { () => {} }\n",
                                         "problem/space.rs": "fn f() { limit! {} }\n"}, "problem/ may not use run/"),
    ("a static mut", {"run/log.rs": "static mut FRONT: Option<fn()> = None;\n"}, "process-wide state outside process/"),
    ("a registry behind a type alias", {"run/log.rs": "type Registry = std::sync::OnceLock<fn()>;\nstatic R: Registry = Registry::new();\n"},
     "process-wide state outside process/"),
    ("a lock renamed by `use ... as`", {"run/log.rs": "use std::sync::Mutex as Guarded;\nstatic R: Guarded<u8> = Guarded::new(0);\n"},
     "process-wide state outside process/"),
    ("an AtomicPtr", {"run/log.rs": "static P: std::sync::atomic::AtomicPtr<u8> = std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());\n"},
     "process-wide state outside process/"),
    ("an AtomicBool flag", {"report/best.rs": "static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);\n"},
     "process-wide state outside process/"),
    ("run.json read by its literal", {"report/best.rs": "fn meta(d: &std::path::Path) { let _ = std::fs::read_to_string(d.join(\"run.json\")); }\n"},
     "run.json read outside run/dir.rs"),
    ("run.json read through a local const", {"report/best.rs": "const META: &str = \"run.json\";\n"
                                             "fn meta(d: &std::path::Path) { let _ = std::fs::File::open(d.join(META)); }\n"},
     "run.json read outside run/dir.rs"),
    ("run.json read through a renamed import", {"report/best.rs": "use crate::run::meta::RUN_JSON as M;\n"
                                                "fn meta(d: &std::path::Path) { let _ = std::fs::read(d.join(M)); }\n"},
     "run.json read outside run/dir.rs"),
    ("a #[path] module onto a later stage", {"problem/mod.rs": "#[path = \"../run/log.rs\"]\nmod sneak;\n"}, "#[path]"),
    ("a long test function", {"tests/main.rs": "#[test]\nfn long() {\n" + LONG_BODY + "}\n"}, "tests/main.rs: fn long has 63 lines"),
    ("a long test helper", {"tests/common/mod.rs": "pub fn long() {\n" + LONG_BODY + "}\n"}, "tests/common/mod.rs: fn long has 63 lines"),
    ("a long function past a raw string's brace", {"error.rs": "fn long() {\n    let _ = r#\"\n}\n\"#;\n" + LONG_BODY + "}\n"},
     "fn long has 66 lines"),
    ("a long unsafe fn", {"error.rs": "pub unsafe fn long() {\n" + LONG_BODY + "}\n"}, "fn long has 63 lines"),
    ("a long extern \"C\" fn", {"error.rs": "pub extern \"C\" fn long() {\n" + LONG_BODY + "}\n"}, "fn long has 63 lines"),
    ("a long unsafe extern fn", {"error.rs": "pub(crate) unsafe extern \"C\" fn long() {\n" + LONG_BODY + "}\n"}, "fn long has 63 lines"),
    ("report onto run/slurm", {"report/best.rs": "fn f() { crate::run::slurm::submit(todo!()); }\n"}, "report/ may not use run/slurm/"),
    ("mctree onto run/slurm", {"mctree/mod.rs": "use crate::run::slurm::submit;\n"}, "mctree/ may not use run/slurm/"),
    ("run/slurm onto search", {"run/slurm/mod.rs": "use crate::search::ask;\n"}, "run/slurm/ may not use search/"),
    ("problem onto process", {"problem/space.rs": "use crate::process::spawn;\n"}, "problem/ may not use process/"),
    # issue 56 item 3: a type's inherent methods live in its own file or folder
    ("methods in a sibling file", {"run/driver.rs": "impl Log {\n    pub fn f(&self) {}\n}\n"},
     "src/run/driver.rs:5: impl of `Log` (defined in src/run/log.rs) outside its home src/run/log.rs or src/run/log/"),
    ("methods of a type with a lifetime", CTX | {"problem/commands.rs": "use super::locate::Ctx;\n"
                                                "impl<'a> Ctx<'a> {\n    pub fn at(&self) -> &'a str { self.at }\n}\n"},
     "src/problem/commands.rs:2: impl of `Ctx` (defined in src/problem/locate.rs)"),
    ("methods of a generic type with a bound", CTX | {"problem/commands.rs": "use super::locate::Ctx;\n"
                                                     "impl<F: Fn(&str) -> Option<u8>> Ctx<'_, F> where F: Copy {}\n"},
     "src/problem/commands.rs:2: impl of `Ctx` (defined in src/problem/locate.rs)"),
    ("methods by a crate:: path", {"report/best.rs": "impl crate::run::log::Log {}\n"}, "impl of `Log` (defined in src/run/log.rs)"),
    ("methods by a super:: path", {"run/driver.rs": "impl super::log::Log {}\n"}, "impl of `Log` (defined in src/run/log.rs)"),
    ("methods of a name two modules define, the import says which", TABLES | {
        "report/sub/deep.rs": "use crate::report::best::Table as Row;\nimpl Row {}\n"},
     "src/report/sub/deep.rs:3: impl of `Table` (defined in src/report/best.rs) outside its home src/report/best.rs or"),
    ("methods in a test module elsewhere", {"run/log.rs": "#[cfg(test)]\nmod more {\n    impl crate::problem::Space {}\n}\n"},
     "src/run/log.rs:13: impl of `Space` (defined in src/problem/space.rs)"),
]
# Shapes the check must let pass: (what, {file: text appended}).
PASSES = [
    ("methods in the type's own file, its tests and its folder, and its module's folder",
     {"problem/space.rs": "pub mod deeper;\npub mod extra;\nimpl Space {}\n#[cfg(test)]\nmod tests {\n    impl super::Space {}\n}\n",
      "problem/space/extra.rs": "use crate::problem::Space;\nimpl Space {\n    pub fn more(&self) {}\n}\n",
      "problem/space/deeper/mod.rs": "impl crate::problem::space::Space {}\n",
      "report/sub/mod.rs": "pub struct Sub;\n", "report/sub/deep.rs": "impl super::Sub {}\n"}),
    ("trait impls and `impl Trait` types elsewhere; impl text in comments and strings",
     {"run/driver.rs": "impl Default for Log {\n    fn default() -> Self { Log }\n}\n"
                       "impl<T: Copy> From<T> for Space {\n    fn from(_: T) -> Self { Space }\n}\n"
                       "fn logs() -> impl Iterator<Item = Log> { std::iter::empty() }\n"
                       "/// Not here; impl Log { fn f() {} } is in log.rs.\nconst S: &str = \"{ impl Log {\";\n"}),
    ("a name two modules define, the impl's import picking the one at home",
     TABLES | {"report/sub/deep.rs": "use super::Table;\nimpl Table {}\n"}),
    ("a name two modules define, by a glob: one of them at home", TABLES | {
        "report/sub/deep.rs": "use crate::report::sub::*;\nimpl Table {}\n"}),
    ("a name two modules define, the impl in one's own file", {"run/log.rs": "pub struct Space;\nimpl Space {}\n"}),
]


def run(files):
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "src"
        for name, text in files.items():
            path = Path(d) / name if name.startswith("tests/") else src / name  # tests/ beside src/
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        p = subprocess.run([sys.executable, str(SCRIPT), "--quiet", "--src", str(src)], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def planted(plant):
    """The clean crate with each planted text appended to its file."""
    files = dict(CLEAN)
    for name, text in plant.items():
        files[name] = files.get(name, "") + text
    return files


def main():
    failed = 0
    code, out = run(CLEAN)
    if code != 0:
        print(f"the clean crate fails the check:\n{out}")
        failed += 1
    for what, plant, expect in CASES:
        code, out = run(planted(plant))
        if code == 0 or expect not in out:
            print(f"not caught: {what} (exit {code}, wanted '{expect}'):\n{out}")
            failed += 1
    for what, plant in PASSES:
        code, out = run(planted(plant))
        if code != 0:
            print(f"refused: {what} (exit {code}):\n{out}")
            failed += 1
    total = len(CASES) + len(PASSES) + 1
    print(f"layering fixtures: {total - failed} of {total} as expected", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
