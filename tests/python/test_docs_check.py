"""Tests of scripts/docs_check.py, the checker of the commands README.md and docs/ show.

  python3 -m unittest discover -s tests/python

Standard library only. The binary is $MOLDTUNE, else the checkout's target/debug/moldtune
(build it first: `cargo build`). Each test writes a small page into a temporary directory and
checks it: a right snapshot passes; a wrong one, an unexpected exit code, a command outside a
console block, an unknown flag and a broken link are each reported.
"""

import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("MOLDTUNE") or str(ROOT / "target" / "debug" / "moldtune")
SCRIPT = ROOT / "scripts" / "docs_check.py"

spec = importlib.util.spec_from_file_location("docs_check", SCRIPT)
docs_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(docs_check)

# A toy problem written by the page itself (the files the mock run and `show` read).
FILES = """\
<!-- file: p.yaml -->
```yaml
name: toy
mold: m.c
params:
  - {name: P0, type: ordinal, values: [1, 2, 4], default: 2}
compile: "cc {{ source }} -o {{ exe }}"
run: "{{ exe }}"
```

<!-- file: m.c -->
```c
int p0 = #P0;
```
"""

SHOW = """\
```console
$ moldtune show p.yaml --out v.c
toy: P0=2
nothing is built or run; [..]
...
variant.c written to v.c
```
"""


class DocsCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="moldtune-docs-check-test.")
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)
        self.env = {**os.environ, "NO_COLOR": "1", "XDG_CACHE_HOME": str(self.dir / "cache")}

    def check(self, text, name="page.md"):
        """The problems the checker finds on a page of this text."""
        page = self.dir / name
        page.write_text(textwrap.dedent(text))
        problems, _, _ = docs_check.check_page(page, BINARY, self.env, False, False, {}, {})
        return problems

    def test_a_right_snapshot_passes(self):
        self.assertEqual(self.check(FILES + SHOW), [])

    def test_a_wrong_snapshot_fails(self):
        problems = self.check(FILES + SHOW.replace("toy: P0=2", "toy: P0=4"))
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("output differs", problems[0])
        self.assertIn("-toy: P0=4", problems[0])
        self.assertIn("+toy: P0=2", problems[0])

    def test_an_unexpected_exit_code_is_caught(self):
        problems = self.check(FILES + "```console\n$ moldtune show p.yaml --set P0=3\n```\n")
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("exit code 2, expected 0", problems[0])
        self.assertIn("`3` is not a value of `P0`", problems[0])  # the command's stderr is shown

    def test_an_expected_exit_code_and_merged_stderr_pass(self):
        page = FILES + textwrap.dedent("""\
            ```console
            $ moldtune show p.yaml --set P0=3 2>&1
            ? 2
            error: `--set P0=3`: `3` is not a value of `P0`
              hint: choose one of [..]
            ```
            """)
        self.assertEqual(self.check(page), [])
        problems = self.check(page.replace("? 2", "? 4"))
        self.assertTrue(any("exit code 2, expected 4" in p for p in problems), problems)

    def test_mock_runs_a_search_without_a_compiler_and_later_commands_see_its_directory(self):
        page = FILES + textwrap.dedent("""\
            ```console mock
            $ moldtune run p.yaml --max-evals 3 --out r
            3 evaluations (ok 3), stopped by max_evals
            ...
            ```

            ```console
            $ moldtune best r
            best objective [..] (eval [..], 3 of 3 evaluations ok)
            ...
            ```
            """)
        self.assertEqual(self.check(page), [])

    def test_flags_checks_flags_without_running(self):
        ok = "```console flags\n$ moldtune run p.yaml --executor slurm --workers 8 --time 30:00\n```\n"
        self.assertEqual(self.check(ok), [])
        problems = self.check(ok.replace("--workers 8", "--worker 8"))
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("unexpected argument '--worker'", problems[0])

    def test_a_command_outside_a_console_block_is_an_error(self):
        problems = self.check("```sh\nmoldtune run p.yaml --max-evals 3\n```\n")
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("outside a `console` or `usage` block", problems[0])
        # Output that merely mentions the tool is not a command.
        self.assertEqual(self.check("```text\nmoldtune: toy — learner gp, seed 0\n```\n"), [])

    def test_a_usage_block_names_only_flags_the_tool_has(self):
        usage = "```usage\nmoldtune run PROBLEM.yaml [--max-evals N]\n                          [--seed S]  # a comment\n```\n"
        self.assertEqual(self.check(usage), [])
        problems = self.check(usage.replace("--seed S", "--sed S"))
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("has no flag `--sed`", problems[0])

    def test_links_must_name_a_file_and_a_heading(self):
        (self.dir / "other.md").write_text("# Other\n\n## A `code` heading, with punctuation\n")
        good = "See [it](other.md#a-code-heading-with-punctuation) and [top](#title).\n"
        self.assertEqual(self.check("# Title\n\n" + good), [])
        problems = self.check("# Title\n\nSee [it](other.md#nowhere) and [gone](missing.md).\n")
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("has no heading `#nowhere`", problems[0])
        self.assertIn("no file", problems[1])

    def test_wildcards(self):
        match = docs_check.lines_match
        self.assertTrue(match(["a", "...", "d"], ["a", "b", "c", "d"]))
        self.assertTrue(match(["a", "...", "b"], ["a", "b"]))
        self.assertTrue(match(["took [..] s", "..."], ["took 1.5 s"]))
        self.assertFalse(match(["a", "d"], ["a", "b", "d"]))
        self.assertFalse(match(["took [..] s"], ["took 1.5 ms", "x"]))
        self.assertFalse(match(["[..]x"], ["a.b"]))  # `[..]` is a wildcard; the rest is literal

    def test_the_script_exits_1_on_a_problem_and_0_without(self):
        good, bad = self.dir / "good.md", self.dir / "bad.md"
        good.write_text("```console\n$ moldtune show --help\n```\n")
        bad.write_text("```console\n$ moldtune show --no-such-flag\n```\n")
        env = {**os.environ, "MOLDTUNE": BINARY}
        ok = subprocess.run([sys.executable, str(SCRIPT), str(good)], env=env, capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        fail = subprocess.run([sys.executable, str(SCRIPT), str(bad)], env=env, capture_output=True, text=True)
        self.assertEqual(fail.returncode, 1, fail.stdout + fail.stderr)
        self.assertIn("exit code 2, expected 0", fail.stderr)


if __name__ == "__main__":
    unittest.main()
