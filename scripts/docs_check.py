#!/usr/bin/env python3
"""Runs every `moldtune` command that README.md and docs/*.md show, and checks its exit code
and, where the page gives it, its output; so the pages cannot drift from the tool.

  python3 scripts/docs_check.py [PAGE.md ...] [--keep] [--verbose]

The binary is $MOLDTUNE, else target/debug/moldtune. Standard library only. Exit 0 when every
command, file and link checks out; 1 otherwise, each failure shown with its page and line.

How a page shows a command (trycmd's conventions, in Markdown):

  ```console
  $ moldtune show polybench/syr2k/syr2k.yaml --set P3=33 2>&1
  ? 2
  error: `--set P3=33`: `33` is not a value of `P3`
  ...
  ```

- A fenced block whose info string starts with `console` holds commands, each on a line that
  starts with `$ `. A `\\` at the end of a line continues it on the next. The line is split into
  arguments as a POSIX shell splits words (quotes, backslashes, `#` comments); `NAME=value`
  words before `moldtune` set environment variables, and a final `2>&1` merges stderr into
  the output compared. Nothing else of a shell is there: no pipes, globs, `~` or `$VAR`.
  Every command of a console block must be a `moldtune` command.
- `? N` on the line right after the command: the exit code expected (else 0).
- The lines after that, up to the next `$ ` line or the block's end: the output expected on
  stdout (stdout and stderr with `2>&1`). None: the output is not compared. A line `...` matches
  any number of lines (none too), `[..]` within a line any text within that line (a time, a
  path, a number that varies). Trailing spaces and trailing empty lines are ignored.
- Words after `console` in the info string (GitHub shows none of them):
  `mock`: `--mock` is added to each `moldtune run|mctree|check|baseline` command (before a `--`
  that starts compiler arguments): a deterministic synthetic objective stands in for the
  compiled program's, so a search of any budget takes a fraction of a second; what is built,
  checked and timed for real is not exercised there (the test suite's end-to-end tests do that).
  `flags`: the command is not run; `--help` is added, and exit 0 shows that the subcommand,
  each flag and each value parse. For commands that need a Slurm cluster, hours, or this
  project's baselines on the machine they were recorded on. Such a block has no `? N` or output.
- `<!-- file: PATH -->` on the line before a fenced block (any language): the block's text is
  written to PATH (relative, in the page's scratch directory) before the page's next command.
- A fenced block whose info string is `usage` is a synopsis: every line starting with
  `moldtune SUB` begins an entry (the indented lines after it belong to it, `# …` comments
  aside), and every `--flag` the entry names must be one that `moldtune SUB --help` lists.
- Any other block is not run; a line in it that starts like a `moldtune` command is an error
  (it would not be checked): put it in a `console` block, or in prose.

Each page runs in a scratch directory of its own (removed after, unless `--keep`), its
commands and files in page order, so a later command can read what an earlier one wrote (a
run directory). The repository's inputs are copied there first — polybench/, tests/,
examples/, templates/, python/, and each results/NAME/ the page's commands name — so nothing
in the repository is written. `XDG_CACHE_HOME` points at a scratch cache shared by all pages
(`moldtune machine` measures once), `NO_COLOR=1` is set, and stdin is empty. Each command
may take at most 300 s.

Besides commands, relative links (`[text](path#anchor)`) of every page checked must name a
file of the repository, and an anchor a heading of that page (GitHub's slugs).
"""

import argparse
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOCKABLE = {"run", "mctree", "check", "baseline"}
INPUTS = ["polybench", "tests", "examples", "templates", "python"]
SUBCOMMANDS = ("run", "mctree", "importance", "replay", "measure", "show", "check", "baseline", "best",
               "serve", "ask", "tell", "report", "machine", "worker", "help")
