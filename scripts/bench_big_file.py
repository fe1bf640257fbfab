#!/usr/bin/env python3
"""Benchmark: `moldtune mctree FILE --list` on a generated large C file.

The file is a small kernel plus as many small functions as it takes to reach --size bytes
(5 MB: 59,000 functions, as amalgamated or generated sources are); clang-22's JSON AST of it
is 1.4 GB. Each repeat runs moldtune once and samples, every 20 ms, the peak resident memory
(VmHWM) of moldtune itself and of the clang it starts. Writes the medians and every repeat
to results/bench/big-file.md and .json.

    python3 scripts/bench_big_file.py [--binary target/release/moldtune] [--size 5000000] [--repeats 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNEL = """#include <stdio.h>
#define N 200
double A[N][N], B[N][N];
void kernel_big(int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = B[j][i] * 2.0;
}
"""
MAIN = ('int main(void) { for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) B[i][j] = i + j;'
        ' kernel_big(N); printf("%f\\n", A[3][4]); return 0; }\n')


def generate(path, size):
    parts, total, i = [KERNEL], len(KERNEL), 0
    while total < size:
        f = f"int helper_{i}(int x, int y) {{ int t = x * {i % 97} + y; return t > 3 ? t - 1 : t + 2; }}\n"
        parts.append(f)
        total += len(f)
        i += 1
    parts.append(MAIN)
    path.write_text("".join(parts))
    return i


def hwm_kb(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def children(pid):
    try:
        return [int(c) for t in os.listdir(f"/proc/{pid}/task")
                for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
    except OSError:
        return []


def one_run(binary, file):
    start = time.monotonic()
    p = subprocess.Popen([binary, "mctree", str(file), "--list"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    own, clang = 0, 0
    while p.poll() is None:
        own = max(own, hwm_kb(p.pid) or 0)
        for c in children(p.pid):
            clang = max(clang, hwm_kb(c) or 0)
        time.sleep(0.02)
    wall = time.monotonic() - start
    out, err = p.communicate()
    if p.returncode != 0 or "kernel_big" not in out:
        sys.exit(f"moldtune failed (exit {p.returncode}):\n{err}")
    return {"wall_s": round(wall, 2), "moldtune_peak_mb": round(own / 1024, 1),
            "clang_peak_mb": round(clang / 1024, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/moldtune")
    ap.add_argument("--size", type=int, default=5_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="results/bench/big-file")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="moldtune-bench-") as d:
        file = Path(d) / "big.c"
        n = generate(file, a.size)
        runs = [one_run(a.binary, file) for _ in range(a.repeats)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    load = os.getloadavg()[0]
    record = {"file_bytes": a.size, "functions": n + 2, "repeats": runs, "median": med,
              "load_1min_after": round(load, 2)}
    Path(a.out + ".json").write_text(json.dumps(record, indent=2) + "\n")
    rows = "\n".join(f"| {i + 1} | {r['wall_s']} | {r['moldtune_peak_mb']} | {r['clang_peak_mb']} |"
                     for i, r in enumerate(runs))
    Path(a.out + ".md").write_text(f"""# `moldtune mctree FILE --list` on a large generated file

`python3 scripts/bench_big_file.py --size {a.size} --repeats {a.repeats}`: a {a.size / 1e6:.1f} MB C
file, one kernel and {n + 1} other small functions (clang-22's JSON AST of it: about 1.4 GB for 5 MB).
Peak memory is VmHWM sampled every 20 ms, of moldtune and of the clang it runs. Goal (issue 28):
under 10 s and 200 MB. Load average after the runs: {load:.2f} (a shared 2-core machine).

| repeat | wall s | moldtune peak MB | clang peak MB |
|---|---|---|---|
{rows}
| **median** | **{med['wall_s']}** | **{med['moldtune_peak_mb']}** | **{med['clang_peak_mb']}** |
""")
    print(json.dumps(med))


if __name__ == "__main__":
    main()
