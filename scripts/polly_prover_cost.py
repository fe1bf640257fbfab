#!/usr/bin/env python3
"""What Polly, mctree's second prover, costs per kernel: its one extra clang run, timed with the
flags of src/mctree/second.rs (FLAGS, MLLVM) before and after its dependences were printed
(96e35b1 -> a5edf73), interleaved, median of ROUNDS, on polybench/ at MEDIUM (cut at 10 s, as
mctree cuts it). Keep the two lists in step with second.rs when it changes.

    python3 scripts/polly_prover_cost.py [ROUNDS=5]
"""
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = ["-O1", "-fno-unroll-loops", "-fno-inline", "-Rpass-analysis=polly-scops"]
BEFORE = ["-polly", "-polly-position=early", "-polly-reschedule=0", "-polly-postopts=0",
          "-polly-tiling=0", "-polly-process-unprofitable", "-polly-print-ast",
          "-polly-ast-detect-parallel"]
NOW = BEFORE + ["-polly-print-scops", "-polly-print-deps",
                "-polly-dependences-analysis-level=reference-wise",
                "-polly-enable-optree=false", "-polly-enable-simplify=false"]
KERNELS = ["syr2k", "3mm", "gemm", "covariance", "lu", "heat-3d"]


def argv(kernel, mllvm):
    a = ["clang-22", *FLAGS, "-fopenmp", "-DMEDIUM_DATASET"]
    for m in mllvm:
        a += ["-mllvm", m]
    return a + ["-c", os.path.join(ROOT, "polybench", kernel, kernel + ".c"), "-o", "/dev/null"]


def seconds(a):
    t = time.perf_counter()
    try:
        subprocess.run(a, capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        return float("nan")
    return time.perf_counter() - t


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for k in KERNELS:
        before, now = [], []
        for _ in range(rounds):
            before.append(seconds(argv(k, BEFORE)))
            now.append(seconds(argv(k, NOW)))
        b, n = statistics.median(before), statistics.median(now)
        print(f"{k}: before {b:.2f} s [{min(before):.2f}-{max(before):.2f}], "
              f"now {n:.2f} s [{min(now):.2f}-{max(now):.2f}], ratio {n / b:.2f}")


if __name__ == "__main__":
    main()
