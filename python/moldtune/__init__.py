"""moldtune's search, driven from a Python program (ask and tell).

The program asks for a configuration, evaluates it in its own process (data loaded once,
a model trained, ...) and tells the result; moldtune keeps the search and the run directory
(results.csv, results.json, run.json, progress.jsonl, as `moldtune run` writes them). The
search runs in a `moldtune serve DIR` child process that this module talks to over its
stdin and stdout, one JSON line per request and per reply; the standard library is all it
needs.

    import moldtune

    def objective(trial):
        p = trial.params                      # {"SOLVER": "adam", "BATCH": 128, ...}
        for epoch in range(1, p["EPOCHS"] + 1):
            ...                               # train one epoch
            trial.report(epoch, accuracy)     # the space file's `progress:` may prune it
            if trial.should_prune():
                raise moldtune.TrialPruned()
        trial.record["train_s"] = seconds     # a quantity of the space file's `record:`
        return accuracy

    with moldtune.Study("space.yaml", dir="results/study") as study:
        study.optimize(objective)
        print(study.best)

Reopening a directory continues its run. The binary is the one `MOLDTUNE` names, else the
`moldtune` installed beside this Python (`pip install ./python` installs both), else
`moldtune` on PATH, else a checkout's latest build (target/release or target/debug).
"""

import collections
import json
import math
import operator
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

__all__ = ["Error", "Study", "Trial", "TrialPruned", "find_binary"]

STATUSES = ("ok", "pruned", "failed", "run_timeout", "lost")

# python/moldtune/__init__.py in a checkout of the repository: the checkout's root.
_CHECKOUT = Path(__file__).resolve().parent.parent.parent


class Error(Exception):
    """Something moldtune refused or could not do; the message says what (and how to fix it)."""

    def __init__(self, message, hint=None):
        super().__init__(f"{message}\nhint: {hint}" if hint else message)
        self.message = message
        self.hint = hint


class TrialPruned(Exception):
    """Raised by an objective to stop a trial that `Trial.should_prune()` condemned;
    `Study.optimize` tells it as pruned, with the last value it reported."""


def find_binary():
    """The moldtune executable: `MOLDTUNE`, else the one installed beside this Python,
    else `moldtune` on PATH, else the latest build (target/release or target/debug) of the
    checkout this package lives in. Raises Error, saying how to get one, when there is none."""
    named = os.environ.get("MOLDTUNE")
    if named:
        found = shutil.which(named)
        if found is None:
            raise Error(f"MOLDTUNE={named} is not an executable file",
                        "point MOLDTUNE at a moldtune binary, or unset it to use the one on PATH")
        return found
    scripts = sysconfig.get_path("scripts")
    candidates = [Path(scripts) / "moldtune"] if scripts else []
    on_path = shutil.which("moldtune")
    if on_path:
        candidates.append(Path(on_path))
    if (_CHECKOUT / "Cargo.toml").is_file():  # the checkout's builds, the latest first
        builds = [_CHECKOUT / "target" / kind / "moldtune" for kind in ("release", "debug")]
        candidates += sorted(builds, key=lambda b: -b.stat().st_mtime if b.is_file() else 0)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    raise Error(
        "no moldtune binary found (looked at $MOLDTUNE, " + ", ".join(str(c) for c in candidates)
        + (", " if candidates else "") + "and PATH)",
        "`pip install ./python` from a checkout of moldtune installs it with this package; or build it "
        "(`cargo install --path .` in the checkout puts it on PATH, `cargo build --release` in "
        "target/release) or set MOLDTUNE=/path/to/moldtune")


