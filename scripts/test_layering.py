#!/usr/bin/env python3
"""scripts/layering.py must catch every form an import can take (issue 40).

A small crate that follows the rules is written to a temporary directory and must pass; then
each case plants one import (or one shape) into it, and the check must fail naming it. Run by
scripts/test.sh.

    python3 scripts/test_layering.py
"""

import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "layering.py"
CLEAN = {
    "lib.rs": "pub mod error;\npub mod problem;\npub mod run;\npub mod report;\n",
    "error.rs": "pub struct Error;\n",
    "problem/mod.rs": "pub mod space;\npub use space::Space;\n",
    "problem/space.rs": "pub struct Space;\n",
    "run/mod.rs": "pub mod dir;\npub mod driver;\npub mod log;\npub mod meta;\npub struct Limits;\n",
    "run/meta.rs": "pub const RUN_JSON: &str = \"run.json\";\n",
    "run/dir.rs": "use crate::run::meta::RUN_JSON;\npub fn read(d: &std::path::Path) { let _ = std::fs::read(d.join(RUN_JSON)); }\n",
    "run/driver.rs": "use super::log::Log;\nuse crate::problem::Space;\npub fn drive(_: Space, _: Log) {}\n",
    "run/log.rs": "pub struct Log;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::report::best;\n}\n",
    "report/mod.rs": "pub mod best;\npub mod sub;\n",
    "report/best.rs": "use crate::run::log::Log;\npub fn best(_: &Log) {}\n",
    "report/sub/mod.rs": "pub mod deep;\n",
    "report/sub/deep.rs": "pub fn deep() {}\n",
}
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
    ("a long function", {"error.rs": "fn long() {\n" + "    let _ = 1;\n" * 61 + "}\n"}, "fn long has 63 lines"),
]


def run(files):
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "src"
        for name, text in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text)
        p = subprocess.run([sys.executable, str(SCRIPT), "--quiet", "--src", str(src)], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def main():
    failed = 0
    code, out = run(CLEAN)
    if code != 0:
        print(f"the clean crate fails the check:\n{out}")
        failed += 1
    for what, plant, expect in CASES:
        files = dict(CLEAN)
        for name, text in plant.items():
            files[name] = files.get(name, "") + text
        code, out = run(files)
        if code == 0 or expect not in out:
            print(f"not caught: {what} (exit {code}, wanted '{expect}'):\n{out}")
            failed += 1
    print(f"layering fixtures: {len(CASES) + 1 - failed} of {len(CASES) + 1} as expected", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
