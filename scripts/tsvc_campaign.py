#!/usr/bin/env python3
"""mctree on every loop of TSVC_2 (UoB-HPC/TSVC_2, the Test Suite for Vectorising Compilers).

TSVC_2 as published cannot be tuned loop by loop: its `main` runs all 151 kernels, the repeat
count `iterations` is a fixed #define and nothing is dumped. This script writes, for each kernel
`sNNN` of `src/tsvc.c`, a one-kernel driver `<cache>/tsvc-drivers/sNNN.c` (see `driver()`):
the suite's array definitions and helper functions, the kernel's own text unchanged, and a
`main` that runs it once with the arguments TSVC's `main` passes it, prints the kernel's time
(its own gettimeofday pair) alone on stdout, varies the input under `PB_INPUT=random`
(`PB_SEED`: every real array scaled by 1 + u/2, u uniform in [0, 1), after the kernel's own
`initialise_arrays`, so signs and zeros stay what the kernel expects) and, under `PB_DUMP=1`,
writes on stderr the checksum and per-64-element weighted sums (sum of (k+1)*v_k) of every
global array. `iterations` becomes `TSVC_ITERATIONS`: `--iterations` (default 1000), raised for a kernel
whose text divides it (`iterations/LEN_1D`: s176 would repeat 1000/32000 = 0 times) to the largest divisor.

Then, per kernel, one after the other (two shared cores):
  1. `moldtune mctree DRIVER --list --json --kernel sNNN -- -Isrc -DTSVC_ITERATIONS=N
     src/common.c src/dummy.c -lm`: loops, transformable, carried, accesses not modelled;
  2. `moldtune mctree DRIVER --kernel sNNN --strategy rf --max-evals E --seed 0 -- ...`
     (a kernel it cannot tune exits 2 with one line: counted, not hidden);
     Every variant mctree builds is output-checked against the untransformed driver on random
     input; a proved one that fails ('proved, wrong output' in the table) is the oracle
     disagreeing with the dependence test;
  3. mctree's verified best checked against the untransformed driver on two more inputs
     (PB_SEED 101 and 102, built as the best was) — 'second input' in the table;
  4. plain -O3, -O3 -mllvm -polly and the best timed interleaved (`--rounds`), medians and
     95% bootstrap intervals of the ratios, as scripts/polybench_campaign.py does.

TSVC_2 is fetched (git clone) into the cache (`$MOLDTUNE_CACHE` or ~/.cache/moldtune) unless
`--tsvc DIR` names a copy; its licence (UIUC/NCSA, `license.txt`) lets us read and build it;
nothing of it is written into this repository. Results: results/mctree/tsvc.json after every
kernel, results/mctree/tsvc.md at the end (`--report-only` rewrites it).

Usage: python3 scripts/tsvc_campaign.py [--kernels s000,s112] [--evals 12] [--iterations 1000]
                                        [--rounds 7] [--binary PATH] [--continue] [--report-only]
       python3 scripts/tsvc_campaign.py --drivers-only [--kernels s112]   # drivers and commands only
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import polybench_campaign as pc  # noqa: E402  (its run-directory and timing helpers)

REPO = "https://github.com/UoB-HPC/TSVC_2"
ROOT = pc.ROOT
OUT_JSON = os.path.join(ROOT, "results/mctree/tsvc.json")
OUT_MD = os.path.join(ROOT, "results/mctree/tsvc.md")
KERNEL = re.compile(r"^real_t[ \t]+(\w+)[ \t]*\([ \t]*struct[ \t]+args_t[ \t]*\*[ \t]*func_args[ \t]*\)[ \t]*\{?[ \t]*$", re.M)
FUNCTION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(\w+)[ \t]*\([^;{]*\)[ \t]*\{?[ \t]*$", re.M)
REAL_ARRAYS = {"a": "LEN_1D", "b": "LEN_1D", "c": "LEN_1D", "d": "LEN_1D", "e": "LEN_1D",
               "x": "LEN_1D", "flat_2d_array": "LEN_2D*LEN_2D", "aa": "LEN_2D*LEN_2D",
               "bb": "LEN_2D*LEN_2D", "cc": "LEN_2D*LEN_2D", "tt": "LEN_2D*LEN_2D"}


def fetch(dest):
    if os.path.isfile(os.path.join(dest, "src", "tsvc.c")):
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    subprocess.run(["git", "clone", "--quiet", REPO, dest], check=True)
    return dest


def body_end(text, start):
    """The index just past the brace that closes the block opening at or after `start`."""
    depth, i = 0, text.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return i


def parse(tsvc_c):
    """(globals text, {helper name: text}, {kernel name: text}, {kernel: arg_info expression})."""
    text = open(tsvc_c).read()
    first = KERNEL.search(text).start()
    head = text[:first]
    globals_at = head.index("// array definitions")
    globals_text = head[globals_at:]
    kernels, helpers = {}, {}
    for m in FUNCTION.finditer(text):
        if m.start() < first or m.group(1) in ("main", "time_function", "if", "for", "while"):
            continue
        end = body_end(text, text.index(")", m.start()))
        target = kernels if KERNEL.match(text, m.start()) else helpers
        target[m.group(1)] = text[m.start():end]
    args = {}
    for m in re.finditer(r"time_function\(&(\w+),\s*(.*)\);", text):
        args[m.group(1)] = m.group(2)
    return globals_text, helpers, kernels, args


def driver(name, globals_text, helpers, kernel_text, arg):
    """The one-kernel driver's C text."""
    others = "\n\n".join(helpers.values())
    dumps = "\n".join(f'    tsvc_dump("{a}", {a if a not in ("aa", "bb", "cc", "tt") else "&" + a + "[0][0]"}, {n});'
                      for a, n in REAL_ARRAYS.items())
    scale = "\n".join(f"    tsvc_scale({a if a not in ('aa', 'bb', 'cc', 'tt') else '&' + a + '[0][0]'}, {n});"
                      for a, n in REAL_ARRAYS.items())
    return f"""/* TSVC_2's `{name}` alone, for `moldtune mctree`: written by moldtune's
   scripts/tsvc_campaign.py from TSVC_2's src/tsvc.c (UoB-HPC/TSVC_2, UIUC licence). The
   kernel's text is the suite's, unchanged; `iterations` is TSVC_ITERATIONS. */
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <malloc.h>
#include <sys/time.h>

#include "common.h"
#include "array_defs.h"

#undef iterations
#ifndef TSVC_ITERATIONS
#define TSVC_ITERATIONS 1000
#endif
#define iterations TSVC_ITERATIONS

{globals_text.strip()}

{others}

static int tsvc_driver_init(const char *name);
#define initialise_arrays(name) tsvc_driver_init(name)

{kernel_text}

#undef initialise_arrays

static unsigned long long tsvc_state;

static double tsvc_uniform(void) {{
  tsvc_state = tsvc_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(tsvc_state >> 11) / 9007199254740992.0;
}}

static void tsvc_scale(real_t *v, int n) {{
  for (int i = 0; i < n; i++) v[i] = (real_t)(v[i] * (1.0 + 0.5 * tsvc_uniform()));
}}

/* The suite's own initialisation, then (PB_INPUT=random) every real array scaled. */
static int tsvc_driver_init(const char *name) {{
  int r = (initialise_arrays)(name);
  const char *mode = getenv("PB_INPUT"), *seed = getenv("PB_SEED");
  if (mode == NULL || strcmp(mode, "random") != 0) return r;
  tsvc_state = seed ? strtoull(seed, NULL, 10) * 2654435761ull + 1 : 20240601ull;
{scale}
  return r;
}}

/* Sums of (k+1) * v[k] over blocks of 64 elements: a permutation inside a block shows. */
static void tsvc_dump(const char *what, const real_t *v, int n) {{
  fprintf(stderr, "%s", what);
  for (int i = 0; i < n; i += 64) {{
    double s = 0.0;
    for (int k = 0; k < 64 && i + k < n; k++) s += (k + 1) * (double)v[i + k];
    fprintf(stderr, "%s%.10g", (i / 64) % 16 == 0 ? "\\n" : " ", s);
  }}
  fprintf(stderr, "\\n");
}}

int main(void) {{
  int n1 = 1, n3 = 1;
  int *ip;
  real_t s1, s2;
  init(&ip, &s1, &s2);
  (void)n1, (void)n3, (void)s1, (void)s2;
  struct args_t args;
  memset(&args, 0, sizeof args);
  args.arg_info = {arg};
  real_t checksum = {name}(&args);
  double t = (double)(args.t2.tv_sec - args.t1.tv_sec) + (double)(args.t2.tv_usec - args.t1.tv_usec) * 1e-6;
  printf("\\n%0.6f\\n", t); /* initialise_arrays printed the name */
  const char *dump = getenv("PB_DUMP");
  if (dump != NULL && strcmp(dump, "1") == 0) {{
    fprintf(stderr, "checksum %.10g\\n", (double)checksum);
{dumps}
  }}
  return 0;
}}
"""


