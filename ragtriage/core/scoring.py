"""Score one case: the system's result plus the test set's labels -> every
computed field of a run-file case line (formats.md §4).

:func:`score_case` is pure and needs no system call: the triage screen uses it
to recompute a case after a relabel, from the ranking and answer stored in the
run file.
"""
from __future__ import annotations

from collections.abc import Callable

from .diagnosis import diagnose
from .grounding import check_grounding, decline_phrases, is_abstention, is_correct
from .metrics import retrieval

COMPUTED_FIELDS = ("rank", "hit", "precision", "recall", "rr", "abstained", "supported", "why", "correct", "reason")
RESULT_FIELDS = ("ranking", "scores", "answer", "prompt_ids", "supported", "tokens", "latency_ms", "error")


def external_verdict(result: dict) -> bool | None:
    """The system's own ``supported`` verdict, if it gave one. A stored run-file
    record (it has a ``reason``) keeps that verdict under ``external_supported``."""
    if "reason" in result:
        v = result.get("external_supported")
    else:
        v = result.get("supported")
    return v if isinstance(v, bool) else None


def score_case(case, result: dict, k: int, chunk_text_lookup: Callable[[str], str | None], settings) -> dict:
    """Every §4 computed field for ``case`` given the system ``result`` (a §3 dict
    or a stored case record) at cut-off ``k``.

    ``chunk_text_lookup(id)`` returns a chunk's text (None if unknown);
    ``settings`` is the test set's :class:`~ragtriage.core.schema.Settings`
    (language and decline phrases)."""
    error = result.get("error")
    ranking = result.get("ranking") or []
    ret = retrieval(ranking, case.expected, k, case.expect)
    answer = result.get("answer")
    if answer is not None and not isinstance(answer, str):
        answer = str(answer)
    language = getattr(settings, "language", None)
    phrases = decline_phrases(language, getattr(settings, "decline", None))
    abstained = is_abstention(answer, phrases)
    prompt_ids = result.get("prompt_ids")
    if prompt_ids is None:
        prompt_ids = list(ranking[:k])
    verdict = external_verdict(result)
    if verdict is not None:
        why = "" if verdict else "judged unsupported"
        supported = verdict
    else:
        why = check_grounding(answer, prompt_ids, chunk_text_lookup, language=language,
                              decline=phrases, abstained=abstained)
        supported = not why
    correct = is_correct(case, answer, abstained)
    if error:
        supported = False
        correct = False
        why = f"error: {error}"
    reason = diagnose(
        error=bool(error), unanswerable=case.unanswerable, unlabelled=case.unlabelled,
        hit=ret["hit"], abstained=abstained, correct=correct, supported=supported,
    )
    if reason == "unlabelled" and not why:
        why = "no expected chunk yet"
    return {
        "rank": ret["rank"],
        "hit": ret["hit"],
        "precision": ret["precision"],
        "recall": ret["recall"],
        "rr": ret["rr"],
        "abstained": abstained,
        "supported": supported,
        "why": why,
        "correct": correct,
        "reason": reason,
    }


def make_record(case, result: dict, k: int, chunk_text_lookup, settings) -> dict:
    """A run-file case line: the case's labels, the system result, the computed fields."""
    rec: dict = {"type": "case", "id": case.id}
    if case.topic is not None:
        rec["topic"] = case.topic
    rec["question"] = case.question
    rec["expected"] = list(case.expected)
    if case.expect != "any":
        rec["expect"] = case.expect
    if case.unanswerable:
        rec["unanswerable"] = True
    rec["ranking"] = list(result.get("ranking") or [])
    for f in ("scores", "prompt_ids", "tokens", "latency_ms"):
        if result.get(f) is not None:
            rec[f] = result[f]
    rec["answer"] = result.get("answer")
    verdict = external_verdict(result)
    if verdict is not None:
        rec["external_supported"] = verdict
    if result.get("error"):
        rec["error"] = str(result["error"])
    extra = {key: v for key, v in result.items() if key not in RESULT_FIELDS and key not in ("id", "type")}
    if extra and "reason" not in result:
        rec["extra"] = extra
    elif "extra" in result:
        rec["extra"] = result["extra"]
    rec.update(score_case(case, result, k, chunk_text_lookup, settings))
    return rec


def rescore(record: dict, case, k: int, chunk_text_lookup, settings) -> dict:
    """A stored record recomputed after the case changed (e.g. a relabel), no system call."""
    return make_record(case, record, k, chunk_text_lookup, settings)
