#!/usr/bin/env python3
"""How many one-directive stacks mctree proves per kernel, before and after a change
(issue 38: the model must not buy soundness by proving nothing).

For every kernel of PolyBench/C 4.2.1 (MEDIUM, as the campaign compiles it) and of TSVC_2
(the campaign's one-kernel drivers), runs `moldtune mctree FILE --list` with this checkout's
release binary and, with `--before BIN`, with another build (which prints
`one-directive stacks: N proved, M not proved` on stderr or stdout), and writes
results/mctree/proved-stacks.md. The corpora come from the campaigns' cache
(`$MOLDTUNE_CACHE` or ~/.cache/moldtune; `python3 scripts/tsvc_campaign.py --drivers-only`
writes the drivers).

    python3 scripts/proved_stacks.py [--before BIN] [--out results/mctree/proved-stacks.md]
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE = re.compile(r"one-directive stacks: (\d+) proved, (\d+) not proved")


def counts(binary, path, kernel, flags, cwd):
    """(proved, not proved) of one kernel, or the first line of why mctree refused it."""
    cmd = [binary, "mctree", path, "--list"] + (["--kernel", kernel] if kernel else []) + ["--", *flags]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    m = LINE.search(p.stdout + p.stderr)
    if p.returncode != 0 or not m:
        return (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0][:80]
    return int(m.group(1)), int(m.group(2))


def kernels(cache):
    pb = os.path.join(cache, "polybench-c-4.2.1")
    with open(os.path.join(pb, "utilities", "benchmark_list")) as f:
        for line in f:
            rel = line.strip().lstrip("./")
            if rel:
                flags = ["-Iutilities", "-DMEDIUM_DATASET", "utilities/polybench.c"]
                yield "PolyBench/C 4.2.1", os.path.basename(rel)[:-2], rel, "", flags, pb
    src = os.path.join(cache, "tsvc_2", "src")
    drivers = os.path.join(cache, "tsvc-drivers")
    extra = [f"-I{src}", "-DTSVC_ITERATIONS=1000", os.path.join(src, "common.c"),
             os.path.join(src, "dummy.c"), "-lm"]
    for d in sorted(os.listdir(drivers)):
        if d.endswith(".c"):
            yield "TSVC_2", d[:-2], os.path.join(drivers, d), d[:-2], extra, drivers


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="", help="a build of moldtune to compare with")
    ap.add_argument("--out", default=os.path.join(ROOT, "results/mctree/proved-stacks.md"))
    a = ap.parse_args()
    cache = os.environ.get("MOLDTUNE_CACHE", os.path.expanduser("~/.cache/moldtune"))
    after_bin = os.path.join(ROOT, "target/release/moldtune")
    rows, totals = [], {}
    for corpus, name, path, kernel, flags, cwd in kernels(cache):
        after = counts(after_bin, path, kernel, flags, cwd)
        before = counts(a.before, path, kernel, flags, cwd) if a.before else None
        rows.append((corpus, name, before, after))
        t = totals.setdefault(corpus, [0, 0, 0, 0, 0])
        t[0] += 1
        if isinstance(after, tuple):
            t[1] += after[0]
            t[2] += after[1]
        if isinstance(before, tuple):
            t[3] += before[0]
            t[4] += before[1]
        print(corpus, name, before, after, file=sys.stderr)
    show = lambda c: "%d / %d" % c if isinstance(c, tuple) else (c or "–")
    out = ["# One-directive stacks mctree proves, per kernel", "",
           "Written by `python3 scripts/proved_stacks.py%s`: `moldtune mctree FILE --list` on every kernel of "
           "PolyBench/C 4.2.1 (MEDIUM) and TSVC_2 (the campaign's drivers); each cell is *proved / not proved* "
           "one-directive stacks (tile sizes, interchanges, reverse, unroll, parallel for on each loop; the Polly "
           "knob not counted). *Before* is main at 15e0f5c (with only a line printing the same count added); "
           "*after* is this checkout, with the default-deny model, the trip-count rule and Polly as a second "
           "prover." % (" --before BIN" if a.before else ""), "",
           "| corpus | kernels | proved before | not proved before | proved after | not proved after |",
           "|---|---:|---:|---:|---:|---:|"]
    for corpus, t in totals.items():
        out.append("| %s | %d | %d | %d | %d | %d |" % (corpus, t[0], t[3], t[4], t[1], t[2]))
    out += ["", "| corpus | kernel | before | after |", "|---|---|---:|---:|"]
    for corpus, name, before, after in rows:
        out.append("| %s | %s | %s | %s |" % (corpus, name, show(before), show(after)))
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
