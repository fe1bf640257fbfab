#!/usr/bin/env python3
"""What watching a run's progress costs when it prints many lines: a script that prints N
progress lines (`step k val v`, as fast as awk writes them) and then its score, tuned for 3
evaluations (the default, then 2 random) with `progress:` and without it, interleaved,
--repeats times. Every configuration prints the same curve, so none is pruned and each
is compared, line by line, with the completed curves of N points before it: the worst case
of the median rule. The cost of watching is the difference per evaluation; the curve kept
is checked whole (N points in progress.jsonl). Writes results/bench/pruning-scale.md.

  python3 scripts/pruning_scale.py [--lines 100000,1000000] [--repeats 3] [--binary target/release/moldtune]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MOLD = """awk 'BEGIN { for (k = 1; k <= #N; k++) print "step " k " val " (k % 7) / 10; print "score: #A" }'
"""

PROBLEM = """name: lines
mold: p.mold.sh
params:
  - {{name: A, type: integer, low: 1, high: 9, default: 5}}
  - {{name: N, type: ordinal, values: [{n}], default: {n}}}
run: "sh {{{{ source }}}}"
metric: {{regex: 'score: ([0-9]+)', goal: maximize}}
repeats: 1
check: {{mode: none}}
timeouts: {{run_s: 600}}
{progress}
"""


def tune(binary, d, n, watched):
    progress = "progress: {regex: 'step (\\d+) val ([0-9.]+)', startup: 1}" if watched else ""
    (d / "p.yaml").write_text(PROBLEM.format(n=n, progress=progress))
    out = d / ("watched" if watched else "plain")
    t0 = time.perf_counter()
    subprocess.run([binary, "run", "p.yaml", "--learner", "random", "--max-evals", "3", "--verify", "0",
                    "--out", str(out), "--quiet"], cwd=d, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    kept = []
    if watched:
        for line in (out / "progress.jsonl").read_text().splitlines():
            kept.append(len(json.loads(line)["curve"]))
    subprocess.run(["rm", "-rf", str(out)], check=True)
    return wall, kept


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", default="100000,1000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "moldtune"))
    a = ap.parse_args()
    rows = []
    load0 = os.getloadavg()
    for n in [int(x) for x in a.lines.split(",")]:
        costs, kept_all = [], []
        with tempfile.TemporaryDirectory() as t:
            d = Path(t)
            (d / "p.mold.sh").write_text(MOLD)
            for _ in range(a.repeats):
                plain, _ = tune(a.binary, d, n, False)
                watched, kept = tune(a.binary, d, n, True)
                costs.append((watched - plain) / 3)
                kept_all += kept
        whole = all(k == n for k in kept_all) and len(kept_all) == 3 * a.repeats
        rows.append(f"| {n:,} | {statistics.median(costs):.2f} ({min(costs):.2f} to {max(costs):.2f}) "
                    f"| {'all ' + format(n, ',') if whole else kept_all} |")
        print(rows[-1], flush=True)
    load1 = os.getloadavg()
    command = "python3 scripts/pruning_scale.py" + (f" --lines {a.lines}" if a.lines != "100000,1000000" else "")
    text = f"""# Watching a run that prints many progress lines

`{command}` ({os.cpu_count()} cores, load average {load0[0]:.2f} before, {load1[0]:.2f} after). A script prints
N lines `step k val v` and its score; 3 evaluations with `progress:` (`startup: 1`: every line from the second
evaluation on is judged against the completed curves of N points) against the same 3 without it, interleaved,
{a.repeats} times. The cost is the difference in wall seconds per evaluation, reading, parsing and judging every
line and writing the curve to progress.jsonl included; medians (min to max). The curves kept are the points
progress.jsonl holds for each evaluation.

| lines a run | seconds of watching per evaluation | points kept |
|---:|---:|---|
""" + "\n".join(rows) + "\n"
    out = ROOT / "results" / "bench" / "pruning-scale.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
