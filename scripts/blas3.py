#!/usr/bin/env python3
"""mctree against the library on the BLAS-3 kernels of PolyBench/C 4.2.1 (issue 58, item 3),
into results/reach/blas3-<dataset>.json and .md (blas3-large.md, …).

For each of gemm, syrk, syr2k, symm, trmm, 2mm and 3mm (the last two chains of gemm), at
`--dataset` (LARGE):
  1. mctree searches the file as published, as scripts/polybench_campaign.py runs it
     (`moldtune mctree FILE --strategy rf --max-evals N -- -Iutilities -D<DATASET>_DATASET
     utilities/polybench.c`); `--continue` keeps a run already in `--work`;
  2. builds plain -O3, -O3 with Polly (unrestricted, as a user would try it), mctree's verified
     best (best.c with its evaluation's exact compile command), and the kernel through OpenBLAS
     (scripts/reach/blas3_openblas.c: the benchmark's own file, its kernel replaced by the
     routine) with every OpenBLAS kernel set this CPU runs;
  3. checks every program's array dump against -O3's, to the dump's printed precision (two
     decimals: OpenBLAS sums in another order, which can move the last printed digit by one);
  4. times them all interleaved, each round in a shuffled order, at 1 and 2 threads;
  5. the roof of `moldtune machine` from the routine's work as BLAS counts it (a multiply-add
     is 2 operations: gemm 2·NI·NJ·NK, syrk N(N+1)M, trmm M(M-1)N, …; the bytes of the arrays,
     each once), sizes from the kernel's header at that dataset: each program's fraction of
     the roof, and mctree's rate as a fraction of the fastest OpenBLAS kernel set's and of
     Polly's, with 95% bootstrap intervals (whole rounds resampled).

    python3 scripts/blas3.py [--dataset LARGE] [--evals 30] [--rounds 10] [--kernels gemm,syrk]
                             [--continue] [--report-only]

Needs clang-22, libopenblas-dev and PolyBench/C 4.2.1 (fetched into the cache as the campaign
does). At LARGE with 30 evaluations mctree's search takes 4–25 minutes per kernel (3mm the longest) and
10 rounds of timing 1–3 more.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import polybench_campaign as campaign  # noqa: E402
import reach  # noqa: E402

ROOT = reach.ROOT
OUT = ROOT / "results/reach"
OPENBLAS_SOURCE = ROOT / "scripts/reach/blas3_openblas.c"
KERNELS = {
    "gemm": "linear-algebra/blas/gemm/gemm.c",
    "syrk": "linear-algebra/blas/syrk/syrk.c",
    "syr2k": "linear-algebra/blas/syr2k/syr2k.c",
    "symm": "linear-algebra/blas/symm/symm.c",
    "trmm": "linear-algebra/blas/trmm/trmm.c",
    "2mm": "linear-algebra/kernels/2mm/2mm.c",
    "3mm": "linear-algebra/kernels/3mm/3mm.c",
}
THREADS = [1, 2]
# Per kernel: (operations as BLAS counts them, elements of its arrays), of its sizes.
WORK = {
    "gemm": lambda d: (2 * d["NI"] * d["NJ"] * d["NK"], d["NI"] * d["NJ"] + d["NI"] * d["NK"] + d["NK"] * d["NJ"]),
    "syrk": lambda d: (d["N"] * (d["N"] + 1) * d["M"], d["N"] * d["N"] + d["N"] * d["M"]),
    "syr2k": lambda d: (2 * d["N"] * (d["N"] + 1) * d["M"], d["N"] * d["N"] + 2 * d["N"] * d["M"]),
    "symm": lambda d: (2 * d["M"] * d["M"] * d["N"], 2 * d["M"] * d["N"] + d["M"] * d["M"]),
    "trmm": lambda d: (d["M"] * (d["M"] - 1) * d["N"], d["M"] * d["M"] + d["M"] * d["N"]),
    "2mm": lambda d: (2 * d["NI"] * d["NJ"] * (d["NK"] + d["NL"]),
                      d["NI"] * (d["NJ"] + d["NK"] + d["NL"]) + d["NK"] * d["NJ"] + d["NJ"] * d["NL"]),
    "3mm": lambda d: (2 * (d["NI"] * d["NJ"] * d["NK"] + d["NJ"] * d["NL"] * d["NM"] + d["NI"] * d["NL"] * d["NJ"]),
                      d["NI"] * (d["NJ"] + d["NK"] + d["NL"]) + d["NK"] * d["NJ"] + d["NJ"] * (d["NL"] + d["NM"])
                      + d["NM"] * d["NL"]),
}


def sizes(pb, name, dataset):
    """The kernel's sizes at `dataset`, from its header's `# ifdef <DATASET>_DATASET` block."""
    header = (pb / KERNELS[name]).with_suffix(".h").read_text()
    block = re.search(rf"#\s*ifdef {dataset}_DATASET\n(.*?)#\s*endif", header, re.S).group(1)
    return {k: int(v) for k, v in re.findall(r"#\s*define (\w+) (\d+)", block)}


def blas_work(pb, name, dataset):
    """(operations, bytes) of the kernel as BLAS counts them ([`WORK`]), doubles."""
    flops, elements = WORK[name](sizes(pb, name, dataset))
    return flops, 8 * elements


def search(a, pb, name, run_dir):
    """mctree's run on the kernel (kept with --continue when it finished): its record."""
    record = run_dir / "search.json"
    if a.cont and record.exists() and (run_dir / "best.c").exists():
        mc = json.loads(record.read_text())
        if f"--max-evals {a.evals} " in mc["command"]:
            return mc
        print(f"blas3: {name}'s kept search had another budget than --evals {a.evals}: searched again",
              file=sys.stderr)
    mc, _ = campaign.run_mctree(a.binary, str(pb), KERNELS[name], a.seed, a.evals, str(run_dir), a.dataset)
    record.write_text(json.dumps(mc))
    return mc


