"""Optuna's TPE sampler (its defaults, seeded), driven through the ask/tell interface.

Categorical parameters are `suggest_categorical` over their values; ordinal ones
`suggest_int` over their value indices (Optuna has no ordinal type; an integer keeps the
order). A conditional parameter is suggested only when its condition holds (define-by-run).

Failures and the forbidden combinations go through `TPESampler(constraints_func=...)`, as
Optuna documents for infeasible trials: every trial is completed with a value and a
constraint (≤ 0 feasible), so TPE learns where the failures are. A failed evaluation is told
with the worst objective seen so far and a violated constraint. A proposal that is a
forbidden combination is completed the same way at once and not evaluated (a user's
objective would refuse it without compiling anything), and the study is asked again (at most
`MAX_FORBIDDEN` times in a row; then the proposal is evaluated as it is).
"""

from __future__ import annotations

import warnings

import optuna

NAME = "optuna"
PACKAGES = ("optuna",)
FAILURES = ("`TPESampler(constraints_func=...)`: a failure (or a forbidden combination, not evaluated) completed "
            "with the worst objective so far and a violated constraint")
MAX_FORBIDDEN = 100
CONSTRAINT = "constraint"


def constraints(trial) -> tuple[float]:
    """The trial's constraint as the peer recorded it (> 0: infeasible)."""
    return trial.user_attrs.get(CONSTRAINT, (0.0,))

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.filterwarnings("ignore", module="optuna")


class Peer:
    """One Optuna search over `space` with TPESampler(seed=seed)."""

    def __init__(self, space, seed: int, budget: int):
        self.space = space
        sampler = optuna.samplers.TPESampler(seed=seed, constraints_func=constraints)
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self.trial = None
        self.worst = None

    def ask(self) -> tuple:
        """The next configuration that is not a forbidden combination (those are told
        infeasible at once, unevaluated)."""
        for _ in range(MAX_FORBIDDEN):
            coords = self.suggest()
            if not self.space.is_forbidden(coords):
                return coords
            self.infeasible()
        return coords

    def suggest(self) -> tuple:
        """A new trial's suggestions as coordinates."""
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
        """Completes the asked trial with its objective, or as infeasible."""
        if not ok:
            self.infeasible()
            return
        self.worst = objective if self.worst is None else max(self.worst, objective)
        self.trial.set_user_attr(CONSTRAINT, (-1.0,))
        self.study.tell(self.trial, objective)

    def infeasible(self) -> None:
        """Completes the asked trial as infeasible, valued at the worst objective so far."""
        self.trial.set_user_attr(CONSTRAINT, (1.0,))
        self.study.tell(self.trial, 1.0 if self.worst is None else self.worst)

    def close(self) -> None:
        """Nothing to clean up (in-memory storage)."""
