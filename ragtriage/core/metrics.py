"""Retrieval metrics at cut-off k, exactly as evaluation.md defines them.

Per case (:func:`retrieval`) and vectorised over many cases and many k from one
stored ranking (:func:`first_positions` + :func:`at_k`). The definitions, fixed
because peers disagree on them:

- the ranking is taken in the order given (scores never re-sort it);
- a chunk ID repeated in a ranking counts once, at its first position, and the
  later slot still occupies its place;
- ``precision`` divides by k even when the ranking is shorter than k;
- a case without expected chunks (unanswerable) has ``recall``, ``rr`` and
  ``hit`` null and is left out of the retrieval means.

The vectorised form stores, per case, only the 0-based first position of each
expected chunk in the ranking (``MISSING`` when absent). Every metric at every k
is then a comparison of that small matrix against k, with no new lookups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .diagnosis import NOT_SCORED

if TYPE_CHECKING:  # numpy is imported where the vectorised paths run
    import numpy as np

#: the deepest cut-off a run or a bar measures: far above any prompt, and a bound memory holds
MAX_K = 10_000
MISSING = 2**31 - 1  # int32 max: position of an expected chunk that is not in the ranking
# numpy is imported by the vectorised functions only: a per-case run does not need it.


def _first_positions(ranking: Sequence[str], expected: Sequence[str]) -> list[int]:
    """0-based first position of every distinct expected ID in ``ranking`` (MISSING if absent)."""
    out = []
    seen = set()
    index = ranking.index if isinstance(ranking, list) else list(ranking).index
    for g in expected:
        if g in seen:
            continue
        seen.add(g)
        try:
            out.append(index(g))
        except ValueError:
            out.append(MISSING)
    return out


def retrieval(ranking: Sequence[str], expected: Sequence[str], k: int, expect: str = "any") -> dict[str, Any]:
    """Per-case retrieval metrics at ``k``: rank, hits, precision, recall, rr, hit.

    ``recall``, ``rr`` and ``hit`` are ``None`` when ``expected`` is empty."""
    if k < 1:
        raise ValueError("k must be 1 or more")
    pos = _first_positions(list(ranking), expected)
    first = min(pos, default=MISSING)
    rank = 0 if first == MISSING else first + 1
    hits = sum(1 for p in pos if p < k)
    out: dict[str, float | None] = {"rank": rank, "hits": hits, "precision": hits / k}
    if not pos:
        out.update(recall=None, rr=None, hit=None)
        return out
    out["recall"] = hits / len(pos)
    out["rr"] = 1.0 / rank if 0 < rank <= k else 0.0
    out["hit"] = hits == len(pos) if expect == "all" else hits >= 1
    return out


class Positions:
    """First positions of the expected chunks of many cases, for metrics at any k.

    ``pos``: int32 matrix (cases × max expected), MISSING-padded, sorted per row;
    ``n_gold``: expected chunks per case (distinct); ``expect_all``: bool per case."""

    __slots__ = ("pos", "n_gold", "expect_all")

    def __init__(self, pos: np.ndarray, n_gold: np.ndarray, expect_all: np.ndarray):
        self.pos = pos
        self.n_gold = n_gold
        self.expect_all = expect_all

    def __len__(self) -> int:
        return len(self.n_gold)

    @property
    def rank(self) -> np.ndarray:
        """1-based rank of the first expected chunk in the whole ranking; 0 if none."""
        import numpy as np

        first = self.pos[:, 0] if self.pos.shape[1] else np.full(len(self), MISSING, np.int32)
        return np.where(first == MISSING, 0, first.astype(np.int64) + 1)


def first_positions(
    rankings: Sequence[Sequence[str]],
    expecteds: Sequence[Sequence[str]],
    expects: Sequence[str] | None = None,
) -> Positions:
    """Build :class:`Positions` from string rankings and expected IDs (one pass, C-speed scans)."""
    import numpy as np

    n = len(rankings)
    if len(expecteds) != n:
        raise ValueError("rankings and expecteds differ in length")
    rows = []
    width = 0
    for r, g in zip(rankings, expecteds):
        p = _first_positions(r if isinstance(r, list) else list(r), g) if g else []
        if len(p) > 1:
            p.sort()
        rows.append(p)
        if len(p) > width:
            width = len(p)
    pos = np.full((n, width), MISSING, dtype=np.int32)
    n_gold = np.fromiter((len(p) for p in rows), dtype=np.int32, count=n)
    if width == 1:
        sel = n_gold == 1
        pos[sel, 0] = [p[0] for p in rows if p]
    elif width:
        for i, p in enumerate(rows):
            if p:
                pos[i, : len(p)] = p
    if expects is None:
        expect_all = np.zeros(n, dtype=bool)
    else:
        expect_all = np.fromiter((e == "all" for e in expects), dtype=bool, count=n)
    return Positions(pos, n_gold, expect_all)


def at_k(p: Positions, k: int) -> dict[str, np.ndarray]:
    """Per-case metrics at ``k`` as float arrays (NaN where the definition says null):
    hits, precision, recall, rr, hit (1.0/0.0)."""
    import numpy as np

    if k < 1:
        raise ValueError("k must be 1 or more")
    inside = p.pos < k
    hits = inside.sum(axis=1, dtype=np.int64)
    gold = p.n_gold
    has = gold > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = np.where(has, hits / np.maximum(gold, 1), np.nan)
        first = p.pos[:, 0] if p.pos.shape[1] else np.full(len(p), MISSING, np.int32)
        rr = np.where(first < k, 1.0 / (first.astype(np.float64) + 1.0), 0.0)
        rr = np.where(has, rr, np.nan)
        hit = np.where(p.expect_all, hits == gold, hits >= 1).astype(np.float64)
        hit = np.where(has, hit, np.nan)
    return {"hits": hits, "precision": hits / k, "recall": recall, "rr": rr, "hit": hit}


def mean_or_none(values: np.ndarray, mask: np.ndarray | None = None) -> float | None:
    """Mean over ``mask`` (default: all); None when that set is empty."""
    v = values if mask is None else values[mask]
    if v.size == 0:
        return None
    return float(v.mean())


def retrieval_means(p: Positions, k: int) -> dict[str, float | None]:
    """hit, recall, precision, mrr over the answerable cases."""
    m = at_k(p, k)
    mask = p.n_gold > 0
    return {
        "hit": mean_or_none(m["hit"], mask),
        "recall": mean_or_none(m["recall"], mask),
        "precision": mean_or_none(m["precision"], mask),
        "mrr": mean_or_none(m["rr"], mask),
    }


def stored_positions(records: Sequence[Mapping[str, Any]]) -> Positions:
    """:class:`Positions` from run-file case records (their stored ``ranking``,
    ``expected`` and ``expect``), leaving out ``error`` and ``unlabelled`` cases: the one
    place the gate's ``hit@5``, ``sweep`` and :func:`retrieval_at` measure rankings
    already made, at any k, with no new call."""
    keep = [r for r in records if r.get("reason") not in NOT_SCORED]
    return first_positions(
        [list(r.get("ranking") or ()) for r in keep],
        [list(r.get("expected") or ()) for r in keep],
        [r.get("expect") or "any" for r in keep],
    )


def retrieval_at(records: Sequence[Mapping[str, Any]], k: int) -> dict[str, float | None]:
    """hit, recall, precision, mrr at ``k`` from run-file case records (:func:`stored_positions`)."""
    return retrieval_means(stored_positions(records), k)