# A line of a block that is not `console`/`usage` and looks like a command someone could copy.
LOOSE_COMMAND = re.compile(r"^\s*(\$\s+)?([\w./-]*/)?moldtune\s+(" + "|".join(SUBCOMMANDS) + r")\b")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*(.*)$")
FILE_MARK = re.compile(r"^\s*<!--\s*file:\s*(\S+)\s*-->\s*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
TIMEOUT_S = 300


@dataclass
class Command:
    page: Path
    line: int
    text: str
    argv: list
    env: dict
    merge: bool
    mode: str  # "run", "mock" or "flags"
    code: int = 0
    output: list = field(default_factory=list)  # None: not compared


@dataclass
class File:
    page: Path
    line: int
    path: str
    text: str


@dataclass
class Usage:
    page: Path
    line: int
    entries: list  # (line, subcommand, [flags])


class PageError(Exception):
    def __init__(self, page, line, msg):
        super().__init__(f"{rel(page)}:{line}: {msg}")


def rel(p):
    try:
        return str(Path(p).resolve().relative_to(ROOT))
    except ValueError:
        return str(p)


def fenced_blocks(text):
    """(line of the opening fence, info string, content lines, the line before the fence)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
        before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        start, body = i + 1, []
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close.group(2)[0] == fence[0] and len(close.group(2)) >= len(fence) \
                    and not close.group(3).strip():
                break
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            i += 1
        yield start, info, body, before
        i += 1


def parse_command(page, line, text, mode):
    try:
        words = shlex.split(text, comments=True)
    except ValueError as e:
        raise PageError(page, line, f"cannot split `{text}` into words: {e}")
    env = {}
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    merge = bool(words) and words[-1] == "2>&1"
    if merge:
        words.pop()
    if not words or words[0] != "moldtune":
        raise PageError(page, line, f"a console block runs `moldtune` commands only, not `{text}`")
    if any(w in ("|", ">", "<", "&&", ";", "2>", ">>") for w in words):
        raise PageError(page, line, f"`{text}`: no pipes or redirections besides a final `2>&1`")
    return Command(page, line, text, words, env, merge, mode)


def parse_console(page, start, info, body):
    words = info.split()
    mode = "run"
    for w in words[1:]:
        if w not in ("mock", "flags"):
            raise PageError(page, start - 1, f"unknown word `{w}` after `console` (mock, flags)")
        mode = w
    cmds, i = [], 0
    while i < len(body):
        if not body[i].strip():
            i += 1
            continue
        if not body[i].startswith("$ "):
            raise PageError(page, start + i, "a console block's text must follow a `$ ` command line")
        line, text = start + i, body[i][2:]
        while text.rstrip().endswith("\\") and i + 1 < len(body):
            i += 1
            text = text.rstrip()[:-1] + " " + body[i].strip()
        i += 1
        cmd = parse_command(page, line, text, mode)
        if i < len(body) and re.fullmatch(r"\? *\d+", body[i].strip()):
            cmd.code = int(body[i].strip()[1:])
            i += 1
        out = []
        while i < len(body) and not body[i].startswith("$ "):
            out.append(body[i].rstrip())
            i += 1
        while out and not out[-1]:
            out.pop()
        cmd.output = out or None
        if mode == "flags" and (cmd.code or cmd.output):
            raise PageError(page, line, "a `console flags` command is not run: it has no `? N` or output")
        cmds.append(cmd)
    return cmds


def parse_usage(page, start, body):
    entries = []
    for k, raw in enumerate(body):
        text = raw.split(" #", 1)[0] if not raw.lstrip().startswith("#") else ""
        if raw.startswith("moldtune "):
            sub = raw.split()[1]
            entries.append([start + k, sub, []])
        elif not entries:
            if text.strip():
                raise PageError(page, start + k, "a usage block starts with a `moldtune SUB` line")
            continue
        entries[-1][2] += re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)
    return Usage(page, start, entries)


def parse_page(page):
    """The page's steps in order: File, Command and Usage items."""
    steps = []
    for start, info, body, before in fenced_blocks(page.read_text()):
        mark = FILE_MARK.match(before)
        kind = info.split()[0] if info else ""
        if mark:
            steps.append(File(page, start, mark.group(1), "\n".join(body) + "\n"))
        elif kind == "console":
            steps += parse_console(page, start, info, body)
        elif kind == "usage":
            steps.append(parse_usage(page, start, body))
        else:
            for k, line in enumerate(body):
                if LOOSE_COMMAND.match(line):
                    raise PageError(page, start + k, "a `moldtune` command outside a `console` or `usage` "
                                    "block is never checked: put it in one, or in prose")
    return steps


def argv_for(cmd, binary):
    argv = [binary] + cmd.argv[1:]
    extra = {"mock": ["--mock"] if len(argv) > 1 and argv[1] in MOCKABLE else [], "flags": ["--help"]}
    extra = extra.get(cmd.mode, [])
    at = argv.index("--") if "--" in argv else len(argv)
    return argv[:at] + extra + argv[at:]


def lines_match(expected, actual):
    """Whether `actual` lines match `expected` ones, `...` standing for any lines and `[..]`
    for any text within a line."""
    def line_ok(pat, got):
        if "[..]" not in pat:
            return pat == got
        return re.fullmatch(".*".join(re.escape(p) for p in pat.split("[..]")), got) is not None
    n, m = len(expected), len(actual)
    # ok[i][j]: expected[i:] matches actual[j:].
    ok = [[False] * (m + 1) for _ in range(n + 1)]
    ok[n][m] = True
    for i in range(n - 1, -1, -1):
        for j in range(m, -1, -1):
            if expected[i] == "...":
                ok[i][j] = ok[i + 1][j] or (j < m and ok[i][j + 1])
            else:
                ok[i][j] = j < m and line_ok(expected[i], actual[j]) and ok[i + 1][j + 1]
    return ok[0][0]


def page_inputs(steps):
    """Repository paths to copy into a page's scratch directory."""
    names = list(INPUTS)
    for s in steps:
        if isinstance(s, Command):
            for w in s.argv:
                m = re.match(r"(?:\./)?results/([^/]+)", w)
                if m and (ROOT / "results" / m.group(1)).is_dir():
                    names.append(f"results/{m.group(1)}")
    return dict.fromkeys(names)


def populate(scratch, steps):
    ignore = shutil.ignore_patterns("target", "__pycache__", ".venv", "*.egg-info")
    for name in page_inputs(steps):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, scratch / name, symlinks=True, ignore=ignore)


