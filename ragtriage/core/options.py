"""The options of a run or a sweep that are checked before anything is asked: the
cut-off ``k`` and the lists ``--k 1-4`` and ``--threshold 0.2,0.5`` name."""

from __future__ import annotations

import math

from .errors import InputError, Problem
from .schema import MAX_K

#: the most values of k one sweep measures (each is a row, and may be a run)
MAX_SWEEP = 200


def _check_k(k: int, what: str = "--k") -> int:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InputError(Problem(what, None, f"k must be a whole number of 1 or more, got {k!r}"))
    if k > MAX_K:
        raise InputError(
            Problem(what, None, f"k = {k} is more than {MAX_K:,} (a ranking that deep is not a prompt)")
        )
    return k


def parse_ks(text: str | None, default: int) -> list[int]:
    """``1-4`` -> [1, 2, 3, 4]; ``1,3,5`` -> [1, 3, 5]; None -> [default]."""
    if text is None:
        return [default]
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
                if lo > hi:
                    raise ValueError
                if hi - lo >= MAX_SWEEP:
                    raise InputError(
                        Problem(
                            "--k", None, f"{text!r}: at most {MAX_SWEEP} values of k in one sweep (e.g. 1-20)"
                        )
                    )
                out.extend(range(lo, hi + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise InputError(
                Problem("--k", None, f"{text!r}: expected K, A-B or K,K,... (e.g. 1-4 or 1,3,5)")
            ) from None
    if not out or any(k < 1 for k in out):
        raise InputError(Problem("--k", None, f"{text!r}: every k must be 1 or more"))
    for k in out:
        _check_k(k)
    if len(set(out)) > MAX_SWEEP:
        raise InputError(Problem("--k", None, f"{text!r}: at most {MAX_SWEEP} values of k in one sweep"))
    return sorted(set(out))


def parse_thresholds(text: str | None) -> list[float | None]:
    if not text:
        return [None]
    out: list[float | None] = []
    for part in text.split(","):
        try:
            t = float(part)
            if not math.isfinite(t):
                raise ValueError
            out.append(t)
        except ValueError:
            raise InputError(
                Problem("--threshold", None, f"{part!r} is not a number (e.g. 0.2,0.5)")
            ) from None
    return out
