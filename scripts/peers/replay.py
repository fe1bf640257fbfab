"""Replays every peer (Optuna, SMAC3, OpenTuner) on every table over seeds and writes the
per-seed numbers to a JSON file (rewritten after each peer and table, so a long run can be
watched and a broken one keeps what it finished).

    python replay.py --root REPO --out results/search/peers.json \
        [--seeds 20] [--budget 200] [--tables gemm-table,tiles] [--peers optuna,smac3] \
        [--peer-seeds smac3=10]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import math
import os
import platform
import sys
import time

import tables

PEER_MODULES = {"optuna": "optuna_peer", "smac3": "smac_peer", "opentuner": "opentuner_peer",
                "ytopt": "ytopt_peer"}
CHECKPOINTS = (10, 25, 50, 100, 200)


def parse_args(argv):
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=".", help="the moldtune repository")
    ap.add_argument("--out", default="results/search/peers.json")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--tables", default=",".join(tables.ALL_TABLES))
    ap.add_argument("--peers", default=",".join(PEER_MODULES))
    ap.add_argument("--peer-seeds", default="", help="fewer seeds for a slow peer: smac3=10,...")
    ap.add_argument("--command", default="", help="the command line to record (run.sh's)")
    ap.add_argument("--add", action="store_true",
                    help="keep what --out holds (same budget): replay only --tables and --peers, with these seeds")
    ap.add_argument("--from-seed", type=int, default=0,
                    help="with --add: keep a table's peer's seeds below this one and replay only the rest "
                         "(to extend a slow peer's seed count; the peers are deterministic per seed, determinism.py)")
    return ap.parse_args(argv)


def versions(modules) -> dict:
    """The installed version of every package the peers use."""
    names = ["numpy", "scipy", "PyYAML"] + [p for m in modules for p in m.PACKAGES]
    return {n: importlib.metadata.version(n) for n in dict.fromkeys(names)}


def finite(x):
    """JSON has no infinity: None stands for it."""
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def run_peer(table, module, seeds: range, budget: int, log) -> list[dict]:
    """The searches of one peer on one table, one per seed: each seed's summary."""
    opt = table.optimum()
    out = []
    for seed in seeds:
        t0 = time.time()
        peer = module.Peer(table.space, seed, budget)
        try:
            trace = tables.replay(table, peer, budget)
        finally:
            peer.close()
        s = tables.summarise(trace, opt, budget, [c for c in CHECKPOINTS if c <= budget])
        s["seed"] = seed
        s["wall_s"] = time.time() - t0
        s["load1"] = os.getloadavg()[0]
        s["seconds_to_5pct"] = finite(s["seconds_to_5pct"])
        s["best_at"] = {k: finite(v) for k, v in s["best_at"].items()}
        out.append(s)
        log(
            f"{table.name} {module.NAME} seed {seed}: to5% {s['evals_to_5pct']} fails {s['failures']} "
            f"repeats {s['repeats']} out-of-table {s['out_of_table']} optimiser {s['optimiser_s']:.1f}s "
            f"wall {s['wall_s']:.1f}s load {s['load1']:.2f}"
        )
    return out


def kept_tables(out: str, doc: dict) -> dict:
    """`doc` with the tables and peers of the earlier `out` (--add): what is replayed now
    replaces its own entries (a table's peer, with the seeds given now), the rest is kept. The
    budget must be the same; the commands, replay and script times add up."""
    with open(out) as f:
        before = json.load(f)
    if before["budget"] != doc["budget"]:
        sys.exit(f"--add: {out} has budget {before['budget']}, this replay {doc['budget']}: replay every table")
    doc["tables"] = before["tables"]
    doc["peer_seeds"] = {**before["peer_seeds"], **doc["peer_seeds"]}
    doc["seeds"] = before["seeds"]
    if "determinism" in before:
        doc["determinism"] = before["determinism"]
    doc["command"] = f"{before['command']}, then {doc['command']} --add"
    doc["wall_before_s"] = before.get("wall_s", 0.0)
    doc["script_before_s"] = before.get("script_s", 0.0)
    doc["load_at_start"] = before["load_at_start"]
    return doc


def kept_seeds(before: dict, from_seed: int) -> dict:
    """What --from-seed keeps of a table's peer: its seeds 0 .. from_seed - 1 (all of them
    present, or the replay would leave a hole) and the wall time they took."""
    seeds = [s for s in before.get("seeds", []) if s["seed"] < from_seed]
    if [s["seed"] for s in seeds] != list(range(from_seed)):
        sys.exit(f"--from-seed {from_seed}: the earlier replay lacks some of seeds 0..{from_seed - 1}")
    return {"seeds": seeds, "wall_s": sum(s["wall_s"] for s in seeds)}


def main(argv=None):
    a = parse_args(argv)
    names = [t for t in a.tables.split(",") if t]
    peers = [p for p in a.peers.split(",") if p]
    peer_seeds = dict(kv.split("=") for kv in a.peer_seeds.split(",") if kv)
    modules = {p: importlib.import_module(PEER_MODULES[p]) for p in peers}

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    doc = {
        "command": a.command or " ".join(sys.argv),
        "python": f"{os.path.relpath(sys.executable, a.root)} ({platform.python_version()})",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "budget": a.budget,
        "seeds": a.seeds,
        "peer_seeds": {p: int(peer_seeds.get(p, a.seeds)) for p in peers},
        "checkpoints": [c for c in CHECKPOINTS if c <= a.budget],
        "versions": versions(modules.values()),
        "failures": {p: m.FAILURES for p, m in modules.items()},
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_at_start": os.getloadavg(),
        "tables": {},
    }
    t_start = time.time()
    out = os.path.join(a.root, a.out)
    if a.add:
        doc = kept_tables(out, doc)
    elif a.from_seed:
        sys.exit("--from-seed extends an earlier replay: give --add")
    for name in names:
        table = tables.load(a.root, name)
        entry = {
            "source": table.source,
            "description": table.describe(),
            "optimum": table.optimum(),
            "exhaustive": table.exhaustive,
            "peers": doc["tables"].get(name, {}).get("peers", {}),
        }
        doc["tables"][name] = entry
        for p, m in modules.items():
            t0 = time.time()
            kept = kept_seeds(entry["peers"].get(p, {}), a.from_seed)
            first = len(kept["seeds"])
            new = run_peer(table, m, range(first, doc["peer_seeds"][p]), a.budget, log)
            entry["peers"][p] = {"seeds": kept["seeds"] + new, "wall_s": kept["wall_s"] + time.time() - t0}
            doc["wall_s"] = doc.get("wall_before_s", 0.0) + time.time() - t_start
            doc["load_at_end"] = os.getloadavg()
            with open(out + ".tmp", "w") as f:
                json.dump(doc, f, separators=(",", ":"))
            os.replace(out + ".tmp", out)
            log(f"{name} {p}: {entry['peers'][p]['wall_s']:.0f}s")
    log(f"all done in {time.time() - t_start:.0f}s -> {out}")


if __name__ == "__main__":
    main()