def run_command(cmd, binary, scratch, env, verbose):
    argv = argv_for(cmd, binary)
    if verbose:
        print(f"  {rel(cmd.page)}:{cmd.line}: {shlex.join(['moldtune'] + argv[1:])}", flush=True)
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=scratch, env={**env, **cmd.env}, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT if cmd.merge else subprocess.PIPE,
                           timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"did not end within {TIMEOUT_S} s", time.monotonic() - t0
    took = time.monotonic() - t0
    out = p.stdout.decode("utf-8", "replace").split("\n")
    err = (p.stderr or b"").decode("utf-8", "replace")
    out = [line.rstrip() for line in out]
    while out and not out[-1]:
        out.pop()
    want = 0 if cmd.mode == "flags" else cmd.code
    problems = []
    if p.returncode != want:
        problems.append(f"exit code {p.returncode}, expected {want}")
    if cmd.output is not None and not lines_match(cmd.output, out):
        diff = difflib.unified_diff(cmd.output, out, "expected (the page)", "got", lineterm="", n=2)
        problems.append("output differs:\n" + "\n".join("    " + d for d in diff))
    if problems and err.strip():
        tail = err.strip().split("\n")[-15:]
        problems.append("stderr (last lines):\n" + "\n".join("    " + e for e in tail))
    if problems and cmd.output is None and out:
        problems.append("stdout (last lines):\n" + "\n".join("    " + o for o in out[-15:]))
    return "\n  ".join(problems) or None, took


def help_text(binary, sub, cache):
    if sub not in cache:
        p = subprocess.run([binary, sub, "--help"], capture_output=True, text=True, timeout=60)
        cache[sub] = p.stdout if p.returncode == 0 else None
    return cache[sub]


def check_usage(usage, binary, cache):
    problems = []
    for line, sub, flags in usage.entries:
        text = help_text(binary, sub, cache)
        if text is None:
            problems.append(f"{rel(usage.page)}:{line}: `moldtune {sub} --help` fails: no such subcommand?")
            continue
        for f in dict.fromkeys(flags):
            if not re.search(re.escape(f) + r"(?![\w-])", text):
                problems.append(f"{rel(usage.page)}:{line}: `moldtune {sub}` has no flag `{f}` "
                                f"(not in `moldtune {sub} --help`)")
    return problems


