"""scripts/peers/report.py: the peers' medians over seeds."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "peers"))
import report  # noqa: E402


class HalfTheSeeds(unittest.TestCase):
    def test_when_exactly_half_reach_the_seconds_are_those_of_the_half(self):
        # Issue 57: 10 of 20 seeds within 5% gave a finite evaluation count (a midpoint with
        # "never") next to infinite seconds ("–").
        seeds = []
        for s in range(20):
            reach = s % 2 == 0
            seeds.append({
                "evals_to_5pct": 11 + s if reach else 201,
                "seconds_to_5pct": 2.0 * (11 + s) if reach else None,
                "best_at": {"10": 1.0}, "failures": 0, "repeats": 0, "out_of_table": 0,
                "optimiser_s": 0.1,
            })
        st = report.peer_stats(seeds, 200)
        self.assertEqual(st["reached"], 10)
        self.assertEqual(st["evals"], 29)
        self.assertEqual(st["seconds"], 58.0)
        low, high = st["interval"]
        self.assertTrue(11 <= low <= 29 <= high <= 201)


if __name__ == "__main__":
    unittest.main()


class Constraints(unittest.TestCase):
    """The harness's constraint expressions say what moldtune says, configuration by
    configuration (`moldtune show --set` refuses a configuration a constraint excludes)."""

    PROBLEM = """\
name: c
mold: k.c
params:
  - {name: A, type: ordinal, values: [4, 8, 16]}
  - {name: B, type: categorical, choices: ["", "x", "0"]}
  - {name: C, type: boolean}
  - {name: D, type: ordinal, values: [a, b]}
  - {name: E, type: ordinal, values: [1, 2], when: {C: [true]}}
  - {name: O, type: permutation, items: [I, J, K]}
constraints:
  - "A * 2 <= 16 or B == 0"
  - "not (C && E == 2) || D < 'b'"
  - "B != \\"x\\" || A % 8 == 0"
  - "O != 'K J I' and (A / 4 - 1 <= 3)"
compile: "cc {{ source }} -o {{ exe }}"
run: "{{ exe }}"
"""

    def test_the_harness_evaluates_constraints_as_moldtune_does(self):
        import itertools
        import subprocess
        import tempfile
        binary = os.environ.get("MOLDTUNE") or os.path.join(
            os.path.dirname(__file__), "..", "..", "target", "debug", "moldtune")
        if not os.path.exists(binary):
            self.skipTest("no moldtune binary (cargo build)")
        import tables
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "k.c"), "w") as f:
                f.write("int main(void) { #A; #B; #C; #D; #E; #O; return 0; }\n")
            path = os.path.join(d, "c.yaml")
            with open(path, "w") as f:
                f.write(self.PROBLEM)
            space = tables.space_from_yaml(path)
            disagree, allowed = [], 0
            configs = {space.canonical(coords) for coords in
                       itertools.product(*[range(len(p.values)) for p in space.params])}
            for c in sorted(configs, key=lambda c: [-1 if x is None else x for x in c]):
                sets = [f"{p.name}={p.values[x]}" for p, x in zip(space.params, c) if x is not None]
                args = [binary, "show", path] + [a for s in sets for a in ("--set", s)]
                ok = subprocess.run(args, capture_output=True).returncode == 0
                allowed += ok
                if ok == space.is_forbidden(c):
                    disagree.append((sets, ok))
            self.assertEqual(disagree, [])
            self.assertEqual(len(configs), 3 * 3 * 2 * 6 * (1 + 2))
            self.assertTrue(0 < allowed < len(configs), allowed)


class Ratios(unittest.TestCase):
    def test_the_default_against_the_best_peer_with_its_interval(self):
        seeds = lambda xs: [{"evals_to_5pct": x} for x in xs]
        doc = {"tables": {"t": {"peers": {
            "optuna": {"seeds": seeds([80, 90, 100, 110, 120] * 4)},
            "opentuner": {"seeds": seeds([40, 50, 60, 70, 201] * 4)},
        }}}}
        ours = {"t": {"learners": {"gp": {"evals_to_5pct": [20, 25, 30, 35, 40] * 4}}}}
        lines = report.ratio_lines(doc, ours)
        self.assertEqual(len(lines), 3)
        row = lines[2]
        # Best peer by lower median: OpenTuner (60); gp's 30 / 60 = 0.50.
        self.assertIn("OpenTuner AUC bandit 60 (20 seeds)", row)
        self.assertIn("| 0.50 [", row)
        r, lo, hi = report.ratio_interval([20, 25, 30, 35, 40] * 4, [40, 50, 60, 70, 201] * 4)
        self.assertTrue(lo <= 0.5 <= hi and hi < 1.0, (r, lo, hi))
        # No moldtune numbers for a table: no row.
        self.assertEqual(len(report.ratio_lines(doc, {})), 2)
