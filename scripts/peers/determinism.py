"""Run to run: replays the same seeds of a peer twice on the same tables and says how many of
the searches repeated exactly (the same best-so-far after every evaluation), and how far the
median evaluations to within 5% moved when they did not. The verdict goes into peers.json
("determinism", one line per peer), which report.py prints in peers.md.

    python determinism.py --root REPO --json results/search/peers.json \
        --peer smac3 --tables tiles,lu-table --seeds 5
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import time

import tables
from replay import PEER_MODULES, run_peer


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=".", help="the moldtune repository")
    ap.add_argument("--json", default="results/search/peers.json")
    ap.add_argument("--peer", required=True, choices=sorted(PEER_MODULES))
    ap.add_argument("--tables", required=True, help="tables, separated by commas")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budget", type=int, default=200)
    return ap.parse_args(argv)


def median(searches: list[dict], budget: int) -> str:
    """The median evaluations to 5% of `searches` (one that never got there counts budget + 1,
    as tables.evals_to_5pct gives it)."""
    m = tables.quantile([s["evals_to_5pct"] for s in searches], 0.5)
    return f"> {budget}" if m > budget else f"{m:g}"


def compare(name: str, first: list[dict], second: list[dict], budget: int) -> tuple[int, str]:
    """How many seeds repeated their search exactly, and the table's line."""
    same = sum(a["best"] == b["best"] for a, b in zip(first, second))
    line = f"{name} {same} of {len(first)}"
    if same < len(first):
        k1, k2 = median(first, budget), median(second, budget)
        line += f" (median evaluations to 5%: {k1}, then {k2})"
    return same, line


def main(argv=None):
    a = parse_args(argv)
    module = importlib.import_module(PEER_MODULES[a.peer])

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    lines, same, total = [], 0, 0
    for name in [t for t in a.tables.split(",") if t]:
        table = tables.load(a.root, name)
        runs = [run_peer(table, module, a.seeds, a.budget, log) for _ in range(2)]
        k, line = compare(name, *runs, a.budget)
        same, total = same + k, total + a.seeds
        lines.append(line)
    verdict = (f"{same} of {total} searches identical (seeds 0–{a.seeds - 1}, budget {a.budget}, "
               f"each replayed twice: {'; '.join(lines)}; measured {time.strftime('%Y-%m-%d')})")
    path = os.path.join(a.root, a.json)
    with open(path) as f:
        doc = json.load(f)
    doc.setdefault("determinism", {})[a.peer] = verdict
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    os.replace(path + ".tmp", path)
    log(f"{a.peer}: {verdict}")


if __name__ == "__main__":
    main()