def constants(src):
    """The suite's `#define NAME NUMBER`s (LEN_1D, LEN_2D, ...)."""
    out = {}
    for h in sorted(os.listdir(src)):
        if h.endswith(".h"):
            with open(os.path.join(src, h)) as f:
                for m in re.finditer(r"^#define\s+(\w+)\s+\(?(\d+)\)?\s*$", f.read(), re.M):
                    out[m[1]] = int(m[2])
    return out


def iterations_for(kernel_text, default, consts):
    """`default`, or the largest N of `iterations/N` in the kernel if larger (else it runs 0 times)."""
    divisors = [int(d) if d.isdigit() else consts.get(d, 0)
                for d in re.findall(r"iterations\s*/\s*\(?\s*(\w+)", kernel_text)]
    return max([default, *divisors])


def flags(src, iterations):
    return [f"-I{src}", f"-DTSVC_ITERATIONS={iterations}",
            os.path.join(src, "common.c"), os.path.join(src, "dummy.c"), "-lm"]


def listing(binary, path, name, fl):
    p = subprocess.run([binary, "mctree", path, "--kernel", name, "--list", "--json", "--", *fl],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"exit": p.returncode, "why": pc.error_text(p.stderr).replace(os.path.dirname(path) + "/", "")}
    t = json.loads(p.stdout)
    loops = t["loops"]
    return {"exit": 0, "loops": len(loops),
            "transformable": sum(1 for l in loops if not l.get("untouchable")),
            "carrying": sum(1 for l in loops if not l.get("untouchable") and not l["independent"]),
            "dependences": len(t["deps"]["deps"]),
            "unmodelled": len(t["deps"].get("unmodelled", []))}


