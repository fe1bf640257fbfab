#!/usr/bin/env python3
"""The house's import rules, checked over `src/` (issues 27, 40 and 56).

Every path a file names is resolved to the file that defines it, whatever its form:
`use` trees (nested groups, `self`, `as`, globs) and inline paths, starting at `crate::`,
`super::` (any number), `self::`, a child module or a name an earlier `use` brought in; a
path through a re-export (`pub use`, globs included) is followed to where the item is
defined, so an import cannot be laundered through a `mod.rs`. A macro invocation is
resolved like an import: `name!(...)` to the file whose `macro_rules!` defines it (its
`#[macro_export]` definition if any: such macros live at the crate root, `crate::name!`,
and that path is followed to the defining file too). Test modules (`#[cfg(test)]`) are left
out of the import graph. Then it reports:
  - an import against the stage order below (`STAGES`: the one declaration of which
    top-level folder may use which; `FORBIDDEN`: the finer rules between sub-folders);
  - a circle anywhere in the crate (strongly connected components of the file graph, across
    folders and depths, `mod.rs` files included);
  - `use super::*` outside a test module, and a re-export (`pub use`) outside a folder's module
    file or of something outside its own folder (one name, one address);
  - a `#[path = "..."]` module outside a test module: refused outright rather than followed,
    so that a file's place is its module path;
  - process-wide state outside `process/`, whose signal handling needs it (front ends and
    settings are passed as values): `static mut`, `thread_local!`, a `static` of a lock, a
    `OnceLock`/`OnceCell`, a cell, an `AtomicPtr` or an `AtomicBool` flag, also behind a
    `type` alias or a `use ... as` (see `STATE_TYPES`: integer atomics are counters and
    allowed; a `LazyLock` of a constant — a compiled regex or template — and a `Once` are
    not state);
  - run.json read anywhere but the door, `run/dir.rs` (a statement that names it — `RUN_JSON`,
    the literal `"run.json"`, or a `const`/`static`/`use ... as` holding either — and reads or
    opens it; `run/meta.rs` writes it);
  - an inherent `impl` block of a type outside its home: the file defining the `struct`,
    `enum` or `union` (its test modules included) and the folder of that file's module
    (src/a/b.rs: src/a/b/; src/a/mod.rs: src/a/), whatever the impl's generics or path
    (`impl<'a> Ctx<'a>`, `impl crate::a::Foo`); trait impls are exempt. A name two modules
    define is the one the impl's `use` or path reaches, else the file's own, else any;
  - files of `src/` over 600 lines, and functions over 60 in `src/` and `tests/` (any
    qualifiers: `const`, `async`, `unsafe`, `extern "C"`).
Exits 1 when a rule is broken: scripts/test.sh runs it; scripts/test_layering.py plants an
import of each kind and checks it is caught.

    python3 scripts/layering.py [--quiet] [--src DIR]
"""

import re
import sys
from pathlib import Path

# The data's path, declared once. Each top-level module of src/ and what it may import
# (besides itself). A module not named here may be imported by everyone and imports nothing
# named here (the leaves: error, rng, stats, number, scratch, host).
LEAVES = {"error", "rng", "stats", "number", "scratch", "host"}
STAGES = {
    "process": set(),
    # the problem is data: it runs nothing, so it imports nothing of process/ either
    "problem": set(),
    "evaluate": {"problem", "process"},
    "search": {"problem", "evaluate"},
    "run": {"problem", "evaluate", "search", "process"},
    "report": {"problem", "evaluate", "search", "run", "process"},
    # the second front end, onto stages 2-4 (reports read its run directories; it never reads them)
    "mctree": {"problem", "evaluate", "search", "run", "process"},
    # the third front end, onto stage 2 and the run's log
    "check": {"problem", "evaluate", "run", "report", "process"},
    # the front door: everything
    "cli": {"problem", "evaluate", "search", "run", "report", "mctree", "check", "process"},
}
# Finer rules, below the top-level folders: (importer, imported) module-path prefixes that
# STAGES allows but the code keeps apart. The Slurm farm is the run's business: reports and
# mctree reach runs through run/dir.rs and the driver, never through run/slurm/; a job runs
# what the driver hands it and never chooses a configuration itself.
FORBIDDEN = [
    (("report",), ("run", "slurm")),
    (("mctree",), ("run", "slurm")),
    (("run", "slurm"), ("search",)),
]
# The folders whose files may hold process-wide state, and the types that make a `static`
# state: a lock, a cell set once, a pointer, a flag. Integer atomics (`AtomicU64`,
# `AtomicUsize`, ...) are counters, allowed anywhere (a fresh nonce, a unique name: nothing
# read back as a setting); `AtomicBool` is a flag — a setting or a cancellation, which are
# passed as values (an `Arc<AtomicBool>` is fine; a `static` one is not). `std::sync::Once`
# (a side effect done once) and a `LazyLock` of a constant are not state. A `type` alias or a
# `use ... as` renaming one of these is followed (crate-wide, by name); `static mut` is state
# whatever its type.
GLOBAL_STATE = {"process"}
STATE_TYPES = {"Mutex", "RwLock", "OnceLock", "OnceCell", "AtomicPtr", "AtomicBool", "Cell", "RefCell", "UnsafeCell",
               "SyncUnsafeCell", "Condvar"}
