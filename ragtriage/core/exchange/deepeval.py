"""``deepeval``: goldens as a JSON array (or ``{"goldens": [...]}``, or deepeval's own JSONL
save): ``input``, ``expected_output``, ``context``, ``comments``, ``source_file``; every
other case field travels in ``additional_metadata``."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..errors import Problem
from ..schema import CASE_FIELDS, Case
from .common import (
    Ids,
    Imported,
    TextMatcher,
    contexts_to_ids,
    draft_and_reference_notes,
    json_array_items,
    jsonl_objects,
    note_counts,
    str_list,
    validate,
)

DEEPEVAL_RUN_FIELDS = ("actual_output", "retrieval_context", "tools_called")
DEEPEVAL_KNOWN = ("input", "expected_output", "context", "comments", "additional_metadata", "source_file")
_DEEPEVAL_ALIASES = {
    "expectedOutput": "expected_output",
    "actualOutput": "actual_output",
    "retrievalContext": "retrieval_context",
    "additionalMetadata": "additional_metadata",
    "sourceFile": "source_file",
    "toolsCalled": "tools_called",
    "expectedTools": "expected_tools",
}


def _golden(c: Case, texts: Mapping[str, str]) -> dict[str, Any]:
    g: dict[str, Any] = {"input": c.question}
    if c.answer is not None:
        g["expected_output"] = c.answer
    g["context"] = [texts[cid] for cid in c.expected if cid in texts] if c.expected else list(c.evidence)
    if c.notes is not None:
        g["comments"] = c.notes
    meta: dict[str, Any] = {"id": c.id}
    if c.topic is not None:
        meta["topic"] = c.topic
    meta["expected"] = list(c.expected)
    if c.expected_docs:
        meta["expected_docs"] = list(c.expected_docs)
    if c.evidence:
        meta["evidence"] = list(c.evidence)
    if c.expect != "any":
        meta["expect"] = c.expect
    if c.must_contain:
        meta["must_contain"] = list(c.must_contain)
    if c.unanswerable:
        meta["unanswerable"] = True
    if c.tags:
        meta["tags"] = list(c.tags)
    g["additional_metadata"] = meta
    return g


def export_deepeval(cases: Sequence[Case], texts: Mapping[str, str]) -> tuple[str, list[str]]:
    goldens = [_golden(c, texts) for c in cases]
    return json.dumps(goldens, ensure_ascii=False, indent=2) + "\n", []


def _is_jsonl(text: str) -> bool:
    """deepeval's ``save_as(file_type="jsonl")``: one golden object per line."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):  # not one JSON document (or one no reader takes)
        return True
    return not (isinstance(whole, dict) and "goldens" in whole)


def _goldens(text: str, name: str, problems: list[Problem]) -> Iterator[tuple[int, dict[str, Any]]]:
    if _is_jsonl(text):
        return jsonl_objects(text, name, problems)
    hint = " (deepeval goldens are a JSON array, {\"goldens\": [...]}, or one golden per line as JSONL)"
    return json_array_items(text, name, problems, key="goldens", hint=hint)


class _Tally:
    """What the notes of a deepeval import count."""

    def __init__(self) -> None:
        self.run_fields: Counter[str] = Counter()
        self.unknown: Counter[str] = Counter()
        self.meta_unknown: Counter[str] = Counter()
        self.counters: Counter[str] = Counter()
        self.references = 0
        self.drafts = 0

    def fields_of(self, obj: Mapping[str, Any]) -> None:
        for k, v in obj.items():
            if v in (None, [], ""):
                continue
            if k in DEEPEVAL_RUN_FIELDS:
                self.run_fields[k] += 1
            elif k not in DEEPEVAL_KNOWN:
                self.unknown[k] += 1

    def notes(self, res: Imported, generated: int) -> None:
        if generated:
            res.notes.append(f"{generated} golden(s) without additional_metadata.id: ids made from the input")
        draft_and_reference_notes(res, self.references, self.drafts, "expected_output", "context")
        note_counts(
            res.notes,
            self.run_fields,
            "`{key}` ({n} golden(s)) belongs to a run, not to a test set: not imported",
        )
        note_counts(res.notes, self.unknown, "field `{key}` ({n} golden(s)): not imported")
        note_counts(
            res.notes,
            self.meta_unknown,
            "additional_metadata `{key}` ({n} golden(s)): not a case field, not imported",
        )
        note_counts(res.notes, self.counters, "{key}: {n}")


