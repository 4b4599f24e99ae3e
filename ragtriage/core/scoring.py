"""Score one case: the system's result plus the test set's labels -> every
computed field of a run-file case line (formats.md §4).

:func:`score_case` is pure and needs no system call: the triage screen uses it
to recompute a case after a relabel, from the ranking and answer stored in the
run file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, TypeVar

from .diagnosis import diagnose
from .docrank import doc_metrics
from .gold import Gold, case_doc_ranking, quote_gold
from .grounding import check_grounding, decline_phrases, is_abstention, is_correct
from .metrics import retrieval
from .records import CaseRecord, Computed

# after ``rr``, for a case with document gold (``expected_docs``) only: docrank.DOC_FIELDS
_Out = TypeVar("_Out", Computed, CaseRecord)  # the computed fields alone, or in a whole record

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
RESULT_FIELDS = (
    "ranking",
    "docs",
    "scores",
    "answer",
    "prompt_ids",
    "supported",
    "tokens",
    "latency_ms",
    "error",
)


def external_verdict(result: Mapping[str, Any]) -> bool | None:
    """The system's own ``supported`` verdict, if it gave one. A stored run-file
    record (it has a ``reason``) keeps that verdict under ``external_supported``."""
    if "reason" in result:
        v = result.get("external_supported")
    else:
        v = result.get("supported")
    return v if isinstance(v, bool) else None


def _phrases(settings) -> tuple[str, ...]:
    language = getattr(settings, "language", None)
    decline = getattr(settings, "decline", None)
    try:
        return _phrases_cached(language, decline)
    except TypeError:  # a list of phrases (not hashable)
        return decline_phrases(language, decline)


@lru_cache(maxsize=64)
def _phrases_cached(language, decline) -> tuple[str, ...]:
    return decline_phrases(language, decline)


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
) -> _Out:
    """The computed fields, added to ``out`` in COMPUTED_FIELDS order (one pass, no
    intermediate dicts: this runs once per case of a 100k-case run). ``expected`` and
    ``expect``: the chunk gold (the case's own, or its resolved quotes); ``docs``: the
    document ranking (None when no document is known)."""
    error = result.get("error")
    ranking = result.get("ranking") or []
    if not expected and _docs_of(case) and not case.unanswerable:  # document gold alone
        out["rank"] = 0
        hit = None
        out["hit"] = None
        out["precision"] = None
        out["recall"] = None
        out["rr"] = None
    elif len(expected) == 1:  # the common case, as metrics.retrieval computes it
        if k < 1:
            raise ValueError("k must be 1 or more")
        try:
            first = (ranking.index if type(ranking) is list else list(ranking).index)(expected[0])
        except ValueError:
            out["rank"] = 0
            hit = False
            out["hit"] = False
            out["precision"] = 0 / k
            out["recall"] = 0.0
            out["rr"] = 0.0
        else:
            rank = first + 1
            hits = 1 if first < k else 0
            out["rank"] = rank
            hit = hits >= 1
            out["hit"] = hit
            out["precision"] = hits / k
            out["recall"] = hits / 1
            out["rr"] = 1.0 / rank if rank <= k else 0.0
    else:
        ret = retrieval(ranking, expected, k, expect)
        out["rank"] = ret["rank"]
        hit = ret["hit"]
        out["hit"] = hit
        out["precision"] = ret["precision"]
        out["recall"] = ret["recall"]
        out["rr"] = ret["rr"]
    scored_docs = bool(_docs_of(case)) and docs is not None
    if scored_docs:
        dm = doc_metrics(docs, _docs_of(case), k, case.expect)  # type: ignore[arg-type]
        out["doc_rank"] = dm["doc_rank"]
        out["doc_hit"] = dm["doc_hit"]
        out["doc_precision"] = dm["doc_precision"]
        out["doc_recall"] = dm["doc_recall"]
        out["doc_rr"] = dm["doc_rr"]
        if not expected:  # no chunk gold: the document decides what was found
            hit = dm["doc_hit"]
    answer = result.get("answer")
    if answer is not None and not isinstance(answer, str):
        answer = str(answer)
    phrases = _phrases(settings)
    abstained = is_abstention(answer, phrases)
    if verdict is not None:
        why = "" if verdict else "judged unsupported"
        supported = verdict
    else:
        prompt_ids = result.get("prompt_ids")
        if prompt_ids is None:
            prompt_ids = list(ranking[:k])
        why = check_grounding(
            answer,
            prompt_ids,
            chunk_text_lookup,
            language=getattr(settings, "language", None),
            decline=phrases,
            abstained=abstained,
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
    return out


def score_case(
    case: Any,
    result: Mapping[str, Any],
    k: int,
    chunk_text_lookup: Callable[[str], str | None],
    settings: Any,
    *,
    gold: Gold | None = None,
) -> Computed:
    """Every §4 computed field for ``case`` given the system ``result`` (a §3 dict
    or a stored case record) at cut-off ``k``.

    ``chunk_text_lookup(id)`` returns a chunk's text (None if unknown);
    ``settings`` is the test set's :class:`~ragtriage.core.schema.Settings`
    (language and decline phrases); ``gold`` the documents and quotes (:mod:`.gold`)."""
    computed: Computed = {}
    expected, expect, _ = _chunk_gold(case, result, gold)
    docs = case_doc_ranking(result, gold) if _docs_of(case) else None
    return _score(
        case,
        result,
        k,
        chunk_text_lookup,
        settings,
        computed,
        external_verdict(result),
        expected,
        expect,
        docs,
    )


def _docs_of(case: Any) -> tuple[str, ...]:
    return getattr(case, "expected_docs", ())


def _chunk_gold(case: Any, result: Mapping[str, Any], gold: Gold | None):
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
    *,
    gold: Gold | None = None,
) -> CaseRecord:
    """A run-file case line: the case's labels, the system result (formats.md §3, or a
    stored record), the computed fields. ``gold``: the chunks' documents and the quotes'
    resolution (:mod:`.gold`); without it a stored record keeps its own."""
    expected, expect, qg = _chunk_gold(case, result, gold)
    rec: CaseRecord = {"type": "case", "id": case.id}
    if case.topic is not None:
        rec["topic"] = case.topic
    rec["question"] = case.question
    rec["expected"] = list(expected)
    if expect != "any":
        rec["expect"] = expect
    if _docs_of(case):
        rec["expected_docs"] = list(_docs_of(case))
    if qg is not None:
        rec["evidence"] = [r.to_dict() for r in qg.resolutions]
    if case.unanswerable:
        rec["unanswerable"] = True
    get = result.get
    rec["ranking"] = list(get("ranking") or [])
    if get("docs") is not None:
        rec["docs"] = result["docs"]
    docs = case_doc_ranking(result, gold) if _docs_of(case) else None
    if docs is not None:
        rec["doc_ranking"] = docs
    # one key at a time (not a loop over names) so each is checked against CaseRecord
    if get("scores") is not None:
        rec["scores"] = result["scores"]
    if get("prompt_ids") is not None:
        rec["prompt_ids"] = result["prompt_ids"]
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
    return _score(case, result, k, chunk_text_lookup, settings, rec, verdict, expected, expect, docs)


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
