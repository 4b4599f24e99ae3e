"""Adjusted p-values for several tests at once.

- :func:`holm`: Holm's step-down adjustment (controls the chance of any false
  alarm across the metrics one gate checks).
- :func:`benjamini_hochberg`: the Benjamini–Hochberg adjustment (controls the share
  of false alarms among the flagged slices; for exploring tags, never for a gate).
"""

from __future__ import annotations

from collections.abc import Sequence


def holm(ps: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j))."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


def benjamini_hochberg(ps: Sequence[float]) -> list[float]:
    """BH-adjusted p-values (q-values), in the order given: p̃_(i) = min_{j ≥ i} min(1, m·p_(j)/j)."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [1.0] * m
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, min(1.0, m * ps[i] / (rank + 1)))
        out[i] = running
    return out
