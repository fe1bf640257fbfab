#!/usr/bin/env python3
"""The driver's own time per evaluation as a run grows (issue 56 item 4): a mock run of
--evals evaluations with the random learner (no model to fit, no program to run), so that
what grows is the bookkeeping — results.csv, results.json, run.json, the best, the tie rule.
Reads each row's `elapsed_sec` from results.csv and reports the mean time per evaluation over
evaluations 500-1,000 and over the last tenth of the run (9,000-10,000), --repeats runs:
results.json is rewritten each time a tenth more is logged, so each window holds its share of
rewrites at its own scale. Writes
results/bench/driver-scale.md.

  python3 scripts/driver_scale.py [--evals 10000] [--repeats 2] [--binary target/release/moldtune]
"""

import argparse
import csv
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A space too large to run out of (a real and a wide integer), never built: the run is mocked.
PROBLEM = """name: scale
mold: k.c
params:
  - {name: X, type: real, low: 0, high: 1, default: 0.5}
  - {name: N, type: integer, low: 1, high: 1000000, default: 8}
compile: "cc {{ source }} -o {{ exe }}"
run: "{{ exe }}"
"""


def per_eval(binary, evals, out):
    (out.parent / "k.c").write_text("int x = #X; int n = #N;\n")
    (out.parent / "p.yaml").write_text(PROBLEM)
    subprocess.run([binary, "run", str(out.parent / "p.yaml"), "--mock", "--learner", "random", "--max-evals", str(evals),
                    "--verify", "0", "--quiet", "--out", str(out)], check=True, capture_output=True)
    with open(out / "results.csv") as f:
        elapsed = [float(r["elapsed_sec"]) for r in csv.DictReader(f)]
    last = len(elapsed) - 1
    window = lambda lo, hi: (elapsed[hi] - elapsed[lo]) / (hi - lo)
    return 1000 * window(500, 1000), 1000 * window(last - last // 10, last)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--evals", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "moldtune"))
    a = ap.parse_args()
    load0 = os.getloadavg()
    runs = []
    for k in range(a.repeats):
        with tempfile.TemporaryDirectory() as t:
            runs.append(per_eval(a.binary, a.evals, Path(t) / "run"))
    load1 = os.getloadavg()
    rows = "\n".join(f"| {k + 1} | {early:.3f} | {late:.3f} | {late / early:.2f} |" for k, (early, late) in enumerate(runs))
    median = statistics.median(late / early for early, late in runs)
    text = f"""# The driver's time per evaluation as a run grows

`python3 scripts/driver_scale.py --evals {a.evals} --repeats {a.repeats}` ({os.cpu_count()} cores, load average
{load0[0]:.2f} before, {load1[0]:.2f} after). A mock run (`--mock`, a space of a real and a wide integer) with the random
learner, so that what grows with the run is its bookkeeping; the time per evaluation is results.csv's
`elapsed_sec` (millisecond resolution) over evaluations 500–1,000 and over the last tenth of the run, divided by their
number (results.json is rewritten each time a tenth more of the run is logged, so each window holds its share of
rewrites at its scale). Median ratio over the runs: **{median:.2f}**.

Before issue 56 item 4 (commit 71076e2, results.json rewritten after every evaluation through a JSON tree, the best and
the searcher's counts recomputed over the whole run): 4 ms per evaluation near 1,000, 85 ms near 10,000 (×21).

| run | ms / evaluation, 500–1,000 | ms / evaluation, last tenth of {a.evals:,} | ratio |
|---:|---:|---:|---:|
{rows}
"""
    out = ROOT / "results" / "bench" / "driver-scale.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