def tune(binary, path, name, fl, evals, out):
    cmd = [binary, "mctree", path, "--kernel", name, "--strategy", "rf", "--max-evals", str(evals),
           "--seed", "0", "--out", out, "--quiet", "--json", "--", *fl]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    r = {"exit": p.returncode, "wall_s": round(time.time() - t0, 1)}
    if p.returncode != 0:
        r["why"] = pc.error_text(p.stderr).replace(os.path.dirname(path) + "/", "")
        return r
    summary = json.loads(p.stdout)
    r.update({k: summary.get(k) for k in ("experiments", "valid", "legality", "verification")})
    r["proved_wrong"] = pc.proved_wrong(out)
    return r



def measure(path, run_dir, work, rounds, seed, src):
    """-O3, Polly and the best timed interleaved; the best checked on two more inputs."""
    e = pc.best_eval(run_dir)
    best_c = os.path.join(run_dir, "best.c")
    best = pc.argv_of(e, run_dir, best_c, os.path.join(work, "mctree"))
    keep = ("common.c", "dummy.c")
    variants = {
        "O3": pc.plain_argv(best, path, os.path.join(work, "O3"), False, keep),
        "polly": pc.plain_argv(best, path, os.path.join(work, "polly"), True, keep),
        "mctree": best,
    }
    for k, argv in variants.items():
        ok, err = pc.build(argv, work)
        if not ok:
            return {"error": f"{k} does not build: {err}"}
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = {"best": e["config"], "best_eval_id": e["eval_id"], "rounds": rounds,
           "second_input": second_input(work, env)}
    times = {k: [] for k in variants}
    order = list(variants)
    for r in range(rounds):
        for k in order[r % 3:] + order[: r % 3]:
            t = pc.run_time(os.path.join(work, k), env)
            if t is not None and t > 0:
                times[k].append(t)
    out["median_s"] = {k: statistics.median(v) for k, v in times.items() if v}
    out["samples"] = times
    if all(times.values()):
        rng = random.Random(seed)
        out["speedup_over_O3"] = pc.ratio_ci(times["O3"], times["mctree"], rng)
        out["speedup_over_polly"] = pc.ratio_ci(times["polly"], times["mctree"], rng)
        out["polly_over_O3"] = pc.ratio_ci(times["O3"], times["polly"], rng)
    return out


def second_input(work, env):
    """The best against the untransformed -O3 build on two inputs mctree never used."""
    for seed in ("101", "102"):
        e = dict(env, PB_DUMP="1", PB_INPUT="random", PB_SEED=seed)
        ref, got = pc.dump(os.path.join(work, "O3"), e), pc.dump(os.path.join(work, "mctree"), e)
        if ref[0] != 0 or got[0] != 0:
            return {"checked": False, "why": f"exit {ref[0]} / {got[0]} on seed {seed}"}
        if not pc.same_output(ref[1], got[1]):
            return {"checked": True, "correct": False, "seed": seed}
    return {"checked": True, "correct": True, "values": len(ref[1].split())}


