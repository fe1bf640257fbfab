#!/usr/bin/env python3
"""Rewrites run directories recorded by an older moldtune so that they name no directory of
the machine that made them: run.json/results.json `problem` becomes relative to the run
directory, and command-line arguments under the checkout become relative to it.

Other strings (causes, report paths) lose the checkout's prefix. A plain JSON file given
instead of a run directory gets that last treatment only.

Usage: python3 scripts/portable_paths.py CHECKOUT_ROOT RUN_DIR_OR_JSON... (idempotent)."""
import json
import os
import sys


def rel_arg(arg, root):
    if os.path.isabs(arg) and (arg == root or arg.startswith(root + os.sep)):
        return os.path.relpath(arg, root)
    if os.path.basename(arg) == "moldtune" and os.path.isabs(arg):
        return "moldtune"
    return arg


def strip_root(v, root):
    """Every other string: paths under the checkout become relative to it."""
    if isinstance(v, str):
        return v.replace(root + os.sep, "")
    if isinstance(v, list):
        return [strip_root(x, root) for x in v]
    if isinstance(v, dict):
        return {k: strip_root(x, root) for k, x in v.items()}
    return v


def fix_meta(meta, root, run_dir):
    if os.path.isabs(meta.get("problem", "")):
        meta["problem"] = os.path.relpath(meta["problem"], run_dir)
    meta["command_line"] = [rel_arg(a, root) for a in meta.get("command_line", [])]


def main():
    root = os.path.realpath(sys.argv[1])
    for d in sys.argv[2:]:
        if d.endswith(".json"):
            with open(d) as f:
                v = strip_root(json.load(f), root)
            with open(d, "w") as f:
                json.dump(v, f, indent=1)
                f.write("\n")
            continue
        run_dir = os.path.realpath(d)
        for name, get in (("run.json", lambda v: v), ("results.json", lambda v: v["run"])):
            path = os.path.join(run_dir, name)
            if not os.path.exists(path):
                continue
            with open(path) as f:
                v = json.load(f)
            fix_meta(get(v), root, run_dir)
            v = strip_root(v, root)
            with open(path, "w") as f:
                json.dump(v, f, indent=2)
                f.write("\n")


if __name__ == "__main__":
    main()