def _number(value, what="value"):
    """A finite float for the JSON request (numpy scalars included)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"the {what} must be a number, not {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"the {what} must be a finite number, not {v}")
    return v


def _close_pipes(proc):
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        try:
            pipe.close()
        except OSError:  # stdin's last flush to a dead server
            pass


class Trial:
    """One configuration the search proposed: `eval` (its evaluation number in the run
    directory), `params` (name -> value; parameters inactive in this configuration are
    absent), `source` (how it was chosen: default, initial, model, ...). `record` collects
    the quantities of the space file's `record:` section that `Study.optimize` tells."""

    def __init__(self, study, eval, params, source=None):
        self.study = study
        self.eval = eval
        self.params = params
        self.source = source
        self.record = {}
        self.last_step = None
        self.last_value = None
        self.why = None
        self.told = None
        self._prune = False

    def report(self, step, value):
        """Reports the value reached at `step` (an integer: an epoch, an iteration) and
        returns moldtune's verdict: True when the trial should stop (`why` then says
        against which median). Never True when the space file has no `progress:`."""
        step = operator.index(step)
        value = _number(value)
        reply = self.study._request({"op": "report", "eval": self.eval, "step": step, "value": value})
        self.last_step, self.last_value = step, value
        self._prune = bool(reply.get("prune"))
        self.why = reply.get("why")
        return self._prune

    def should_prune(self):
        """The verdict on the last report."""
        return self._prune

    def __repr__(self):
        return f"Trial(eval={self.eval}, params={self.params!r})"


