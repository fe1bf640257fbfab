"""The tables the peers are replayed on, and what a replay measures.

A table is a parameter space (read from moldtune's problem YAML, or built in code for the
synthetic ones) and a list of rows: a configuration and its recorded outcome (ok or failed,
objective, cost in seconds). A configuration is a tuple of coordinates, one per parameter:
the index of its value in the parameter's value list, or None when the parameter is inactive.

Tables:
  gemm-table, 3mm-medium, lu-medium, floyd-warshall-medium, floyd-warshall-table, lu-table,
  3mm-table, syr2k-table, 2mm-table, covariance-table   recorded by moldtune (results/search/<name>/);
  branin, tiles                      synthetic, the same as src/report/synthetic.rs builds.

The replay protocol is moldtune's (`moldtune replay`): per search, the best-so-far after each
evaluation, the evaluations and simulated seconds needed to come within 5% of the table's
optimum, the failed evaluations. A proposal that is not a row of the table is answered with
the nearest recorded row (Hamming distance over the coordinates, ties to the lower row index).
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import time
from dataclasses import dataclass, field

import yaml

from constraint import Constraint
from seedstats import quantile  # noqa: F401 (the harness's scripts take it from here)

RECORDED = ("gemm-table", "3mm-medium", "lu-medium", "floyd-warshall-medium", "floyd-warshall-table",
            "lu-table", "3mm-table", "syr2k-table", "2mm-table", "covariance-table")
SYNTHETIC = ("branin", "tiles")
ALL_TABLES = RECORDED + SYNTHETIC
# moldtune's run timeout when a problem file sets none (src/problem/file.rs).
DEFAULT_RUN_TIMEOUT_S = 60.0
# Spaces with at most this many raw configurations are enumerated (src/problem/space.rs).
ENUMERATION_LIMIT = 200_000


@dataclass
class Param:
    """One parameter: its name, kind ("categorical", "ordinal" or "permutation"), the text of
    each value (as a results.csv cell writes it), its default coordinate, and its condition:
    active only when every parent (a parameter index) has one of the listed coordinates. A
    permutation's values are the orders of its `items` joined by `separator`, ranked as
    moldtune ranks them (lexicographic by the items' positions); `typed` is each value as a
    constraint expression sees it (a number, a string or a bool)."""

    name: str
    kind: str
    values: list[str]
    default: int = 0
    condition: dict[int, set[int]] = field(default_factory=dict)
    items: list[str] | None = None
    separator: str = " "
    typed: list = field(default_factory=list)


@dataclass
class Space:
    """The parameters (parents before children), the forbidden combinations (each a map of
    parameter index to the coordinates it forbids, all of which must hold), and the run
    timeout of the problem (SMAC's crash cost)."""

    params: list[Param]
    forbidden: list[dict[int, set[int]]] = field(default_factory=list)
    run_timeout_s: float = DEFAULT_RUN_TIMEOUT_S
    constraints: list[Constraint] = field(default_factory=list)

    def index(self, name: str) -> int:
        """The index of parameter `name`."""
        return next(i for i, p in enumerate(self.params) if p.name == name)

    def active(self, i: int, coords) -> bool:
        """Whether parameter i is active given the (already resolved) coordinates of its parents."""
        cond = self.params[i].condition
        return all(coords[j] is not None and coords[j] in vals for j, vals in cond.items())

    def canonical(self, coords) -> tuple:
        """The configuration with inactive parameters set to None (a peer without conditions,
        such as OpenTuner, proposes a value for every parameter)."""
        out = list(coords)
        for i in range(len(self.params)):
            if not self.active(i, out):
                out[i] = None
        return tuple(out)

    def is_forbidden(self, coords) -> bool:
        """Whether the configuration matches a forbidden combination or breaks a constraint
        (`coords` canonical: inactive parameters None)."""
        if any(all(coords[i] in vals for i, vals in f.items()) for f in self.forbidden):
            return True
        if not self.constraints:
            return False
        values = {p.name: (None if x is None else p.typed[x]) for p, x in zip(self.params, coords)}
        return not all(c.holds(values) for c in self.constraints)

    def enumerate(self) -> list[tuple]:
        """Every allowed configuration (for the synthetic tables), in odometer order, last
        parameter fastest."""
        out = set()
        for combo in itertools.product(*[range(len(p.values)) for p in self.params]):
            c = self.canonical(combo)
            if not self.is_forbidden(c):
                out.add(c)
        key = lambda c: tuple(-1 if v is None else v for v in c)
        return sorted(out, key=key)


@dataclass
class Row:
    """A recorded outcome: ok or failed, the objective (None when failed), and its cost in
    seconds (compile_s + run_s as recorded; 0 for a synthetic table)."""

    ok: bool
    objective: float | None
    cost: float


@dataclass
class Table:
    """A replayable table: the space, the configurations and their outcomes (row order as
    recorded), and a description of where it came from."""

    name: str
    space: Space
    configs: list[tuple]
    rows: list[Row]
    source: str
    exhaustive: bool = False
    _index: dict = field(default_factory=dict, repr=False)
    _matrix: "np.ndarray | None" = field(default=None, repr=False)

    def __post_init__(self):
        import numpy as np  # here, so that the spaces load without the peers' environment

        self._index = {c: i for i, c in enumerate(self.configs)}
        self._matrix = np.array(
            [[-1 if v is None else v for v in c] for c in self.configs], dtype=np.int64
        )

    def optimum(self) -> float:
        """The best (lowest) objective of an ok row."""
        return min(r.objective for r in self.rows if r.ok)

    def failure_share(self) -> float:
        """The share of rows that failed."""
        return sum(not r.ok for r in self.rows) / len(self.rows)

    def lookup(self, coords) -> tuple[int, bool]:
        """The row answering a proposal and whether the proposal itself is a row: the exact
        row, or else the nearest one (fewest differing coordinates, lower index on ties)."""
        c = self.space.canonical(coords)
        i = self._index.get(c)
        if i is not None:
            return i, True
        import numpy as np

        v = np.array([-1 if x is None else x for x in c], dtype=np.int64)
        dist = (self._matrix != v).sum(axis=1)
        return int(np.argmin(dist)), False

    def describe(self) -> str:
        """moldtune's one-line description: size, failure share, optimum."""
        return (
            f"{len(self.rows)} configurations, {100 * self.failure_share():.0f}% fail, "
            f"optimum {self.optimum():.6f}"
        )


# ---------------------------------------------------------------------------------------------
# Recorded tables


def value_text(v) -> str:
    """A YAML scalar as moldtune writes it in a results.csv cell (Rust's Display)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def param_from_yaml(raw: dict) -> Param:
    """One parameter of a problem YAML (categorical, ordinal, integer, boolean or
    permutation; a real range has no finite table and is refused)."""
    kind, items, sep = raw["type"], None, raw.get("separator", " ")
    number = lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else value_text(v)
    if kind == "categorical":
        values = [value_text(v) for v in raw["choices"]]
        typed = list(values)
    elif kind == "ordinal":
        values = [value_text(v) for v in raw["values"]]
        typed = [number(v) for v in raw["values"]]
    elif kind == "integer":
        values = [str(i) for i in range(int(raw["low"]), int(raw["high"]) + 1)]
        typed, kind = [float(v) for v in values], "ordinal"
    elif kind == "boolean":
        values, kind, typed = ["false", "true"], "categorical", [False, True]
    elif kind == "permutation":
        items = [value_text(v) for v in raw["items"]]
        values = [sep.join(order) for order in itertools.permutations(items)]
        typed = list(values)
    else:
        raise ValueError(f"parameter {raw['name']}: type {kind} cannot be replayed")
    default = values.index(value_text(raw["default"])) if "default" in raw else 0
    return Param(raw["name"], kind, values, default, raw.get("when") or {}, items, sep, typed)


def space_from_yaml(path: str) -> Space:
    """The parameter space of a moldtune problem file: parameters, `when` conditions,
    `forbidden` combinations, `constraints` expressions (constraint.py) and the run
    timeout."""
    with open(path) as f:
        doc = yaml.safe_load(f)
    params = [param_from_yaml(p) for p in doc["params"]]
    names = [p.name for p in params]
    for p in params:  # resolve `when: {PARENT: [values]}` to coordinates
        p.condition = {
            names.index(k): {params[names.index(k)].values.index(value_text(v)) for v in vs}
            for k, vs in p.condition.items()
        }
    forbidden = []
    for entry in doc.get("forbidden") or []:
        f = {}
        for k, vs in entry.items():
            j = names.index(k)
            vs = vs if isinstance(vs, list) else [vs]
            f[j] = {params[j].values.index(value_text(v)) for v in vs}
        forbidden.append(f)
    timeout = (doc.get("timeouts") or {}).get("run_s", DEFAULT_RUN_TIMEOUT_S)
    constraints = [Constraint(text, names) for text in doc.get("constraints") or []]
    return Space(params, forbidden, float(timeout), constraints)


def coordinate(p: Param, text: str) -> int:
    """The coordinate of a results.csv cell for parameter p (numbers compared as numbers)."""
    if text in p.values:
        return p.values.index(text)
    try:
        x = float(text)
        return next(i for i, v in enumerate(p.values) if _num(v) == x)
    except (ValueError, StopIteration):
        raise ValueError(f"{p.name}: value {text!r} is not one of {p.values}") from None


def _num(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def load_recorded(root: str, name: str) -> Table:
    """A recorded run directory results/search/<name>: its problem's space (run.json's
    `problem`, relative to the run directory) and its rows; a configuration recorded twice
    keeps its first row. An empty cell is the empty-string value or an inactive parameter."""
    run_dir = os.path.join(root, "results", "search", name)
    with open(os.path.join(run_dir, "run.json")) as f:
        run = json.load(f)
    space = space_from_yaml(os.path.normpath(os.path.join(run_dir, run["problem"])))
    configs, rows, seen = [], [], set()
    with open(os.path.join(run_dir, "results.csv"), newline="") as f:
        for rec in csv.DictReader(f):
            coords: list = []
            for i, p in enumerate(space.params):
                active = space.active(i, coords + [None] * (len(space.params) - i))
                cell = rec[p.name]
                coords.append(coordinate(p, cell) if active else None)
            c = tuple(coords)
            if c in seen:
                continue
            seen.add(c)
            ok = rec["status"] == "ok" and rec["objective"] != ""
            cost = float(rec["compile_s"] or 0) + float(rec["run_s"] or 0)
            configs.append(c)
            rows.append(Row(ok, float(rec["objective"]) if ok else None, cost))
    # Every allowed configuration recorded (conditions and forbidden combinations counted):
    # enumerated when the raw space is small enough, as moldtune enumerates it.
    raw = math.prod(len(p.values) for p in space.params)
    exhaustive = raw <= ENUMERATION_LIMIT and len(configs) >= len(space.enumerate())
    src = f"results/search/{name} ({len(configs)} recorded evaluations)"
    return Table(name, space, configs, rows, src, exhaustive)


# ---------------------------------------------------------------------------------------------
# Synthetic tables (src/report/synthetic.rs: branin() and tiles())


def ordinal(name: str, n: int) -> Param:
    """The ordinal 0, 1, ..., n-1."""
    return Param(name, "ordinal", [str(i) for i in range(n)])


def synthetic(name: str, space: Space, f) -> Table:
    """Every configuration of `space` with outcome f(config) (None = a failure), at no cost."""
    configs = space.enumerate()
    rows = []
    for c in configs:
        y = f(c)
        rows.append(Row(y is not None, y, 0.0))
    return Table(name, space, configs, rows, "synthetic (src/report/synthetic.rs)", True)


def branin() -> Table:
    """Branin on a 64x64 grid over [-5, 10] x [0, 15], shifted up by 1."""
    space = Space([ordinal("X0", 64), ordinal("X1", 64)])

    def f(c):
        x = -5.0 + 15.0 * c[0] / 63.0
        y = 15.0 * c[1] / 63.0
        pi = math.pi
        b = 5.1 / (4.0 * pi * pi)
        return (y - b * x * x + 5.0 / pi * x - 6.0) ** 2 + 10.0 * (1.0 - 1.0 / (8.0 * pi)) * math.cos(x) + 10.0 + 1.0

    return synthetic("branin", space, f)


def tiles() -> Table:
    """Four tile sizes over an 11-value list, a 3-way loop order, an unroll choice active only
    for order 1; a cache-model run time; both inner tiles large = a build failure."""
    sizes = [4.0, 8.0, 16.0, 20.0, 32.0, 50.0, 64.0, 80.0, 96.0, 100.0, 128.0]
    params = [ordinal(f"T{i}", 11) for i in range(4)] + [ordinal("ORDER", 3)]
    unroll = ordinal("UNROLL", 3)
    unroll.condition = {4: {1}}
    space = Space(params + [unroll])

    def f(c):
        if c[2] + c[3] >= 14:
            return None
        t = [sizes[c[i]] for i in range(4)]
        footprint = t[0] * t[1] + t[1] * t[2] + t[0] * t[2]
        cache = 1.0 + math.log(footprint / 4096.0) ** 2 * 0.15
        overhead = 1.0 + 2.0 / t[3] + 1.0 / t[0]
        order = [1.0, 0.8, 1.3][c[4]]
        unroll_f = 1.0 if c[5] is None else [1.0, 0.93, 0.97][c[5]]
        return 0.1 * cache * overhead * order * unroll_f

    return synthetic("tiles", space, f)


def load(root: str, name: str) -> Table:
    """A table by name (one of ALL_TABLES)."""
    if name == "branin":
        return branin()
    if name == "tiles":
        return tiles()
    return load_recorded(root, name)


# ---------------------------------------------------------------------------------------------
# One simulated search, and its metrics


@dataclass
class Trace:
    """One search: best-so-far after each evaluation (inf before the first success), the
    simulated seconds spent after each, failed evaluations, repeated proposals (a
    configuration, or an answering row, the search already evaluated), proposals outside the
    table, and the optimiser's own time (ask + tell)."""

    best: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    failures: int = 0
    repeats: int = 0
    out_of_table: int = 0
    optimiser_s: float = 0.0


def replay(table: Table, peer, budget: int) -> Trace:
    """Runs `peer` (ask/tell) for `budget` evaluations on `table`. Each proposal is answered
    by its row (or the nearest row); the simulated clock adds the row's recorded cost and the
    peer's ask + tell time (time.perf_counter)."""
    tr = Trace()
    best, spent, seen = math.inf, 0.0, set()
    for _ in range(budget):
        t0 = time.perf_counter()
        coords = peer.ask()
        dt = time.perf_counter() - t0
        if coords is None:  # the peer has nothing left to propose
            break
        i, exact = table.lookup(coords)
        row = table.rows[i]
        tr.out_of_table += not exact
        tr.repeats += i in seen
        seen.add(i)
        t0 = time.perf_counter()
        peer.tell(row.ok, row.objective)
        dt += time.perf_counter() - t0
        if row.ok:
            best = min(best, row.objective)
        else:
            tr.failures += 1
        spent += row.cost + dt
        tr.optimiser_s += dt
        tr.best.append(best)
        tr.seconds.append(spent)
    return tr


def evals_to_5pct(trace: Trace, optimum: float, budget: int) -> int:
    """The first evaluation (1-based) whose best-so-far is within 5% of the optimum, or
    budget + 1 when none is."""
    for k, b in enumerate(trace.best, start=1):
        if b <= optimum * 1.05 + 1e-300:
            return k
    return budget + 1


def best_at(trace: Trace, k: int) -> float:
    """The best-so-far after k evaluations (the last one when the search stopped early)."""
    if not trace.best:
        return math.inf
    return trace.best[min(k, len(trace.best)) - 1]


def summarise(trace: Trace, optimum: float, budget: int, checkpoints) -> dict:
    """The per-seed numbers kept in peers.json."""
    k = evals_to_5pct(trace, optimum, budget)
    secs = trace.seconds[k - 1] if k <= len(trace.seconds) else math.inf
    return {
        "evals_to_5pct": k,
        "seconds_to_5pct": secs,
        "best_at": {str(c): best_at(trace, c) for c in checkpoints},
        "failures": trace.failures,
        "repeats": trace.repeats,
        "out_of_table": trace.out_of_table,
        "evaluations": len(trace.best),
        "optimiser_s": trace.optimiser_s,
        "best": [round(b, 9) if math.isfinite(b) else None for b in trace.best],
    }