def builds(e, pb, name, run_dir, work):
    """{label: compile argv} of -O3, Polly, mctree's best `e` (the campaign's) and the OpenBLAS
    program (built as -O3 is, its source in place of the kernel's)."""
    v = campaign.variant_argvs(e, str(pb), KERNELS[name], str(run_dir), str(work))
    blas = campaign.plain_argv(v["mctree"], str(OPENBLAS_SOURCE), str(work / "openblas"), False)
    blas += [f"-DKERNEL_{name.upper()}", f'-DKERNEL_FILE="{name}.c"',
             f"-I{(pb / KERNELS[name]).parent}", "-lopenblas", "-w"]
    return {"-O3": v["O3"], "Polly": v["polly"], "mctree": v["mctree"], "OpenBLAS": blas}


def build_all(pb, argvs):
    """Builds each program twice (timed, and dumping its arrays): {label: (timed, dumping)}."""
    out = {}
    for label, argv in argvs.items():
        exe = argv[argv.index("-o") + 1]
        dumping = argv[:]
        dumping[dumping.index("-o") + 1] = exe + "-dump"
        for v in (argv, dumping + ["-DPOLYBENCH_DUMP_ARRAYS"]):
            ok, err = campaign.build(v, str(pb))
            if not ok:
                sys.exit(f"blas3: {label} does not build: {err}")
        out[label] = (exe, exe + "-dump")
    return out


def printed_agree(a, b):
    """Two PolyBench dumps agree to their printed precision: each number within one unit
    of its last printed digit (and the text between numbers the same)."""
    return campaign.same_output(a, b, close=last_digit)


def last_digit(x, y):
    """Whether the numbers written `x` and `y` differ by at most one unit of `x`'s last digit."""
    unit = 10.0 ** -len(x.split(".")[1]) if "." in x else 1.0
    return abs(float(x) - float(y)) <= unit * 1.000001


