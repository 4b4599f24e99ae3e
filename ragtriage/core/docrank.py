"""Document-level gold (evaluation.md, "Documents"): the document ranking of a result and
the per-case document metrics at k, where k counts documents.

The document ranking is the chunk ranking mapped to each chunk's document (the result's
own ``docs`` list when it gives one, else the corpus's ``doc``), duplicates removed keeping
the first occurrence. A chunk whose document is unknown (no ``doc`` in the corpus, an id
the corpus lacks, a ``null`` in ``docs``) is a document of its own that no case expects:
it takes a place in the document ranking (``None`` there), so it can push an expected
document below k but never count as one. The numbers never claim more than is known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .metrics import retrieval

DocOf = Callable[[str], "str | None"]
DOC_FIELDS = ("doc_rank", "doc_hit", "doc_precision", "doc_recall", "doc_rr")


def doc_ranking(
    ranking: Sequence[str], doc_of: DocOf | None = None, docs: Sequence[Any] | None = None
) -> list[str | None]:
    """The documents of ``ranking`` in order, each once (its first place); ``docs[i]`` (the
    system's own) names the document of ``ranking[i]`` and wins over ``doc_of`` (the
    corpus's); ``None`` for a chunk whose document is unknown, each such chunk a place of
    its own. With ``docs`` and no ranking (a document retriever), ``docs`` is the ranking."""
    out: list[str | None] = []
    seen: set[str] = set()
    n = len(ranking) if ranking else len(docs or ())
    for i in range(n):
        d: Any = None
        if docs is not None and i < len(docs):
            d = docs[i]
        elif doc_of is not None and i < len(ranking):
            d = doc_of(ranking[i])
        if not isinstance(d, str) or not d:
            out.append(None)
        elif d not in seen:
            seen.add(d)
            out.append(d)
    return out


def doc_metrics(
    ranking: Sequence[str | None], expected_docs: Sequence[str], k: int, expect: str
) -> dict[str, Any]:
    """``doc_rank``, ``doc_hit``, ``doc_precision``, ``doc_recall``, ``doc_rr`` of a document
    ranking at ``k`` documents: the chunk definitions (evaluation.md) over documents."""
    m = retrieval(ranking, expected_docs, k, expect)  # type: ignore[arg-type]  # None never matches
    return {
        "doc_rank": m["rank"],
        "doc_hit": m["hit"],
        "doc_precision": m["precision"],
        "doc_recall": m["recall"],
        "doc_rr": m["rr"],
    }


def corpus_doc_of(corpus: Mapping[str, Any] | None) -> DocOf | None:
    """chunk id -> its ``doc`` in a loaded corpus (None without one)."""
    if corpus is None:
        return None
    chunks = getattr(corpus, "_chunks", corpus)
    get = chunks.get

    def doc_of(cid: str) -> str | None:
        ch = get(cid)
        d = getattr(ch, "doc", None) if ch is not None else None
        return d if isinstance(d, str) and d else None

    return doc_of


def stored_doc_positions(records: Sequence[Mapping[str, Any]]) -> Any:
    """:class:`~ragtriage.core.metrics.Positions` of the expected documents in the stored
    ``doc_ranking`` of every record scored on documents: ``doc_hit@5`` and the other
    document rates at any k, with no new call (``error`` and ``unlabelled`` cases left out)."""
    from .diagnosis import NOT_SCORED
    from .metrics import first_positions

    keep = [r for r in records if r.get("reason") not in NOT_SCORED and "doc_hit" in r]
    return first_positions(
        [list(r.get("doc_ranking") or ()) for r in keep],
        [list(r.get("expected_docs") or ()) for r in keep],
        [r.get("expect") or "any" for r in keep],
    )


def doc_retrieval_at(records: Sequence[Mapping[str, Any]], k: int) -> dict[str, float | None]:
    """doc_hit, doc_recall, doc_precision, doc_mrr at ``k`` documents from stored records."""
    from .metrics import retrieval_means

    return {"doc_" + m: v for m, v in retrieval_means(stored_doc_positions(records), k).items()}


def doc_miss(rec: Mapping[str, Any], k: int | None) -> str:
    """What a ``retrieval-miss`` scored on documents means, for people: no chunk of an
    expected document among the first k documents."""
    want = [d for d in rec.get("expected_docs") or () if isinstance(d, str)]
    ranked = rec.get("doc_ranking") or []
    top = ranked[:k] if k else ranked
    missing = [d for d in want if d not in top] or want
    many = len(missing) > 1
    what = f"document{'s' if many else ''} {', '.join(missing)}"
    where = f" (first expected at document rank {rec['doc_rank']})" if rec.get("doc_rank") else ""
    within = f"the top {k} documents" if k else "the ranking"
    return f"no chunk of the expected {what} in {within}{where}"
