#!/usr/bin/env python3
"""mctree on every kernel of PolyBench/C 4.2.1, on the files exactly as published.

For each kernel of the benchmark's own `utilities/benchmark_list` (MEDIUM dataset), one
kernel after the other (the machine has two shared cores):
  1. `moldtune mctree FILE --strategy rf --max-evals 60 --seed S -- -Iutilities
     -DMEDIUM_DATASET utilities/polybench.c`, nothing else (a kernel it cannot tune must
     say why and exit 2: counted, not hidden);
  2. builds plain `-O3` and `-O3 -mllvm -polly` (Polly unrestricted, as a user would try it)
     with the flags mctree's root uses, and mctree's verified best (best.c with the exact
     compile command of its evaluation, from results.json);
  3. times the three interleaved, order rotating, `--rounds` rounds (default 10): medians and
     95% bootstrap intervals of the ratios, measured in one run (the figures that count on
     a loaded machine);
  4. checks mctree's best on a second input, as a test only: the reference (-O3) and best.c
     rebuilt with every assignment in `init_array` perturbed (floating values ×(1 + 0.01·r),
     integers ×(1 + r mod 16) + r mod 7, r pseudo-random) and PolyBench's array dump compared.

PolyBench/C 4.2.1 is fetched (git clone) into a cache outside the repository
(`$MOLDTUNE_CACHE` or ~/.cache/moldtune) unless `--polybench DIR` names a copy.

Writes results/mctree/polybench-4.2.1.json after every kernel and polybench-4.2.1.md at the
end (`--report-only` rewrites the Markdown from the JSON; `--continue` skips kernels the JSON
already holds for that seed). Run directories go to `--work` (default `<cache>/polybench-runs`).

Usage: python3 scripts/polybench_campaign.py [--evals 60] [--seeds 0] [--rounds 10]
                                            [--kernels 2mm,lu] [--binary PATH] [--polybench DIR]
                                            [--work DIR] [--continue] [--report-only]
  --kernels   comma-separated kernel names as in benchmark_list's file names (default: all 30)
  --binary    the moldtune to run (default: this checkout's target/release/moldtune, built
              first with `cargo build --release`; any other path is used as it is)
  (`--help` lists every option.)
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

REPO = "https://github.com/MatthiasJReisinger/PolyBenchC-4.2.1"
COMMIT = "3e872547cef7e5c9909422ef1e6af03cf4e56072"
# The checkout this script belongs to: results land there whatever the current directory.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_JSON = os.path.join(ROOT, "results/mctree/polybench-4.2.1.json")
OUT_MD = os.path.join(ROOT, "results/mctree/polybench-4.2.1.md")
DEFAULT_BINARY = os.path.join(ROOT, "target/release/moldtune")


def fetch(dest):
    if os.path.isfile(os.path.join(dest, "utilities", "benchmark_list")):
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    subprocess.run(["git", "clone", "--quiet", REPO, dest], check=True)
    subprocess.run(["git", "-C", dest, "checkout", "--quiet", COMMIT], check=False)
    return dest


def kernels(pb):
    with open(os.path.join(pb, "utilities", "benchmark_list")) as f:
        return [l.strip().lstrip("./") for l in f if l.strip()]


def name_of(path):
    return os.path.splitext(os.path.basename(path))[0]


def run_mctree(binary, pb, path, seed, evals, out, dataset="MEDIUM"):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [binary, "mctree", path, "--strategy", "rf", "--max-evals", str(evals),
           "--seed", str(seed), "--out", out, "--quiet", "--json",
           "--", "-Iutilities", f"-D{dataset}_DATASET", "utilities/polybench.c"]
    t0 = time.time()
    p = subprocess.run(cmd, cwd=pb, capture_output=True, text=True)
    # As typed, without this machine's home directory: `--out ~/.cache/...`.
    shown = " ".join(cmd[:1] + ["mctree"] + cmd[2:]).replace(binary, "moldtune")
    r = {"command": shown.replace(os.path.expanduser("~") + "/", "~/"),
         "exit": p.returncode, "wall_s": round(time.time() - t0, 1)}
    if p.returncode != 0:
        r["why"] = error_text(p.stderr)
        return r, None
    summary = json.loads(p.stdout)
    r.update({k: summary.get(k) for k in ("experiments", "valid", "legality", "verification")})
    r["proved_wrong"] = proved_wrong(out)
    return r, summary


def proved_wrong(run_dir):
    """The evaluations mctree proved legal whose output differed from the untransformed
    program's (every variant is output-checked): the oracle disagreeing with the proof."""
    with open(os.path.join(run_dir, "results.json")) as f:
        evals = json.load(f)["evaluations"]
    return [e["config"].get("transformations") for e in evals
            if e["config"].get("legality") == "proved" and e["status"] == "wrong_output"]


