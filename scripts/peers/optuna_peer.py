"""Optuna's TPE sampler (its defaults, seeded), driven through the ask/tell interface.

Categorical parameters are `suggest_categorical` over their values; ordinal ones
`suggest_int` over their value indices (Optuna has no ordinal type; an integer keeps the
order). A conditional parameter is suggested only when its condition holds (define-by-run).
A failed evaluation is told as `TrialState.FAIL`, which TPE leaves out of its model.
"""

from __future__ import annotations

import warnings

import optuna
from optuna.trial import TrialState

NAME = "optuna"
PACKAGES = ("optuna",)
FAILURES = "`study.tell(trial, state=TrialState.FAIL)` (TPE ignores failed trials)"

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.filterwarnings("ignore", module="optuna")


class Peer:
    """One Optuna search over `space` with TPESampler(seed=seed)."""

    def __init__(self, space, seed: int, budget: int):
        self.space = space
        sampler = optuna.samplers.TPESampler(seed=seed)
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self.trial = None

    def ask(self) -> tuple:
        """The next configuration: a trial's suggestions as coordinates."""
        self.trial = self.study.ask()
        coords: list = []
        for i, p in enumerate(self.space.params):
            rest = [None] * (len(self.space.params) - i)
            if not self.space.active(i, coords + rest):
                coords.append(None)
            elif p.kind == "ordinal":
                coords.append(self.trial.suggest_int(p.name, 0, len(p.values) - 1))
            else:
                coords.append(p.values.index(self.trial.suggest_categorical(p.name, p.values)))
        return tuple(coords)

    def tell(self, ok: bool, objective: float | None) -> None:
        """Completes the asked trial with its objective, or fails it."""
        if ok:
            self.study.tell(self.trial, objective)
        else:
            self.study.tell(self.trial, state=TrialState.FAIL)

    def close(self) -> None:
        """Nothing to clean up (in-memory storage)."""
