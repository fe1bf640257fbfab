#!/usr/bin/env python3
"""The regression gate's acceptance on this machine, with the committed baselines:

  1. `moldtune check` on results/baselines, unchanged, N times in a row: every run must exit 0;
  2. the same baselines with every guarded tile size forced to its smallest value (tiles of 4),
     N times: every run must exit 4 (regression);
  3. the same baselines with one kernel's mold made wrong (its first `+=` turned into `-=`),
     once: exit 6 (broken, wrong output).

Writes results/check/acceptance.md (exit codes, wall times, each guard's change per run) and
prints it. The forced and wrong copies live in a temporary folder; nothing committed is changed.

  python3 scripts/check_acceptance.py [--runs 10] [--binary target/release/moldtune]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINES = ROOT / "results" / "baselines"


def check(binary, paths, tag):
    start = time.time()
    p = subprocess.run([str(binary), "check", "--json", "-q", *map(str, paths)],
                       capture_output=True, text=True, cwd=ROOT)
    # Paths as the reader's checkout has them: relative to the repository, copies by name.
    p.stdout = p.stdout.replace(str(ROOT) + "/", "")
    if Path(paths[0]).is_absolute():
        p.stdout = p.stdout.replace(str(paths[0]) + "/", "<copy>/")
    wall = time.time() - start
    try:
        guarded = json.loads(p.stdout)["guarded"]
    except (ValueError, KeyError):
        guarded = []
        print(p.stderr, file=sys.stderr)
    print(f"{tag}: exit {p.returncode} in {wall:.0f} s", file=sys.stderr)
    return {"tag": tag, "exit": p.returncode, "wall_s": wall, "guarded": guarded}


def copies(tmp):
    """The committed baselines with their problem paths made absolute."""
    out = []
    for f in sorted(BASELINES.glob("*.json")):
        b = json.loads(f.read_text())
        b["problem"] = str((f.parent / b["problem"]).resolve())
        out.append((tmp / f.name, b))
    return out


def smallest_tiles(b):
    """Every ordinal parameter named like a tile size (P3.., a number) set to its smallest value."""
    problem = Path(b["problem"]).read_text()
    for g in b["guards"]:
        for name in g["config"]:
            m = re.search(r"- name: %s\n\s+type: ordinal\n\s+values: \[([^\]]*)\]" % re.escape(name), problem)
            values = [v.strip() for v in m.group(1).split(",")] if m else []
            if values and all(v.isdigit() for v in values) and name != "PTILE":
                g["config"][name] = min(values, key=int)
    return b


def wrong(b, tmp):
    """The problem's folder copied with its mold's first `+=` made `-=`."""
    src = Path(b["problem"]).parent
    dst = tmp / ("wrong-" + src.name)
    shutil.copytree(src, dst)
    shutil.copytree(src.parent / "harness", tmp / "harness", dirs_exist_ok=True)
    problem = dst / Path(b["problem"]).name
    mold = re.search(r"^mold: (\S+)", problem.read_text(), re.M).group(1)
    text = (dst / mold).read_text()
    (dst / mold).write_text(text.replace("+=", "-=", 1))
    b["problem"] = str(problem)
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "moldtune"))
    ap.add_argument("--wrong", default="gemm-medium", help="the baseline whose mold is made wrong")
    a = ap.parse_args()
    runs = []
    for k in range(a.runs):
        runs.append(check(a.binary, [BASELINES.relative_to(ROOT)], f"unchanged {k + 1}"))
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        forced = tmp / "forced"
        forced.mkdir()
        for f, b in copies(forced):
            f.write_text(json.dumps(smallest_tiles(b), indent=2))
        for k in range(a.runs):
            runs.append(check(a.binary, [forced], f"tiles of 4, {k + 1}"))
        bad = tmp / "wrong"
        bad.mkdir()
        for f, b in copies(bad):
            if b["name"] == a.wrong:
                f.write_text(json.dumps(wrong(b, tmp), indent=2))
        runs.append(check(a.binary, [bad], f"{a.wrong} made wrong"))
    write(runs, a)


def write(runs, a):
    out = ROOT / "results" / "check"
    out.mkdir(parents=True, exist_ok=True)
    (out / "acceptance.json").write_text(json.dumps(runs, indent=1) + "\n")
    names = sorted({g["name"] for r in runs for g in r["guarded"]})
    lines = [
        "# moldtune check: acceptance on this machine",
        "",
        f"Produced by `python3 scripts/check_acceptance.py --runs {a.runs}` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {os.getloadavg()[0]:.2f} at the end).",
        "Cells: the change of each guarded speed-up, (tuned/reference now) / (recorded), and the verdict.",
        "",
        "| run | exit | wall (s) | " + " | ".join(names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    for r in runs:
        by = {g["name"]: g for g in r["guarded"]}
        cells = []
        for n in names:
            g = by.get(n)
            c = g and g.get("change")
            cells.append(f"{c['ratio']:.2f} {g['verdict']}" if c else (g["verdict"] if g else "–"))
        lines.append(f"| {r['tag']} | {r['exit']} | {r['wall_s']:.0f} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (out / "acceptance.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
