"""Score one case: the system's result plus the test set's labels -> every
computed field of a run-file case line (formats.md §4).

:func:`make_record` is pure and needs no system call: :func:`rescore` (and the
triage screen) use it to recompute a case after a relabel, from the ranking and
answer stored in the run file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, TypeVar

from .diagnosis import diagnose
from .docrank import doc_metrics
from .gold import Gold, case_doc_ranking, quote_gold
from .grounding import cited_ids, decline_phrases, ground, is_abstention, is_correct
from .metrics import retrieval
from .quotes import CaseGold
from .records import CaseRecord, Computed

# after ``rr``, for a case with document gold (``expected_docs``) only: docrank.DOC_FIELDS
_Out = TypeVar("_Out", Computed, CaseRecord)  # the computed fields alone, or in a whole record
#: (rank, hit, precision, recall, rr) of one case, as :func:`.metrics.retrieval` gives them
Retrieved = tuple[int, bool | None, float, float | None, float | None]

COMPUTED_FIELDS = (
    "rank",
    "hit",
    "precision",
    "recall",
    "rr",
    "abstained",
    "supported",
    "why",
    "correct",
    "reason",
)
# written only when not empty, and only when the corpus is known (``chunk_text_lookup.known``)
UNKNOWN_FIELDS = ("unknown_ranked", "unknown_cited")
RESULT_FIELDS = (
    "ranking",
    "docs",
    "scores",
    "answer",
    "prompt_ids",
    "cited",
    "supported",
    "tokens",
    "latency_ms",
    "error",
)


class ChunkText:
    """A ``chunk_text_lookup`` that also knows the corpus's ids: ``lookup(id)`` is the
    chunk's text (or None), ``lookup.known(id)`` whether the corpus holds that chunk. The
    scoring records the ranked and cited ids it does not hold (``unknown_ranked``,
    ``unknown_cited``) and never counts a citation of one as support; a plain function as
    the lookup means no corpus to tell (nothing recorded)."""

    __slots__ = ("text", "known", "ids")

    def __init__(
        self, text: Callable[[str], str | None], known: Callable[[str], bool], ids: Any = None
    ) -> None:
        self.text = text
        self.known = known
        self.ids = ids  # the corpus's ids (a container), for the common case at C speed

    def __call__(self, cid: str) -> str | None:
        return self.text(cid)


def external_verdict(result: Mapping[str, Any]) -> bool | None:
    """The system's own ``supported`` verdict, if it gave one. A stored run-file
    record (it has a ``reason``) keeps that verdict under ``external_supported``."""
    if "reason" in result:
        v = result.get("external_supported")
    else:
        v = result.get("supported")
    return v if isinstance(v, bool) else None


def _phrases(settings: object) -> tuple[str, ...]:
    language = getattr(settings, "language", None)
    decline = getattr(settings, "decline", None)
    try:
        return _phrases_cached(language, decline)
    except TypeError:  # a list of phrases (not hashable)
        return decline_phrases(language, decline)


@lru_cache(maxsize=64)
def _phrases_cached(language: str | None, decline: Iterable[str] | None) -> tuple[str, ...]:
    return decline_phrases(language, decline)


def _retrieval_fields(
    out: Computed | CaseRecord,
    ranking: Any,
    expected: tuple[str, ...] | list[str],
    expect: str,
    k: int,
    by_docs: bool,
    retrieved: Retrieved | None = None,
) -> bool | None:
    """``rank``, ``hit``, ``precision``, ``recall``, ``rr`` into ``out``, in that order; the
    hit. A case with document gold and no chunk gold (``by_docs``) has none of them (null,
    rank 0); ``retrieved``: the five already computed (:mod:`.columnar`)."""
    if retrieved is not None:
        rank, hit, precision, recall, rr = retrieved
        out["rank"] = rank
        out["hit"] = hit
        out["precision"] = precision
        out["recall"] = recall
        out["rr"] = rr
        return hit
    if not expected and by_docs:
        out["rank"] = 0
        out["hit"] = out["precision"] = out["recall"] = out["rr"] = None
        return None
    if len(expected) == 1:  # the common case, as metrics.retrieval computes it
        if k < 1:
            raise ValueError("k must be 1 or more")
        try:
            first = (ranking.index if type(ranking) is list else list(ranking).index)(expected[0])
        except ValueError:
            out["rank"] = 0
            out["hit"] = False
            out["precision"] = 0 / k
            out["recall"] = 0.0
            out["rr"] = 0.0
            return False
        rank = first + 1
        hits = 1 if first < k else 0
        out["rank"] = rank
        out["hit"] = hits >= 1
        out["precision"] = hits / k
        out["recall"] = hits / 1
        out["rr"] = 1.0 / rank if rank <= k else 0.0
        return hits >= 1
    ret = retrieval(ranking, expected, k, expect)
    out["rank"] = ret["rank"]
    out["hit"] = ret["hit"]
    out["precision"] = ret["precision"]
    out["recall"] = ret["recall"]
    out["rr"] = ret["rr"]
    got: bool | None = ret["hit"]
    return got


def _found(
    out: Computed | CaseRecord,
    case: Any,
    ranking: Any,
    expected: tuple[str, ...] | list[str],
    expect: str,
    k: int,
    docs: list[str | None] | None,
    retrieved: Retrieved | None,
) -> tuple[bool | None, bool]:
    """The retrieval fields of both levels into ``out``: (what was found — the chunk hit, or
    the document hit when the case has no chunk gold —, whether documents were scored)."""
    by_docs = bool(_docs_of(case)) and not case.unanswerable
    if retrieved is not None and not case.expected and (by_docs or bool(getattr(case, "evidence", ()))):
        retrieved = None  # computed from `expected` alone: not this case's gold
    hit = _retrieval_fields(out, ranking, expected, expect, k, by_docs, retrieved)
    scored_docs = bool(_docs_of(case)) and docs is not None
    if scored_docs and docs is not None:
        dm = doc_metrics(docs, _docs_of(case), k, case.expect)
        out.update(dm)  # type: ignore[typeddict-item]  # dm: the doc_* keys of Computed, as a plain dict
        if not expected:  # no chunk gold: the document decides what was found
            hit = dm["doc_hit"]
    return hit, scored_docs


def _score(
    case: Any,
    result: Mapping[str, Any],
    k: int,
    chunk_text_lookup: Callable[[str], str | None],
    settings: Any,
    out: _Out,
    verdict: bool | None,
    expected: tuple[str, ...] | list[str],
    expect: str,
    docs: list[str | None] | None,
    retrieved: Retrieved | None = None,
) -> _Out:
    """The computed fields, added to ``out`` in COMPUTED_FIELDS order (one pass, no
    intermediate dicts: this runs once per case of a 100k-case run). ``expected`` and
    ``expect``: the chunk gold (the case's own, or its resolved quotes); ``docs``: the
    document ranking (None when no document is known); ``retrieved``: the retrieval fields
    already computed for many cases at once (:mod:`.columnar`), used when they were computed
    from the gold scored here (the case's own ``expected``)."""
    error = result.get("error")
    ranking = result.get("ranking") or []
    hit, scored_docs = _found(out, case, ranking, expected, expect, k, docs, retrieved)
    answer = result.get("answer")
    if answer is not None and not isinstance(answer, str):
        answer = str(answer)
    phrases = _phrases(settings)
    abstained = is_abstention(answer, phrases)
    known = getattr(chunk_text_lookup, "known", None)
    cite = getattr(settings, "cite", None) or "inline"
    prompt_ids = result.get("prompt_ids")
    if prompt_ids is None:
        prompt_ids = list(ranking[:k])
    cited: list[str] | None = None
    if verdict is not None:
        why = "" if verdict else "judged unsupported"
        supported = verdict
    else:
        why, cited = ground(
            answer,
            prompt_ids,
            chunk_text_lookup if known is None else chunk_text_lookup.text,  # type: ignore[attr-defined]  # has .known: a ChunkText
            getattr(settings, "language", None),
            phrases,
            abstained,
            cite,
            result.get("cited"),
            known,
        )
        supported = not why
    correct = is_correct(case, answer, abstained)
    if error:
        supported = False
        correct = False
        why = f"error: {error}"
    reason = diagnose(
        error=bool(error),
        unanswerable=case.unanswerable,
        unlabelled=not case.unanswerable and not expected and not scored_docs,
        hit=hit,
        abstained=abstained,
        correct=correct,
        supported=supported,
    )
    # no text for an unlabelled case here: `why` is empty exactly when supported (formats.md §4);
    # the reason itself says the case has no expected chunk
    out["abstained"] = abstained
    out["supported"] = supported
    out["why"] = why
    out["correct"] = correct
    out["reason"] = reason
    if known is not None:
        if cited is None:
            cited = cited_ids(answer, prompt_ids or (), cite, result.get("cited"))
        ids = chunk_text_lookup.ids  # type: ignore[attr-defined]
        top = ranking[:k]
        if ids is None or not all(map(ids.__contains__, top)) or not all(map(ids.__contains__, cited)):
            _unknown_ids(out, top, cited, known, ids)  # (most cases: every id is in the corpus)
    return out


def _unknown_ids(
    out: Computed | CaseRecord, top: Any, cited: list[str], known: Callable[[str], bool], ids: Any
) -> None:
    """``unknown_ranked`` (of the first k ranked ids) and ``unknown_cited``: the ids the
    corpus does not hold, in order, each once; a field is written only when not empty."""
    if ids is not None:  # most ids are in the corpus: one C-level look-up each
        top = [c for c in top if c not in ids]
        cited = [c for c in cited if c not in ids]
    ranked = [c for c in dict.fromkeys(top) if type(c) is str and not known(c)]
    if ranked:
        out["unknown_ranked"] = ranked
    cites = [c for c in cited if not known(c)]
    if cites:
        out["unknown_cited"] = cites


def _docs_of(case: Any) -> tuple[str, ...]:
    return getattr(case, "expected_docs", ())


def _chunk_gold(
    case: Any, result: Mapping[str, Any], gold: Gold | None
) -> tuple[tuple[str, ...], str, CaseGold | None]:
    """(chunk ids, expect, the quotes' resolution or None) a case is scored on: its own
    ``expected``, else its quotes when every one resolved (quotes.md rule), else none."""
    qg = quote_gold(case, gold, result)
    if case.expected:
        return case.expected, case.expect, qg
    if qg is not None and qg.complete:
        return qg.ids, qg.expect, qg
    return (), case.expect, qg


_NOT_EXTRA = frozenset(RESULT_FIELDS) | {"id", "type"}


def make_record(
    case: Any,
    result: Mapping[str, Any],
    k: int,
    chunk_text_lookup: Callable[[str], str | None],
    settings: Any,
    retrieved: Retrieved | None = None,
    *,
    gold: Gold | None = None,
) -> CaseRecord:
    """A run-file case line: the case's labels, the system result (formats.md §3, or a
    stored record), the computed fields. ``gold``: the chunks' documents and the quotes'
    resolution (:mod:`.gold`); without it a stored record keeps its own. ``retrieved``: the
    retrieval fields when they were computed for many cases at once (:mod:`.columnar`)."""
    expected, expect, qg = _chunk_gold(case, result, gold)
    rec: CaseRecord = {"type": "case", "id": case.id}
    if case.topic is not None:
        rec["topic"] = case.topic
    rec["question"] = case.question
    docs = _gold_fields(rec, case, result, gold, expected, expect, qg)
    get = result.get
    # one key at a time (not a loop over names) so each is checked against CaseRecord
    if get("scores") is not None:
        rec["scores"] = result["scores"]
    if get("prompt_ids") is not None:
        rec["prompt_ids"] = result["prompt_ids"]
    if get("cited") is not None:
        rec["cited"] = result["cited"]
    if get("tokens") is not None:
        rec["tokens"] = result["tokens"]
    if get("latency_ms") is not None:
        rec["latency_ms"] = result["latency_ms"]
    rec["answer"] = get("answer")
    verdict = external_verdict(result)
    if verdict is not None:
        rec["external_supported"] = verdict
    if get("error"):
        rec["error"] = str(result["error"])
    if not result.keys() <= _NOT_EXTRA:
        extra = {key: v for key, v in result.items() if key not in _NOT_EXTRA}
        if extra and "reason" not in result:
            rec["extra"] = extra
        elif "extra" in result:
            rec["extra"] = result["extra"]
    if "judge" in result and "reason" in result:  # a stored verdict (judge.md) survives a rescore
        rec["judge"] = result["judge"]
    return _score(
        case, result, k, chunk_text_lookup, settings, rec, verdict, expected, expect, docs, retrieved
    )


def _gold_fields(
    rec: CaseRecord,
    case: Any,
    result: Mapping[str, Any],
    gold: Gold | None,
    expected: tuple[str, ...],
    expect: str,
    qg: Any,
) -> list[str | None] | None:
    """The labels a record is scored on (its chunk and document gold, the quotes'
    resolution), the ranking and its documents, in the order written; the document ranking."""
    rec["expected"] = list(expected)
    if expect != "any":
        rec["expect"] = expect
    if _docs_of(case):
        rec["expected_docs"] = list(_docs_of(case))
    if qg is not None:
        rec["evidence"] = [r.to_dict() for r in qg.resolutions]
    if case.unanswerable:
        rec["unanswerable"] = True
    rec["ranking"] = list(result.get("ranking") or [])
    if result.get("docs") is not None:
        rec["docs"] = result["docs"]
    docs = case_doc_ranking(result, gold) if _docs_of(case) else None
    if docs is not None:
        rec["doc_ranking"] = docs
    return docs


def rescore(
    record: CaseRecord,
    case: Any,
    k: int,
    chunk_text_lookup: Callable[[str], str | None],
    settings: Any,
    *,
    gold: Gold | None = None,
) -> CaseRecord:
    """A stored record recomputed after the case changed (e.g. a relabel), no system call."""
    return make_record(case, record, k, chunk_text_lookup, settings, gold=gold)
