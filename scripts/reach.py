#!/usr/bin/env python3
"""How far the tuned kernels are from the machine (issue 41), into results/reach/:

1. gemm LARGE: the tuned best of results/paper/gemm/large, the problem's default configuration
   and OpenBLAS's cblas_dgemm on the same data (scripts/reach/gemm_openblas.c), each output
   checked against the default's, then timed interleaved in one run (rounds in a shuffled order,
   at 1 and 2 threads), with medians, GFLOP/s and 95% bootstrap intervals of the ratios.
2. The roofline fraction of every PolyBench best in results/paper, from its recorded time, the
   problem's `work:` and `moldtune machine`'s limits at the problem's thread count.

    python3 scripts/reach.py [--rounds 11] [--moldtune target/release/moldtune] [--out results/reach]

Needs clang-22 and libopenblas-dev (scripts/setup.sh installs both).
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "polybench/gemm/gemm.yaml"
TUNED = ROOT / "results/paper/gemm/large"
REACH = ROOT / "polybench/gemm/gemm-reach.yaml"
REACH_RUN = ROOT / "results/reach/gemm-reach"


def sh(argv, env=None, cwd=None, check=True):
    """Runs argv; its stdout (stderr joined on failure)."""
    p = subprocess.run(argv, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"reach: `{' '.join(map(str, argv))}` failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return p


def shown(moldtune, problem, run_dir=None):
    """`moldtune show --json` of the default configuration or of a run's best."""
    argv = [moldtune, "show", str(problem), "--json"] + (["--from", str(run_dir)] if run_dir else [])
    return json.loads(sh(argv).stdout)


def build_variant(show, work):
    """Builds a shown variant in `work`; the executable's path."""
    work.mkdir(parents=True, exist_ok=True)
    (work / show["source_file"]).write_text(show["source"])
    (work / "tmp").mkdir(exist_ok=True)
    argv = [a.replace("{work_dir}", str(work)) for a in show["compile"]["argv"]]
    sh(argv, cwd=work, env={"TMPDIR": str(work / "tmp")})
    return str(work / "variant")


def build_openblas(work):
    exe = work / "gemm_openblas"
    sh(["clang-22", "-O3", "-march=native", f"-I{ROOT / 'polybench/harness'}", "-DNI=1000", "-DNJ=1100",
        "-DNK=1200", str(ROOT / "scripts/reach/gemm_openblas.c"), "-o", str(exe), "-lopenblas", "-lm"])
    return str(exe)


def threads_env(n):
    return {"OMP_NUM_THREADS": str(n), "OPENBLAS_NUM_THREADS": str(n)}


def dump(exe):
    """The program's dumped arrays as numbers."""
    out = sh([exe], env={"PB_DUMP": "1", **threads_env(1)}).stderr
    body = out.split("==BEGIN DUMP_ARRAYS==")[1].split("==END")[0]
    return [float(x) for x in re.findall(r"-?\d[\d.eE+-]*", body.split("\n", 1)[1])]


def agree(a, b, rtol=1e-6, atol=1e-9):
    return len(a) == len(b) and all(abs(x - y) <= atol + rtol * max(abs(x), abs(y)) for x, y in zip(a, b))


def kernel_time(exe, threads):
    """One timed run: the last line of stdout that is a number."""
    out = sh([exe], env=threads_env(threads)).stdout
    return float([l for l in out.split() if re.fullmatch(r"[\d.eE+-]+", l)][-1])


def bootstrap_ratio(num, den, n=4000, seed=1):
    """Median(num)/median(den) with a 95% percentile bootstrap interval."""
    rng = random.Random(seed)
    est = statistics.median(num) / statistics.median(den)
    rs = sorted(statistics.median(rng.choices(num, k=len(num))) / statistics.median(rng.choices(den, k=len(den)))
                for _ in range(n))
    return est, rs[int(0.025 * n)], rs[int(0.975 * n) - 1]