def error_text(stderr):
    """moldtune's error on one line: the `error:` line and the indented lines under it (no hint)."""
    lines = [l for l in stderr.splitlines() if l.strip()]
    if not lines:
        return ""
    at = next((i for i, l in enumerate(lines) if l.startswith("error")), 0)
    rest = [l.strip() for l in lines[at + 1:] if l.startswith("  ") and not l.strip().startswith("hint")]
    return " ".join([lines[at], *rest])


def best_eval(run_dir):
    meta = json.load(open(os.path.join(run_dir, "run.json")))
    v = meta.get("verification") or {}
    winner = v.get("winner_eval_id", meta.get("best_eval_id"))
    evals = json.load(open(os.path.join(run_dir, "results.json")))["evaluations"]
    found = [e for e in evals if e["eval_id"] == winner]
    if not found:
        sys.exit(f"{run_dir}: run.json names no evaluation of results.json as its winner ({winner})")
    return found[0]


def argv_of(e, run_dir, source, exe):
    """The winner's compile argv with its source, output and relative paths made absolute."""
    build = os.path.join(run_dir, "work", f"eval-{e['eval_id']}")
    argv, out, skip = [], [], False
    words = e["commands"]["compile"]
    for i, w in enumerate(words):
        if skip:
            skip = False
            continue
        if w == "-o":
            argv += ["-o", exe]
            skip = True
        elif w == "variant.c":
            argv.append(source)
        elif w.startswith("-I") and not w.startswith("-I/"):
            argv.append("-I" + os.path.normpath(os.path.join(build, w[2:])))
        else:
            argv.append(w)
    return argv


def plain_argv(best_argv, source, exe, polly, extra_sources=("polybench.c",)):
    """mctree's root flags: the winner's argv without its Polly flags (and with `polly`);
    `source` in place of the winner's file, the `extra_sources` (base names) kept."""
    out, skip = [], False
    for i, w in enumerate(best_argv):
        if skip:
            skip = False
            continue
        nxt = best_argv[i + 1] if i + 1 < len(best_argv) else ""
        if w == "-mllvm" and nxt.startswith("-polly"):
            skip = True
            continue
        extra = os.path.basename(w) in extra_sources
        out.append(source if w.endswith(".c") and not extra else w)
    out[out.index("-o") + 1] = exe
    return out[:1] + (["-mllvm", "-polly"] if polly else []) + out[1:]


def perturbed(text):
    """The file with every array or pointer assignment in init_array perturbed."""
    m = re.search(r"\bvoid\s+init_array\s*\(", text)
    if not m:
        return None
    start = text.index("{", m.end())
    depth, end = 0, start
    for end in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            break
    body = text[start:end]
    assign = re.compile(r"((?:\*\s*\w+|[\w()*\s]+(?:\[[^\]]+\])+))\s*=(?!=)\s*([^;]+);")
    body = assign.sub(lambda x: f"{x.group(1)} = PB_PERTURB({x.group(2)});", body)
    prelude = (
        "static unsigned pb_perturb_state = 12345u;\n"
        "static unsigned pb_perturb_next(void) { pb_perturb_state = pb_perturb_state * 1103515245u + 12345u;"
        " return (pb_perturb_state >> 16) & 0x7fff; }\n"
        "static double pb_perturb_fp(double x) { return x * (1.0 + 0.01 * (pb_perturb_next() / 32768.0)); }\n"
        "static long pb_perturb_int(long x) { return x * (long)(1 + pb_perturb_next() % 16) + (long)(pb_perturb_next() % 7); }\n"
        "#define PB_PERTURB(x) _Generic((x), float: pb_perturb_fp, double: pb_perturb_fp, "
        "long double: pb_perturb_fp, default: pb_perturb_int)(x)\n"
    )
    head = text[:start]
    # The prelude goes after the last #include (before every function).
    at = max((x.end() for x in re.finditer(r"^#include.*$", head, re.M)), default=0)
    return head[:at] + "\n" + prelude + head[at:] + body + text[end:]


