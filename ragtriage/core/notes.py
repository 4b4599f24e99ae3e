"""Review notes: what a person found about a case, kept beside the test set.

``<testset stem>.notes.jsonl`` in the test set's folder, one line per note::

    {"case": id, "note": str, "answer_sha": fingerprint of the answer it was about | null,
     "run": run file name | null, "by": str, "when": ISO-8601 UTC}

A review note is about a case *as a system answered it*: it follows the case to
every later run (triage and Cases show the latest note of each case, and say
when it was about another answer than the one shown). It is not the test set's
own ``notes:`` field, which is part of the case (for whoever maintains the test
set) and is edited and saved with the case. An empty ``note`` removes the
case's note. Like the grades file, the file is only appended to — one write per
line — so two people's notes merge in git as added lines (``*.notes.jsonl
merge=union``), and a cut-off or conflicted line is skipped, never fatal.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .clock import utc_now
from .errors import InputError, Problem
from .files import append_line
from .text import fingerprint

_MARKERS = (b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||")


@dataclass(frozen=True)
class Note:
    case: str
    note: str
    answer_sha: str | None
    run: str | None
    by: str
    when: str

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "note": self.note,
            "answer_sha": self.answer_sha,
            "run": self.run,
            "by": self.by,
            "when": self.when,
        }

    def about(self, record: Mapping[str, Any] | None) -> bool:
        """Was this note written about the answer in ``record`` (the same words)?"""
        answer = record.get("answer") if record is not None else None
        return (
            self.answer_sha is not None and isinstance(answer, str) and fingerprint(answer) == self.answer_sha
        )


def notes_path(testset_path: str | os.PathLike[str]) -> Path:
    """``shop-es.yaml`` -> ``shop-es.notes.jsonl`` in the same folder."""
    p = Path(testset_path)
    return p.with_name(p.stem + ".notes.jsonl")


def read_notes(path: str | os.PathLike[str]) -> tuple[dict[str, Note], list[Problem]]:
    """case id -> its latest note (removed ones left out), and warnings for skipped lines."""
    p = Path(path)
    latest: dict[str, Note] = {}
    warnings: list[Problem] = []
    if not p.is_file():
        return latest, warnings
    for lineno, raw in enumerate(p.read_bytes().splitlines(), 1):
        if not raw.strip():
            continue
        if raw.startswith(_MARKERS):
            warnings.append(Problem(str(p), lineno, "git conflict marker skipped", severity="warning"))
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            obj = None
        note = _note(obj)
        if note is None:
            warnings.append(Problem(str(p), lineno, "note skipped: not a note line", severity="warning"))
            continue
        old = latest.get(note.case)
        if old is None or note.when >= old.when:
            latest[note.case] = note
    return {k: v for k, v in latest.items() if v.note}, warnings


def _note(obj: Any) -> Note | None:
    if not isinstance(obj, dict):
        return None
    case, text = obj.get("case"), obj.get("note")
    if not isinstance(case, str) or not case or not isinstance(text, str):
        return None
    sha, run = obj.get("answer_sha"), obj.get("run")
    return Note(
        case,
        text,
        sha if isinstance(sha, str) else None,
        run if isinstance(run, str) else None,
        str(obj.get("by") or ""),
        str(obj.get("when") or ""),
    )


def make_note(
    case_id: str,
    text: str,
    record: Mapping[str, Any] | None,
    run: str | None,
    by: str,
    when: str | None = None,
) -> Note:
    """A note on ``case_id``, about the answer in ``record`` (the run's case line) if any."""
    answer = record.get("answer") if record is not None else None
    sha = fingerprint(answer) if isinstance(answer, str) else None
    return Note(case_id, " ".join(text.split()), sha, run, by, when or utc_now())


def append_note(path: str | os.PathLike[str], note: Note) -> None:
    """Add one line to the notes file (created when missing); never rewrites it."""
    try:
        append_line(path, orjson.dumps(note.to_json(), option=orjson.OPT_APPEND_NEWLINE))
    except OSError as e:
        raise InputError(Problem(str(path), None, f"cannot add the note ({e.strerror or e})")) from None