class _Golden:
    """One golden becoming case fields; the first problem ends it (``ok`` False)."""

    def __init__(self, obj: dict[str, Any], name: str, line: int, problems: list[Problem]):
        self.obj, self.name, self.line, self.problems = obj, name, line, problems
        self.cid: str | None = None
        self.ok = True

    def problem(self, msg: str, fld: str) -> None:
        self.problems.append(Problem(self.name, self.line, msg, case=self.cid, field=fld))
        self.ok = False

    def string(self, key: str) -> str | None:
        v = self.obj.get(key)
        if v is not None and not isinstance(v, str):
            self.problem("must be a string", key)
            return None
        return v

    def notes_field(self) -> str | None:
        """``comments``, and ``source_file`` after them: neither is dropped for the other."""
        comments = self.string("comments")
        sf = self.obj.get("source_file")
        source = f"source file: {sf}" if isinstance(sf, str) and sf else None
        if comments is not None and source is not None:
            return f"{comments}\n{source}"
        return comments if comments is not None else source


def _meta_fields(meta: Mapping[str, Any], tally: _Tally) -> dict[str, Any]:
    fields = {}
    for k, v in meta.items():
        if k in CASE_FIELDS and k != "question":
            fields[k] = v
        else:
            tally.meta_unknown[k] += 1
    return fields


def _case(
    g: _Golden, q: str, ids: Ids, matcher: TextMatcher, tally: _Tally
) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The case fields and remembered context texts of one golden, or None after a problem."""
    meta = g.obj.get("additional_metadata") or {}
    if not isinstance(meta, dict):
        g.problem("must be an object", "additional_metadata")
        return None
    fields = _meta_fields(meta, tally)
    cid = fields.get("id")
    if isinstance(cid, str) and cid:
        ids.given(cid, g.line)
    else:
        cid = fields["id"] = ids.make(q, g.line)
    g.cid = cid
    fields["question"] = q
    texts = str_list(g.obj.get("context"), g.name, g.line, cid, "context", g.problems)
    if texts is None:
        return None
    given = fields.get("expected")
    if given is not None and not (isinstance(given, list) and all(isinstance(x, str) for x in given)):
        g.problem("must be a list of chunk ids", "additional_metadata.expected")
        return None
    quotes: list[str] = []
    expected, labels = contexts_to_ids(
        texts, given or [], matcher, tally.counters, None if "evidence" in fields else quotes
    )
    fields["expected"] = expected
    if quotes and not expected:
        fields["evidence"] = list(dict.fromkeys(quotes))
    eo = g.string("expected_output")
    notes = g.notes_field()
    if not g.ok:
        return None
    if eo is not None:
        fields["answer"] = eo
        if "id" not in meta:
            tally.references += 1
    if notes is not None:
        fields["notes"] = notes
    if (
        not expected
        and not fields.get("unanswerable")
        and not fields.get("evidence")
        and not fields.get("expected_docs")
    ):
        tally.drafts += 1
    return fields, labels


def import_deepeval(text: str, name: str, problems: list[Problem], matcher: TextMatcher) -> Imported:
    res = Imported()
    ids = Ids(name, problems)
    tally = _Tally()
    for line, raw in _goldens(text, name, problems):
        obj = {_DEEPEVAL_ALIASES.get(k, k): v for k, v in raw.items()}
        q = obj.get("input")
        if not isinstance(q, str) or not q.strip():
            problems.append(Problem(name, line, "is required (the question, a string)", field="input"))
            continue
        tally.fields_of(obj)
        made = _case(_Golden(obj, name, line, problems), q, ids, matcher, tally)
        if made is None:
            continue
        fields, labels = made
        case = validate(fields, name, line, problems)
        if case is not None:
            res.cases.append(case)
            res.labels.update(labels)
    tally.notes(res, ids.generated)
    return res