def build(argv, cwd):
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    return p.returncode == 0, p.stderr[-1500:]


def run_time(exe, env):
    p = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=600)
    try:
        return float(p.stdout.strip().split()[-1])
    except (ValueError, IndexError):
        return None


def dump(exe, env):
    p = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=1200)
    return p.returncode, p.stderr


def same_output(a, b, rtol=1e-6, atol=1e-9, close=None):
    """Two dumps hold the same text but for numbers close enough: within `rtol` (and `atol`),
    or as `close(x, y)` says of the two numbers' text. A NaN is close to nothing."""
    ta, tb = a.split(), b.split()
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb):
        if x == y and x.lstrip("-").lower() != "nan":
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        near = close(x, y) if close else abs(fx - fy) <= atol + rtol * max(abs(fx), abs(fy))
        if not near:
            return False
    return True


def ratio_ci(num, den, rng, resamples=2000):
    """Median ratio num/den with a 95% percentile bootstrap interval."""
    point = statistics.median(num) / statistics.median(den)
    rs = sorted(statistics.median(rng.choices(num, k=len(num))) /
                statistics.median(rng.choices(den, k=len(den))) for _ in range(resamples))
    return [point, rs[int(0.025 * resamples)], rs[int(0.975 * resamples) - 1]]


def variant_argvs(e, pb, path, run_dir, work):
    """{name: compile argv} of plain -O3, -O3 with Polly and mctree's best `e` (its exact
    command), executables in `work`."""
    best = argv_of(e, run_dir, os.path.join(run_dir, "best.c"), os.path.join(work, "mctree"))
    original = os.path.join(pb, path)
    return {
        "O3": plain_argv(best, original, os.path.join(work, "O3"), False),
        "polly": plain_argv(best, original, os.path.join(work, "polly"), True),
        "mctree": best,
    }


def measure(pb, path, run_dir, work, rounds, seed):
    e = best_eval(run_dir)
    src = os.path.join(run_dir, "best.c")
    variants = variant_argvs(e, pb, path, run_dir, work)
    best, original = variants["mctree"], os.path.join(pb, path)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    for k, argv in variants.items():
        ok, err = build(argv, pb)
        if not ok:
            return {"error": f"{k} does not build: {err}"}
    times = {k: [] for k in variants}
    order = list(variants)
    for r in range(rounds):
        for k in order[r % 3:] + order[: r % 3]:
            t = run_time(os.path.join(work, k), env)
            if t is not None:
                times[k].append(t)
    rng = random.Random(seed)
    out = {"best": e["config"], "best_eval_id": e["eval_id"], "rounds": rounds,
           "median_s": {k: statistics.median(v) for k, v in times.items() if v},
           "samples": times}
    if all(times.values()):
        out["speedup_over_O3"] = ratio_ci(times["O3"], times["mctree"], rng)
        out["speedup_over_polly"] = ratio_ci(times["polly"], times["mctree"], rng)
        out["polly_over_O3"] = ratio_ci(times["O3"], times["polly"], rng)
    out["second_input"] = second_input(pb, original, src, best, variants["O3"], work, env)
    return out


def second_input(pb, original, best_c, best_argv, o3_argv, work, env):
    """Reference and best rebuilt with a perturbed init_array: do their dumps agree?"""
    texts = {}
    for k, f in (("ref", original), ("best", best_c)):
        t = perturbed(open(f).read())
        if t is None:
            return {"checked": False, "why": "no init_array"}
        p = os.path.join(os.path.dirname(original), f".campaign-{k}.c")
        open(p, "w").write(t)
        texts[k] = p
    res = {}
    try:
        for k, argv in (("ref", o3_argv), ("best", best_argv)):
            a = [texts[k] if (w in (original, best_c)) else w for w in argv]
            a[a.index("-o") + 1] = os.path.join(work, f"dump-{k}")
            a.append("-DPOLYBENCH_DUMP_ARRAYS")
            ok, err = build(a, pb)
            if not ok:
                return {"checked": False, "why": f"{k} does not build perturbed: {err}"}
            res[k] = dump(os.path.join(work, f"dump-{k}"), env)
    finally:
        for p in texts.values():
            os.remove(p)
    correct = res["ref"][0] == 0 and res["best"][0] == 0 and same_output(res["ref"][1], res["best"][1])
    return {"checked": True, "correct": correct, "values": len(res["ref"][1].split())}


