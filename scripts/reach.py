#!/usr/bin/env python3
"""How far the tuned kernels are from the machine (issue 41), into results/reach/:

1. gemm LARGE: the tuned bests of results/paper/gemm/large and results/reach/gemm-reach, the
   problem's default configuration and OpenBLAS's cblas_dgemm (each kernel set the CPU can run)
   on the same data (scripts/reach/gemm_openblas.c), each output
   checked against the default's, then timed interleaved in one run (rounds in a shuffled order,
   at 1 and 2 threads), with medians, GFLOP/s and 95% bootstrap intervals of the ratios.
2. The roofline fraction of every PolyBench best in results/paper and of its problem's default,
   re-measured by `moldtune measure`, from the problem's `work:` and `moldtune machine`'s limits
   at the problem's thread count.

    python3 scripts/reach.py [--rounds 11] [--repeats 5] [--moldtune target/release/moldtune] [--out results/reach]

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


# OpenBLAS's kernel sets (OPENBLAS_CORETYPE) and the CPU flags each needs. OpenBLAS picks one by
# the CPU's model number and falls back to Prescott's SSE3 kernels on a model newer than its
# release (0.3.21 on an Emerald Rapids Xeon: 5x slower), so every set this CPU can run is timed
# and the fastest is the reference.
CORES = [("Haswell", {"avx2", "fma"}), ("Zen", {"avx2", "fma", "AuthenticAMD"}),
         ("SkylakeX", {"avx512f", "avx512bw", "avx512dq", "avx512vl"}),
         ("Cooperlake", {"avx512f", "avx512_bf16"}), ("SapphireRapids", {"avx512f", "amx_tile"})]


def openblas_cores(exe):
    """[(label, env)]: OpenBLAS as it detects this CPU, then each other kernel set it can run."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    flags = set(info.split())
    core = lambda env: sh([exe, "--core"], env=env).stdout.strip()
    found = [(f"OpenBLAS {core({})} (detected)", {}, core({}))]
    for name, needs in CORES:
        env = {"OPENBLAS_CORETYPE": name}
        if needs <= flags and all(core(env) != c for _, _, c in found):
            found.append((f"OpenBLAS {core(env)}", env, core(env)))
    return [(label, env) for label, env, _ in found]


def threads_env(n):
    return {"OMP_NUM_THREADS": str(n), "OPENBLAS_NUM_THREADS": str(n)}


def dump(prog):
    """The program's (executable, environment) dumped arrays as numbers."""
    exe, env = prog
    out = sh([exe], env={"PB_DUMP": "1", **env, **threads_env(1)}).stderr
    body = out.split("==BEGIN DUMP_ARRAYS==")[1].split("==END")[0]
    return [float(x) for x in re.findall(r"-?\d[\d.eE+-]*", body.split("\n", 1)[1])]


def agree(a, b, rtol=1e-6, atol=1e-9):
    return len(a) == len(b) and all(abs(x - y) <= atol + rtol * max(abs(x), abs(y)) for x, y in zip(a, b))


def kernel_time(prog, threads):
    """One timed run of (executable, environment): the last line of stdout that is a number."""
    exe, env = prog
    out = sh([exe], env={**env, **threads_env(threads)}).stdout
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


def gemm_programs(moldtune, work):
    """{name: (executable, environment)} and {name: configuration} of the gemm comparison."""
    programs = {
        "default": (build_variant(shown(moldtune, GEMM), work / "default"), {}),
        "tuned (paper space)": (build_variant(shown(moldtune, GEMM, TUNED), work / "tuned"), {}),
    }
    configs = {"tuned (paper space)": shown(moldtune, GEMM, TUNED)["described"]}
    if (REACH_RUN / "run.json").exists():
        reach = shown(moldtune, REACH, REACH_RUN)
        programs["tuned (reach space)"] = (build_variant(reach, work / "reach"), {})
        configs["tuned (reach space)"] = reach["described"]
    blas = build_openblas(work)
    for label, env in openblas_cores(blas):
        programs[label] = (blas, env)
    return programs, configs


