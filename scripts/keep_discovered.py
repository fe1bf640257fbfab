#!/usr/bin/env python3
"""Writes `mctree.json` (the C file's text and its loop tree, as `moldtune mctree` keeps it)
into every mctree run directory under results/ that has none: runs recorded before mctree
kept it. Reading those runs (`best`, `report`, a warm start) then needs neither clang nor
the C file. The tree is discovery's on the file run.json names, with the run's kernel and
flags (`moldtune mctree FILE --kernel K --list --json -- ARGS`).

    python3 scripts/keep_discovered.py [--binary target/release/moldtune] [ROOT]
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/moldtune")
    ap.add_argument("root", nargs="?", default="results")
    a = ap.parse_args()
    written = 0
    for run_json in sorted(Path(a.root).rglob("run.json")):
        d = run_json.parent
        meta = json.loads(run_json.read_text())
        m = meta.get("mctree")
        if m is None or (d / "mctree.json").exists():
            continue
        file = (d / meta["problem"]).resolve()
        cmd = [a.binary, "mctree", str(file), "--kernel", m["kernel"], "--list", "--json",
               "--", *m.get("args", [])]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{d}: {' '.join(cmd)} failed:\n{out.stderr}")
        loops = json.loads(out.stdout)
        # As run.json names the problem: relative to the run directory (so does moldtune).
        loops["file"] = os.path.relpath(file, d.resolve())
        kept = {"source": file.read_text(), "loops": loops}
        (d / "mctree.json").write_text(json.dumps(kept, separators=(",", ":")))
        written += 1
    print(f"wrote mctree.json in {written} run directories")


if __name__ == "__main__":
    main()