def load(path=OUT_JSON):
    if os.path.exists(path):
        return json.load(open(path))
    return {"runs": []}


def save(data, path=OUT_JSON):
    """Writes the campaign's JSON atomically (a kill leaves the previous one)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def fmt_ci(c):
    return "—" if not c else f"{c[0]:.2f}× [{c[1]:.2f}–{c[2]:.2f}]"


def report(data):
    rows = sorted(data["runs"], key=lambda r: (r["kernel"], r["seed"]))
    lines = [
        "# mctree on PolyBench/C 4.2.1 (files unmodified, MEDIUM)",
        "",
        "Made by `python3 scripts/polybench_campaign.py` (see its docstring). Per kernel: "
        "`moldtune mctree FILE --strategy rf --max-evals 60 --seed S -- -Iutilities "
        "-DMEDIUM_DATASET utilities/polybench.c`, then plain `-O3`, `-O3 -mllvm -polly` and "
        "mctree's verified best timed interleaved in one run (medians of the kernel time "
        "PolyBench prints; intervals: 95% bootstrap of the ratio of medians). 'second input': "
        "the reference and best.c rebuilt with a perturbed `init_array` give the same arrays.",
        "",
        f"Machine: {data.get('machine', '?')}; compiler: {data.get('compiler', '?')}.",
        "",
        "| kernel | seed | -O3 s | Polly s | mctree s | mctree vs -O3 | mctree vs Polly | Polly vs -O3 "
        "| exp./valid | proved / output-checked / refused | best stack | second input | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        m, mc = r.get("measured") or {}, r["mctree"]
        if mc["exit"] != 0:
            lines.append(f"| {r['kernel']} | {r['seed']} | | | | exit {mc['exit']}: {mc.get('why', '')} "
                         "| | | | | | | |")
            continue
        med = m.get("median_s", {})
        leg = mc.get("legality") or {}
        stack, si_text, per = stack_text(m), second_input_text(m), per_valid(mc)
        lines.append(
            f"| {r['kernel']} | {r['seed']} | {med.get('O3', 0):.5f} | {med.get('polly', 0):.5f} | "
            f"{med.get('mctree', 0):.5f} | {fmt_ci(m.get('speedup_over_O3'))} | "
            f"{fmt_ci(m.get('speedup_over_polly'))} | {fmt_ci(m.get('polly_over_O3'))} | {per:.2f} | "
            f"{leg.get('proved', 0)} / {leg.get('output_checked', 0)} / {leg.get('refused', 0)} | "
            f"`{stack}` | {si_text} | {r['load'][0]:.1f}–{r['load'][1]:.1f} |")
    lines += ["", *summary_lines(rows)]
    with open(OUT_MD, "w") as f:
        f.write("\n".join(lines) + "\n")


def stack_text(m):
    """The measured best's Polly knob and directives, as one cell."""
    best = m.get("best", {})
    return "; ".join(x for x in (best.get("polly", ""), best.get("transformations", "")) if x) or "untransformed"


def second_input_text(m):
    """Whether the best was right on the second input, as one cell."""
    si = m.get("second_input", {})
    if si.get("checked"):
        return "yes" if si.get("correct") else "**NO**"
    return f"n/a ({si.get('why', m.get('error', ''))})"


def per_valid(mc):
    """Experiments per valid evaluation of an mctree summary."""
    return mc["experiments"] / max(mc["valid"], 1)


