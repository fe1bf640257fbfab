"""Statistics over seeds that the harness and its report share (standard library only, so that
the report and its tests run without the peers' virtual environment)."""
import math


def quantile(values, q: float) -> float:
    """moldtune's quantile: linear interpolation between the sorted values (an infinite
    neighbour makes it infinite)."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if lo == hi or math.isinf(v[hi]):
        return v[hi]
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)
