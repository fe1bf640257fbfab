#!/usr/bin/env python3
"""The house's import rules, checked over `src/` (issue 27).

Reads every `crate::…` path in every file of src/ (use lines and inline paths, tests
excluded), maps it to the file it names, and reports:
  - imports against the data's path between folders (the rules below);
  - circles between files of one folder (strongly connected components of its import graph);
  - files over 600 lines, and functions over 60 (tests included).
Exits 1 when a rule is broken: scripts/test.sh runs it.

    python3 scripts/layering.py [--quiet]
"""

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
# (importer folder, imported folder): imports that go against the data's path.
FORBIDDEN = [
    ("run", "report"),
    ("report", "mctree"),
    ("problem", "evaluate"),
    ("problem", "run"),
    ("evaluate", "run"),
    ("search", "run"),
]
MAX_LINES = 600
MAX_FN_LINES = 60


def module_files():
    """Module path (tuple) -> file."""
    out = {}
    for f in SRC.rglob("*.rs"):
        rel = f.relative_to(SRC).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts in (["lib"], ["main"]):
            parts = []
        out[tuple(parts)] = f
    return out


def code_of(f):
    """The file's text without its `#[cfg(test)]` module and comments."""
    text = f.read_text()
    cut = text.find("#[cfg(test)]\nmod tests")
    if cut >= 0:
        text = text[:cut]
    return re.sub(r"//[^\n]*", "", text)


def paths_in(text):
    """Every `crate::a::b::…` path, `use crate::a::{b, c::d}` groups expanded one level."""
    out = []
    for m in re.finditer(r"crate::([A-Za-z_][\w:]*)(::\{([^}]*)\})?", text):
        head = [p for p in m.group(1).split("::") if p]
        if m.group(3) is None:
            out.append(head)
        else:
            for item in m.group(3).split(","):
                item = item.strip().split(" as ")[0]
                if item and item != "self":
                    out.append(head + [p for p in item.split("::") if p and p != "{"])
                elif item == "self":
                    out.append(head)
    return out


def target(path, modules):
    """The longest module prefix of `path` that is a file."""
    for k in range(len(path), 0, -1):
        if tuple(path[:k]) in modules:
            return tuple(path[:k])
    return None


def sccs(graph):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def long_functions(files):
    """(lines, file, name) of every function longer than MAX_FN_LINES: from its `fn` line to
    the closing brace at its own indentation."""
    out = []
    for f in files:
        lines = f.read_text().split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"^(\s*)(pub(\([^)]*\))? )?(const )?(async )?fn (\w+)", line)
            if not m:
                continue
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
                j += 1
            if j == len(lines) or lines[j].rstrip().endswith(";"):
                continue
            k = j + 1
            while k < len(lines) and lines[k] != m.group(1) + "}":
                k += 1
            if k - i + 1 > MAX_FN_LINES:
                out.append((k - i + 1, f, m.group(6)))
    return sorted(out, key=lambda t: (-t[0], str(t[1])))


def main():
    modules = module_files()
    edges = {}
    for mod, f in modules.items():
        deps = set()
        for p in paths_in(code_of(f)):
            t = target(p, modules)
            if t is not None and t != mod and t[: len(mod)] != mod:
                deps.add(t)
        edges[mod] = deps
    broken = []
    for mod, deps in edges.items():
        for t in deps:
            if mod and t and (mod[0], t[0]) in FORBIDDEN:
                broken.append(f"{'/'.join(mod)} imports {'/'.join(t)} ({mod[0]}/ -> {t[0]}/)")
    folders = {m[:-1] for m in modules if m}
    for folder in sorted(folders):
        inner = {m: {t for t in edges[m] if t[:-1] == folder and len(t) == len(m)}
                 for m in modules if m[:-1] == folder and m}
        for comp in sccs(inner):
            broken.append("circle in " + ("/".join(folder) or "src") + ": "
                          + " -> ".join(m[-1] for m in comp))
    long = [(len(f.read_text().splitlines()), f) for f in modules.values()]
    for n, f in sorted(long, reverse=True):
        if n > MAX_LINES:
            broken.append(f"{f.relative_to(SRC.parent)}: {n} lines (over {MAX_LINES})")
    for n, f, name in long_functions(modules.values()):
        broken.append(f"{f.relative_to(SRC.parent)}: fn {name} has {n} lines (over {MAX_FN_LINES})")
    for b in broken:
        print(b)
    if "--quiet" not in sys.argv:
        print(f"{len(broken)} finding(s) over {len(modules)} files", file=sys.stderr)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
