#!/usr/bin/env python3
"""One directive against none, timed interleaved: does a stack mctree once found still pay?

    python3 scripts/stack_vs_untransformed.py DRIVER.c LINE 'omp unroll partial(8)' \
        [--rounds 40] [--seed 0] -- COMPILE ARGS...

Writes `#pragma DIRECTIVE` above line LINE of DRIVER.c (1-based: the line of the loop's
`for`), builds both programs with `clang-22 -O3 -march=native -fopenmp ARGS` (mctree's
defaults), runs them in turn ROUNDS times and reads each run's last number on stdout (the
kernel time the TSVC_2 and PolyBench drivers print). Prints the medians and the speed-up
(untransformed / transformed) with a 95% bootstrap interval of the ratio of medians.
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile


def last_number(out):
    for line in reversed(out.splitlines()):
        try:
            return float(line.strip())
        except ValueError:
            continue
    return None


def build(src, exe, args):
    cmd = ["clang-22", "-O3", "-march=native", "-fopenmp", src, *args, "-o", exe]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"stack_vs_untransformed: {' '.join(cmd)} failed:\n{p.stderr[-2000:]}")


def run(exe):
    p = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    t = last_number(p.stdout) if p.returncode == 0 else None
    if t is None:
        sys.exit(f"stack_vs_untransformed: {exe} exited {p.returncode} without a time")
    return t


def interval(pairs, seed, level=0.95, draws=2000):
    rng = random.Random(seed)
    ratio = lambda ps: statistics.median(a for a, _ in ps) / statistics.median(b for _, b in ps)
    boot = sorted(ratio([rng.choice(pairs) for _ in pairs]) for _ in range(draws))
    cut = int(draws * (1 - level) / 2)
    return ratio(pairs), boot[cut], boot[draws - 1 - cut]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("driver")
    ap.add_argument("line", type=int)
    ap.add_argument("directive")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("args", nargs="*")
    a = ap.parse_args()
    lines = open(a.driver).read().split("\n")
    if not 1 <= a.line <= len(lines) or "for" not in lines[a.line - 1]:
        sys.exit(f"stack_vs_untransformed: line {a.line} of {a.driver} is not a loop's `for`")
    with tempfile.TemporaryDirectory() as tmp:
        stacked = os.path.join(tmp, "stacked.c")
        with open(stacked, "w") as f:
            f.write("\n".join(lines[: a.line - 1] + [f"#pragma {a.directive}"] + lines[a.line - 1:]))
        base, tuned = os.path.join(tmp, "untransformed"), os.path.join(tmp, "stacked")
        args = ["-I" + os.path.dirname(os.path.abspath(a.driver)), *a.args]  # its own headers
        build(os.path.abspath(a.driver), base, args)
        build(stacked, tuned, args)
        pairs = [(run(base), run(tuned)) for _ in range(a.rounds)]
    r, lo, hi = interval(pairs, a.seed)
    load = os.getloadavg()[0]
    print(f"{os.path.basename(a.driver)} line {a.line} `{a.directive}`: untransformed "
          f"{statistics.median(p[0] for p in pairs):.6f} s, stacked {statistics.median(p[1] for p in pairs):.6f} s, "
          f"speed-up {r:.2f}x [{lo:.2f}-{hi:.2f}] over {a.rounds} interleaved rounds (load {load:.1f})")


if __name__ == "__main__":
    main()
