"""OpenTuner's default search (AUCBanditMetaTechniqueA: an AUC bandit over differential
evolution, uniform and normal greedy mutation and random Nelder-Mead), driven
programmatically through opentuner.api.TuningRunManager with a throwaway sqlite database.

Categorical parameters are EnumParameter over their values; ordinal ones IntegerParameter over
their value indices; permutations PermutationParameter over their items (OpenTuner's own
operators for orders: swaps and insertions). OpenTuner has no conditions and no forbidden combinations: it proposes a
value for every parameter (an inactive one is dropped before the table is consulted) and a
forbidden proposal is answered like any other configuration outside the table. A failed
evaluation is reported as Result(state='ERROR', time=inf). OpenTuner draws from Python's
`random` and NumPy's global generator, both seeded per search.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import shutil
import tempfile
import warnings

import numpy as np
import opentuner
from opentuner import tuningrunmain

# Keep OpenTuner from configuring logging (it would write opentuner.log in the working
# directory) and quiet its duplicate-request warnings.
tuningrunmain.init_logging = lambda: None
logging.getLogger("opentuner").setLevel(logging.ERROR)
warnings.filterwarnings("ignore")

from opentuner.api import TuningRunManager  # noqa: E402
from opentuner.measurement.interface import DefaultMeasurementInterface  # noqa: E402
from opentuner.resultsdb.models import Result  # noqa: E402
from opentuner.search.manipulator import (  # noqa: E402
    ConfigurationManipulator,
    EnumParameter,
    IntegerParameter,
    PermutationParameter,
)

NAME = "opentuner"
PACKAGES = ("opentuner", "SQLAlchemy")
FAILURES = "`Result(state='ERROR', time=float('inf'))`"

# get_next_desired_result() returns None while every technique proposes configurations
# already measured; after this many in a row the search is over.
MAX_IDLE = 500


class Peer:
    """One OpenTuner search over `space`, seeded, in its own sqlite database."""

    def __init__(self, space, seed: int, budget: int):
        self.space = space
        random.seed(seed)
        np.random.seed(seed)
        self.dir = tempfile.mkdtemp(prefix="opentuner-")
        parser = argparse.ArgumentParser(parents=opentuner.argparsers())
        db = "sqlite:///" + os.path.join(self.dir, "opentuner.db")
        args = parser.parse_args(["--database", db, "--no-dups"])
        m = ConfigurationManipulator()
        for p in space.params:
            if p.kind == "ordinal":
                m.add_parameter(IntegerParameter(p.name, 0, len(p.values) - 1))
            elif p.kind == "permutation":
                m.add_parameter(PermutationParameter(p.name, list(p.items)))
            else:
                m.add_parameter(EnumParameter(p.name, p.values))
        iface = DefaultMeasurementInterface(
            args=args, manipulator=m, project_name="peers", program_name="replay", program_version="0"
        )
        self.api = TuningRunManager(iface, args)
        self.dr = None

    def ask(self) -> tuple | None:
        """The next desired result's configuration as coordinates (None when OpenTuner has
        nothing new to measure)."""
        for _ in range(MAX_IDLE):
            self.dr = self.api.get_next_desired_result()
            if self.dr is not None:
                break
        else:
            return None
        data = self.dr.configuration.data
        return tuple(self.coordinate(p, data[p.name]) for p in self.space.params)

    @staticmethod
    def coordinate(p, value) -> int:
        """The coordinate of OpenTuner's value for parameter p."""
        if p.kind == "ordinal":
            return int(value)
        if p.kind == "permutation":
            return p.values.index(p.separator.join(value))
        return p.values.index(value)

    def tell(self, ok: bool, objective: float | None) -> None:
        """Reports the measured time, or an error."""
        if ok:
            result = Result(time=objective)
        else:
            result = Result(state="ERROR", time=float("inf"))
        self.api.report_result(self.dr, result)

    def close(self) -> None:
        """Ends the tuning run and removes its database."""
        try:
            self.api.finish()
        except Exception:  # finish() needs a best result; nothing to keep anyway
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