def slug(heading):
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return s.replace(" ", "-")


def anchors(page):
    seen, out = {}, set()
    in_fence = False
    for line in page.read_text().split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m and not in_fence:
            base = slug(m.group(1))
            k = seen.get(base, 0)
            seen[base] = k + 1
            out.add(base if k == 0 else f"{base}-{k}")
    return out


def check_links(page, cache):
    problems = []
    lines, in_fence = page.read_text().split("\n"), False
    for n, line in enumerate(lines):
        if FENCE.match(line):
            in_fence = not in_fence
            lines[n] = ""
        elif in_fence:
            lines[n] = ""
    text = "\n".join(lines)  # fenced blocks blanked, so a link's text may wrap across lines
    for m in LINK.finditer(text):
        target, n = m.group(1), text.count("\n", 0, m.start()) + 1
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page.resolve()
        if not dest.exists():
            problems.append(f"{rel(page)}:{n}: link to `{target}`: no file `{rel(dest)}`")
        elif anchor and dest.suffix == ".md":
            if dest not in cache:
                cache[dest] = anchors(dest)
            if anchor not in cache[dest]:
                problems.append(f"{rel(page)}:{n}: link to `{target}`: `{rel(dest)}` has no heading `#{anchor}`")
    return problems


def check_page(page, binary, env, keep, verbose, help_cache, anchor_cache):
    """Problems found on one page, its command count and the seconds they took."""
    try:
        steps = parse_page(page)
    except PageError as e:
        return [str(e)], 0, 0.0
    problems = check_links(page, anchor_cache)
    commands = [s for s in steps if isinstance(s, Command)]
    for s in steps:
        if isinstance(s, Usage):
            problems += check_usage(s, binary, help_cache)
    if not commands:
        return problems, 0, 0.0
    scratch = Path(tempfile.mkdtemp(prefix=f"moldtune-docs-{page.stem}."))
    total = 0.0
    try:
        populate(scratch, steps)
        for s in steps:
            if isinstance(s, File):
                dest = scratch / s.path
                if Path(s.path).is_absolute() or ".." in Path(s.path).parts:
                    problems.append(f"{rel(page)}:{s.line}: file `{s.path}`: a relative path inside the page's "
                                    "directory")
                    continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(s.text)
            elif isinstance(s, Command):
                problem, took = run_command(s, binary, scratch, env, verbose)
                total += took
                if problem:
                    problems.append(f"{rel(page)}:{s.line}: `{s.text}`\n  {problem}")
    finally:
        if keep:
            print(f"  (scratch directory of {rel(page)} kept: {scratch})")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return problems, len(commands), total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pages", nargs="*", type=Path, help="pages to check [default: README.md and docs/*.md]")
    ap.add_argument("--keep", action="store_true", help="keep each page's scratch directory")
    ap.add_argument("--verbose", "-v", action="store_true", help="print each command as it runs")
    args = ap.parse_args()
    binary = os.path.abspath(os.environ.get("MOLDTUNE") or ROOT / "target" / "debug" / "moldtune")
    if not os.access(binary, os.X_OK):
        sys.exit(f"docs_check: no moldtune binary at {binary} (build it, or set MOLDTUNE)")
    pages = args.pages or [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    cache = tempfile.mkdtemp(prefix="moldtune-docs-cache.")
    env = {**os.environ, "NO_COLOR": "1", "XDG_CACHE_HOME": cache}
    env.pop("MOLDTUNE_MOCK_DELAY_MS", None)
    help_cache, anchor_cache, failures, count, t0 = {}, {}, [], 0, time.monotonic()
    try:
        for page in pages:
            problems, n, took = check_page(page.resolve(), binary, env, args.keep, args.verbose, help_cache,
                                           anchor_cache)
            count += n
            print(f"docs_check: {rel(page)}: {n} command(s), {took:.1f} s"
                  + (f", {len(problems)} problem(s)" if problems else ""), flush=True)
            failures += problems
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    for f in failures:
        print(f"\n{f}", file=sys.stderr)
    wall = time.monotonic() - t0
    print(f"docs_check: {len(pages)} page(s), {count} command(s), {len(failures)} problem(s), {wall:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