def programs_checked(built):
    """{name: (executable, environment)} of every program whose dump agrees with -O3's; the
    OpenBLAS program once per kernel set. Exits if one disagrees (nothing is timed)."""
    blas_exe, blas_dump = built.pop("OpenBLAS")
    progs = {label: ((exe, {}), (dump, {})) for label, (exe, dump) in built.items()}
    for label, env in reach.openblas_cores(blas_exe):
        progs[label] = ((blas_exe, env), (blas_dump, env))
    env = dict(os.environ, **reach.threads_env(2))
    rc, ref = campaign.dump(progs["-O3"][1][0], env)
    for label, (_, (exe, extra)) in progs.items():
        rc, got = campaign.dump(exe, {**env, **extra})
        if rc != 0 or not printed_agree(ref, got):
            sys.exit(f"blas3: {label}'s output differs from -O3's (exit {rc}): nothing timed")
    return {label: timed for label, (timed, _) in progs.items()}


def kernel(a, pb, lims, name):
    """One kernel's record: the search, the checked programs' samples and the work."""
    work = Path(a.work) / f"{name}-{a.dataset.lower()}-{a.seed}"
    run_dir = work / "run"
    work.mkdir(parents=True, exist_ok=True)
    mc = search(a, pb, name, run_dir)
    if mc["exit"] != 0:
        return {"kernel": name, "mctree": mc}
    e = campaign.best_eval(str(run_dir))
    progs = programs_checked(build_all(pb, builds(e, pb, name, run_dir, work)))
    flops, bytes_ = blas_work(pb, name, a.dataset)
    load0 = os.getloadavg()[0]
    samples = reach.measure(progs, THREADS, a.rounds, a.seed)
    return {"kernel": name, "mctree": mc, "best": e["config"], "flops": flops, "bytes": bytes_,
            "roof_gflops": {t: reach.roof(flops, bytes_, lims[t]) for t in THREADS},
            "load": [load0, os.getloadavg()[0]], "samples": samples}


def rows(k, rounds):
    """The kernel's table rows, one per thread count."""
    out = []
    for t, by in k["samples"].items():
        blas = reach.fastest_openblas(by)
        rate = {n: k["flops"] / statistics.median(s) / 1e9 for n, s in by.items()}
        roof = k["roof_gflops"][t]
        cell = lambda n: f"{rate[n]:.1f} ({rate[n] / roof:.0%})"
        of_blas = reach.bootstrap_ratio(by[blas], by["mctree"])
        of_polly = reach.bootstrap_ratio(by["Polly"], by["mctree"])
        out.append(f"| {k['kernel']} | {t} | {k.get('rounds', rounds)} | {roof:.1f} | {cell('-O3')} | {cell('Polly')} | **{cell('mctree')}** | "
                   f"{cell(blas)} {blas.removeprefix('OpenBLAS ')} | {ci(of_blas, '%')} | {ci(of_polly, 'x')} |")
    return out


def ci(r, kind):
    f = (lambda x: f"{x:.0%}") if kind == "%" else (lambda x: f"{x:.2f}x")
    return f"**{f(r[0])}** [{f(r[1])}, {f(r[2])}]"


def report(doc):
    lines = [f"# mctree against OpenBLAS on the BLAS-3 kernels of PolyBench/C 4.2.1 ({doc['dataset']})", "",
             f"Measured {doc['started']} on {doc['machine']['cpu']}, {doc['compiler']}; "
             f"`{doc['command']}`. mctree: `--strategy rf --max-evals {doc['evals']} --seed {doc['seed']}` on the "
             "file as published. Every program's dump agreed with -O3's to its printed precision before it was "
             "timed; interleaved rounds, each in a shuffled order (a kernel's rounds ran one after the other, "
             "kernels measured in one run unless `--continue` kept an earlier one's). GFLOP/s from the routine's work "
             "as BLAS counts it (a multiply-add 2 operations; fraction of the roof of `moldtune machine` at that thread count in brackets); OpenBLAS: the fastest "
             "of the kernel sets this CPU runs. `of OpenBLAS`: mctree's rate over OpenBLAS's, `over Polly`: "
             "mctree's speed-up over Polly alone, both with 95% bootstrap intervals.", "",
             "| kernel | threads | rounds | roof GFLOP/s | -O3 | Polly | mctree | OpenBLAS | mctree of OpenBLAS | "
             "mctree over Polly |", "|---|---|---|---|---|---|---|---|---|---|"]
    for k in doc["kernels"]:
        lines += rows(k, doc["rounds"]) if "samples" in k else [
            f"| {k['kernel']} | – | – | mctree exited {k['mctree']['exit']}: {k['mctree'].get('why', '')} |||||||"]
    lines += ["", "mctree's verified bests:", ""]
    lines += [f"- {k['kernel']}: `{stack(k['best'])}`" for k in doc["kernels"] if "best" in k]
    return "\n".join(lines) + "\n"


