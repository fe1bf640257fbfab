#!/usr/bin/env python3
"""`--executor slurm` against `--executor local`: the wall of the same run.

Runs `moldtune run tests/e2e/matmul/matmul.yaml --max-evals 24 --seed 0 --verify 0` with
`--executor local` (builds ahead, `--jobs 2`) and with `--executor slurm --workers 2` on the
Slurm daemons of scripts/slurm_local.sh (started here if SLURM_CONF is not set), alternating
local, slurm, slurm, local, ... for `--repeats` pairs so that a drift of the machine favours
neither, and writes results/scaleout/slurm.json and slurm.md: each run's wall, the search's
wall (last row's elapsed_sec), the sums of compile and timed-run seconds, the median per
executor and the ratio.

Both "nodes" of the local daemons are this one 2-core machine: the figures show what the
Slurm path costs (submission, the worker's start, polling) against the local pipeline, not
what a cluster gains; and two timed runs can overlap here, which on a real cluster (one
evaluation per node, `--exclusive`) they cannot.

  python3 scripts/slurm_wall.py [--repeats 2] [--evals 24] [--binary target/release/moldtune]
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
PROBLEM = "tests/e2e/matmul/matmul.yaml"


def one_run(binary, executor, evals, out):
    args = [str(binary), "run", PROBLEM, "--max-evals", str(evals), "--seed", "0",
            "--verify", "0", "--out", str(out), "--quiet"]
    if executor == "local":
        args += ["--jobs", "2"]
    else:
        args += ["--executor", "slurm", "--workers", "2"]
    if executor == "steps":  # inside an allocation of both nodes: evaluations are srun steps
        args = ["salloc", "--quiet", "--nodes=2"] + args
    load = os.getloadavg()[0]
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - t0
    if p.returncode != 0:
        raise SystemExit(f"{executor} run failed ({p.returncode}): {p.stderr[-2000:]}")
    rows = list(csv.DictReader(open(out / "results.csv")))
    num = lambda r, k: float(r[k] or 0)  # noqa: E731
    return {
        "executor": executor, "wall_s": round(wall, 1),
        "search_s": round(max(num(r, "elapsed_sec") for r in rows), 1),
        "builds_s": round(sum(num(r, "compile_s") for r in rows), 1),
        "timed_s": round(sum(num(r, "run_s") for r in rows), 1),
        "rows": len(rows), "load_before": load, "load_after": os.getloadavg()[0],
    }


def ensure_slurm():
    if os.environ.get("SLURM_CONF"):
        return None
    d = tempfile.mkdtemp(prefix="moldtune-slurm-")
    subprocess.run(["bash", "scripts/slurm_local.sh", "start", d], check=True, cwd=ROOT)
    os.environ["SLURM_CONF"] = f"{d}/slurm.conf"
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--evals", type=int, default=24)
    ap.add_argument("--binary", default="target/release/moldtune")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], check=True, cwd=ROOT)
    started = ensure_slurm()
    runs = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(a.repeats):
                order = ["local", "slurm", "steps"]
                order = order if k % 2 == 0 else order[::-1]
                for ex in order:
                    r = one_run(ROOT / a.binary, ex, a.evals, Path(tmp) / f"{ex}-{k}")
                    print(r, flush=True)
                    runs.append(r)
    finally:
        if started:
            subprocess.run(["bash", "scripts/slurm_local.sh", "stop", started], cwd=ROOT)
    med = {ex: statistics.median(r["wall_s"] for r in runs if r["executor"] == ex)
           for ex in ("local", "slurm", "steps")}
    out = ROOT / "results/scaleout"
    out.mkdir(parents=True, exist_ok=True)
    (out / "slurm.json").write_text(json.dumps({"runs": runs, "median_wall_s": med}, indent=2))
    lines = ["# `--executor local` vs `--executor slurm --workers 2` (batch jobs, and steps of an allocation)", "",
             f"`python3 scripts/slurm_wall.py --repeats {a.repeats} --evals {a.evals}`: the matmul example, "
             f"{a.evals} evaluations, seed 0, no verification; `local` with `--jobs 2`; `slurm`: "
             "`--executor slurm --workers 2`, each evaluation a batch job on the two nodes of "
             "scripts/slurm_local.sh (both on this 2-core machine); `steps`: the same inside "
             "`salloc --nodes=2`, each evaluation a step of the allocation; the order alternated.", "",
             "| executor | wall s | search s | Σ builds s | Σ timed runs s | load before → after |",
             "|---|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['executor']} | {r['wall_s']} | {r['search_s']} | {r['builds_s']} | {r['timed_s']} | "
                     f"{r['load_before']:.1f} → {r['load_after']:.1f} |")
    lines += ["", f"Median wall: local {med['local']:.1f} s, slurm (batch jobs) {med['slurm']:.1f} s "
              f"({med['slurm'] / med['local']:.2f}x local), steps of an allocation {med['steps']:.1f} s "
              f"({med['steps'] / med['local']:.2f}x local)."]
    (out / "slurm.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