class Study:
    """A search over the parameters of `space` (a space file: name, params, metric's goal,
    optional record, prefer, progress, search) kept in the run directory `dir`. A directory
    that already holds a run is continued. The keyword arguments override the space file's
    `search:` section (learner, seed, max_evals, initial) and allow `parallel` outstanding
    trials at once. Server messages go to stderr unless `quiet`."""

    def __init__(self, space=None, dir=None, *, learner=None, seed=None, max_evals=None,
                 initial=None, parallel=None, binary=None, quiet=False):
        if dir is None:
            raise TypeError("Study needs dir=, the run directory it keeps its results in")
        self.dir = Path(dir)
        self.binary = binary or find_binary()
        self.ended = None
        self.quiet = quiet
        argv = [self.binary, "serve", str(self.dir)]
        if space is not None:
            argv += ["--problem", str(space)]
        for flag, value in (("--learner", learner), ("--seed", seed), ("--max-evals", max_evals),
                            ("--initial", initial), ("--parallel", parallel)):
            if value is not None:
                argv += [flag, str(value)]
        self.argv = argv
        self._lock = threading.Lock()
        self._tail = collections.deque(maxlen=200)
        self._dead = None
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
        except OSError as e:
            raise Error(f"cannot start {self.binary}: {e}",
                        "set MOLDTUNE to a working moldtune binary") from None
        self._stderr = threading.Thread(target=self._drain, name="moldtune-stderr", daemon=True)
        self._stderr.start()
        # A first request, so that a problem the server refuses (a bad space file, a
        # directory another run holds) is raised here, with its message.
        try:
            self._request({"op": "best"})
        except Error:
            self.__exit__(Error, None, None)
            raise

    def _drain(self):
        for line in self._proc.stderr:
            self._tail.append(line.rstrip("\n"))
            if not self.quiet:
                sys.stderr.write(line)
                sys.stderr.flush()

    def _died(self, proc):
        """Raises the error of a server that stopped answering (and keeps it for later calls)."""
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        self._stderr.join(timeout=5)
        _close_pipes(proc)
        tail = "\n".join(list(self._tail)[-20:])
        hint = None
        if "unrecognized subcommand" in tail:
            hint = (f"{self.binary} predates `moldtune serve`: rebuild it (`cargo build --release`, "
                    "`pip install ./python`) or set MOLDTUNE to a newer one")
        self._dead = Error(f"the moldtune server (`{' '.join(map(str, self.argv))}`) exited with status {rc}"
                           + (f"; its last messages:\n{tail}" if tail else " and said nothing"), hint)
        raise self._dead

    def _request(self, request):
        with self._lock:
            if self._dead is not None:
                raise self._dead
            proc = self._proc
            if proc is None:
                raise Error("this study is closed")
            try:
                proc.stdin.write(json.dumps(request) + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
            except (BrokenPipeError, OSError, ValueError):
                line = ""
            if not line:
                self._died(proc)
        try:
            reply = json.loads(line)
        except ValueError:
            raise Error(f"the moldtune server answered {line.strip()!r} to {json.dumps(request)}, "
                        "which is not JSON") from None
        if "error" in reply:
            raise Error(reply["error"], reply.get("hint"))
        return reply

    def ask(self):
        """The next trial, or None when the search has ended (`ended` then says why:
        max_evals, space_exhausted, no_config_found, ...)."""
        reply = self._request({"op": "ask"})
        if "end" in reply:
            self.ended = reply["end"]
            return None
        return Trial(self, reply["eval"], reply["config"], reply.get("source"))

    def tell(self, trial, value=None, status="ok", record=None, cause=None):
        """Tells how `trial` (a Trial or its eval number) went: its objective `value` and
        `status` (ok, pruned, failed, run_timeout or lost; failed and lost need no value, a
        pruned trial's value defaults to the last one it reported), the quantities of
        `record` (default: the trial's `record`) and, for a failure, its `cause`."""
        if status not in STATUSES:
            raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        if isinstance(trial, Trial):
            eval_ = trial.eval
            if value is None and status == "pruned":
                value = trial.last_value
            if record is None:
                record = trial.record
        else:
            eval_ = operator.index(trial)
        request = {"op": "tell", "eval": eval_}
        if value is not None:
            request["value"] = _number(value)
        if status != "ok":
            request["status"] = status
        if record:
            request["record"] = {k: _number(v, f"record {k!r}") for k, v in record.items()}
        if cause is not None:
            request["cause"] = str(cause)
        reply = self._request(request)
        if isinstance(trial, Trial):
            trial.told = status
        return reply

    @property
    def best(self):
        """The best told trial so far: {"eval", "value", "config"}, or None."""
        reply = self._request({"op": "best"})
        if "best" in reply and reply["best"] is None:
            return None
        return reply

    def optimize(self, func, n_trials=None):
        """Asks, calls `func(trial)` and tells its value, until the search ends or after
        `n_trials` trials. `func` may set `trial.record[...]`; raising TrialPruned tells the
        trial as pruned, any other exception as failed (its text as the cause) and the loop
        goes on. Returns `best`."""
        done = 0
        while n_trials is None or done < n_trials:
            trial = self.ask()
            if trial is None:
                break
            done += 1
            try:
                value = func(trial)
            except TrialPruned:
                self.tell(trial, status="pruned")
                continue
            except Exception as e:
                cause = f"{type(e).__name__}: {e}"
                print(f"moldtune: trial {trial.eval} failed: {cause}", file=sys.stderr)
                self.tell(trial, status="failed", cause=cause)
                continue
            except BaseException:
                try:
                    self.tell(trial, status="lost", cause="interrupted")
                except Error:
                    pass
                raise
            try:
                value = _number(value, "objective's value")
            except (TypeError, ValueError) as e:
                print(f"moldtune: trial {trial.eval} failed: {e}", file=sys.stderr)
                self.tell(trial, status="failed", cause=str(e))
                continue
            self.tell(trial, value)
        return self.best

    def close(self):
        """Ends the session: the server writes run.json and exits. Raises Error if it
        failed. Calling it again does nothing."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None or self._dead is not None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        rc = proc.wait()
        self._stderr.join(timeout=5)
        _close_pipes(proc)
        if rc != 0:
            tail = "\n".join(list(self._tail)[-20:])
            raise Error(f"the moldtune server exited with status {rc} when closed"
                        + (f"; its last messages:\n{tail}" if tail else ""))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            try:
                self.close()
            except Error:
                pass
        return False

    def __repr__(self):
        return f"Study(dir={str(self.dir)!r}, binary={self.binary!r})"
