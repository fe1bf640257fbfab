"""SMAC3's HyperparameterOptimizationFacade (random forest, log-scaled costs, EI, Sobol initial
design, 20% random interleaving), driven through ask/tell; deterministic=True, n_trials =
the budget, seeded.

The space is a ConfigSpace: categorical parameters as CategoricalHyperparameter, ordinal ones
as OrdinalHyperparameter, `when` conditions as InCondition, forbidden combinations as
ForbiddenAndConjunction / ForbiddenInClause. A failed evaluation is told as
TrialValue(cost=scenario.crash_cost, status=StatusType.CRASHED); the crash cost is the
problem's run timeout (a failure is as bad as a run that timed out): SMAC's default crash
cost, infinity, would turn its log-scaled cost encoding into -inf for every success.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import warnings
from pathlib import Path

from ConfigSpace import (
    AndConjunction,
    CategoricalHyperparameter,
    ConfigurationSpace,
    ForbiddenAndConjunction,
    ForbiddenInClause,
    InCondition,
    OrdinalHyperparameter,
)
from smac import HyperparameterOptimizationFacade, Scenario
from smac.runhistory.dataclasses import TrialValue
from smac.main.exceptions import ConfigurationSpaceExhaustedException
from smac.runhistory.enumerations import StatusType

NAME = "smac3"
PACKAGES = ("smac", "ConfigSpace", "scikit-learn")
FAILURES = (
    "`TrialValue(cost=scenario.crash_cost, status=StatusType.CRASHED)`, the `Scenario`'s "
    "`crash_cost` set to the problem's run timeout (20 s gemm-table, 30 s 3mm-medium and "
    "lu-medium, moldtune's default 60 s for the synthetic tables): with SMAC's default crash cost, "
    "infinity, one failure would make its log-scaled cost encoding -inf for every success"
)

warnings.filterwarnings("ignore")


def config_space(space, seed: int) -> ConfigurationSpace:
    """The ConfigSpace of a table's space (values as their text)."""
    cs = ConfigurationSpace(seed=seed)
    hps = []
    for p in space.params:
        if p.kind == "ordinal":
            hps.append(OrdinalHyperparameter(p.name, p.values, default_value=p.values[p.default]))
        else:
            hps.append(CategoricalHyperparameter(p.name, p.values, default_value=p.values[p.default]))
    cs.add(hps)
    conds = []
    for i, p in enumerate(space.params):
        parts = [
            InCondition(hps[i], hps[j], [space.params[j].values[v] for v in sorted(vals)])
            for j, vals in p.condition.items()
        ]
        if parts:
            conds.append(parts[0] if len(parts) == 1 else AndConjunction(*parts))
    cs.add(conds)
    forb = []
    for f in space.forbidden:
        clauses = [
            ForbiddenInClause(hps[j], [space.params[j].values[v] for v in sorted(vals)])
            for j, vals in f.items()
        ]
        forb.append(clauses[0] if len(clauses) == 1 else ForbiddenAndConjunction(*clauses))
    cs.add(forb)
    return cs


class Peer:
    """One SMAC3 search over `space`: the HPO facade, seeded, output in a throwaway directory."""

    def __init__(self, space, seed: int, budget: int):
        self.space = space
        self.dir = tempfile.mkdtemp(prefix="smac-")
        self.scenario = Scenario(
            config_space(space, seed),
            deterministic=True,
            n_trials=budget,
            seed=seed,
            crash_cost=float(space.run_timeout_s),
            output_directory=Path(self.dir) / "out",
        )
        self.smac = HyperparameterOptimizationFacade(
            self.scenario, target_function=None, overwrite=True, logging_level=logging.ERROR
        )
        self.info = None

    def ask(self) -> tuple | None:
        """The next configuration SMAC asks for, as coordinates; None when SMAC has none left
        (deterministic=True never repeats one: on a small table, such as 3mm-table's 360
        configurations, it can run out before the budget)."""
        try:
            self.info = self.smac.ask()
        except ConfigurationSpaceExhaustedException:
            return None
        values = dict(self.info.config)
        return tuple(
            p.values.index(str(values[p.name])) if p.name in values else None
            for p in self.space.params
        )

    def tell(self, ok: bool, objective: float | None) -> None:
        """Reports the asked trial's cost, or a crash at the crash cost."""
        if ok:
            value = TrialValue(cost=objective)
        else:
            value = TrialValue(cost=self.scenario.crash_cost, status=StatusType.CRASHED)
        self.smac.tell(self.info, value, save=False)

    def close(self) -> None:
        """Removes the throwaway output directory."""
        shutil.rmtree(self.dir, ignore_errors=True)
