#!/usr/bin/env python3
"""Pruning (`progress:`) against none, on the mlp-digits example.

Runs `moldtune run examples/mlp-digits/mlp.yaml --learner L --seed S --max-evals E --verify 0`
as it is (each epoch's accuracy read as it runs; a configuration below the median of the
completed ones at an epoch is stopped) and with its `progress:` line removed (a copy of the
example in a temporary folder), alternately, for seeds 0..`--seeds`-1. Writes
results/mlp-digits/pruning.md: per seed, each side's whole-run wall seconds, the seconds its
programs ran (results.csv `run_s` summed), how many evaluations were pruned, and the best
accuracy each found; medians over the seeds.

  python3 scripts/mlp_pruning.py [--evals 40] [--seeds 3] [--learner rf] [--binary target/release/moldtune]
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
EXAMPLE = ROOT / "examples" / "mlp-digits"
OUT = ROOT / "results" / "mlp-digits" / "pruning.md"


def without_progress(work):
    """A copy of the example whose problem file has no `progress:`."""
    d = work / "no-pruning"
    d.mkdir()
    shutil.copy(EXAMPLE / "mlp.mold.py", d / "mlp.mold.py")
    lines = (EXAMPLE / "mlp.yaml").read_text().splitlines(keepends=True)
    (d / "mlp.yaml").write_text("".join(l for l in lines if not l.startswith("progress:")))
    return d / "mlp.yaml"


def one(binary, problem, learner, seed, evals, out):
    args = [str(binary), "run", str(problem), "--learner", learner, "--seed", str(seed),
            "--max-evals", str(evals), "--verify", "0", "--out", str(out), "--quiet"]
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    wall = time.time() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    ok = [float(r["objective"]) for r in rows if r["status"] == "ok"]
    return {
        "wall": wall,
        "run_s": sum(float(r["run_s"] or 0) for r in rows),
        "pruned": sum(r["status"] == "pruned" for r in rows),
        "best": max(ok) if ok else float("nan"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evals", type=int, default=40)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--learner", default="rf")
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "moldtune"))
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mlp-pruning."))
    load = os.getloadavg()
    rows = []
    try:
        plain = without_progress(work)
        for s in range(a.seeds):
            p = one(a.binary, EXAMPLE / "mlp.yaml", a.learner, s, a.evals, work / f"pruned-{s}")
            n = one(a.binary, plain, a.learner, s, a.evals, work / f"plain-{s}")
            rows.append((s, p, n))
            print(f"seed {s}: pruning {p}, none {n}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write(a, load, rows)


def write(a, load, rows):
    med = lambda key, side: statistics.median(r[side][key] for r in rows)
    table = "\n".join(
        f"| {s} | {p['wall']:.1f} | {n['wall']:.1f} | {p['run_s']:.1f} | {n['run_s']:.1f} | "
        f"{p['pruned']} | {p['best']:.4f} | {n['best']:.4f} |"
        for s, p, n in rows)
    saved = statistics.median(1 - r[1]["run_s"] / r[2]["run_s"] for r in rows)
    saved_wall = statistics.median(1 - r[1]["wall"] / r[2]["wall"] for r in rows)
    OUT.write_text(f"""# Pruning on the mlp-digits example

`python3 scripts/mlp_pruning.py --evals {a.evals} --seeds {a.seeds} --learner {a.learner}` ({os.cpu_count()} cores,
load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the start): `moldtune run examples/mlp-digits/mlp.yaml
--learner {a.learner} --seed S --max-evals {a.evals} --verify 0` as shipped (`progress:` reads each epoch's accuracy;
a configuration below the median of the completed ones at an epoch is stopped, after 5 completed) and without its
`progress:` line, alternately per seed. "programs s" is results.csv's `run_s` summed: the seconds the evaluations'
programs ran (Python's start and scikit-learn's import, about 0.9 s each, are in it and cannot be pruned).

| seed | whole run s, pruning | none | programs s, pruning | none | pruned | best accuracy, pruning | none |
|---|---:|---:|---:|---:|---:|---:|---:|
{table}

Medians: whole run {med('wall', 1):.1f} s against {med('wall', 2):.1f} s ({100 * saved_wall:.0f}% saved); programs
{med('run_s', 1):.1f} s against {med('run_s', 2):.1f} s ({100 * saved:.0f}% saved); {statistics.median(r[1]['pruned'] for r in rows):.0f} of
{a.evals} evaluations pruned; best accuracy {med('best', 1):.4f} against {med('best', 2):.4f}.
""")
    print(OUT.read_text())


if __name__ == "__main__":
    main()
