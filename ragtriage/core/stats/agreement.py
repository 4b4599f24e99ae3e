"""Cohen's κ of two yes/no raters (the judge and the expert) with a 95 % interval.

κ = (p_o − p_e)/(1 − p_e). Its interval is the percentile bootstrap over the graded
cases (``BOOTSTRAP_RESAMPLES`` draws, fixed seed; draws where κ is undefined, both
raters saying one word throughout, are left out), widened where needed to hold the
κ that the Wilson interval of the observed agreement gives with chance agreement
held fixed. The bootstrap alone is too sure of small, high-agreement samples: a
sample that agrees on every case resamples to that same table every time (8
agreements in 8 would be "κ = 1, exactly"), and one disagreement in 30 would get a
higher lower bound than none.

Worked: 12 yes/yes, 3, 3, 12 no/no (30 grades) → κ 0.60 [0.25, 0.86]; 5 yes/yes and
3 no/no (8 grades) → κ 1.00 [0.31, 1.00]; 18 and 12 (30) → 1.00 [0.76, 1.00].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .intervals import Interval, wilson
from .paired_tests import SEED
from .resample import BOOTSTRAP_RESAMPLES


def _kappa_rows(j: np.ndarray, h: np.ndarray) -> np.ndarray:
    po = (j == h).mean(axis=-1)
    pj, ph = j.mean(axis=-1), h.mean(axis=-1)
    pe = pj * ph + (1 - pj) * (1 - ph)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = (po - pe) / (1 - pe)
    return np.where(np.abs(1 - pe) < 1e-12, np.nan, k)


@dataclass(frozen=True)
class Kappa:
    n: int
    kappa: float | None
    interval: Interval | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kappa": self.kappa,
            "kappa_interval": None if self.interval is None else self.interval.to_dict(),
        }


def kappa(
    rater: ArrayLike,
    human: ArrayLike,
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = SEED,
) -> Kappa:
    """κ of paired yes/no verdicts and its bootstrap interval (None when undefined)."""
    j = np.asarray(rater, dtype=float)
    h = np.asarray(human, dtype=float)
    n = len(j)
    if n == 0:
        return Kappa(0, None, None)
    k = float(_kappa_rows(j, h))
    if np.isnan(k):
        return Kappa(n, None, None)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    draws = _kappa_rows(j[idx], h[idx])
    draws = draws[~np.isnan(draws)]
    tail = (1 - level) / 2
    lo, hi = (float(x) for x in np.quantile(draws, [tail, 1 - tail])) if draws.size else (-1.0, 1.0)
    agree = int((j == h).sum())
    pj, ph = j.mean(), h.mean()
    pe = float(pj * ph + (1 - pj) * (1 - ph))
    w = wilson(agree, n, level)
    lo = min(lo, (w.lo - pe) / (1 - pe))
    hi = max(hi, (w.hi - pe) / (1 - pe))
    method = f"bootstrap over {n} graded cases"
    return Kappa(n, k, Interval(max(-1.0, lo), min(1.0, hi), level, method))
