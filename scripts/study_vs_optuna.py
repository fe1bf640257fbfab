#!/usr/bin/env python3
"""The mlp-digits case tuned in one process, by moldtune's Study and by Optuna.

The moldtune side is examples/mlp-digits/study.py as shipped (its `objective` and `tune`:
space.yaml, learner rf, 10 initial, pruning after 5 completed past epoch 3); the Optuna side
is `optuna_objective` and `optuna_tune` below, the same training written as Optuna's
documentation writes it (define-by-run space, TPESampler(seed), MedianPruner(n_startup_trials=5,
n_warmup_steps=3), epochs reported from step 0 so that, as in moldtune, epoch 4 is the first
that can be pruned). Same budget (--trials), seeds 0..--seeds-1, the two sides alternating
which goes first; each side runs in a fresh Python process, so its CPU time (user + system of
the process and of its children: the moldtune server is one) is its own. Both sides run with
OMP/OpenBLAS/MKL threads at 1, so that no BLAS thread spins. Writes
results/mlp-digits/study-vs-optuna.md and .json.

Needs a Python with optuna and scikit-learn (scripts/peers/.venv, pinned in
scripts/peers/requirements.txt) and a moldtune binary with `serve`:

  scripts/peers/.venv/bin/python scripts/study_vs_optuna.py [--trials 30] [--seeds 3] [--binary target/release/moldtune]
"""

import argparse
import ast
import importlib.util
import inspect
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:  # the parent says how to get them when they are missing
    import optuna
    from sklearn.neural_network import MLPClassifier
except ImportError:
    optuna = None

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mlp-digits" / "study.py"
SPACE = ROOT / "examples" / "mlp-digits" / "space.yaml"
OUT = ROOT / "results" / "mlp-digits" / "study-vs-optuna"
sys.path.insert(0, str(ROOT / "python"))  # the checkout's moldtune package, in this process and the sides'
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

X_train = X_test = y_train = y_test = None  # the example's split, set in the child process


# The Optuna side, as a user writes it (the counterpart of the example's objective and tune).

def optuna_objective(trial):
    solver = trial.suggest_categorical("SOLVER", ["adam", "sgd", "lbfgs"])
    batch, lr = 200, 0.001
    if solver != "lbfgs":
        batch = trial.suggest_categorical("BATCH", [16, 32, 64, 128, 256, 512])
        lr = trial.suggest_float("LR", 0.0001, 0.1, log=True)
    epochs = trial.suggest_int("EPOCHS", 1, 30)
    alpha = trial.suggest_float("ALPHA", 0.00001, 0.1, log=True)
    model = MLPClassifier(hidden_layer_sizes=(64,), solver=solver, batch_size=batch, max_iter=epochs,
                          alpha=alpha, learning_rate_init=lr, random_state=0)
    t0 = time.perf_counter()
    if solver == "lbfgs":  # no epochs: never pruned
        model.fit(X_train, y_train)
    else:
        for step in range(epochs):
            model.partial_fit(X_train, y_train, classes=range(10))
            trial.report(model.score(X_test, y_test), step)
            if trial.should_prune():
                raise optuna.TrialPruned()
    trial.set_user_attr("train_s", time.perf_counter() - t0)
    return model.score(X_test, y_test)


def optuna_tune(seed=None, trials=30):
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed),
                                pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=3))
    study.optimize(optuna_objective, n_trials=trials)
    return study


# Measuring.

def code_lines(func):
    """The lines a user writes in `func`: neither blank, nor a comment, nor its docstring."""
    source = inspect.getsource(func)
    node = ast.parse(source).body[0]
    doc = set()
    if ast.get_docstring(node) is not None:
        d = node.body[0]
        doc = set(range(d.lineno, d.end_lineno + 1))
    return sum(1 for i, line in enumerate(source.splitlines(), 1)
               if i not in doc and line.strip() and not line.strip().startswith("#"))


def yaml_lines(path):
    return sum(1 for line in Path(path).read_text().splitlines()
               if line.strip() and not line.strip().startswith("#"))


def load_example():
    spec = importlib.util.spec_from_file_location("mlp_study", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def child(a):
    """One side in this (fresh) process; prints its figures as one JSON line."""
    global X_train, X_test, y_train, y_test
    example = load_example()  # imports scikit-learn and moldtune, loads and splits the digits
    X_train, X_test, y_train, y_test = example.X_train, example.X_test, example.y_train, example.y_test
    spent = [0.0]  # CPU inside scikit-learn's fit, partial_fit and score: the training, on both sides
    depth = [0]

    def timed(method):
        def wrapped(*args, **kwargs):
            depth[0] += 1
            t0 = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    spent[0] += time.process_time() - t0
        return wrapped

    from sklearn.neural_network import MLPClassifier as mlp
    for name in ("fit", "partial_fit", "score"):
        setattr(mlp, name, timed(getattr(mlp, name)))
    start = cpu(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    if a.side == "moldtune":
        best = example.tune(a.dir, a.seed, a.trials)
        wall = time.perf_counter() - t0
        with open(Path(a.dir) / "results.json") as f:
            statuses = [e["status"] for e in json.load(f)["evaluations"]]
        best_value = best["value"]
    else:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = optuna_tune(a.seed, a.trials)
        wall = time.perf_counter() - t0
        statuses = [{"COMPLETE": "ok", "PRUNED": "pruned"}.get(t.state.name, t.state.name.lower())
                    for t in study.trials]
        best_value = study.best_value
    self_cpu, children_cpu = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "trials": len(statuses), "pruned": statuses.count("pruned"), "failed": len(statuses) - statuses.count("ok")
        - statuses.count("pruned"), "best": best_value, "tune_wall_s": wall, "startup_cpu_s": start,
        "training_cpu_s": spent[0], "server_cpu_s": children_cpu,
        "tuner_cpu_s": self_cpu - start - spent[0] + children_cpu,
    }))