def gemm_section(moldtune, rounds, lims, work):
    """The gemm LARGE comparison: a dict for the JSON and its Markdown."""
    flops, _ = work_of(GEMM)
    programs, configs = gemm_programs(moldtune, work)
    ref = dump(programs["default"])
    for name, prog in programs.items():
        if name != "default" and not agree(dump(prog), ref):
            sys.exit(f"reach: {name}'s output differs from the default's: no timing")
    load0 = os.getloadavg()
    times = measure(programs, [1, 2], rounds)
    out = {"flops": flops, "rounds": rounds, "load_before": load0, "load_after": os.getloadavg(),
           "configs": configs, "threads": {}}
    rows = []
    for t, by in times.items():
        peak = lims[t]["peak_gflops"]
        blas = min((n for n in by if n.startswith("OpenBLAS")), key=lambda n: statistics.median(by[n]))
        entry = {"peak_gflops": peak, "openblas": blas, "programs": {}}
        for name, samples in by.items():
            med = statistics.median(samples)
            of_blas = bootstrap_ratio(by[blas], samples)  # its rate / the fastest OpenBLAS's
            g = flops / med / 1e9
            entry["programs"][name] = {"samples": samples, "median_s": med, "gflops": g, "of_openblas": of_blas}
            versus = "(the reference)" if name == blas else f"**{of_blas[0]:.0%}** [{of_blas[1]:.0%}, {of_blas[2]:.0%}]"
            rows.append(f"| {t} | {name} | {med:.4f} | {g:.1f} | {g / peak:.0%} | {versus} |")
        out["threads"][t] = entry
    md = ["| threads | program | median s | GFLOP/s | of the peak | rate / the fastest OpenBLAS's [95%] |",
          "|---|---|---|---|---|---|"] + rows
    return out, "\n".join(md)


def measured(moldtune, problem, run_dir, repeats):
    """`moldtune measure`'s median seconds of a run's best (run_dir) or of the default (None)."""
    argv = [moldtune, "measure", str(problem), "--repeats", str(repeats), "--json"]
    out = json.loads(sh(argv + (["--from", str(run_dir)] if run_dir else [])).stdout)
    if out["status"] != "ok":
        sys.exit(f"reach: measuring {run_dir or problem} failed: {out['status']} {out.get('cause')}")
    return out["objective"]


def paper_section(moldtune, lims, repeats):
    """The roofline fraction of every PolyBench best in results/paper and of its problem's
    default, both re-measured now (`moldtune measure`, output checked), beside the best's time
    as its search recorded it."""
    rows, out = [], []
    for run in sorted((ROOT / "results/paper").glob("*/*/run.json")):
        meta = json.loads(run.read_text())
        problem = (run.parent / meta["problem"]).resolve()
        w = problem.exists() and work_of(problem)
        lim = lims.get(threads_of(problem))
        if not w or not meta.get("best_objective") or lim is None:
            continue
        flops, bytes_ = w
        bound = roof(flops, bytes_, lim)
        best, default = measured(moldtune, problem, run.parent, repeats), measured(moldtune, problem, None, repeats)
        name = f"{run.parent.parent.name}/{run.parent.name}"
        g, g0 = flops / best / 1e9, flops / default / 1e9
        out.append({"run": name, "threads": lim["threads"], "recorded_s": meta["best_objective"], "best_s": best,
                    "default_s": default, "gflops": g, "default_gflops": g0, "intensity": flops / bytes_,
                    "bound_gflops": bound, "fraction": g / bound, "default_fraction": g0 / bound})
        print(f"{name}: best {best:.4g} s, default {default:.4g} s", file=sys.stderr)
        rows.append(f"| {name} | {lim['threads']} | {flops / bytes_:.1f} | {bound:.1f} | {default:.4g} | {g0:.2f} | "
                    f"{g0 / bound:.0%} | {best:.4g} | {meta['best_objective']:.4g} | {g:.2f} | **{g / bound:.0%}** |")
    md = ["| run | threads | intensity FLOP/B | roof GFLOP/s | default s | GFLOP/s | fraction | best s | "
          "(recorded) | GFLOP/s | fraction |", "|---|---|---|---|---|---|---|---|---|---|---|"] + rows
    return out, "\n".join(md)


