"""Which cases belong together: the source document of each case's gold, or its
``topic``. Questions written from one document are not independent (one re-chunking
moves all of them), so intervals and comparisons resample these clusters, not cases.

``by``: ``doc`` (the default; the ``doc`` field of the corpus chunk of the case's
first expected id, else the case's first ``expected_docs``), ``topic`` (the case's topic) or ``none``. A case with no gold
(unanswerable, a draft), a chunk without ``doc``, or no topic is a cluster of its
own, so a corpus without ``doc`` fields or a set without topics is simply
unclustered.

Resampling clusters needs enough of them: with fewer than ``MIN_CLUSTERS`` the
cluster bootstrap is too narrow and the cluster sign-flip test cannot reach a small
p at all (3 documents allow 2³ = 8 sign patterns, so p ≥ 0.125 whatever happened).
:func:`resolve` then treats the cases as independent and its note says so, since
intervals may then be too narrow if the documents differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

CLUSTER_BY = ("doc", "topic", "none")
MIN_CLUSTERS = 10


def gold_docs(corpus_path: str | Path | None, chunk_ids: Iterable[str]) -> dict[str, str]:
    """``doc`` of each chunk named (streamed: a million-chunk corpus is one pass); {} when the
    corpus cannot be read (the cases are then unclustered; nothing here is an error)."""
    wanted = set(chunk_ids)
    if corpus_path is None or not wanted:
        return {}
    from .corpus import iter_chunks, loaded_corpus
    from .errors import CorpusError

    out: dict[str, str] = {}
    whole = loaded_corpus(corpus_path)
    if whole is not None:  # read already by this command (the run's corpus)
        for cid in wanted:
            ch = whole.get(cid)
            if ch is not None and isinstance(ch.doc, str) and ch.doc:
                out[cid] = ch.doc
        return out
    try:
        for ch in iter_chunks(corpus_path, problems=[]):
            if ch.id in wanted and isinstance(ch.doc, str) and ch.doc:
                out[ch.id] = ch.doc
    except (CorpusError, OSError):
        return out
    return out


def labels(
    records: Sequence[Mapping[str, Any]], by: str, docs: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Cluster label per case id (a singleton label when the case has no cluster)."""
    out: dict[str, str] = {}
    for r in records:
        cid = r["id"]
        label = None
        if by == "doc":
            exp = r.get("expected") or ()
            label = (docs or {}).get(exp[0]) if exp else None
            if label is None and r.get("expected_docs"):  # document gold: its first document
                label = r["expected_docs"][0]
            label = None if label is None else f"doc:{label}"
        elif by == "topic":
            topic = r.get("topic")
            label = f"topic:{topic}" if isinstance(topic, str) and topic else None
        out[cid] = label if label is not None else f"case:{cid}"
    return out


def for_records(
    records: Sequence[Mapping[str, Any]],
    by: str,
    corpus_path: str | Path | None,
    docs: Mapping[str, str] | None = None,
) -> dict[str, str] | None:
    """Cluster labels of ``records`` by ``by``, None for ``none``; ``docs`` (chunk id -> its
    ``doc``, e.g. from a corpus already in memory) spares reading the corpus file."""
    if by == "none":
        return None
    if docs is None:
        docs = (
            gold_docs(corpus_path, (r["expected"][0] for r in records if r.get("expected")))
            if by == "doc"
            else {}
        )
    return labels(records, by, docs)


def describe(lab: Mapping[str, str] | None, by: str) -> str:
    """``"12 documents (48 cases share one)"`` — for the reports' notes."""
    if not lab:
        return "cases resampled one by one (no clusters)"
    from collections import Counter

    sizes = Counter(lab.values())
    shared = sum(n for n in sizes.values() if n > 1)
    if not shared:
        return "cases resampled one by one (no two share a " + ("document" if by == "doc" else "topic") + ")"
    what = "documents" if by == "doc" else "topics"
    multi = sum(1 for n in sizes.values() if n > 1)
    return f"{len(sizes)} clusters: {shared} cases share {multi} {what}, resampled together"


def resolve(
    records: Sequence[Mapping[str, Any]],
    by: str,
    corpus_path: str | Path | None,
    docs: Mapping[str, str] | None = None,
) -> tuple[dict[str, str] | None, str]:
    """(labels to resample by, or None for case by case; the note that says which and why)."""
    labels = for_records(records, by, corpus_path, docs)
    if labels is None:
        return None, "cases resampled one by one (--cluster none)"
    distinct = len(set(labels.values()))
    shared = len(labels) - distinct
    if shared and distinct < MIN_CLUSTERS:
        what = "documents" if by == "doc" else "topics"
        return None, (
            f"cases resampled one by one: their {len(labels)} cases come from only {distinct} clusters of "
            f"{what}, too few to resample ({MIN_CLUSTERS} or more needed); intervals may be too narrow "
            f"if the {what} differ"
        )
    return labels, describe(labels, by)
