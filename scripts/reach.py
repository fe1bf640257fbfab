#!/usr/bin/env python3
"""How far the tuned kernels are from the machine (issue 41), into results/reach/:

1. gemm LARGE: the tuned bests of results/paper/gemm/large and results/reach/gemm-reach, the
   problem's default configuration and OpenBLAS's cblas_dgemm (each kernel set the CPU can run)
   on the same data (scripts/reach/gemm_openblas.c), each output checked against the
   default's, then timed interleaved in one run (rounds in a shuffled order, at 1 and 2
   threads), with medians, GFLOP/s and 95% bootstrap intervals of the ratios (whole rounds
   resampled).
2. What each choice of the reach space is worth: its tuned best against each one-change
   neighbour, interleaved; and its register tile alone in L1 (scripts/reach/micro_ceiling.c).
3. The roofline fraction of every PolyBench best in results/paper and of its problem's default,
   re-measured by `moldtune measure`, from the problem's `work:` and `moldtune machine`'s limits
   at the problem's thread count.
4. The roofline fraction of -O3, Polly and mctree's best on each PolyBench/C 4.2.1 kernel of
   results/mctree's campaign, their work counted by running each kernel with
   scripts/reach/counted.hpp.

Writes reach.json (every sample) and README.md; `--report-only` rewrites README.md from
reach.json. About 8 minutes with `--rounds 15`.

    python3 scripts/reach.py [--rounds 11] [--repeats 5] [--moldtune target/release/moldtune] [--out results/reach]
                             [--report-only]

Needs clang-22 and libopenblas-dev (scripts/setup.sh installs both); section 4 also PolyBench/C
4.2.1 where scripts/polybench_campaign.py keeps it (skipped, and said, without it).
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
REACH_RUN = ROOT / "results/reach/gemm-reach"  # --reach-run: the run tuned on this machine


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
    """Median(num)/median(den) with a 95% percentile bootstrap interval. The samples are paired
    by round (sample r of each was timed in round r, interleaved), so rounds are resampled
    whole: a busy moment that slowed every program of a round stays in one resampled round."""
    rng = random.Random(seed)
    est = statistics.median(num) / statistics.median(den)
    rounds = range(min(len(num), len(den)))
    rs = []
    for _ in range(n):
        pick = rng.choices(rounds, k=len(rounds))
        rs.append(statistics.median(num[i] for i in pick) / statistics.median(den[i] for i in pick))
    rs.sort()
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


def work_of(show):
    """(flops, bytes or None) of a problem's `work:` as moldtune evaluates it (in `show
    --json`), or None when the problem declares none."""
    w = show.get("work")
    return w and (w["flops"], w.get("bytes"))


def threads_of(show):
    """The threads a timed run uses: its OMP_NUM_THREADS (in `show --json`), else every CPU."""
    return int(show["run"]["env"].get("OMP_NUM_THREADS") or os.cpu_count())


def limits(moldtune):
    out = json.loads(sh([moldtune, "machine", "--threads", "1,2", "--json"]).stdout)
    return out, {l["threads"]: l for l in out["limits"]}


def roof(flops, bytes_, lim):
    """min(peak, intensity x bandwidth); the peak alone without the bytes."""
    return min(lim["peak_gflops"], flops / bytes_ * lim["bandwidth_gbs"] if bytes_ else float("inf"))


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
    """The gemm LARGE comparison, measured: each program's samples per thread count."""
    flops, _ = work_of(shown(moldtune, GEMM))
    programs, configs = gemm_programs(moldtune, work)
    ref = dump(programs["default"])
    for name, prog in programs.items():
        if name != "default" and not agree(dump(prog), ref):
            sys.exit(f"reach: {name}'s output differs from the default's: no timing")
    load0 = os.getloadavg()
    times = measure(programs, [1, 2], rounds)
    return {"flops": flops, "rounds": rounds, "load_before": load0, "load_after": os.getloadavg(),
            "configs": configs, "peak_gflops": {t: lims[t]["peak_gflops"] for t in times}, "samples": times}


def fastest_openblas(by):
    return min((n for n in by if n.startswith("OpenBLAS")), key=lambda n: statistics.median(by[n]))


def gemm_table(gemm):
    rows = []
    for t, by in gemm["samples"].items():
        peak, blas = gemm["peak_gflops"][t], fastest_openblas(by)
        for name, samples in by.items():
            med = statistics.median(samples)
            g = gemm["flops"] / med / 1e9
            of = bootstrap_ratio(by[blas], samples)  # its rate / the fastest OpenBLAS's
            versus = "(the reference)" if name == blas else f"**{of[0]:.0%}** [{of[1]:.0%}, {of[2]:.0%}]"
            rows.append(f"| {t} | {name} | {med:.4f} | {g:.1f} | {g / peak:.0%} | {versus} |")
    return "\n".join(["| threads | program | median s | GFLOP/s | of the peak | rate / the fastest OpenBLAS's [95%] |",
                      "|---|---|---|---|---|---|"] + rows)


def neighbours(moldtune, best):
    """[(label, shown)]: the one-change neighbours of the reach run's best, every other value of
    an unordered parameter and the next value either side of an ordered one (the space as `show
    --json` gives it); `show` refuses those that break a constraint, and they are left out."""
    out = []
    for p in best["space"]:
        values, now = p["values"] or [], best["config"][p["name"]]
        at = values.index(now) if now in values else None
        others = [v for v in values if v != now] if not p["ordered"] else \
            [values[i] for i in (at - 1, at + 1) if at is not None and 0 <= i < len(values)]
        for v in others:
            argv = [moldtune, "show", str(REACH), "--from", str(REACH_RUN), "--set", f"{p['name']}={v}", "--json"]
            shown_v = sh(argv, check=False)
            if shown_v.returncode == 0:
                out.append((f"{p['name']}={v!r}" if isinstance(v, str) else f"{p['name']}={v}",
                            json.loads(shown_v.stdout)))
    return out


def ablation_section(moldtune, rounds, work):
    """The reach space's tuned best against each of its one-change neighbours and OpenBLAS,
    timed interleaved at 1 and 2 threads: what each choice is worth."""
    best = shown(moldtune, REACH, REACH_RUN)
    programs = {"tuned best": (build_variant(best, work / "best"), {})}
    for n, (label, show) in enumerate(neighbours(moldtune, best)):
        programs[label] = (build_variant(show, work / f"n{n}"), {})
    blas = build_openblas(work)
    programs.update((label, (blas, env)) for label, env in openblas_cores(blas))
    ref = dump(programs["tuned best"])
    for name, prog in programs.items():
        if not agree(dump(prog), ref):
            sys.exit(f"reach: {name}'s output differs from the tuned best's: no timing")
    return {"best": best["described"], "rounds": rounds, "flops": work_of(best)[0],
            "samples": measure(programs, [1, 2], rounds, seed=1)}


def ablation_table(ablation):
    rows = []
    for t, by in ablation["samples"].items():
        blas = fastest_openblas(by)
        for name, samples in by.items():
            if name.startswith("OpenBLAS") and name != blas:
                continue
            med = statistics.median(samples)
            of_best, of_blas = bootstrap_ratio(by["tuned best"], samples), bootstrap_ratio(by[blas], samples)
            rows.append(f"| {t} | {name} | {med:.4f} | {ablation['flops'] / med / 1e9:.1f} | {of_best[0]:.2f} "
                        f"[{of_best[1]:.2f}, {of_best[2]:.2f}] | {of_blas[0]:.0%} |")
    return "\n".join(["| threads | program (one change from the tuned best) | median s | GFLOP/s | "
                      "rate / the best's [95%] | rate / OpenBLAS's |", "|---|---|---|---|---|---|"] + rows)


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
    out = []
    for run in sorted((ROOT / "results/paper").glob("*/*/run.json")):
        meta = json.loads(run.read_text())
        problem = (run.parent / meta["problem"]).resolve()
        show = problem.exists() and shown(moldtune, problem)
        w, lim = show and work_of(show), show and lims.get(threads_of(show))
        if not w or not meta.get("best_objective") or lim is None:
            continue
        flops, bytes_ = w
        bound = roof(flops, bytes_, lim)
        best, default = measured(moldtune, problem, run.parent, repeats), measured(moldtune, problem, None, repeats)
        name = f"{run.parent.parent.name}/{run.parent.name}"
        g, g0 = flops / best / 1e9, flops / default / 1e9
        out.append({"run": name, "threads": lim["threads"], "recorded_s": meta["best_objective"],
                    "recorded_on": meta.get("cpu_model"), "best_s": best,
                    "default_s": default, "gflops": g, "default_gflops": g0,
                    "intensity": bytes_ and flops / bytes_,
                    "bound_gflops": bound, "fraction": g / bound, "default_fraction": g0 / bound})
        print(f"{name}: best {best:.4g} s, default {default:.4g} s", file=sys.stderr)
    return out


def paper_table(paper):
    def cells(r):
        intensity = f"{r['intensity']:.1f}" if r["intensity"] else "–"
        return (f"| {r['run']} | {r['threads']} | {intensity} | {r['bound_gflops']:.1f} | {r['default_s']:.4g} | "
                f"{r['default_gflops']:.2f} | {r['default_fraction']:.0%} | {r['best_s']:.4g} | {r['recorded_s']:.4g} "
                f"({r.get('recorded_on') or '?'}) | {r['gflops']:.2f} | **{r['fraction']:.0%}** |")
    rows = [cells(r) for r in paper]
    return "\n".join(["| run | threads | intensity FLOP/B | roof GFLOP/s | default s | GFLOP/s | fraction | best s | "
                      "(recorded) | GFLOP/s | fraction |", "|---|---|---|---|---|---|---|---|---|---|---|"] + rows)


def micro_ceiling(moldtune, work):
    """GFLOP/s of the reach space's tuned register tile alone on packed operands in L1, 1 thread
    (scripts/reach/micro_ceiling.c built with the variant's own compile command), 5 runs sorted."""
    best = shown(moldtune, REACH, REACH_RUN)
    d = work / "micro"
    build_variant(best, d)
    harness, exe = str(ROOT / "scripts/reach/micro_ceiling.c"), str(d / "micro")
    argv = [harness if a == best["source_file"] else a.replace("{work_dir}/variant", exe)
            for a in best["compile"]["argv"]]
    sh(argv[:1] + [f'-DVARIANT="{d / best["source_file"]}"'] + argv[1:], cwd=d)
    runs = [sh([exe], env=threads_env(1)).stdout for _ in range(5)]
    return sorted(float(re.search(r"flops_per_s (\S+)", out).group(1)) / 1e9 for out in runs)


CAMPAIGN = ROOT / "results/mctree/polybench-4.2.1.json"


def polybench_c():
    """PolyBench/C 4.2.1 where scripts/polybench_campaign.py keeps it."""
    cache = os.environ.get("MOLDTUNE_CACHE", os.path.expanduser("~/.cache/moldtune"))
    return Path(cache) / "polybench-c-4.2.1"


def counted_work(pb, file, work):
    """(flops, bytes) of a PolyBench/C kernel at MEDIUM, counted by running it as C++ with
    scripts/reach/counted.hpp (its floating-point operations while the timer runs; its arrays'
    bytes, each counted once), or None for an integer kernel."""
    header = (pb / file).with_suffix(".h").read_text()
    kind = re.search(r"^#\s*define DATA_TYPE_IS_(INT|FLOAT|DOUBLE)\s*$", header, re.M).group(1)
    if kind == "INT":
        return None
    exe = work / Path(file).stem
    sh(["clang++-22", "-x", "c++", "-std=c++17", "-O1", "-w", "-include", str(ROOT / "scripts/reach/counted.hpp"),
        "-DPOLYBENCH_TIME", "-DMEDIUM_DATASET", "-Iutilities", f"-I{Path(file).parent}", file, "-o", str(exe)], cwd=pb)
    got = dict(l.split() for l in sh([str(exe)]).stdout.splitlines() if l.startswith(("flops ", "elements ")))
    return int(got["flops"]), int(got["elements"]) * (4 if kind == "FLOAT" else 8)


def mctree_section(lims, work):
    """The roofline fraction of -O3, Polly and mctree's best on every PolyBench/C 4.2.1 kernel
    of results/mctree's campaign (its medians, 2 threads), from counted work; None without
    the campaign or PolyBench/C."""
    pb = polybench_c()
    if not CAMPAIGN.exists() or not (pb / "utilities").is_dir():
        print(f"reach: no mctree section: needs {CAMPAIGN} and PolyBench/C in {pb} "
              "(`python3 scripts/polybench_campaign.py` fetches it)", file=sys.stderr)
        return None
    campaign = json.loads(CAMPAIGN.read_text())
    out = []
    for run in campaign["runs"]:
        med = run.get("measured", {}).get("median_s")
        w = med and counted_work(pb, run["file"], work)
        if not w:
            continue
        flops, bytes_ = w
        bound = roof(flops, bytes_, lims[2])
        rate = {k: flops / med[k] / 1e9 for k in ("O3", "polly", "mctree")}
        out.append({"kernel": run["kernel"], "flops": flops, "bytes": bytes_, "bound_gflops": bound,
                    "gflops": rate, "fraction": {k: r / bound for k, r in rate.items()}})
    return {"campaign_machine": campaign.get("machine"), "kernels": out}


def mctree_table(mctree):
    if not mctree:
        return "(not measured: the campaign's results or PolyBench/C were missing)"
    rows = []
    for k in mctree["kernels"]:
        g, f = k["gflops"], k["fraction"]
        rows.append(f"| {k['kernel']} | {k['flops'] / 1e6:.1f} | {k['flops'] / k['bytes']:.1f} | {k['bound_gflops']:.1f} | "
                    f"{g['O3']:.2f} ({f['O3']:.0%}) | {g['polly']:.2f} ({f['polly']:.0%}) | "
                    f"**{g['mctree']:.2f} ({f['mctree']:.0%})** |")
    return "\n".join(["| kernel | MFLOP (counted) | intensity FLOP/B | roof GFLOP/s | -O3 GFLOP/s (fraction) | Polly | "
                      "mctree |", "|---|---|---|---|---|---|---|"] + rows)


def readme(doc):
    gemm_md, ablation_md = gemm_table(doc["gemm_large"]), ablation_table(doc["ablation"])
    machine, gemm = doc["machine"], doc["gemm_large"]
    l1, l2 = ({l["threads"]: l for l in machine["limits"]}[t] for t in (1, 2))
    blas = {int(t): fastest_openblas(by) for t, by in gemm["samples"].items()}
    return f"""# Reach: how far the tuned kernels are from the machine

`{doc['command']}` ({doc['started']}; load average {gemm['load_before'][0]:.1f} before, {gemm['load_after'][0]:.1f}
after: this machine is shared, and the programs were timed interleaved, each round in a shuffled order, so a busy
moment falls on all of them alike). Machine (`moldtune machine`): {machine['cpu']}, {machine['compiler']}; peak
{l1['peak_gflops']:.1f} GFLOP/s and triad {l1['bandwidth_gbs']:.1f} GB/s at 1 thread, {l2['peak_gflops']:.1f} and
{l2['bandwidth_gbs']:.1f} at 2. What was tried to get closer: [experiments.md]({doc.get('experiments', 'experiments.md')}).

## gemm LARGE (NI 1000, NJ 1100, NK 1200; {gemm['flops'] / 1e9:.2f} GFLOP by BLAS's count)

The problem's default configuration (`polybench/gemm/gemm.yaml` at its defaults), the tuned best of the paper's
space (`results/paper/gemm/large`), the tuned best of the reach space (`polybench/gemm/gemm-reach.yaml`,
`{doc.get('reach_run', 'results/reach/gemm-reach')}`) and OpenBLAS's `cblas_dgemm` (Debian's libopenblas 0.3.21) on the same data
(`scripts/reach/gemm_openblas.c`), once with the kernel set OpenBLAS detects and once with each other set this CPU
can run (`OPENBLAS_CORETYPE`); the fastest at each thread count is the reference ({blas[1]} at 1 thread,
{blas[2]} at 2). Every output agrees with the default's (rtol 1e-6) before anything is timed.
Configurations: {'; '.join(f'{k}: {v}' for k, v in gemm['configs'].items())}. {gemm['rounds']} rounds; medians;
the intervals are 95% bootstrap intervals of the ratio of medians, resampling whole rounds (a round's samples are
paired: a busy moment slows all of them). GFLOP/s use the same count for every program.

{gemm_md}

## What each choice of the reach space is worth

The reach space's tuned best ({doc['ablation']['best']}) against each configuration one change away from it (every
other choice of a categorical parameter, the next value either side of an ordinal one, within the constraint), and
the fastest OpenBLAS, timed interleaved in a second run of {doc['ablation']['rounds']} rounds; the interval is the
95% bootstrap interval of the neighbour's rate over the best's, resampling whole rounds.

{ablation_md}

The tuned best's register tile alone, on packed operands that stay in the L1 cache (128 steps of k per call, as
`scripts/reach/micro_ceiling.c` runs it with the variant's own compile command; 1 thread, each run the best of 7
rounds of the CPU time it got; 5 runs): **median {doc['ablation']['micro_gflops'][2]:.1f} GFLOP/s,
{doc['ablation']['micro_gflops'][2] / l1['peak_gflops']:.0%} of the peak** (runs {doc['ablation']['micro_gflops'][0]:.1f}–{doc['ablation']['micro_gflops'][-1]:.1f}: CPU time does not
shield a run from what else shares the core and its caches on this virtual machine's host).
""" + (polybench_sections(doc) if doc["paper"] is not None else "")


def polybench_sections(doc):
    """Sections 3 and 4: the PolyBench runs and mctree's bests on the roofline."""
    paper_md, mctree_md = paper_table(doc["paper"]), mctree_table(doc["mctree"])
    return f"""
## The PolyBench runs of results/paper on the roofline

Each run's best and its problem's default, re-measured by `moldtune measure` ({doc['repeats']} repeats, median,
output checked; one after the other, not interleaved), the problem's `work:` and the machine's limits at the
problem's `OMP_NUM_THREADS` (roof: min(peak, intensity × triad bandwidth)); "(recorded)" is the best's time as its
search recorded it, with the CPU it ran on (its run.json). floyd-warshall is integer and declares no work.

{paper_md}

## mctree's bests on PolyBench/C 4.2.1 on the roofline

The medians of `results/mctree/polybench-4.2.1.md` (plain `-O3`, `-O3 -mllvm -polly` and mctree's verified best,
MEDIUM, 2 threads, timed interleaved by `scripts/polybench_campaign.py` on {(doc['mctree'] or {}).get('campaign_machine')}),
against this machine's limits at 2 threads. PolyBench/C declares no work, so each kernel's is counted: the file,
unmodified, compiled as C++ with `scripts/reach/counted.hpp`, which counts every floating-point +, -, *, /, sqrt,
exp and pow while PolyBench's timer runs (the program as written: gemm's `alpha * A * B` is 3 operations per
multiply-add, not BLAS's 2) and the bytes of the arrays PolyBench allocates, each once (the least traffic there
can be, so the roof is the highest it can be). floyd-warshall and nussinov compute on integers and are left out.
At MEDIUM most kernels' arrays fit in the caches, so for the kernels of low intensity (atax, bicg, gesummv, mvt,
trisolv, gemver, deriche) the memory roof, from a triad far larger than the caches, is lower than what cached data
allows, and their fractions overstate how close they are.

{mctree_md}
"""


def main():
    global REACH_RUN
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--repeats", type=int, default=5, help="moldtune measure's repeats for results/paper")
    ap.add_argument("--moldtune", default=str(ROOT / "target/release/moldtune"))
    ap.add_argument("--out", default=str(ROOT / "results/reach"))
    ap.add_argument("--report-only", action="store_true", help="rewrite README.md from reach.json")
    ap.add_argument("--reach-run", default=str(REACH_RUN),
                    help="the reach space's run to compare (the one tuned on this machine)")
    ap.add_argument("--gemm-only", action="store_true",
                    help="sections 1 and 2 only (gemm against OpenBLAS, the reach space's choices)")
    a = ap.parse_args()
    REACH_RUN = Path(a.reach_run).resolve()
    out = Path(a.out)
    if a.report_only:
        (out / "README.md").write_text(readme(json.loads((out / "reach.json").read_text())))
        return
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    machine, lims = limits(a.moldtune)
    with tempfile.TemporaryDirectory(prefix="moldtune-reach-") as tmp:
        gemm = gemm_section(a.moldtune, a.rounds, lims, Path(tmp))
        ablation = ablation_section(a.moldtune, a.rounds, Path(tmp))
        ablation["micro_gflops"] = micro_ceiling(a.moldtune, Path(tmp))
        mctree = None if a.gemm_only else mctree_section(lims, Path(tmp))
    paper = None if a.gemm_only else paper_section(a.moldtune, lims, a.repeats)
    out.mkdir(parents=True, exist_ok=True)
    command = f"python3 scripts/reach.py --rounds {a.rounds} --repeats {a.repeats}"
    if a.gemm_only:
        command += f" --gemm-only --reach-run {os.path.relpath(REACH_RUN, ROOT)} --out {os.path.relpath(out.resolve(), ROOT)}"
    doc = {"started": started, "machine": machine, "gemm_large": gemm, "ablation": ablation, "paper": paper,
           "mctree": mctree, "repeats": a.repeats, "reach_run": os.path.relpath(REACH_RUN, ROOT),
           "experiments": os.path.relpath(ROOT / "results/reach/experiments.md", out.resolve()),
           "command": command}
    (out / "reach.json").write_text(json.dumps(doc, indent=1))
    # Through JSON and back, as --report-only reads it (thread counts become strings).
    (out / "README.md").write_text(readme(json.loads(json.dumps(doc))))
    print(f"wrote {out / 'README.md'}")


if __name__ == "__main__":
    main()