def measure(programs, threads, rounds, seed=0):
    """{threads: {name: [seconds]}}, every round running each program once in a shuffled order."""
    rng = random.Random(seed)
    times = {t: {name: [] for name in programs} for t in threads}
    for r in range(rounds):
        for t in threads:
            order = list(programs)
            rng.shuffle(order)
            for name in order:
                times[t][name].append(kernel_time(programs[name], t))
        print(f"round {r + 1}/{rounds} load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    return times


def work_of(problem):
    """(flops, bytes) from a problem file's `work:` (evaluated over its sizes), or None."""
    text = Path(problem).read_text()
    m = re.search(r"^work:\n((?:  .*\n?)+)", text, re.M)
    if not m:
        return None
    block = m.group(1)
    sizes = {k: float(v) for k, v in re.findall(r"(\w+): (\d+)", re.search(r"sizes: \{(.*)\}", block).group(1))}

    def amount(key):
        e = re.search(rf'{key}: "([^"]+)"', block).group(1)
        if not re.fullmatch(r"[\w\s+\-*/%().]+", e):
            sys.exit(f"reach: unexpected `{key}` expression {e!r} in {problem}")
        return float(eval(e, {"__builtins__": {}}, sizes))  # arithmetic over the sizes only

    return amount("flops"), amount("bytes")


def threads_of(problem):
    m = re.search(r'OMP_NUM_THREADS: "(\d+)"', Path(problem).read_text())
    return int(m.group(1)) if m else os.cpu_count()


def limits(moldtune):
    out = json.loads(sh([moldtune, "machine", "--threads", "1,2", "--json"]).stdout)
    return out, {l["threads"]: l for l in out["limits"]}


def roof(flops, bytes_, lim):
    return min(lim["peak_gflops"], flops / bytes_ * lim["bandwidth_gbs"])


def gemm_section(moldtune, rounds, lims, work):
    """The gemm LARGE comparison: a dict for the JSON and its Markdown."""
    flops, _ = work_of(GEMM)
    programs = {
        "default": build_variant(shown(moldtune, GEMM), work / "default"),
        "tuned (paper space)": build_variant(shown(moldtune, GEMM, TUNED), work / "tuned"),
    }
    configs = {"tuned (paper space)": shown(moldtune, GEMM, TUNED)["described"]}
    if (REACH_RUN / "run.json").exists():
        programs["tuned (reach space)"] = build_variant(shown(moldtune, REACH, REACH_RUN), work / "reach")
        configs["tuned (reach space)"] = shown(moldtune, REACH, REACH_RUN)["described"]
    programs["OpenBLAS dgemm"] = build_openblas(work)
    ref = dump(programs["default"])
    for name, exe in programs.items():
        if name != "default" and not agree(dump(exe), ref):
            sys.exit(f"reach: {name}'s output differs from the default's: no timing")
    load0 = os.getloadavg()
    times = measure(programs, [1, 2], rounds)
    out = {"flops": flops, "rounds": rounds, "load_before": load0, "load_after": os.getloadavg(),
           "configs": configs, "threads": {}}
    rows = []
    for t, by in times.items():
        peak = lims[t]["peak_gflops"]
        entry = {"peak_gflops": peak, "programs": {}}
        for name, samples in by.items():
            med = statistics.median(samples)
            of_blas = bootstrap_ratio(by["OpenBLAS dgemm"], samples)  # its rate / OpenBLAS's
            g = flops / med / 1e9
            entry["programs"][name] = {"samples": samples, "median_s": med, "gflops": g, "of_openblas": of_blas}
            versus = "(itself)" if name == "OpenBLAS dgemm" else \
                f"**{of_blas[0]:.0%}** [{of_blas[1]:.0%}, {of_blas[2]:.0%}]"
            rows.append(f"| {t} | {name} | {med:.4f} | {g:.1f} | {g / peak:.0%} | {versus} |")
        out["threads"][t] = entry
    md = ["| threads | program | median s | GFLOP/s | of the peak | rate / OpenBLAS's [95%] |",
          "|---|---|---|---|---|---|"] + rows
    return out, "\n".join(md)


def paper_section(lims):
    """The roofline fraction of every PolyBench best in results/paper."""
    rows, out = [], []
    for run in sorted((ROOT / "results/paper").glob("*/*/run.json")):
        meta = json.loads(run.read_text())
        problem = (run.parent / meta["problem"]).resolve()
        w = problem.exists() and work_of(problem)
        if not w or not meta.get("best_objective"):
            continue
        t = threads_of(problem)
        lim = lims.get(t)
        if lim is None:
            continue
        flops, bytes_ = w
        gflops = flops / meta["best_objective"] / 1e9
        bound = roof(flops, bytes_, lim)
        name = f"{run.parent.parent.name}/{run.parent.name}"
        out.append({"run": name, "threads": t, "best_s": meta["best_objective"], "gflops": gflops,
                    "intensity": flops / bytes_, "bound_gflops": bound, "fraction": gflops / bound})
        rows.append(f"| {name} | {t} | {meta['best_objective']:.4g} | {gflops:.2f} | {flops / bytes_:.1f} | "
                    f"{bound:.1f} | {gflops / bound:.0%} |")
    md = ["| run | threads | best s | GFLOP/s | intensity FLOP/B | roof GFLOP/s | fraction |",
          "|---|---|---|---|---|---|---|"] + rows
    return out, "\n".join(md)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--moldtune", default=str(ROOT / "target/release/moldtune"))
    ap.add_argument("--out", default=str(ROOT / "results/reach"))
    a = ap.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    machine, lims = limits(a.moldtune)
    with tempfile.TemporaryDirectory(prefix="moldtune-reach-") as tmp:
        gemm, gemm_md = gemm_section(a.moldtune, a.rounds, lims, Path(tmp))
    paper, paper_md = paper_section(lims)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"started": started, "machine": machine, "gemm_large": gemm, "paper": paper,
           "command": f"python3 scripts/reach.py --rounds {a.rounds}"}
    (out / "reach.json").write_text(json.dumps(doc, indent=1))
    l1, l2 = lims[1], lims[2]
    TUNED_S = json.loads((TUNED / "run.json").read_text())["best_objective"]
    (out / "README.md").write_text(f"""# Reach: how far the tuned kernels are from the machine

`{doc['command']}` ({started}; load average {gemm['load_before'][0]:.1f} before, {gemm['load_after'][0]:.1f} after:
this machine is shared, and the programs were timed interleaved, each round in a shuffled order, so a busy
moment falls on all of them alike). Machine (`moldtune machine`): {machine['cpu']}, {machine['compiler']}; peak
{l1['peak_gflops']:.1f} GFLOP/s and triad {l1['bandwidth_gbs']:.1f} GB/s at 1 thread, {l2['peak_gflops']:.1f} and
{l2['bandwidth_gbs']:.1f} at 2.

## gemm LARGE (NI 1000, NJ 1100, NK 1200; {gemm['flops'] / 1e9:.2f} GFLOP by BLAS's count)

The problem's default configuration (`polybench/gemm/gemm.yaml` at its defaults), the tuned best of the paper's
space (`results/paper/gemm/large`), the tuned best of the reach space (`polybench/gemm/gemm-reach.yaml`,
`results/reach/gemm-reach`) and OpenBLAS's `cblas_dgemm` (Debian's libopenblas 0.3.21, its Zen kernel) on the same
data (`scripts/reach/gemm_openblas.c`); every output agrees with the default's (rtol 1e-6) before anything is timed.
Configurations: {'; '.join(f'{k}: {v}' for k, v in gemm['configs'].items())}. {gemm['rounds']} rounds; medians; the intervals are 95% bootstrap intervals of
the ratio of medians. GFLOP/s use the same count for every program.

{gemm_md}

## The PolyBench bests of results/paper on the roofline

Each run's best time **as its search recorded it**, not re-measured, the problem's `work:` (as declared today) and
the machine's limits at the problem's `OMP_NUM_THREADS` (roof: min(peak, intensity × triad bandwidth)). These are
upper bounds, not measurements of today's programs: gemm/large's recorded {TUNED_S} s is the tuned program above,
which this run timed at {gemm['threads'][2]['programs']['tuned (paper space)']['median_s']:.4f} s at 2 threads
({gemm['threads'][2]['programs']['tuned (paper space)']['median_s'] / TUNED_S:.1f}× slower: this run's load explains
part of it; why the recording is that much faster is not known yet).

{paper_md}
""")
    print(f"wrote {out / 'README.md'}")


if __name__ == "__main__":
    main()
