"""How the numbers of this package are written for people: p-values, rates,
differences in points, intervals. Rounded half up (0.0625 is written 0.063, as a
person rounds), never in scientific notation."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

from .intervals import Interval


def rounded(v: float, digits: int) -> str:
    """``v`` to ``digits`` decimals, half up."""
    q = Decimal(1).scaleb(-digits)
    return str(Decimal(repr(v)).quantize(q, rounding=ROUND_HALF_UP))


def p_text(p: float) -> str:
    """A p-value: three decimals, or ``< 0.001``."""
    if math.isnan(p):
        return "–"
    return "< 0.001" if p < 0.0005 else rounded(p, 3)


def points(v: float, signed: bool = True) -> str:
    """A difference of rates in percentage points: −0.035 → ``−3.5 pp``; NaN → ``–``."""
    if math.isnan(v):
        return "–"
    s = rounded(abs(v) * 100, 1)
    if not signed:
        return f"{s} pp"
    sign = "−" if v < 0 and s != "0.0" else ("+" if v > 0 and s != "0.0" else "±")
    return f"{sign}{s} pp"


def signed_points(v: float) -> str:
    """−0.0706 → ``−7.1``, 0.02 → ``+2.0`` (no unit: inside an interval)."""
    s = rounded(abs(v) * 100, 1)
    if s == "0.0":
        return s
    return f"−{s}" if v < 0 else f"+{s}"


def interval_points(iv: Interval) -> str:
    """``[−7.1, −0.1]`` for a difference interval."""
    return f"[{signed_points(iv.lo)}, {signed_points(iv.hi)}]"


def rate_interval(v: float | None, iv: Interval | None, digits: int = 3) -> str:
    """``0.857 [0.487, 0.974]``."""
    if v is None:
        return "–"
    if iv is None:
        return rounded(v, digits)
    return f"{rounded(v, digits)} [{rounded(iv.lo, digits)}, {rounded(iv.hi, digits)}]"
