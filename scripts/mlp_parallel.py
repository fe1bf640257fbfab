#!/usr/bin/env python3
"""`--parallel 2` against one evaluation at a time, on the mlp-digits example.

Runs `moldtune run examples/mlp-digits/mlp.yaml --learner random --seed 0 --max-evals E
--verify 0` serially and with `--parallel 2`, interleaved (serial, parallel, serial, …) for
`--pairs` pairs, and writes results/mlp-digits/parallel.md: the whole run's wall seconds of each
(median, min, max), their ratio per pair, and whether both evaluated the same configurations
with the same accuracies (the random learner proposes the same ones; accuracy is deterministic
with the example's fixed training seed).

  python3 scripts/mlp_parallel.py [--evals 30] [--pairs 3] [--binary target/release/moldtune]
"""

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = "examples/mlp-digits/mlp.yaml"
OUT = ROOT / "results" / "mlp-digits" / "parallel.md"


def one(binary, evals, parallel, out):
    args = [str(binary), "run", PROBLEM, "--learner", "random", "--seed", "0",
            "--max-evals", str(evals), "--verify", "0", "--out", str(out), "--quiet"]
    if parallel > 1:
        args += ["--parallel", str(parallel)]
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    return wall, sorted((r["config_hash"], r["objective"]) for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evals", type=int, default=30)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "moldtune"))
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mlp-parallel."))
    serial, parallel, same = [], [], True
    load = os.getloadavg()
    try:
        for k in range(a.pairs):
            w1, r1 = one(a.binary, a.evals, 1, work / f"serial-{k}")
            w2, r2 = one(a.binary, a.evals, 2, work / f"parallel-{k}")
            serial.append(w1)
            parallel.append(w2)
            same = same and r1 == r2
            print(f"pair {k}: serial {w1:.1f} s, --parallel 2 {w2:.1f} s, same results: {r1 == r2}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratios = [s / p for s, p in zip(serial, parallel)]
    cores = os.cpu_count()
    fmt = lambda xs: f"{statistics.median(xs):.1f} ({min(xs):.1f}–{max(xs):.1f})"
    text = f"""# Parallel trials on the mlp-digits example

`python3 scripts/mlp_parallel.py --evals {a.evals} --pairs {a.pairs}` ({cores} cores, load average
{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the start): `moldtune run {PROBLEM} --learner random --seed 0
--max-evals {a.evals} --verify 0`, one evaluation at a time against `--parallel 2`, run alternately, {a.pairs}
pairs. Each evaluation starts Python, imports scikit-learn and trains one MLPClassifier (mostly one core).

| | whole run, s: median (min–max) |
|---|---:|
| one at a time | {fmt(serial)} |
| `--parallel 2` | {fmt(parallel)} |

Speed-up per pair (serial / parallel): {", ".join(f"{r:.2f}" for r in ratios)}; median {statistics.median(ratios):.2f}.
Both evaluated the same {a.evals} configurations with the same accuracies in every pair: {"yes" if same else "NO"}.
"""
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