def stack(config):
    s = config.get("transformations") or "(no directive)"
    polly = config.get("polly") or ""
    return s + (f"; {polly}" if polly else "")


def kept(path, dataset, wanted):
    """The kernels an earlier run at the same dataset measured that this one does not."""
    if not path.exists():
        return []
    earlier = json.loads(path.read_text())
    if earlier.get("dataset") != dataset:
        return []
    return [k for k in earlier["kernels"] if k["kernel"] not in wanted]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="LARGE", choices=["MINI", "SMALL", "MEDIUM", "LARGE", "EXTRALARGE"])
    ap.add_argument("--evals", type=int, default=30, help="mctree's --max-evals per kernel")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=10, help="interleaved timing rounds")
    ap.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated, from " + ", ".join(KERNELS))
    ap.add_argument("--binary", default=campaign.DEFAULT_BINARY, help="the moldtune to run")
    ap.add_argument("--work", default="", help="run directories (default: <cache>/blas3-runs)")
    ap.add_argument("--continue", dest="cont", action="store_true", help="keep mctree's runs already in --work")
    ap.add_argument("--out", default=str(OUT), help="where blas3-<dataset>.json and .md go")
    ap.add_argument("--report-only", action="store_true", help="rewrite the dataset's .md from its .json")
    a = ap.parse_args()
    out = Path(a.out)
    json_file, md_file = (out / f"blas3-{a.dataset.lower()}{ext}" for ext in (".json", ".md"))
    if a.report_only:
        md_file.write_text(report(json.loads(json_file.read_text())))
        return
    wanted = [k for k in a.kernels.split(",") if k]
    if unknown := [k for k in wanted if k not in KERNELS]:
        sys.exit(f"blas3: unknown kernel {', '.join(unknown)}; the kernels: {', '.join(KERNELS)}")
    cache = Path(os.environ.get("MOLDTUNE_CACHE", os.path.expanduser("~/.cache/moldtune")))
    pb = Path(campaign.fetch(str(cache / "polybench-c-4.2.1"))).resolve()
    a.work = a.work or str(cache / "blas3-runs")
    a.binary = os.path.abspath(a.binary)
    machine, lims = reach.limits(a.binary)
    doc = {"started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine,
           "compiler": reach.sh(["clang-22", "--version"]).stdout.splitlines()[0], "dataset": a.dataset,
           "evals": a.evals, "seed": a.seed, "rounds": a.rounds, "kernels": [],
           "command": f"python3 scripts/blas3.py --dataset {a.dataset} --evals {a.evals} --rounds {a.rounds}"
                      + (" --continue" if a.cont else "")}
    out.mkdir(parents=True, exist_ok=True)
    doc["kernels"] = kept(json_file, a.dataset, wanted) if a.cont else []
    for name in wanted:
        record = {**kernel(a, pb, lims, name), "rounds": a.rounds,
                  "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        doc["kernels"] = sorted(doc["kernels"] + [record], key=lambda k: list(KERNELS).index(k["kernel"]))
        # Through JSON and back, as --report-only reads it (thread counts become strings).
        json_file.write_text(json.dumps(doc, indent=1))
        md_file.write_text(report(json.loads(json.dumps(doc))))
        print(f"blas3: {name} done", file=sys.stderr)


if __name__ == "__main__":
    main()
