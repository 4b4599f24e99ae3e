"""``ragas``: an EvaluationDataset as JSONL (``user_input``, ``reference``,
``reference_contexts``, ``reference_context_ids``); contexts without ids are found in
the corpus by their text. A run adds ``response``, ``retrieved_contexts`` and
``retrieved_context_ids``."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import Problem
from ..schema import Case
from .common import (
    Ids,
    Imported,
    TextMatcher,
    contexts_to_ids,
    draft_and_reference_notes,
    dropped,
    dumps,
    jsonl_objects,
    note_counts,
    str_list,
    validate,
)

#: ragas SingleTurnSample fields that describe one run of a system, not the test set
RAGAS_RUN_FIELDS = ("response", "retrieved_contexts", "retrieved_context_ids", "multi_responses")
RAGAS_KNOWN = ("user_input", "reference", "reference_contexts", "reference_context_ids")
#: ragas testset-generator fields, kept as tags
RAGAS_TAG_FIELDS = ("synthesizer_name", "persona_name", "query_style", "query_length")


def _sample(c: Case, texts: Mapping[str, str]) -> dict[str, Any]:
    ids = [cid for cid in c.expected if cid in texts]
    row: dict[str, Any] = {"user_input": c.question}
    if c.answer is not None:
        row["reference"] = c.answer
    if not c.expected and c.evidence:  # the passages themselves: ragas compares contexts by text
        row["reference_contexts"] = list(c.evidence)
        row["reference_context_ids"] = []
        return row
    row["reference_contexts"] = [texts[cid] for cid in ids]
    row["reference_context_ids"] = ids
    return row


def export_ragas(
    cases: Sequence[Case],
    texts: Mapping[str, str],
    run: Mapping[str, Mapping[str, Any]] | None = None,
    k: int | None = None,
) -> tuple[str, list[str]]:
    """One sample per case. With ``run`` (case id -> run record), each sample also carries
    what the system did: ``retrieved_contexts`` (texts of the first ``k`` ranked chunks,
    where known: the cut-off ragtriage scored, so ragas's context recall and precision
    measure what hit@k measured), ``retrieved_context_ids`` and ``response``."""
    out = []
    for c in cases:
        row = _sample(c, texts)
        rec = run.get(c.id) if run is not None else None
        if rec is not None:
            ranking = [cid for cid in (rec.get("ranking") or [])[:k] if isinstance(cid, str)]
            row["retrieved_contexts"] = [texts[cid] for cid in ranking if cid in texts]
            row["retrieved_context_ids"] = [cid for cid in ranking if cid in texts]
            if isinstance(rec.get("answer"), str):
                row["response"] = rec["answer"]
        out.append(dumps(row))
    notes = dropped(
        "ragas",
        cases,
        {
            "case ids": lambda c: True,
            "topic": lambda c: c.topic,
            "must_contain": lambda c: c.must_contain,
            "expect: all": lambda c: c.expect == "all",
            "expected_docs (ragas has no document gold)": lambda c: c.expected_docs,
            "evidence beside expected (the chunks' texts are the contexts)": lambda c: (
                c.expected and c.evidence
            ),
            "unanswerable": lambda c: c.unanswerable,
            "tags": lambda c: c.tags,
            "notes": lambda c: c.notes,
        },
    )
    if run is not None:
        notes.append(
            f"retrieved_contexts and retrieved_context_ids: the first {k} ranked chunks of each case "
            "(the run's k, as ragtriage scored it; --k N for another)"
            if k is not None
            else "retrieved_contexts and retrieved_context_ids: every ranked chunk (no k given)"
        )
        missing = sum(1 for c in cases if c.id not in run)
        if missing:
            notes.append(f"{missing} case(s) not in the run: exported without what the system did")
    return "".join(line + "\n" for line in out), notes


def run_chunk_ids(run_cases: Iterable[Mapping[str, Any]], k: int | None = None) -> set[str]:
    """Every chunk id a run ranked in its first ``k`` (whose texts a ragas export with ``--run`` needs)."""
    return {cid for rec in run_cases for cid in (rec.get("ranking") or [])[:k] if isinstance(cid, str)}


def _question(obj: dict[str, Any], name: str, line: int, problems: list[Problem]) -> str | None:
    q = obj.get("user_input")
    if isinstance(q, list):
        problems.append(
            Problem(
                name,
                line,
                "a multi-turn sample (a list of messages): only single-turn samples can become cases",
                field="user_input",
            )
        )
        return None
    if not isinstance(q, str) or not q.strip():
        problems.append(Problem(name, line, "is required (the question, a string)", field="user_input"))
        return None
    return q


def import_ragas(text: str, name: str, problems: list[Problem], matcher: TextMatcher) -> Imported:
    res = Imported()
    ids = Ids(name, problems)
    run_fields: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    counters: Counter[str] = Counter()
    references = 0
    drafts = 0
    for line, obj in jsonl_objects(text, name, problems):
        q = _question(obj, name, line, problems)
        if q is None:
            continue
        for k in obj:
            if k in RAGAS_RUN_FIELDS:
                run_fields[k] += 1
            elif k not in RAGAS_KNOWN and k not in RAGAS_TAG_FIELDS:
                unknown[k] += 1
        cid = ids.make(q, line)
        texts = str_list(obj.get("reference_contexts"), name, line, cid, "reference_contexts", problems)
        given = str_list(obj.get("reference_context_ids"), name, line, cid, "reference_context_ids", problems)
        if texts is None or given is None:
            continue
        quotes: list[str] = []
        expected, labels = contexts_to_ids(texts, given, matcher, counters, quotes)
        fields: dict[str, Any] = {"id": cid, "question": q, "expected": expected}
        if quotes and not expected:
            fields["evidence"] = list(dict.fromkeys(quotes))
        ref = obj.get("reference")
        if ref is not None:
            if not isinstance(ref, str):
                problems.append(Problem(name, line, "must be a string", case=cid, field="reference"))
                continue
            fields["answer"] = ref
            references += 1
        tags = [f"{k}:{obj[k]}" for k in RAGAS_TAG_FIELDS if isinstance(obj.get(k), str) and obj[k].strip()]
        if tags:
            fields["tags"] = [re.sub(r"\s+", "_", t) for t in tags]
        if not expected and not fields.get("evidence"):
            drafts += 1
        case = validate(fields, name, line, problems)
        if case is not None:
            res.cases.append(case)
            res.labels.update(labels)
    res.notes.append(f"case ids made from the questions ({ids.generated}): ragas samples have no id")
    draft_and_reference_notes(res, references, drafts, "reference", "reference contexts")
    note_counts(
        res.notes, run_fields, "`{key}` ({n} row(s)) belongs to a run, not to a test set: not imported"
    )
    note_counts(
        res.notes, unknown, "field `{key}` ({n} row(s)) is not a ragas field ragtriage knows: not imported"
    )
    note_counts(res.notes, counters, "{key}: {n}")
    return res