def summary_lines(rows):
    done = [r for r in rows if r["mctree"]["exit"] == 0 and r.get("measured", {}).get("median_s")]
    refused = [r for r in rows if r["mctree"]["exit"] != 0]
    illegal = [r["kernel"] for r in done if r["measured"].get("second_input", {}).get("checked")
               and not r["measured"]["second_input"].get("correct")]
    below = []
    for r in done:
        m = r["measured"]
        pv, sp = m.get("polly_over_O3"), m.get("speedup_over_polly")
        if pv and sp and pv[1] > 1.0 and sp[2] < 1.0:
            below.append(r["kernel"])
    pers = [per_valid(r["mctree"]) for r in done]
    oracle = [(r["kernel"], w) for r in done for w in r["mctree"].get("proved_wrong", [])]
    evaluated = sum(r["mctree"].get("experiments", 0) for r in done)
    return [
        "## Acceptance",
        "",
        f"- kernels run: {len(rows)} ({len(done)} tuned and measured, {len(refused)} refused by mctree with exit 2 or failed)",
        f"- variants proved legal whose output differed from the untransformed program's ({evaluated} "
        f"experiments, each output-checked): {len(oracle)} {oracle or ''}",
        f"- verified bests wrong on the second input: {len(illegal)} {illegal or ''}",
        f"- kernels where Polly beat -O3 and mctree's best is slower than Polly beyond the interval: {len(below)} {below or ''}",
        f"- median experiments per valid evaluation: {statistics.median(pers):.2f}" if pers else "- no runs",
    ]


def main():
    ap = argparse.ArgumentParser(description="mctree on every kernel of PolyBench/C 4.2.1; "
                                 f"writes {OUT_JSON} and {OUT_MD}")
    ap.add_argument("--evals", type=int, default=60, help="mctree's --max-evals per kernel")
    ap.add_argument("--seeds", default="0", help="comma-separated seeds, one mctree run each")
    ap.add_argument("--rounds", type=int, default=10, help="interleaved timing rounds")
    ap.add_argument("--kernels", default="",
                    help="comma-separated kernel names (e.g. 2mm,lu); default: all 30")
    ap.add_argument("--polybench", default="", help="a PolyBench/C 4.2.1 checkout (default: fetched into the cache)")
    ap.add_argument("--work", default="", help="where run directories go (default: <cache>/polybench-runs)")
    ap.add_argument("--binary", default=DEFAULT_BINARY,
                    help="the moldtune binary (default: this checkout's release build, built first)")
    ap.add_argument("--continue", dest="cont", action="store_true",
                    help="skip kernels the JSON already holds for that seed")
    ap.add_argument("--report-only", action="store_true", help="rewrite the Markdown from the JSON")
    a = ap.parse_args()
    data = load()
    if a.report_only:
        report(data)
        return
    cache = os.environ.get("MOLDTUNE_CACHE", os.path.expanduser("~/.cache/moldtune"))
    pb = os.path.abspath(a.polybench or fetch(os.path.join(cache, "polybench-c-4.2.1")))
    work_root = a.work or os.path.join(cache, "polybench-runs")
    binary = os.path.abspath(a.binary)
    if binary == DEFAULT_BINARY:
        subprocess.run(["cargo", "build", "--release", "--quiet"], check=True, cwd=ROOT)
    data["machine"] = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(" :\t")
    data["compiler"] = subprocess.run(["clang-22", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    wanted = [k for k in a.kernels.split(",") if k]
    for seed in [int(s) for s in a.seeds.split(",")]:
        for path in kernels(pb):
            name = name_of(path)
            if wanted and name not in wanted:
                continue
            if a.cont and any(r["kernel"] == name and r["seed"] == seed for r in data["runs"]):
                continue
            data["runs"] = [r for r in data["runs"] if not (r["kernel"] == name and r["seed"] == seed)]
            work = os.path.join(work_root, f"{name}-{seed}")
            os.makedirs(work, exist_ok=True)
            load0 = os.getloadavg()[0]
            mc, _ = run_mctree(binary, pb, path, seed, a.evals, os.path.join(work, "run"))
            row = {"kernel": name, "file": path, "seed": seed, "mctree": mc}
            if mc["exit"] == 0:
                row["measured"] = measure(pb, path, os.path.join(work, "run"), work, a.rounds, seed)
            row["load"] = [load0, os.getloadavg()[0]]
            data["runs"].append(row)
            save(data)
            sp = (row.get("measured") or {}).get("speedup_over_O3")
            print(f"{name} seed {seed}: exit {mc['exit']}, {mc['wall_s']} s, vs -O3 {fmt_ci(sp)}", file=sys.stderr)
    report(data)


if __name__ == "__main__":
    main()
