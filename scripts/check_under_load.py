#!/usr/bin/env python3
"""The regression gate on a busy machine, measured.

While two busy processes load the machine (bounded in time, stopped by this script):

  wall clock  for two committed baselines -- syr2k-medium (serial) and floyd-warshall-medium
              (Polly's OpenMP parallelisation, 2 threads) -- the samples are recorded again under
              the load (`moldtune check --update`, copies in a temporary folder), then
              `moldtune check` runs N times on the unchanged code and N times with the guarded
              configuration alone slowed by 25% (the copy's compile command adds
              -DPB_SLOWDOWN=0.25 when the guard's first differing parameter has its guarded
              value: the harness spins after the kernel, the output is unchanged);
  instructions  the saxpy problem of tests/e2e/instructions, counted by cachegrind: a baseline
              with REPS=2 guarded against REPS=1, then N checks unchanged and N with 5% more
              instructions in the guarded configuration only (an extra loop over a tenth of the
              array, in the kernel), at a 2% threshold.

Writes results/check/under_load.json and .md (every check's exit code, rounds, change and
wall time; the load average seen) and prints the summary. Nothing committed is changed.

  python3 scripts/check_under_load.py [--runs 10] [--binary target/release/moldtune]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WALL = ["syr2k-medium", "floyd-warshall-medium"]


class Load:
    """Two busy processes for at most `seconds`, killed on exit."""

    def __init__(self, seconds):
        busy = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass\n"
        self.procs = [subprocess.Popen([sys.executable, "-c", busy]) for _ in range(2)]

    def __enter__(self):
        # The 1-minute load average lags: wait (at most 2 min) until it shows the load, so
        # that the figures recorded with each check say what the machine was doing.
        end = time.time() + 120
        while os.getloadavg()[0] < 1.8 and time.time() < end:
            time.sleep(2)
        print(f"load average {os.getloadavg()[0]:.1f}: starting", file=sys.stderr)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def moldtune(binary, args, cwd):
    start = time.time()
    p = subprocess.run([str(binary), *args], capture_output=True, text=True, cwd=cwd)
    return p, time.time() - start


def guard_condition(problem_yaml, b):
    """A tera condition true for the guard's configuration and false for the reference's."""
    ref, guard = b["reference"]["config"], b["guards"][0]["config"]
    differing = [k for k in guard if guard[k] != ref.get(k)]
    # A categorical value (a string) is safest to compare; numbers compare as numbers.
    differing.sort(key=lambda k: re.fullmatch(r"-?[0-9.]+", guard[k]) is not None)
    k = differing[0]
    # Single quotes: the condition goes inside the YAML file's double-quoted compile line.
    v = guard[k] if re.fullmatch(r"-?[0-9.]+", guard[k]) else f"'{guard[k]}'"
    return f"{k} == {v}"


def slowed_copy(tmp, name, flag):
    """The baseline `name` with a copy of its problem whose guard alone gets `flag`."""
    src = ROOT / "results" / "baselines" / f"{name}.json"
    b = json.loads(src.read_text())
    problem = (src.parent / b["problem"]).resolve()
    text = problem.read_text()
    cond = guard_condition(problem, b)
    text = re.sub(r'^compile: "(.*)"$',
                  lambda m: f'compile: "{m.group(1)}{{% if {cond} %}} {flag}{{% endif %}}"',
                  text, count=1, flags=re.M)
    copy = problem.parent / f".{problem.stem}.slowed.yaml"
    copy.write_text(text)
    b["problem"] = str(copy)
    out = tmp / f"{name}.slowed.json"
    out.write_text(json.dumps(b, indent=2))
    return out, copy


def plain_copy(tmp, name):
    src = ROOT / "results" / "baselines" / f"{name}.json"
    b = json.loads(src.read_text())
    b["problem"] = str((src.parent / b["problem"]).resolve())
    out = tmp / f"{name}.json"
    out.write_text(json.dumps(b, indent=2))
    return out


def checks(binary, baseline, runs, tag, extra=()):
    out = []
    for i in range(runs):
        p, wall = moldtune(binary, ["check", "--json", "-q", str(baseline), *extra], ROOT)
        try:
            g = json.loads(p.stdout)["guarded"][0]
        except (ValueError, KeyError, IndexError):
            g = {"cause": p.stderr[-500:]}
        row = {"exit": p.returncode, "wall_s": round(wall, 1), "rounds": g.get("rounds"),
               "change": g.get("change"), "verdict": g.get("verdict"), "cause": g.get("cause"),
               "load": os.getloadavg()[0]}
        print(f"{tag} {i + 1}/{runs}: exit {row['exit']} ({row['verdict']}, {row['rounds']} rounds, "
              f"{wall:.0f} s, load {row['load']:.1f})", file=sys.stderr)
        out.append(row)
    return out


def wall_clock(binary, tmp, runs):
    results = {}
    for name in WALL:
        plain = plain_copy(tmp, name)
        p, wall = moldtune(binary, ["check", "--update", str(plain)], ROOT)
        print(p.stderr.strip(), file=sys.stderr)
        if p.returncode != 0:
            results[name] = {"update_exit": p.returncode, "update_stderr": p.stderr[-2000:]}
            continue
        recorded = json.loads(plain.read_text())
        slowed, copy = slowed_copy(tmp, name, "-DPB_SLOWDOWN=0.25")
        s = json.loads(slowed.read_text())
        for k in ("reference", "guards", "recorded"):
            s[k] = recorded[k]
        slowed.write_text(json.dumps(s, indent=2))
        try:
            results[name] = {
                "recorded": recorded["recorded"],
                "resolution": recorded["guards"][0].get("resolution"),
                "record_s": round(wall, 1),
                "unchanged": checks(binary, plain, runs, f"{name} unchanged"),
                "slowed": checks(binary, slowed, runs, f"{name} slowed 25%"),
            }
        finally:
            copy.unlink()
    return results


def instructions(binary, tmp, runs):
    src = ROOT / "tests" / "e2e" / "instructions"
    mold = (src / "saxpy.mold.c").read_text()
    extra = ("#ifdef EXTRA\n  for (int i = 0; i < N / 10; i++) z[i] = a * x[i] + z[i];\n#endif\n")
    mold = mold.replace("static double x[N], y[N];", "static double x[N], y[N];\ndouble z[N];")
    mold = mold.replace("void kernel(int reps, double a) {\n",
                        "void kernel(int reps, double a) {\n" + extra)
    (tmp / "saxpy.mold.c").write_text(mold)
    yaml = (src / "saxpy.yaml").read_text()
    (tmp / "saxpy.yaml").write_text(yaml)
    slowed = yaml.replace('-o {{ exe }}"', '-o {{ exe }}{% if REPS == 2 %} -DEXTRA{% endif %}"')
    (tmp / "saxpy.slowed.yaml").write_text(slowed)
    entry = lambda name, reps: {"name": name, "config": {"REPS": str(reps)}}  # noqa: E731
    b = {"format": 1, "name": "saxpy-instructions", "problem": "saxpy.yaml", "dataset": None,
         "metric": "instructions (minimize)", "reference": entry("default", 1),
         "guards": [entry("reps2", 2)],
         "recorded": {"at": "", "rounds": 0, "cpu": None, "cores": 0, "compiler": None,
                      "moldtune": ""}}
    base = tmp / "saxpy.json"
    base.write_text(json.dumps(b))
    p, wall = moldtune(binary, ["check", "--update", str(base), "--rounds", "5",
                                "--threshold", "2%"], ROOT)
    print(p.stderr.strip(), file=sys.stderr)
    recorded = json.loads(base.read_text())
    slow = dict(recorded, problem="saxpy.slowed.yaml")
    slow_file = tmp / "saxpy.slowed.json"
    slow_file.write_text(json.dumps(slow))
    flags = ["--threshold", "2%"]
    return {
        "recorded": recorded["recorded"],
        "resolution": recorded["guards"][0].get("resolution"),
        "record_s": round(wall, 1),
        "unchanged": checks(binary, base, runs, "instructions unchanged", flags),
        "slowed": checks(binary, slow_file, runs, "instructions +5%", flags),
    }


def tally(rows):
    codes = [r["exit"] for r in rows]
    return ", ".join(f"{codes.count(c)}× exit {c}" for c in sorted(set(codes)))


def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def summary(rows):
    """Exit codes, median rounds and median change of a set of checks."""
    change = median((r["change"] or {}).get("ratio") for r in rows)
    change = f"{change:.3f}×" if change is not None else "–"
    return f"{tally(rows)} | {median(r['rounds'] for r in rows)} | {change}"


def markdown(res, args, seconds):
    lines = ["# `moldtune check` on a busy machine", "",
             "Made by `python3 scripts/check_under_load.py "
             f"--runs {args.runs}` ({seconds / 60:.0f} min). Two busy processes ran throughout on "
             "this 2-core machine; `load` is the 1-minute load average when each check ended. "
             "Every baseline was recorded again under that load first.", "",
             "| baseline | metric | recorded rounds | resolution | unchanged: exits | rounds | "
             "change | slowed: exits | rounds | change |", "|---|---|---|---|---|---|---|---|---|---|"]
    loads = []
    for name, r in res.items():
        if "unchanged" not in r:
            lines.append(f"| {name} | | recording failed (exit {r.get('update_exit')}) |" + " |" * 7)
            continue
        loads += [x["load"] for x in r["unchanged"] + r["slowed"]]
        metric = "instructions (2%)" if name == "instructions" else "kernel time (10%)"
        res_txt = f"±{100 * r['resolution']:.1f}%" if r.get("resolution") is not None else "–"
        lines.append(f"| {name} | {metric} | {r['recorded']['rounds']} | {res_txt} | "
                     f"{summary(r['unchanged'])} | {summary(r['slowed'])} |")
    if loads:
        lines += ["", f"Load average when the checks ended: {min(loads):.1f}–{max(loads):.1f}."]
    lines += ["", "Exit codes: 0 ok, 4 regression, 7 undecided. Rounds and change: medians over the "
              "checks (change: how much slower the guard is now than recorded, relative to the "
              "reference). The slowdown is 25% of the guarded configuration's kernel time "
              "(wall clock) or 5% more instructions (instructions). Per-check details: "
              "`under_load.json`."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "moldtune"))
    ap.add_argument("--max-load-s", type=int, default=3 * 3600)
    args = ap.parse_args()
    start = time.time()
    with tempfile.TemporaryDirectory() as t, Load(args.max_load_s):
        tmp = Path(t)
        res = wall_clock(args.binary, tmp, args.runs)
        res["instructions"] = instructions(args.binary, tmp, args.runs)
    out = ROOT / "results" / "check"
    (out / "under_load.json").write_text(json.dumps(res, indent=1) + "\n")
    md = markdown(res, args, time.time() - start)
    (out / "under_load.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
