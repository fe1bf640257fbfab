#!/usr/bin/env python3
"""`--jobs` measured: builds ahead, timed runs alone.

Runs `moldtune run PROBLEM --max-evals 60 --seed 0 --jobs J` for two PolyBench problems --
syr2k-medium (builds under a second) and 3mm-medium (Polly builds of seconds) -- with J = 1 and
J = 2, one after the other (1 then 2 for the first problem, 2 then 1 for the second, so that a
drift of the machine does not favour one), and writes results/scaleout/scaleout.json and
README.md: the wall of each command, the search's wall (the last row's elapsed_sec), the
sums of compile and timed-run seconds from results.csv, the longest build, the issue's goal
bound  sum(timed runs) + sum(builds) / J x 1.15 + longest build  for the search, and each run's
verified best with its speed-up over the default (they must agree within noise: exclusive
timing is not traded for speed).

  python3 scripts/scaleout.py [--evals 60] [--binary target/release/moldtune]
"""

import argparse
import csv
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS = ["polybench/syr2k/syr2k.medium.yaml", "polybench/3mm/3mm.medium.yaml"]


def one_run(binary, problem, jobs, evals, out):
    args = [str(binary), "run", problem, "--max-evals", str(evals), "--seed", "0",
            "--jobs", str(jobs), "--out", str(out), "--quiet", "--json"]
    load = os.getloadavg()[0]
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - t0
    if p.returncode != 0:
        return {"jobs": jobs, "exit": p.returncode, "stderr": p.stderr[-2000:]}
    rows = list(csv.DictReader(open(out / "results.csv")))
    num = lambda r, k: float(r[k] or 0)  # noqa: E731
    builds = [num(r, "compile_s") for r in rows]
    timed = sum(num(r, "run_s") for r in rows)
    search = max(num(r, "elapsed_sec") for r in rows)
    summary = json.loads(p.stdout)
    v = summary.get("verification") or {}
    return {
        "jobs": jobs, "exit": 0, "wall_s": round(wall, 1), "search_s": round(search, 1),
        "builds_s": round(sum(builds), 1), "timed_s": round(timed, 1),
        "longest_build_s": round(max(builds), 2),
        "bound_s": round(timed + sum(builds) / jobs * 1.15 + max(builds), 1),
        "load_before": load, "load_after": os.getloadavg()[0],
        "best": (summary.get("best") or {}).get("described"),
        "verified_speedup": v.get("speedup"),
        "statuses": {s: sum(r["status"] == s for r in rows) for s in {r["status"] for r in rows}},
    }


def fmt_speedup(s):
    if not s:
        return "–"
    return f"{s['ratio']:.2f}× [{s['low']:.2f}–{s['high']:.2f}]"


def markdown(res, evals, minutes):
    lines = ["# `--jobs`: builds ahead, timed runs alone", "",
             f"Made by `python3 scripts/scaleout.py --evals {evals}` ({minutes:.0f} min) on this "
             "2-core shared machine. Per run: `moldtune run PROBLEM --max-evals "
             f"{evals} --seed 0 --jobs J`. *search* is the last row's elapsed time (the search "
             "alone; *wall* adds the reference build and the end-of-run verification); *bound* "
             "is Σ timed runs + Σ builds / J × 1.15 + the longest build (check runs not included).",
             "", "| problem | jobs | wall s | search s | Σ builds s | Σ timed runs s | longest build s "
             "| bound s | search ≤ bound | verified speed-up over the default | best | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for problem, runs in res.items():
        for r in runs:
            if r["exit"] != 0:
                lines.append(f"| {problem} | {r['jobs']} | failed (exit {r['exit']}) |" + " |" * 9)
                continue
            ok = "yes" if r["search_s"] <= r["bound_s"] else "**no**"
            lines.append(
                f"| {problem} | {r['jobs']} | {r['wall_s']} | {r['search_s']} | {r['builds_s']} | "
                f"{r['timed_s']} | {r['longest_build_s']} | {r['bound_s']} | {ok} | "
                f"{fmt_speedup(r['verified_speedup'])} | `{r['best']}` | "
                f"{r['load_before']:.1f}–{r['load_after']:.1f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evals", type=int, default=60)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "moldtune"))
    args = ap.parse_args()
    start = time.time()
    res = {}
    with tempfile.TemporaryDirectory() as t:
        for k, problem in enumerate(PROBLEMS):
            name = Path(problem).stem.replace(".medium", "-medium")
            order = [1, 2] if k % 2 == 0 else [2, 1]
            res[name] = [one_run(args.binary, problem, j, args.evals, Path(t) / f"{name}-j{j}")
                         for j in order]
            for r in res[name]:
                print(name, json.dumps(r), flush=True)
    out = ROOT / "results" / "scaleout"
    out.mkdir(parents=True, exist_ok=True)
    (out / "scaleout.json").write_text(json.dumps(res, indent=1) + "\n")
    md = markdown(res, args.evals, (time.time() - start) / 60)
    (out / "README.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