def run_side(a, side, seed, work):
    """Runs one side in a fresh process; its figures plus the CPU and wall time it took."""
    run_dir = work / f"{side}-{seed}"
    argv = [sys.executable, str(Path(__file__).resolve()), "--side", side, "--seed", str(seed),
            "--trials", str(a.trials), "--dir", str(run_dir)]
    env = dict(os.environ, MOLDTUNE=a.binary, **THREADS)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), env.get("PYTHONPATH")]))
    log = work / f"{side}-{seed}.stderr"
    before = cpu(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "w") as err:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    cpu_s = cpu(resource.RUSAGE_CHILDREN) - before
    if p.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed ({p.returncode}):\n{log.read_text()[-3000:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r.update(side=side, seed=seed, cpu_s=cpu_s, wall_s=wall, cpu_per_trial_s=cpu_s / r["trials"])
    return r


def machine():
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                 platform.processor())
    return {"nproc": os.cpu_count(), "cpu_model": model, "python": platform.python_version()}


def shown(path):
    """A path as the results show it: relative to the repository when inside it."""
    p = Path(path).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(path)


def versions(binary):
    import sklearn
    v = subprocess.run([binary, "--version"], capture_output=True, text=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           cwd=ROOT).stdout.strip()
    return {"optuna": optuna.__version__, "scikit-learn": sklearn.__version__,
            "moldtune": (v.stdout or v.stderr).strip(), "binary": shown(binary),
            "binary_built": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(binary))),
            "git_head": head.stdout.strip() + (" with uncommitted changes" if dirty else "")}


