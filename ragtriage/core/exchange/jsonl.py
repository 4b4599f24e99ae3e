"""``jsonl``: ours, one case per line with every case field and the labels of its expected chunks."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import Problem
from ..schema import CASE_FIELDS, Case
from .common import (
    Ids,
    Imported,
    TextMatcher,
    case_dict,
    dumps,
    jsonl_objects,
    label_dict,
    note_counts,
    validate,
)


def export_jsonl(cases: Sequence[Case], labels: Mapping[str, Any]) -> str:
    out = []
    for c in cases:
        d = case_dict(c)
        d["labels"] = {cid: label_dict(labels[cid]) for cid in c.expected if cid in labels}
        out.append(dumps(d))
    return "".join(line + "\n" for line in out)


def _case_fields(
    obj: dict[str, Any], name: str, line: int, problems: list[Problem], unknown: dict[str, int]
) -> dict[str, Any]:
    """The case fields of one line; a near-miss field name is a problem (a typo would lose
    data silently in our own format), any other unknown field is counted for a note."""
    fields = {}
    for k, v in obj.items():
        if k in CASE_FIELDS:
            fields[k] = v
        elif k != "labels":
            close = difflib.get_close_matches(k, (*CASE_FIELDS, "labels"), n=1, cutoff=0.75)
            if close:
                cid = obj.get("id") if isinstance(obj.get("id"), str) else None
                problems.append(
                    Problem(name, line, f"unknown field (did you mean {close[0]!r}?)", case=cid, field=k)
                )
            else:
                unknown[k] = unknown.get(k, 0) + 1
    return fields


def _labels(
    obj: dict[str, Any], name: str, line: int, cid: str, problems: list[Problem]
) -> dict[str, Any] | None:
    labels = obj.get("labels") or {}
    if not isinstance(labels, dict):
        problems.append(Problem(name, line, "must be an object {chunk id: label}", case=cid, field="labels"))
        return None
    good = {}
    for chunk_id, label in labels.items():
        if isinstance(label, dict):
            good[chunk_id] = label
        else:
            problems.append(Problem(name, line, "must be an object", case=cid, field=f"labels.{chunk_id}"))
    return good


def import_jsonl(text: str, name: str, problems: list[Problem], matcher: TextMatcher) -> Imported:
    res = Imported()
    ids = Ids(name, problems)
    unknown: dict[str, int] = {}
    for line, obj in jsonl_objects(text, name, problems):
        fields = _case_fields(obj, name, line, problems, unknown)
        cid = fields.get("id")
        if not isinstance(cid, str):
            problems.append(Problem(name, line, "is required (a string)", field="id"))
            continue
        ids.given(cid, line)
        case = validate(fields, name, line, problems)
        labels = _labels(obj, name, line, cid, problems)
        if labels is None:
            continue
        res.labels.update(labels)
        if case is not None:
            res.cases.append(case)
    note_counts(res.notes, unknown, "field `{key}` ({n} line(s)) is not a ragtriage case field: not imported")
    return res
