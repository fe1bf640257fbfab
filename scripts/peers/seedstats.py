"""Statistics over seeds that the harness and its report share (standard library only, so that
the report and its tests run without the peers' virtual environment)."""
import math
import random
import statistics

# Bootstrap resamples (moldtune's stats::RESAMPLES).
RESAMPLES = 4000


def quantile(values, q: float) -> float:
    """moldtune's quantile: linear interpolation between the sorted values (an infinite
    neighbour makes it infinite)."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if lo == hi or math.isinf(v[hi]):
        return v[hi]
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def bootstrap(sets, stat, seed: int = 0, resamples: int = RESAMPLES) -> tuple[float, float, float]:
    """`stat` of the sets' lower medians with its 95% percentile-bootstrap interval: every set
    resampled with replacement, independently (moldtune's stats::bootstrap, of lower medians)."""
    rng = random.Random(seed)
    value = stat([statistics.median_low(s) for s in sets])
    draws = sorted(
        stat([statistics.median_low([rng.choice(s) for _ in s]) for s in sets]) for _ in range(resamples)
    )
    at = lambda p: draws[round((resamples - 1) * p)]
    return value, at(0.025), at(0.975)


def ratio_interval(a, b, seed: int = 0) -> tuple[float, float, float]:
    """lower_median(a) / lower_median(b) with its 95% interval: a ratio of two searches'
    evaluations to a target over seeds."""
    return bootstrap([a, b], lambda m: m[0] / m[1], seed)