def spread(values, fmt):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def write(a, command, rows, load_before, load_after, info, lines):
    seeds = sorted({r["seed"] for r in rows})
    by = {(r["side"], r["seed"]): r for r in rows}
    ratios = [by["moldtune", s]["cpu_per_trial_s"] / by["optuna", s]["cpu_per_trial_s"] for s in seeds]
    data = {"command": command, "machine": info["machine"], "versions": info["versions"],
            "load_before": load_before, "load_after": load_after, "threads": THREADS,
            "trials": a.trials, "seeds": seeds, "user_code_lines": lines, "runs": rows,
            "cpu_per_trial_ratio_moldtune_over_optuna": ratios,
            "cpu_per_trial_ratio_median": statistics.median(ratios)}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")

    m = info["machine"]
    out = [
        "# The mlp-digits case in one process: moldtune's Study against Optuna", "",
        f"`{command}` ({m['nproc']} cores, {m['cpu_model']}; load average "
        f"{' / '.join(f'{x:.2f}' for x in load_before)} before, {' / '.join(f'{x:.2f}' for x in load_after)} after; "
        f"Python {m['python']}, optuna {info['versions']['optuna']}, scikit-learn {info['versions']['scikit-learn']}, "
        f"{info['versions']['moldtune']} built {info['versions']['binary_built']}, tree at {info['versions']['git_head']}).", "",
        f"Both sides train the same MLP on the digits (examples/mlp-digits/study.py against "
        f"`optuna_objective` in scripts/study_vs_optuna.py), {a.trials} trials each, seeds "
        f"{seeds[0]}–{seeds[-1]}, alternating which side runs first; each side is a fresh Python process, and its CPU "
        "is user + system time of that process and of its children (the moldtune server), Python's start and "
        "scikit-learn's import included (`startup`, the same for both). `training` is the CPU inside scikit-learn's "
        "`fit`, `partial_fit` and `score` (timed around each call, on both sides); `tuner` is the rest of the "
        "tuning: proposing configurations (moldtune's server, its surrogate model; Optuna's TPE, which runs inside "
        "the `suggest_*` calls), deciding on pruning (moldtune's server; Optuna's pruner, inside `report`), the "
        "client's JSON and the objective's own Python. CPU per trial follows mostly from which configurations a "
        "search tries and how many it prunes; `tuner` is the search's own cost. BLAS/OpenMP threads at 1 on both "
        "sides. moldtune proposes the default configuration first; Optuna samples from its first trial. The pruning "
        "rules are alike, not identical: both prune below the median of the completed trials at a step, from epoch 4 "
        "on (Optuna's steps count from 0), but Optuna waits for 5 completed trials (lbfgs ones included) and compares "
        "a trial's best value so far, moldtune waits for 5 completed "
        "trials that reported at that step and compares the value at that step.", "",
        "| seed | side | trials | pruned | failed | best accuracy | CPU s | wall s | CPU s / trial | training CPU s "
        "| tuner CPU s | startup CPU s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(f"| {r['seed']} | {r['side']} | {r['trials']} | {r['pruned']} | {r['failed']} | {r['best']:.4f} | "
                   f"{r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['cpu_per_trial_s']:.2f} | {r['training_cpu_s']:.1f} | "
                   f"{r['tuner_cpu_s']:.2f} | {r['startup_cpu_s']:.2f} |")
    out += ["", "Medians over the seeds (min–max):", "",
            "| side | best accuracy | CPU s | wall s | CPU s / trial | pruned | tuner CPU s |", "|---|---:|---:|---:|---:|---:|---:|"]
    for side in ("moldtune", "optuna"):
        rs = [by[side, s] for s in seeds]
        out.append(f"| {side} | {spread([r['best'] for r in rs], '{:.4f}')} | {spread([r['cpu_s'] for r in rs], '{:.1f}')} | "
                   f"{spread([r['wall_s'] for r in rs], '{:.1f}')} | {spread([r['cpu_per_trial_s'] for r in rs], '{:.2f}')} | "
                   f"{spread([r['pruned'] for r in rs], '{:.0f}')} | {spread([r['tuner_cpu_s'] for r in rs], '{:.2f}')} |")
    server = [by["moldtune", s]["server_cpu_s"] for s in seeds]
    out += ["", f"moldtune's server (its search, pruning verdicts and run directory) used {spread(server, '{:.2f}')} s "
            "CPU of its tuner CPU."]
    out += ["", "CPU per trial, moldtune / Optuna, per seed: "
            + ", ".join(f"{s}: {x:.2f}" for s, x in zip(seeds, ratios)) + f"; median {statistics.median(ratios):.2f}.", "",
            f"User code (lines neither blank nor comment): moldtune {lines['moldtune']['code']} "
            f"(`objective` {lines['moldtune']['objective']} + `tune` {lines['moldtune']['loop']}) plus "
            f"{lines['moldtune']['space_file']} lines of space.yaml (the space, the pruning rule, the budget); Optuna "
            f"{lines['optuna']['code']} (`optuna_objective` {lines['optuna']['objective']} + `optuna_tune` "
            f"{lines['optuna']['loop']}), its space written in the objective.", ""]
    OUT.with_suffix(".md").write_text("\n".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--binary", default=os.environ.get("MOLDTUNE") or str(ROOT / "target" / "release" / "moldtune"))
    ap.add_argument("--side", choices=["moldtune", "optuna"], help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.side:
        return child(a)
    if optuna is None:
        raise SystemExit("optuna or scikit-learn is missing: run this with a Python that has optuna and scikit-learn, e.g. scripts/peers/.venv "
                         "(`/usr/bin/python3 -m venv scripts/peers/.venv && scripts/peers/.venv/bin/pip install "
                         "-r scripts/peers/requirements.txt`)")
    a.binary = str(Path(a.binary).resolve())
    probe = subprocess.run([a.binary, "serve", "--help"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise SystemExit(f"{a.binary} has no `serve` ({probe.stderr.strip()[:200]}): build it, or pass --binary")
    command = shlex.join([os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(str(ROOT)) else sys.executable,
                          os.path.relpath(__file__, ROOT), *sys.argv[1:]])
    example = load_example()
    lines = {"moldtune": {"objective": code_lines(example.objective), "loop": code_lines(example.tune),
                          "space_file": yaml_lines(SPACE)},
             "optuna": {"objective": code_lines(optuna_objective), "loop": code_lines(optuna_tune)}}
    for side in lines.values():
        side["code"] = side["objective"] + side["loop"]
    info = {"machine": machine(), "versions": versions(a.binary)}
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="study-vs-optuna.") as work:
        for seed in range(a.seeds):
            order = ("moldtune", "optuna") if seed % 2 == 0 else ("optuna", "moldtune")
            for side in order:
                r = run_side(a, side, seed, Path(work))
                r["order"] = order.index(side) + 1
                rows.append(r)
                print(f"seed {seed} {side}: best {r['best']:.4f}, {r['trials']} trials ({r['pruned']} pruned), "
                      f"CPU {r['cpu_s']:.1f} s, wall {r['wall_s']:.1f} s, tuner CPU {r['tuner_cpu_s']:.2f} s", flush=True)
    write(a, command, rows, load_before, os.getloadavg(), info, lines)
    print(f"wrote {OUT.with_suffix('.md').relative_to(ROOT)} and {OUT.with_suffix('.json').relative_to(ROOT)}")


if __name__ == "__main__":
    main()
