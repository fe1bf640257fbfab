"""ytopt's optimiser as published: scikit-optimize's `Optimizer` with a random-forest base
estimator and the lower confidence bound (ytopt's `Optimizer`: `base_estimator="RF"`,
`acq_optimizer="sampling"`, `acq_func="LCB"` with kappa 1.96, 10 initial points, seeded),
driven through ask/tell without ytopt's process pool (its `AMBS` evaluates one configuration
at a time in the paper's runs; the liar strategy only matters with several workers).

Categorical and permutation parameters are `Categorical` over their values (scikit-optimize
has no order type); ordinal ones `Integer` over their value indices. scikit-optimize has no
conditions: it proposes a value for every parameter (an inactive one is dropped before the
table is consulted). A failed evaluation is told with the worst objective seen so far, as
ytopt replaces a failure's `float_info.max` by the largest value told; a forbidden
combination or one a constraint excludes is told the same at once, unevaluated (ytopt samples
from a ConfigSpace that leaves them out), and the optimiser is asked again (at most
`MAX_FORBIDDEN` times in a row).
"""

from __future__ import annotations

import warnings

from skopt import Optimizer
from skopt.space import Categorical, Integer

NAME = "ytopt"
PACKAGES = ("scikit-optimize",)
FAILURES = "told the worst objective so far (ytopt's `maxval`); a forbidden combination the same, unevaluated"
MAX_FORBIDDEN = 100
KAPPA = 1.96
INITIAL = 10

warnings.filterwarnings("ignore", module="skopt")


def ranked(p) -> bool:
    """Whether `p` is an `Integer` over its value indices: an ordinal with a choice
    (scikit-optimize refuses an `Integer` whose bounds are equal; one value is a `Categorical`)."""
    return p.kind == "ordinal" and len(p.values) > 1


class Peer:
    """One ytopt search over `space` from `seed`."""

    def __init__(self, space, seed: int, budget: int):
        self.space = space
        dims = [
            Integer(0, len(p.values) - 1, name=p.name) if ranked(p)
            else Categorical(p.values, name=p.name)
            for p in space.params
        ]
        self.opt = Optimizer(dims, base_estimator="RF", acq_optimizer="sampling", acq_func="LCB",
                             acq_func_kwargs={"kappa": KAPPA}, random_state=seed,
                             n_initial_points=INITIAL)
        self.x = None
        self.worst = None

    def ask(self) -> tuple:
        """The next proposal that is allowed (the others told the worst at once)."""
        for _ in range(MAX_FORBIDDEN):
            coords = self.suggest()
            if not self.space.is_forbidden(coords):
                return coords
            self.tell(False, None)
        return coords

    def suggest(self) -> tuple:
        """A proposal as coordinates, inactive parameters dropped."""
        self.x = self.opt.ask()
        coords = [
            int(v) if ranked(p) else p.values.index(str(v))
            for p, v in zip(self.space.params, self.x)
        ]
        return self.space.canonical(coords)

    def tell(self, ok: bool, objective: float | None) -> None:
        """The proposal's objective, or the worst so far for a failure."""
        if ok:
            self.worst = objective if self.worst is None else max(self.worst, objective)
            value = objective
        else:
            value = 1.0 if self.worst is None else self.worst
        self.opt.tell(self.x, value)

    def close(self) -> None:
        """Nothing to clean up."""