def readme(doc, gemm_md, paper_md):
    machine, gemm = doc["machine"], doc["gemm_large"]
    l1, l2 = ({l["threads"]: l for l in machine["limits"]}[t] for t in (1, 2))
    blas = {t: e["openblas"] for t, e in gemm["threads"].items()}
    return f"""# Reach: how far the tuned kernels are from the machine

`{doc['command']}` ({doc['started']}; load average {gemm['load_before'][0]:.1f} before, {gemm['load_after'][0]:.1f}
after: this machine is shared, and the programs were timed interleaved, each round in a shuffled order, so a busy
moment falls on all of them alike). Machine (`moldtune machine`): {machine['cpu']}, {machine['compiler']}; peak
{l1['peak_gflops']:.1f} GFLOP/s and triad {l1['bandwidth_gbs']:.1f} GB/s at 1 thread, {l2['peak_gflops']:.1f} and
{l2['bandwidth_gbs']:.1f} at 2. What was tried to get closer: [experiments.md](experiments.md).

## gemm LARGE (NI 1000, NJ 1100, NK 1200; {gemm['flops'] / 1e9:.2f} GFLOP by BLAS's count)

The problem's default configuration (`polybench/gemm/gemm.yaml` at its defaults), the tuned best of the paper's
space (`results/paper/gemm/large`), the tuned best of the reach space (`polybench/gemm/gemm-reach.yaml`,
`results/reach/gemm-reach`) and OpenBLAS's `cblas_dgemm` (Debian's libopenblas 0.3.21) on the same data
(`scripts/reach/gemm_openblas.c`), once with the kernel set OpenBLAS detects and once with each other set this CPU
can run (`OPENBLAS_CORETYPE`); the fastest at each thread count is the reference ({blas[1]} at 1 thread,
{blas[2]} at 2). Every output agrees with the default's (rtol 1e-6) before anything is timed.
Configurations: {'; '.join(f'{k}: {v}' for k, v in gemm['configs'].items())}. {gemm['rounds']} rounds; medians;
the intervals are 95% bootstrap intervals of the ratio of medians. GFLOP/s use the same count for every program.

{gemm_md}

## The PolyBench runs of results/paper on the roofline

Each run's best and its problem's default, re-measured by `moldtune measure` ({doc['repeats']} repeats, median,
output checked; one after the other, not interleaved), the problem's `work:` and the machine's limits at the
problem's `OMP_NUM_THREADS` (roof: min(peak, intensity × triad bandwidth)); "(recorded)" is the best's time as its
search recorded it, on whichever machine ran it. floyd-warshall is integer and declares no work.

{paper_md}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--repeats", type=int, default=5, help="moldtune measure's repeats for results/paper")
    ap.add_argument("--moldtune", default=str(ROOT / "target/release/moldtune"))
    ap.add_argument("--out", default=str(ROOT / "results/reach"))
    a = ap.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    machine, lims = limits(a.moldtune)
    with tempfile.TemporaryDirectory(prefix="moldtune-reach-") as tmp:
        gemm, gemm_md = gemm_section(a.moldtune, a.rounds, lims, Path(tmp))
    paper, paper_md = paper_section(a.moldtune, lims, a.repeats)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"started": started, "machine": machine, "gemm_large": gemm, "paper": paper, "repeats": a.repeats,
           "command": f"python3 scripts/reach.py --rounds {a.rounds} --repeats {a.repeats}"}
    (out / "reach.json").write_text(json.dumps(doc, indent=1))
    (out / "README.md").write_text(readme(doc, gemm_md, paper_md))
    print(f"wrote {out / 'README.md'}")


if __name__ == "__main__":
    main()
