"""Tests of the Python client (python/moldtune) against `moldtune serve`.

  python3 -m unittest discover -s tests/python

Standard library only. The server is $MOLDTUNE, else the checkout's target/debug/moldtune
(build it first: `cargo build`). The objectives are toys over a two-parameter space written
to a temporary directory; the run directories' results.json is read back to check what the
server recorded.
"""

import json
import os
import stat
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import moldtune  # noqa: E402

BINARY = os.environ.get("MOLDTUNE") or str(ROOT / "target" / "debug" / "moldtune")

SPACE = """\
name: toy
params:
  - {name: X, type: real, low: 0.0, high: 1.0, default: 0.5}
  - {name: K, type: categorical, choices: [a, b, c], default: a}
metric: {goal: maximize}
search: {learner: rf, max_evals: 8, initial: 4}
"""

BONUS = {"a": 0.0, "b": 0.1, "c": 0.05}


def toy(params):
    return round(1.0 - (params["X"] - 0.3) ** 2 + BONUS[params["K"]], 6)


def evaluations(run_dir):
    """results.json's evaluations by eval_id."""
    with open(Path(run_dir) / "results.json") as f:
        return {e["eval_id"]: e for e in json.load(f)["evaluations"]}


class StudyTest(unittest.TestCase):
    def setUp(self):
        self.env = mock.patch.dict(os.environ, {"MOLDTUNE": BINARY})
        self.env.start()
        self.addCleanup(self.env.stop)
        self.tmp = tempfile.TemporaryDirectory(prefix="moldtune-study-test.")
        self.addCleanup(self.tmp.cleanup)
        self.work = Path(self.tmp.name)

    def space(self, extra="", text=SPACE):
        path = self.work / "space.yaml"
        path.write_text(text + textwrap.dedent(extra))
        return path

    def fake_binary(self, script):
        """An executable standing in for moldtune: a shell script."""
        path = self.work / "fake-moldtune"
        path.write_text("#!/bin/sh\n" + textwrap.dedent(script))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    # The ask/tell loop.

    def test_the_loop_spends_the_budget_and_best_is_the_best_told(self):
        told = {}

        def objective(trial):
            self.assertIsInstance(trial.params["X"], float)
            self.assertIn(trial.params["K"], BONUS)
            self.assertFalse(trial.report(1, 0.5), "no progress: section, so never pruned")
            value = toy(trial.params)
            told[trial.eval] = (value, dict(trial.params))
            return value

        run = self.work / "run"
        with moldtune.Study(self.space(), dir=run, quiet=True) as study:
            best = study.optimize(objective)
            self.assertEqual(study.ended, "max_evals")
            self.assertIsNone(study.ask(), "the search has ended")
            self.assertEqual(study.best, best)
        self.assertEqual(len(told), 8)
        top = max(told, key=lambda e: told[e][0])
        self.assertEqual(best["eval"], top)
        self.assertAlmostEqual(best["value"], told[top][0])
        self.assertEqual(best["config"], told[top][1])
        recorded = evaluations(run)
        self.assertEqual(sorted(recorded), sorted(told))
        for e, (value, params) in told.items():
            self.assertEqual(recorded[e]["status"], "ok")
            self.assertAlmostEqual(recorded[e]["objective"], value)
            self.assertEqual(recorded[e]["config"], params)
        self.assertTrue((run / "run.json").is_file(), "closing the study writes run.json")

    def test_n_trials_stops_the_loop_before_the_budget(self):
        with moldtune.Study(self.space(), dir=self.work / "run", quiet=True) as study:
            study.optimize(lambda t: toy(t.params), n_trials=3)
            self.assertIsNone(study.ended)
        self.assertEqual(len(evaluations(self.work / "run")), 3)

    def test_reopening_continues_the_run_without_repeating_an_eval(self):
        run, space = self.work / "run", self.space()
        first, second = [], []
        with moldtune.Study(space, dir=run, max_evals=5, quiet=True) as study:
            study.optimize(lambda t: first.append(t.eval) or toy(t.params))
            best_before = study.best
        self.assertEqual(len(first), 5)
        with moldtune.Study(space, dir=run, max_evals=9, quiet=True) as study:
            study.optimize(lambda t: second.append(t.eval) or toy(t.params))
            best_after = study.best
            self.assertEqual(study.ended, "max_evals")
        self.assertEqual(len(second), 4, "the budget counts the first session's evaluations")
        self.assertFalse(set(first) & set(second), f"evals repeated: {first} then {second}")
        self.assertEqual(sorted(evaluations(run)), sorted(first + second))
        self.assertGreaterEqual(best_after["value"], best_before["value"])

    def test_a_trial_below_the_median_is_pruned_and_recorded_pruned(self):
        space = self.space("progress: {startup: 3, warmup: 0}\n")
        verdicts = {}
        seen = []

        def objective(trial):
            good = len(seen) < 3  # the first three complete with a high curve
            seen.append(trial.eval)
            value = 0.9 if good else 0.1
            for step in (1, 2, 3):
                if trial.report(step, value):
                    verdicts[trial.eval] = (step, trial.why)
                    raise moldtune.TrialPruned()
            return value

        run = self.work / "run"
        with moldtune.Study(space, dir=run, max_evals=5, quiet=True) as study:
            study.optimize(objective)
        self.assertEqual(len(seen), 5)
        self.assertEqual(sorted(verdicts), seen[3:], "only the low curves, once 3 completed")
        for step, why in verdicts.values():
            self.assertEqual(step, 1)
            self.assertTrue(why, "a prune says why")
        recorded = evaluations(run)
        for e in seen[:3]:
            self.assertEqual(recorded[e]["status"], "ok")
        for e in seen[3:]:
            self.assertEqual(recorded[e]["status"], "pruned")
            self.assertEqual(recorded[e]["recorded"]["progress_step"], 1)  # where it stopped
            self.assertAlmostEqual(recorded[e]["recorded"]["progress_value"], 0.1)

    def test_an_exception_is_told_failed_and_the_loop_goes_on(self):
        calls = []

        def objective(trial):
            calls.append(trial.eval)
            if len(calls) % 3 == 2:
                raise ValueError(f"boom at {trial.eval}")
            return toy(trial.params)

        run = self.work / "run"
        with mock.patch("sys.stderr"), moldtune.Study(self.space(), dir=run, quiet=True) as study:
            best = study.optimize(objective)
        self.assertEqual(len(calls), 8)
        recorded = evaluations(run)
        failed = [e for i, e in enumerate(calls) if i % 3 == 1]
        for e in calls:
            if e in failed:
                self.assertEqual(recorded[e]["status"], "run_error")  # moldtune's name for a failed run
                self.assertIn(f"boom at {e}", recorded[e]["cause"])
            else:
                self.assertEqual(recorded[e]["status"], "ok")
        self.assertNotIn(best["eval"], failed)

    def test_record_quantities_are_told(self):
        space = self.space("record:\n  - {name: train_s}\n")

        def objective(trial):
            trial.record["train_s"] = trial.eval + 0.5
            return toy(trial.params)

        run = self.work / "run"
        with moldtune.Study(space, dir=run, max_evals=3, quiet=True) as study:
            study.optimize(objective)
        for e, ev in evaluations(run).items():
            self.assertAlmostEqual(ev["recorded"]["train_s"], e + 0.5)

    def test_ask_and_tell_by_hand_and_a_bad_request(self):
        with moldtune.Study(self.space(), dir=self.work / "run", quiet=True) as study:
            self.assertIsNone(study.best, "nothing told yet")
            trial = study.ask()
            with self.assertRaises(moldtune.Error):
                study.tell(trial.eval + 1000, 1.0)
            with self.assertRaises(ValueError):
                study.tell(trial, float("nan"))
            study.tell(trial.eval, 0.25)  # by eval number; the server goes on after the errors
            self.assertEqual(study.best["eval"], trial.eval)
            self.assertEqual(study.best["value"], 0.25)

    def test_parallel_trials_are_outstanding_together(self):
        with moldtune.Study(self.space(), dir=self.work / "run", parallel=2, quiet=True) as study:
            a, b = study.ask(), study.ask()
            self.assertNotEqual(a.eval, b.eval)
            with self.assertRaises(moldtune.Error) as e:
                study.ask()
            self.assertTrue(e.exception.hint, "a refused ask says what to do")
            study.tell(b, toy(b.params))
            study.tell(a, toy(a.params))
            self.assertIsNotNone(study.ask())

    # Errors.

    def test_a_space_file_the_server_refuses_raises_at_once(self):
        bad = self.space(text=SPACE.replace("metric: {goal: maximize}\n", ""))
        with self.assertRaises(moldtune.Error) as e:
            moldtune.Study(bad, dir=self.work / "run", quiet=True)
        self.assertIn("exited with status", str(e.exception))

    def test_a_missing_binary_says_how_to_get_one(self):
        with mock.patch.dict(os.environ, {"MOLDTUNE": str(self.work / "nowhere" / "moldtune")}):
            with self.assertRaises(moldtune.Error) as e:
                moldtune.Study(self.space(), dir=self.work / "run")
            self.assertIn("MOLDTUNE=", str(e.exception))
        empty = self.work / "empty"
        empty.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "MOLDTUNE"}
        env["PATH"] = str(empty)
        with mock.patch.dict(os.environ, env, clear=True), \
                mock.patch.object(moldtune, "_CHECKOUT", empty), \
                mock.patch.object(moldtune.sysconfig, "get_path", return_value=str(empty)):
            with self.assertRaises(moldtune.Error) as e:
                moldtune.Study(self.space(), dir=self.work / "run")
        message = str(e.exception)
        self.assertIn("no moldtune binary", message)
        self.assertIn("pip install ./python", message)
        self.assertIn("cargo install --path .", message)

    def test_a_server_that_dies_raises_with_its_stderr(self):
        fake = self.fake_binary("""\
            read request
            echo '{"best": null}'
            read request
            echo "moldtune: something broke inside" >&2
            exit 101
            """)
        study = moldtune.Study(self.space(), dir=self.work / "run", binary=str(fake), quiet=True)
        with self.assertRaises(moldtune.Error) as e:
            study.ask()
        self.assertIn("status 101", str(e.exception))
        self.assertIn("something broke inside", str(e.exception))
        with self.assertRaises(moldtune.Error):
            study.ask()  # still dead, same error
        study.close()

    def test_an_error_reply_raises_with_its_hint(self):
        fake = self.fake_binary("""\
            read request
            echo '{"best": null}'
            read request
            echo '{"error": "too many outstanding asks", "hint": "tell one first"}'
            read request
            exit 0
            """)
        with moldtune.Study(self.space(), dir=self.work / "run", binary=str(fake), quiet=True) as study:
            with self.assertRaises(moldtune.Error) as e:
                study.ask()
        self.assertEqual(e.exception.message, "too many outstanding asks")
        self.assertIn("tell one first", str(e.exception))

    def test_a_binary_without_serve_is_named(self):
        fake = self.fake_binary("""\
            echo "error: unrecognized subcommand 'serve'" >&2
            exit 2
            """)
        with self.assertRaises(moldtune.Error) as e:
            moldtune.Study(self.space(), dir=self.work / "run", binary=str(fake), quiet=True)
        self.assertIn("predates `moldtune serve`", str(e.exception))


if __name__ == "__main__":
    unittest.main()
