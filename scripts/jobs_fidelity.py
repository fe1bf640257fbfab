#!/usr/bin/env python3
"""Does `--jobs 2` change what is measured? The same proposals timed with and without builds ahead.

`--learner random` proposes the same configurations whatever `--jobs` is (its draws depend on
the seed and the step only), so runs with `--jobs 1` and `--jobs 2` evaluate the same
configurations and their objectives can be compared one by one. Runs syr2k-medium (30
evaluations, seed 0, no verification) as jobs 1, 2, 2, 1 (so a drift of the machine favours
neither) and writes results/scaleout/fidelity.md and fidelity.json: for each pair of runs the
per-configuration ratio of objectives, its median and quartiles. The ratio of two `--jobs 1`
runs is the machine's own noise; if timed runs were disturbed by builds, the `--jobs 2` ratios
would sit above it.

  python3 scripts/jobs_fidelity.py [--evals 30] [--problem polybench/syr2k/syr2k.medium.yaml]
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(binary, problem, jobs, evals, out):
    args = [str(binary), "run", problem, "--learner", "random", "--max-evals", str(evals),
            "--seed", "0", "--verify", "0", "--jobs", str(jobs), "--out", str(out), "--quiet"]
    t0 = time.time()
    load = os.getloadavg()[0]
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(f"jobs {jobs} failed ({p.returncode}): {p.stderr[-2000:]}")
    rows = list(csv.DictReader(open(out / "results.csv")))
    ok = {r["config_hash"]: float(r["objective"]) for r in rows if r["status"] == "ok"}
    return {"jobs": jobs, "wall_s": round(time.time() - t0, 1), "load": round(load, 2), "ok": ok}


def ratios(a, b):
    common = sorted(set(a["ok"]) & set(b["ok"]))
    r = sorted(b["ok"][h] / a["ok"][h] for h in common)
    q = statistics.quantiles(r, n=4) if len(r) >= 4 else [r[0], r[len(r) // 2], r[-1]]
    return {"n": len(r), "median": statistics.median(r), "q1": q[0], "q3": q[2],
            "min": r[0], "max": r[-1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evals", type=int, default=30)
    ap.add_argument("--problem", default="polybench/syr2k/syr2k.medium.yaml")
    ap.add_argument("--binary", default="target/release/moldtune")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], check=True, cwd=ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        runs = [one_run(ROOT / a.binary, a.problem, j, a.evals, Path(tmp) / f"run{k}-jobs{j}")
                for k, j in enumerate([1, 2, 2, 1])]
    j1a, j2a, j2b, j1b = runs
    pairs = {
        "jobs 1 / jobs 1 (the machine's noise)": ratios(j1a, j1b),
        "jobs 2 / jobs 1 (first pair)": ratios(j1a, j2a),
        "jobs 2 / jobs 1 (second pair)": ratios(j1b, j2b),
        "jobs 2 / jobs 2": ratios(j2a, j2b),
    }
    out = ROOT / "results/scaleout"
    out.mkdir(parents=True, exist_ok=True)
    (out / "fidelity.json").write_text(json.dumps(
        {"runs": [{k: v for k, v in r.items() if k != "ok"} for r in runs], "pairs": pairs}, indent=2))
    lines = ["# Timing with builds ahead: the same configurations, `--jobs 1` and `--jobs 2`", "",
             f"`python3 scripts/jobs_fidelity.py --evals {a.evals} --problem {a.problem}`: `--learner random`, "
             "seed 0, so every run evaluates the same configurations; runs in the order jobs 1, 2, 2, 1 "
             f"(walls {', '.join(str(r['wall_s']) for r in runs)} s; load average "
             f"{', '.join(str(r['load']) for r in runs)} at their starts). Per configuration measured `ok` in both "
             "runs of a pair, the ratio of their objectives:", "",
             "| pair | configurations | median | quartiles | min – max |", "|---|---|---|---|---|"]
    for name, p in pairs.items():
        lines.append(f"| {name} | {p['n']} | {p['median']:.3f} | {p['q1']:.3f} – {p['q3']:.3f} | "
                     f"{p['min']:.3f} – {p['max']:.3f} |")
    (out / "fidelity.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