STATIC = re.compile(r"\bstatic\s+(mut\s+|ref\s+)?(\w+)\s*:")
# The one reader of run.json, and its writer; a string literal naming it (`"run.json"`,
# `"run/run.json"`) counts as the constant, and so does a `const`/`static` holding either or
# a `use ... as` renaming one.
RUN_JSON_DOOR = {("run", "dir"), ("run", "meta")}
RUN_JSON_LITERAL = re.compile(r"(?:.*/)?run\.json")
READS = re.compile(r"\b(?:read|read_to_string|open|from_reader|from_slice)\b")
MAX_LINES = 600
MAX_FN_LINES = 60
KEYWORDS = {"crate", "super", "self"}
ITEM = re.compile(r"\b(?:fn|struct|enum|trait|type|const|static|union|mod|macro_rules!)\s+(\w+)")


def literal(content):
    """What a string literal is stripped to: `""`, or `"run.json"` when it names that file."""
    return '"run.json"' if RUN_JSON_LITERAL.fullmatch(content) else '""'


def strip(text):
    """Comments, string and char literals removed (their line breaks kept; a literal naming
    run.json is kept as `"run.json"`)."""
    out, i, n = [], 0, len(text)
    raw = re.compile(r'b?r(#*)"')
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, k = 1, i + 2
            while k < n and depth:
                if text.startswith("/*", k):
                    depth, k = depth + 1, k + 2
                elif text.startswith("*/", k):
                    depth, k = depth - 1, k + 2
                else:
                    k += 1
            out.append("\n" * text.count("\n", i, k))
            i = k
        elif (m := raw.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find('"' + m.group(1), m.end())
            k = n if end < 0 else end + 1 + len(m.group(1))
            out.append(literal(text[m.end():end]) + "\n" * text.count("\n", i, k))
            i = k
        elif c == '"':
            k = i + 1
            while k < n and text[k] != '"':
                k += 2 if text[k] == "\\" else 1
            out.append(literal(text[i + 1:k]) + "\n" * text.count("\n", i, k))
            i = k + 1
        elif c == "'" and (m := re.match(r"'(\\.[^']*|[^'\\])'", text[i:i + 12])):
            i += m.end()
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_tests(code):
    """`#[cfg(test)]` items (a module's braces or an item up to its `;`) removed."""
    while (k := code.find("#[cfg(test)]")) >= 0:
        j = k + len("#[cfg(test)]")
        while j < len(code) and code[j] not in "{;":
            j += 1
        if j < len(code) and code[j] == "{":
            depth = 0
            while j < len(code):
                depth += {"{": 1, "}": -1}.get(code[j], 0)
                j += 1
                if depth == 0:
                    break
        code = code[:k] + code[j + 1:]
    return code


def use_tree(text):
    """`a::{b, c::d as e, f::*}` -> [(segments, alias or None, glob)]."""
    tokens = re.findall(r"::|[{},*]|\w+", text)
    pos = [0]

    def tree(prefix):
        out = []
        while pos[0] < len(tokens):
            t = tokens[pos[0]]
            if t == "{":
                pos[0] += 1
                while tokens[pos[0]] != "}":
                    out += tree(list(prefix))
                    if tokens[pos[0]] == ",":
                        pos[0] += 1
                pos[0] += 1
                return out
            if t == "*":
                pos[0] += 1
                return [(prefix, None, True)]
            if t == "::":
                pos[0] += 1
                continue
            if t in (",", "}"):
                return [(prefix, None, False)] if prefix else []
            pos[0] += 1
            if t == "as":
                alias = tokens[pos[0]]
                pos[0] += 1
                return [(prefix, alias, False)]
            if t == "self" and prefix:
                continue
            prefix = prefix + [t]
        return [(prefix, None, False)] if prefix else []

    return tree([])


class Module:
    def __init__(self, path, file, text):
        self.path, self.file = path, file
        full = self.raw = strip(text)
        self.code = without_tests(full)
        self.children = set(re.findall(r"\bmod\s+(\w+)\s*;", full))
        self.items = set(ITEM.findall(self.code)) | self.children
        self.macros = set(re.findall(r"\bmacro_rules!\s*(\w+)", self.code))
        self.exported_macros = set(re.findall(r"#\[macro_export[^\]]*\](?:\s*#\[[^\]]*\])*\s*macro_rules!\s*(\w+)",
                                              self.code))
        self.uses = []  # (segments, alias, glob, public, line)
        for m in re.finditer(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", self.code):
            for segs, alias, glob in use_tree(m.group(2)):
                self.uses.append((segs, alias, glob, bool(m.group(1)), line_of(self.code, m.start())))
        self.is_mod = file.name in ("mod.rs", "lib.rs", "main.rs") or file.with_suffix("").is_dir()


class Crate:
    def __init__(self, src):
        self.src = src
        self.modules = {}
        self.alias_cache = {}
        self.files = sorted(src.rglob("*.rs"))
        for f in self.files:
            parts = list(f.relative_to(src).with_suffix("").parts)
            if parts[-1] == "mod":
                parts = parts[:-1]
            if parts in (["lib"], ["main"]):
                if parts == ["main"]:
                    continue  # the binary: a user of the library, not part of it
                parts = []
            self.modules[tuple(parts)] = Module(tuple(parts), f, f.read_text())
        for path in [p for p in self.modules if p and p[-1] in self.test_children(p[:-1])]:
            for sub in [q for q in self.modules if q[: len(path)] == path]:
                del self.modules[sub]  # a test module's own file: not part of the import graph
        # Macros: where each is defined; a `#[macro_export]` one lives at the crate root
        # (`crate::name!`), whichever file defines it.
        self.macro_homes, self.exported_macros = {}, {}
        for mod, m in self.modules.items():
            for name in m.macros:
                self.macro_homes.setdefault(name, set()).add(mod)
            for name in m.exported_macros:
                self.exported_macros[name] = mod

    def test_children(self, parent):
        m = self.modules.get(parent)
        return set(re.findall(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+(\w+)\s*;", m.raw)) if m else set()

    def start(self, mod, segs, aliases):
        """Where a path's first segment points: an absolute module path and the rest."""
        head, rest = segs[0], segs[1:]
        if head == "crate":
            return (), rest
        if head == "self":
            return mod, rest
        if head == "super":
            base = mod
            while segs and segs[0] == "super":
                base, segs = base[:-1], segs[1:]
            return base, segs
        if head in self.modules[mod].children:
            return mod + (head,), rest
        if head in aliases:
            return aliases[head], rest
        return None, None

    def resolve(self, mod, segs, aliases, seen=()):
        """The module that defines what `segs` (written in `mod`) names, re-exports followed;
        (module, True) when the path ends at a module itself."""
        base, rest = self.start(mod, segs, aliases)
        if base is None or base not in self.modules:
            return None, False
        for seg in rest:
            if base + (seg,) in self.modules:
                base = base + (seg,)
                continue
            return self.item(base, seg, seen), False
        return base, True

    def item(self, mod, name, seen):
        """The module defining `name` as seen from module `mod` (through its `pub use`s)."""
        if (mod, name) in seen or len(seen) > 20:
            return mod
        seen = seen + ((mod, name),)
        m = self.modules[mod]
        if name in m.items:
            return mod
        if not mod and name in self.exported_macros:
            return self.exported_macros[name]
        for segs, alias, glob, public, _ in m.uses:
            if public and not glob and (alias or segs[-1]) == name:
                target, _ = self.resolve(mod, segs, self.aliases(mod), seen)
                return target or mod
        for segs, alias, glob, public, _ in m.uses:
            if public and glob:
                target, is_mod = self.resolve(mod, segs, self.aliases(mod), seen)
                if target is not None and is_mod and name in self.exported(target):
                    return self.item(target, name, seen)
        return mod

    def exported(self, mod):
        """The names module `mod` defines or re-exports (what a glob of it brings in)."""
        m = self.modules[mod]
        names = set(m.items)
        names |= {alias or segs[-1] for segs, alias, glob, public, _ in m.uses if public and not glob and segs}
        return names

    def aliases(self, mod):
        """Names the module's `use`s bring in that are modules of this crate (worked out once)."""
        if mod in self.alias_cache:
            return self.alias_cache[mod]
        out = self.alias_cache[mod] = {}
        for segs, alias, glob, public, _ in self.modules[mod].uses:
            if glob or not segs:
                continue
            base, rest = self.start(mod, segs, out)
            if base is None:
                continue
            target = base + tuple(rest)
            if target in self.modules:
                out[alias or segs[-1]] = target
        return out

    def edges(self):
        """module -> {imported module: first line}; plus the findings about `use` forms."""
        graph, findings = {}, []
        for mod, m in self.modules.items():
            aliases = self.aliases(mod)
            deps = self.use_edges(mod, aliases, findings)
            for target, line in self.path_edges(mod, aliases).items():
                deps.setdefault(target, line)
            for target, line in self.macro_edges(mod).items():
                deps.setdefault(target, line)
            deps.pop(mod, None)
            graph[mod] = deps
        return graph, findings

    def use_edges(self, mod, aliases, findings):
        """What the module's `use` lines import; the findings about their forms."""
        m, deps = self.modules[mod], {}
        for segs, alias, glob, public, line in m.uses:
            where = f"{m.file.relative_to(self.src.parent)}:{line}"
            if glob and segs == ["super"]:
                findings.append(f"{where}: `use super::*` outside a test module")
            if public and not m.is_mod:
                findings.append(f"{where}: re-export `pub use {'::'.join(segs)}` outside a folder's module")
            target, is_mod = self.resolve(mod, segs, aliases)
            if target is None:
                continue
            if public and m.is_mod and target[: len(mod)] != mod:
                findings.append(f"{where}: re-export of {'/'.join(target)} from outside {'/'.join(mod) or 'src'}/"
                                " (one name, one address)")
            if public or (is_mod and not glob):
                continue  # a re-export is followed where it is used; a module name by its paths
            deps.setdefault(target, line)
        return deps

    def path_edges(self, mod, aliases):
        """What the module's code names by a path (`crate::a::f()`, `kept::read()`), `use`
        lines left out."""
        m, deps = self.modules[mod], {}
        body = re.sub(r"\b(pub(?:\([^)]*\))?\s+)?use\s+[^;]+;", lambda u: "\n" * u.group(0).count("\n"), m.code)
        for pm in re.finditer(r"\b((?:crate|super|self|[a-z_]\w*)(?:::\w+)+)", body):
            segs = pm.group(1).split("::")
            if segs[0] not in KEYWORDS and segs[0] not in m.children and segs[0] not in aliases:
                continue
            target, _ = self.resolve(mod, segs, aliases)
            if target is not None:
                deps.setdefault(target, line_of(body, pm.start()))
        return deps


    def macro_edges(self, mod):
        """What the module's bare macro invocations (`name!(...)`, `name![...]`, `name! {...}`)
        name: a macro of this crate defined elsewhere (its `#[macro_export]` definition if it
        has one), unless the module defines one of that name itself. Paths (`crate::name!`) are
        resolved with the other paths."""
        m, deps = self.modules[mod], {}
        for mm in re.finditer(r"(?<![\w:$])(\w+)!\s*[(\[{]", m.code):
            name = mm.group(1)
            if name in m.macros or name not in self.macro_homes:
                continue
            homes = {self.exported_macros[name]} if name in self.exported_macros else self.macro_homes[name]
            for home in sorted(homes):
                deps.setdefault(home, line_of(m.code, mm.start()))
        return deps


def line_of(text, k):
    """The line (1-based) of offset `k` in `text`."""
    return text.count("\n", 0, k) + 1


def renamed(crate, names, defines):
    """`names` grown, crate-wide and by name, with every `const`/`static`/`type` that
    `defines` (a regex with the item's name as group 1, its definition as group 2) shows
    holding one of them, and every `use ... as` renaming one."""
    names = set(names)
    while True:
        pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b|\"run\.json\"")
        more = set()
        for m in crate.modules.values():
            more |= {d.group(1) for d in defines.finditer(m.code) if pattern.search(d.group(2))}
            more |= {alias for segs, alias, _, _, _ in m.uses if alias and segs and segs[-1] in names}
        if more <= names:
            return names, pattern
        names |= more


def static_type(code, k):
    """The type a `static` declares, from offset `k` (after its colon) to its `=` or to a `;`
    outside brackets."""
    depth, j = 0, k
    while j < len(code) and code[j] != "=" and not (code[j] == ";" and depth == 0):
        depth += {"[": 1, "(": 1, "<": 1, "]": -1, ")": -1, ">": -1}.get(code[j], 0)
        j += 1
    return code[k:j]


def content_findings(crate):
    """run.json read past the door; process-wide state outside process/; `#[path]`."""
    out = []
    _, run_json = renamed(crate, {"RUN_JSON"}, re.compile(r"\b(?:const|static)\s+(\w+)\s*:([^;]*);"))
    _, state = renamed(crate, STATE_TYPES, re.compile(r"\btype\s+(\w+)[^=;]*=([^;]*);"))
    for mod, m in crate.modules.items():
        where = lambda k: f"{m.file.relative_to(crate.src.parent)}:{line_of(m.code, k)}"
        if mod not in RUN_JSON_DOOR:
            for rm in run_json.finditer(m.code):
                start = max(m.code.rfind(c, 0, rm.start()) for c in ";{}") + 1
                end = m.code.find(";", rm.end())
                if READS.search(m.code[start:end if end >= 0 else len(m.code)]):
                    out.append(f"{where(rm.start())}: run.json read outside run/dir.rs")
        if mod[:1] and mod[0] not in GLOBAL_STATE:
            for sm in STATIC.finditer(m.code):
                if (sm.group(1) or "").strip() == "mut" or state.search(static_type(m.code, sm.end())):
                    out.append(f"{where(sm.start())}: process-wide state outside process/ (static {sm.group(2)})")
            out += [f"{where(tm.start())}: process-wide state outside process/ (thread_local!)"
                    for tm in re.finditer(r"\bthread_local!", m.code)]
        for pm in re.finditer(r"#\[\s*path\s*=", m.code):
            out.append(f"{where(pm.start())}: a `#[path]` module outside a test module: a module's file is where its"
                       " path says (src/a/b.rs is crate::a::b), so the stage rules can see it")
    return out


TYPE_DEF = re.compile(r"\b(?:struct|enum|union)\s+(\w+)")


def inherent_impls(code):
    """(offset, self type's path segments) of each inherent `impl` block in stripped `code`:
    trait impls (`impl Trait for T`) and `impl Trait` in a type's position are left out."""
    for m in re.finditer(r"\bimpl\b", code):
        before = re.sub(r"\b(?:unsafe|default)\s*$", "", code[max(0, m.start() - 200):m.start()]).rstrip()
        if before and before[-1] not in ";{}]":
            continue  # `-> impl Iterator`, `x: impl Fn()`: a type, not a block
        j = re.compile(r"\s*").match(code, m.end()).end()
        if code.startswith("<", j):  # the generics: `<'a, F: Fn(&str) -> Option<usize>>`
            depth = 0
            for j in range(j, len(code)):
                depth += {"<": 1, ">": 0 if code[j - 1] == "-" else -1}.get(code[j], 0)
                if depth == 0:
                    break
            j += 1
        header = re.split(r"\bwhere\b|\{", code[j:], maxsplit=1)[0]
        path = re.match(r"\s*((?:\w+\s*::\s*)*\w+)", header)
        if path and not re.search(r"\bfor\b(?!\s*<)", header) and path.group(1) != "dyn":
            yield m.start(), re.split(r"\s*::\s*", path.group(1))


def impl_definitions(crate, f, segs, defs):
    """The type an impl block in file `f` names by `segs`, and the files that may define it:
    the one its `use` imports or its path reach, else `f` itself, else every file defining a
    type of that name (`defs`: name -> files)."""
    mod = next((p for p, m in crate.modules.items() if m.file == f), None)
    if mod is not None:
        if len(segs) == 1:
            uses = crate.modules[mod].uses
            segs = next((s for s, alias, glob, _, _ in uses if s and not glob and (alias or s[-1]) == segs[0]), segs)
        target, _ = crate.resolve(mod, segs, crate.aliases(mod)) if len(segs) > 1 else (None, False)
        if target is not None and crate.modules[target].file in defs.get(segs[-1], ()):
            return segs[-1], [crate.modules[target].file]
    files = defs.get(segs[-1], [])
    return segs[-1], [f] if f in files else files


def home(src, f):
    """Where a type defined in file `f` may have inherent methods: `f`, and the folder of its
    module (src/a/b.rs: src/a/b/; src/a/mod.rs: src/a/); the binary's main.rs only itself."""
    if f.name in ("mod.rs", "lib.rs"):
        return f.parent
    return None if f == src / "main.rs" else f.with_suffix("")


def impl_findings(crate):
    """Inherent `impl` blocks outside the defining file of their type and its folder."""
    texts = {f: strip(f.read_text()) for f in crate.files}
    defs = {}
    for f, code in texts.items():
        for name in set(TYPE_DEF.findall(code)):
            defs.setdefault(name, []).append(f)
    rel = lambda f: f.relative_to(crate.src.parent)
    out = []
    for f, code in texts.items():
        for k, segs in inherent_impls(code):
            name, files = impl_definitions(crate, f, segs, defs)
            if not files or any(f == d or home(crate.src, d) in f.parents for d in files):
                continue  # not a struct, enum or union of src/ (an alias), or at home
            defined = ", ".join(str(rel(d)) for d in files)
            homes = "; ".join(f"{rel(d)}" + (f" or {rel(home(crate.src, d))}/" if home(crate.src, d) else "")
                              for d in files)
            out.append(f"{rel(f)}:{line_of(code, k)}: impl of `{name}` (defined in {defined}) outside its home {homes}")
    return out


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

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def stage_findings(crate, graph):
    out = []
    for mod, deps in graph.items():
        for t, line in deps.items():
            for a, b in FORBIDDEN:
                if mod[: len(a)] == a and t[: len(b)] == b:
                    f = crate.modules[mod].file.relative_to(crate.src.parent)
                    out.append(f"{f}:{line}: imports {'/'.join(t)} ({'/'.join(a)}/ may not use {'/'.join(b)}/)")
            if not mod or not t or mod[0] == t[0] or t[0] in LEAVES:
                continue
            allowed = STAGES.get(mod[0], set()) if mod[0] not in LEAVES else set()
            if t[0] not in allowed:
                f = crate.modules[mod].file.relative_to(crate.src.parent)
                out.append(f"{f}:{line}: imports {'/'.join(t)} ({mod[0]}/ may not use {t[0]}/)")
    return out


FN = re.compile(r'^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?'
                r'(?:extern(?:\s+"[^"]*")?\s+)?fn\s+(\w+)')


def long_functions(files):
    """(lines, file, name) of every function longer than MAX_FN_LINES: from its `fn` line to
    the closing brace at its own indentation, comments and literals stripped (a `}` at the
    start of a line of a raw string does not end it)."""
    out = []
    for f in files:
        lines = strip(f.read_text()).split("\n")
        for i, line in enumerate(lines):
            m = FN.match(line)
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
                out.append((k - i + 1, f, m.group(2)))
    return sorted(out, key=lambda t: (-t[0], str(t[1])))


def findings(src):
    crate = Crate(src)
    graph, out = crate.edges()
    out += stage_findings(crate, graph) + content_findings(crate) + impl_findings(crate)
    for comp in sccs({m: set(d) for m, d in graph.items()}):
        out.append("circle: " + " <-> ".join("/".join(m) or "lib" for m in comp))
    for n, f in sorted(((len(f.read_text().splitlines()), f) for f in crate.files), reverse=True):
        if n > MAX_LINES:
            out.append(f"{f.relative_to(src.parent)}: {n} lines (over {MAX_LINES})")
    tests = src.parent / "tests"
    for n, f, name in long_functions(crate.files + (sorted(tests.rglob("*.rs")) if tests.is_dir() else [])):
        out.append(f"{f.relative_to(src.parent)}: fn {name} has {n} lines (over {MAX_FN_LINES})")
    return crate, graph, out


def main():
    args = sys.argv[1:]
    src = Path(args[args.index("--src") + 1]) if "--src" in args else Path(__file__).resolve().parent.parent / "src"
    crate, graph, broken = findings(src)
    for b in broken:
        print(b)
    if "--quiet" not in args:
        edges = sum(len(d) for d in graph.values())
        print(f"{len(broken)} finding(s) over {len(crate.modules)} files, {edges} imports", file=sys.stderr)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
