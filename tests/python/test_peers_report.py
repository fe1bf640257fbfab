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
