#!/usr/bin/env python3
"""What a trial costs the program that drives moldtune's search: `moldtune serve` (the Python
module's transport, one server for the study) against one `moldtune ask` and one
`moldtune tell` process per trial, on a toy space (three parameters, a value computed at once,
so that the figures are moldtune's own cost). Each transport and learner runs --trials trials
--repeats times, interleaved; CPU is user + system of the moldtune processes (the children
of this script), wall the whole loop. Writes results/bench/ask-tell.md.

  python3 scripts/ask_tell_cost.py [--trials 100] [--repeats 3] [--binary target/release/moldtune]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
import moldtune  # noqa: E402

SPACE = """name: toy
params:
  - {name: X, type: real, low: -4, high: 4, default: 3}
  - {name: Y, type: integer, low: 1, high: 64, default: 8}
  - {name: K, type: categorical, choices: [a, b, c], default: a}
metric: {goal: minimize}
search: {max_evals: %d, initial: 10}
"""


def value(c):
    return (c["X"] - 1) ** 2 + abs(c["Y"] - 20) / 10 + (0 if c["K"] == "b" else 1)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def by_serve(binary, space, d, learner):
    with moldtune.Study(space, dir=d, learner=learner, binary=binary) as s:
        while (t := s.ask()) is not None:
            s.tell(t, value(t.params))


def by_commands(binary, space, d, learner):
    first = ["--problem", str(space), "--learner", learner]
    while True:
        out = subprocess.run([binary, "ask", d, *first], capture_output=True, text=True, check=True)
        first = []
        offer = json.loads(out.stdout)
        if "end" in offer:
            return
        v = value(offer["config"])
        subprocess.run([binary, "tell", d, "--eval", str(offer["eval"]), "--value", repr(v)],
                       capture_output=True, check=True)


def measure(way, binary, space, learner):
    with tempfile.TemporaryDirectory() as t:
        cpu0, t0 = children_cpu(), time.perf_counter()
        way(binary, space, os.path.join(t, "study"), learner)
        return children_cpu() - cpu0, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "moldtune"))
    a = ap.parse_args()
    ways = {"serve": by_serve, "ask + tell commands": by_commands}
    figures = {}
    with tempfile.TemporaryDirectory() as t:
        space = Path(t) / "space.yaml"
        space.write_text(SPACE % a.trials)
        load0 = os.getloadavg()
        for _ in range(a.repeats):
            for learner in ["rf", "gp"]:
                for name, way in ways.items():
                    cpu, wall = measure(way, a.binary, space, learner)
                    figures.setdefault((name, learner), []).append((cpu, wall))
        load1 = os.getloadavg()
    write(a, figures, load0, load1)


def shown(path):
    """A path as the results show it: relative to the repository when inside it."""
    p = Path(path).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(path)


def write(a, figures, load0, load1):
    rows = []
    for (name, learner), runs in figures.items():
        cpu = [1000 * c / a.trials for c, _ in runs]
        wall = [1000 * w / a.trials for _, w in runs]
        rows.append(f"| {name} | {learner} | {statistics.median(cpu):.1f} ({min(cpu):.1f}–{max(cpu):.1f}) "
                    f"| {statistics.median(wall):.1f} ({min(wall):.1f}–{max(wall):.1f}) |")
    command = "python3 scripts/ask_tell_cost.py" + (f" --trials {a.trials}" if a.trials != 100 else "") + \
        (f" --repeats {a.repeats}" if a.repeats != 3 else "")
    text = f"""# What a trial costs the program that drives the search

`{command}` ({os.cpu_count()} cores, load average {load0[0]:.2f} before, {load1[0]:.2f} after; binary
`{shown(a.binary)}`). A toy space of three parameters whose value is computed at once, {a.trials} trials
a study (the default, then 10 random, then the learner), {a.repeats} studies per transport and learner,
interleaved. CPU is moldtune's (user + system of its processes), per trial; wall is the whole loop's,
per trial, the client's JSON included. Medians (min–max) over the studies.

| transport | learner | CPU ms / trial | wall ms / trial |
|---|---|---:|---:|
""" + "\n".join(rows) + """

`serve` keeps the study open: each ask fits the learner's model once on what is known. The commands
open the run directory each time (its lock, run.json, results.csv replayed into the search) and
fit again: what a shell script or a scheduler's jobs pay for needing no process between trials.
"""
    out = ROOT / "results" / "bench" / "ask-tell.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
