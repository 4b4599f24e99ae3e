"""Intervals of one rate and of a paired difference of two rates, in closed form.

- :func:`wilson`: the Wilson score interval of x successes in n (the interval every
  single summary rate carries when its cases are independent).
- :func:`newcombe_paired`: Newcombe's hybrid score interval (1998, method 10) of the
  difference of two rates measured on the same cases, from the four cells of the
  paired table.

Both are exact formulas (no resampling), so they are deterministic and cost nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any


@dataclass(frozen=True)
class Interval:
    """A two-sided interval at ``level`` (0.95 = 95 %), and how it was made."""

    lo: float
    hi: float
    level: float = 0.95
    method: str = ""

    def contains(self, v: float) -> bool:
        return self.lo - 1e-12 <= v <= self.hi + 1e-12

    def widened(self, other: Interval) -> Interval:
        """The smallest interval holding both (keeps this one's method name)."""
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi), self.level, self.method)

    def to_dict(self) -> dict[str, Any]:
        return {"lo": self.lo, "hi": self.hi, "level": self.level, "method": self.method}


def z_of(level: float) -> float:
    """The two-sided normal quantile for ``level`` (1.959963984540054 for 0.95)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"a confidence level is between 0 and 1, not {level!r}")
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def wilson(x: float, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval of the rate x / n (x may be fractional: a sum of shares).

    lo, hi = (p + z²/2n ∓ z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n); n = 0 gives [0, 1]."""
    if n <= 0:
        return Interval(0.0, 1.0, level, "wilson")
    z = z_of(level)
    p = min(max(x / n, 0.0), 1.0)
    den = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return Interval(max(0.0, centre - half), min(1.0, centre + half), level, "wilson")


@dataclass(frozen=True)
class PairedTable:
    """The paired 2×2 table of one yes/no outcome on the same cases in runs A and B.

    ``both`` passed in both, ``worse`` passed in A and failed in B (pass→fail, ↓),
    ``better`` failed in A and passed in B (fail→pass, ↑), ``neither`` failed in both."""

    both: int
    worse: int
    better: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.worse + self.better + self.neither

    @property
    def rate_a(self) -> float:
        return (self.both + self.worse) / self.n if self.n else math.nan

    @property
    def rate_b(self) -> float:
        return (self.both + self.better) / self.n if self.n else math.nan

    @property
    def delta(self) -> float:
        """B's rate minus A's: negative is a regression."""
        return (self.better - self.worse) / self.n if self.n else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"both": self.both, "worse": self.worse, "better": self.better, "neither": self.neither}


def newcombe_paired(t: PairedTable, level: float = 0.95) -> Interval:
    """Newcombe's hybrid score interval (method 10 of Newcombe 1998, Stat Med 17:2635)
    of Δ = rate_B − rate_A on paired cases.

    With (l_A, u_A) and (l_B, u_B) the Wilson intervals of the two rates and φ the
    correlation of the table, taken as max(ad − bc − n/2, 0)/√(efgh) when ad > bc and
    (ad − bc)/√(efgh) otherwise (0 when a margin is empty), as the method says:

        lo = Δ − √((p_B − l_B)² − 2φ(p_B − l_B)(u_A − p_A) + (u_A − p_A)²)
        hi = Δ + √((u_B − p_B)² − 2φ(u_B − p_B)(p_A − l_A) + (p_A − l_A)²)

    Worked: 150 both, 9 ↓, 2 ↑, 39 neither (n = 200) → Δ −0.035, [−0.0706, −0.0008]."""
    n = t.n
    if n == 0:
        return Interval(-1.0, 1.0, level, "newcombe")
    pa, pb = t.rate_a, t.rate_b
    la = wilson(t.both + t.worse, n, level)
    lb = wilson(t.both + t.better, n, level)
    a, b, c, d = t.both, t.worse, t.better, t.neither  # A pass/fail by B pass/fail
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        phi = 0.0
    else:
        cross = a * d - b * c
        phi = (max(cross - n / 2.0, 0.0) if cross > 0 else cross) / math.sqrt(margins)
    delta = pb - pa
    dl = (pb - lb.lo) ** 2 - 2 * phi * (pb - lb.lo) * (la.hi - pa) + (la.hi - pa) ** 2
    du = (lb.hi - pb) ** 2 - 2 * phi * (lb.hi - pb) * (pa - la.lo) + (pa - la.lo) ** 2
    lo = delta - math.sqrt(max(dl, 0.0))
    hi = delta + math.sqrt(max(du, 0.0))
    return Interval(max(-1.0, lo), min(1.0, hi), level, "newcombe")
