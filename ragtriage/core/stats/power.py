"""The smallest change a comparison can detect, said when its verdict is inconclusive.

For a one-sided test at level α with power 1 − β, a true mean difference is found
when it exceeds (z_{1−α} + z_{1−β})·se, se being the standard error of the mean
paired difference (cluster-robust when cases are clustered). With no case differing
at all, se is taken as that of one case differing by 1 (1/n), since "0" would claim
any change is detectable.

Worked (n = 200, 11 cases differ, unclustered, α = 0.05, power 0.8): se = √(11/200)/√200
= 0.0166, so changes below 4.1 points cannot be told from noise.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .intervals import z_of
from .resample import robust_se

POWER = 0.8


def detectable_change(
    diffs: ArrayLike, clusters: np.ndarray | None = None, *, alpha: float = 0.05, power: float = POWER
) -> float:
    """(z_{1−α} + z_{power})·se of mean(diffs); in the units of the measure (0.041 = 4.1 points)."""
    d = np.asarray(diffs, dtype=float)
    n = len(d)
    if n == 0:
        return math.inf
    if clusters is None:
        se = math.sqrt(float(np.mean(d**2)) / n)  # the variance of d under "no change"
    else:
        se = robust_se(d, np.asarray(clusters))
        if math.isnan(se):
            se = math.sqrt(float(np.mean(d**2)) / n)
    se = max(se, 1.0 / n)
    z_a = z_of(1 - 2 * alpha)  # the one-sided quantile z_{1−α}
    z_b = z_of(2 * power - 1)
    return (z_a + z_b) * se