def report(data):
    rows = sorted(data["runs"], key=lambda r: r["kernel"])
    s = data.get("settings", {})
    lines = [
        "# mctree on TSVC_2 (every kernel through its generated one-kernel driver)",
        "",
        "Made by `python3 scripts/tsvc_campaign.py` (see its docstring for the driver and the steps). "
        f"Settings: `--evals {s.get('evals', '?')} --iterations {s.get('iterations', '?')} "
        f"--rounds {s.get('rounds', '?')}`. Machine: {data.get('machine', '?')}; compiler: "
        f"{data.get('compiler', '?')}. Times are the kernel's own (gettimeofday around its loops); "
        "intervals: 95% bootstrap of the ratio of medians, measured interleaved in one run.",
        "",
        "| kernel | loops (transformable / carrying) | accesses not modelled | proved / output-checked / refused "
        "| proved, wrong output | exp./valid | -O3 s | mctree vs -O3 | mctree vs Polly | Polly vs -O3 | best stack "
        "| second input | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ls, mc, m = r.get("list", {}), r.get("mctree", {}), r.get("measured") or {}
        name = r["kernel"] + ("" if r.get("iterations", s.get("iterations")) == s.get("iterations")
                              else f" (iterations {r['iterations']})")
        loops = f"{ls.get('loops', '?')} ({ls.get('transformable', '?')} / {ls.get('carrying', '?')})"
        if mc.get("exit", 0) != 0 or ls.get("exit", 0) != 0:
            why = mc.get("why") or ls.get("why", "")
            lines.append(f"| {name} | {loops} | | | | | | exit {mc.get('exit', ls.get('exit'))}: {why} | | | | |")
            continue
        leg = mc.get("legality") or {}
        stack, si_text, per = pc.stack_text(m), pc.second_input_text(m), pc.per_valid(mc)
        lines.append(
            f"| {name} | {loops} | {ls.get('unmodelled', '?')} | {leg.get('proved', 0)} / "
            f"{leg.get('output_checked', 0)} / {leg.get('refused', 0)} | {len(mc.get('proved_wrong', []))} | {per:.2f} | "
            f"{m.get('median_s', {}).get('O3', 0):.5f} | {pc.fmt_ci(m.get('speedup_over_O3'))} | "
            f"{pc.fmt_ci(m.get('speedup_over_polly'))} | {pc.fmt_ci(m.get('polly_over_O3'))} | `{stack}` | {si_text} "
            f"| {r['load'][0]:.1f}–{r['load'][1]:.1f} |")
    lines += ["", *summary(rows, data.get("total", "?"))]
    with open(OUT_MD, "w") as f:
        f.write("\n".join(lines) + "\n")


def summary(rows, total):
    done = [r for r in rows if r.get("mctree", {}).get("exit") == 0 and (r.get("measured") or {}).get("median_s")]
    refused = [r for r in rows if r.get("mctree", {}).get("exit", 0) != 0 or r.get("list", {}).get("exit", 0) != 0]
    wrong = [r["kernel"] for r in done if r["measured"].get("second_input", {}).get("checked")
             and not r["measured"]["second_input"].get("correct")]
    below = [r["kernel"] for r in done
             if (r["measured"].get("polly_over_O3") or [0, 0, 0])[1] > 1.0
             and (r["measured"].get("speedup_over_polly") or [1, 1, 1])[2] < 1.0]
    pers = [pc.per_valid(r["mctree"]) for r in done]
    oracle = [(r["kernel"], w) for r in done for w in r["mctree"].get("proved_wrong", [])]
    evaluated = sum(r["mctree"].get("experiments", 0) for r in done)
    med = f"{statistics.median(pers):.2f} ({min(pers):.2f}–{max(pers):.2f})" if pers else "—"
    return [
        "## Summary",
        "",
        f"- kernels: {len(rows)} of TSVC_2's {total}; tuned and measured: {len(done)}; not tuned (exit 2, "
        f"why in the table): {len(refused)}" + ("" if len(rows) == total else " (the rest: `--continue`)"),
        f"- variants proved legal whose output differed from the untransformed program's (random input; "
        f"{evaluated} experiments): {len(oracle)} {oracle if oracle else ''}",
        f"- verified bests wrong on the second input: {len(wrong)} {wrong if wrong else ''}",
        f"- experiments per valid evaluation, median (range): {med}",
        f"- kernels where Polly beat -O3 and mctree's best is slower than Polly beyond the interval: "
        f"{len(below)} {below if below else ''}",
    ]


def write_driver(drivers, name, parsed):
    """Writes kernel `name`'s driver into `drivers`; its path."""
    globals_text, helpers, kernels, args = parsed
    path = os.path.join(drivers, f"{name}.c")
    with open(path, "w") as f:
        f.write(driver(name, globals_text, helpers, kernels[name], args.get(name, "NULL")))
    return path


def write_drivers(src, drivers, a):
    """Writes every (or every `--kernels`) driver and prints how to tune it."""
    os.makedirs(drivers, exist_ok=True)
    parsed = parse(os.path.join(src, "tsvc.c"))
    wanted = [k for k in a.kernels.split(",") if k]
    consts = constants(src)
    for name in parsed[2]:
        if not wanted or name in wanted:
            fl = " ".join(flags(src, iterations_for(parsed[2][name], a.iterations, consts)))
            print(f"moldtune mctree {write_driver(drivers, name, parsed)} --kernel {name} -- {fl}")


def main():
    ap = argparse.ArgumentParser(description=f"mctree on TSVC_2; writes {OUT_JSON} and {OUT_MD}")
    ap.add_argument("--kernels", default="", help="comma-separated kernel names (default: all)")
    ap.add_argument("--evals", type=int, default=12, help="mctree's --max-evals per kernel")
    ap.add_argument("--iterations", type=int, default=1000,
                    help="TSVC's repeat count (suite: 100000; at least 256: some kernels repeat iterations/256 times)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds")
    ap.add_argument("--tsvc", default="", help="a TSVC_2 checkout (default: fetched into the cache)")
    ap.add_argument("--binary", default=pc.DEFAULT_BINARY,
                    help="the moldtune binary (default: this checkout's release build, built first)")
    ap.add_argument("--work", default="", help="where drivers' run directories go (default: the cache)")
    ap.add_argument("--continue", dest="cont", action="store_true", help="skip kernels already in the JSON")
    ap.add_argument("--report-only", action="store_true", help="rewrite the Markdown from the JSON")
    ap.add_argument("--drivers-only", action="store_true",
                    help="write the drivers and print each one's mctree command; tune nothing")
    a = ap.parse_args()
    data = pc.load(OUT_JSON)
    if a.report_only:
        report(data)
        return
    cache = os.environ.get("MOLDTUNE_CACHE", os.path.expanduser("~/.cache/moldtune"))
    tsvc = os.path.abspath(a.tsvc or fetch(os.path.join(cache, "tsvc_2")))
    src = os.path.join(tsvc, "src")
    binary = os.path.abspath(a.binary)
    if a.drivers_only:
        write_drivers(src, os.path.join(cache, "tsvc-drivers"), a)
        return
    if binary == pc.DEFAULT_BINARY:
        subprocess.run(["cargo", "build", "--release", "--quiet"], check=True, cwd=ROOT)
    drivers = os.path.join(cache, "tsvc-drivers")
    work_root = a.work or os.path.join(cache, "tsvc-runs")
    os.makedirs(drivers, exist_ok=True)
    parsed = parse(os.path.join(src, "tsvc.c"))
    data["settings"] = {"evals": a.evals, "iterations": a.iterations, "rounds": a.rounds}
    data["total"] = len(parsed[2])
    data["machine"] = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(" :\t")
    data["compiler"] = subprocess.run(["clang-22", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    wanted = [k for k in a.kernels.split(",") if k]
    consts = constants(src)
    for name in parsed[2]:
        if (wanted and name not in wanted) or (a.cont and any(r["kernel"] == name for r in data["runs"])):
            continue
        path = write_driver(drivers, name, parsed)
        work = os.path.join(work_root, name)
        shutil.rmtree(work, ignore_errors=True)  # this script's own: the row is made anew
        os.makedirs(work, exist_ok=True)
        load0 = os.getloadavg()[0]
        iterations = iterations_for(parsed[2][name], a.iterations, consts)
        fl = flags(src, iterations)
        row = {"kernel": name, "iterations": iterations, "list": listing(binary, path, name, fl)}
        if row["list"]["exit"] == 0:
            row["mctree"] = tune(binary, path, name, fl, a.evals, os.path.join(work, "run"))
            if row["mctree"]["exit"] == 0:
                row["measured"] = measure(path, os.path.join(work, "run"), work, a.rounds, 0, src)
        row["load"] = [load0, os.getloadavg()[0]]
        data["runs"] = [r for r in data["runs"] if r["kernel"] != name] + [row]
        pc.save(data, OUT_JSON)
        sp = (row.get("measured") or {}).get("speedup_over_O3")
        print(f"{name}: list exit {row['list']['exit']}, mctree exit {row.get('mctree', {}).get('exit')}, "
              f"vs -O3 {pc.fmt_ci(sp)}", file=sys.stderr)
    report(data)


if __name__ == "__main__":
    main()
