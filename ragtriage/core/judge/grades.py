"""The expert's grades: ``<testset stem>.grades.jsonl`` beside the test set.

One line per grade (judge.md)::

    {"case": id, "answer_sha": fingerprint of the answer, "prompt_ids": [...],
     "supported": bool, "correct": bool|null, "by": str, "when": ISO-8601 UTC}

A grade belongs to one answer (``answer_sha``: the fingerprint the labels use
for chunk texts, over the whole answer); when the system later answers
otherwise, the old grade no longer applies and is kept for history. The file
is only ever appended to — one ``write`` of one line — so two people's grades
merge in git as two sets of added lines (``*.grades.jsonl merge=union`` in
``.gitattributes`` makes git take both sides). Reading takes several files at
once; for the same case and answer the latest ``when`` wins — compared as times
in UTC (``…T09:00:00-05:00`` is after ``…T10:00:00Z``), never as strings — and at
equal times the later line. A grade whose ``when`` is empty or not an ISO-8601
time is kept, ordered before every dated one, with a warning; a time without a
zone is read as UTC. Git conflict markers and cut-off lines are skipped with a
warning, never fatal. A grades file that is not a regular file (a FIFO, a
link to ``/dev/zero``) or is larger than :data:`MAX_BYTES` is not read: an
error-severity problem says so (``check`` and ``judge`` then exit 2).
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from ..clock import utc_now
from ..errors import InputError, Problem
from ..files import append_line, read_bounded, require_regular_file
from ..text import fingerprint

_MARKERS = (b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||")


@dataclass(frozen=True)
class Grade:
    case: str
    answer_sha: str
    prompt_ids: tuple[str, ...]
    supported: bool
    correct: bool | None
    by: str
    when: str

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "answer_sha": self.answer_sha,
            "prompt_ids": list(self.prompt_ids),
            "supported": self.supported,
            "correct": self.correct,
            "by": self.by,
            "when": self.when,
        }


def grades_path(testset_path: str | os.PathLike[str]) -> Path:
    """``shop-es.yaml`` -> ``shop-es.grades.jsonl`` in the same folder."""
    p = Path(testset_path)
    return p.with_name(p.stem + ".grades.jsonl")


def answer_sha(answer: str) -> str:
    return fingerprint(answer)


def default_grader() -> str:
    """Who grades: ``$RAGTRIAGE_GRADER``, else the ``grader`` setting of the user's config
    (:mod:`ragtriage.core.userconfig`, asked once by the app), else the login name."""
    from ..userconfig import grader_name

    try:
        return grader_name() or getpass.getuser()
    except (KeyError, OSError):  # no user name in this environment
        return "unknown"


def make_grade(
    record: Mapping[str, Any],
    supported: bool,
    correct: bool | None,
    by: str | None = None,
    when: str | None = None,
) -> Grade:
    """A grade of the answer in a run-file ``record``."""
    answer = record.get("answer")
    if not isinstance(answer, str):
        raise ValueError(f"case {record.get('id')!r} has no answer to grade")
    return Grade(
        case=record["id"],
        answer_sha=answer_sha(answer),
        prompt_ids=tuple(record.get("prompt_ids") or ()),
        supported=bool(supported),
        correct=correct,
        by=by or default_grader(),
        when=when or utc_now(),
    )


def append_grade(path: str | os.PathLike[str], grade: Grade) -> None:
    """Add one line to the grades file (created when missing); never rewrites it."""
    p = Path(path)
    require_regular_file(p, "grades file")  # appending to a FIFO would block forever
    try:
        append_line(p, orjson.dumps(grade.to_json(), option=orjson.OPT_APPEND_NEWLINE))
    except OSError as e:
        raise InputError(Problem(str(p), None, f"cannot add the grade ({e.strerror or e})")) from None


def _grade(obj: Any) -> Grade | str:
    """A Grade from one parsed line, or what is wrong with it."""
    if not isinstance(obj, dict):
        return "expected a JSON object"
    case, sha = obj.get("case"), obj.get("answer_sha")
    if not isinstance(case, str) or not case:
        return "case: expected the case id"
    if not isinstance(sha, str) or not sha:
        return "answer_sha: expected the answer's fingerprint"
    sup, cor = obj.get("supported"), obj.get("correct")
    if not isinstance(sup, bool):
        return "supported: expected true or false"
    if cor is not None and not isinstance(cor, bool):
        return "correct: expected true, false or null"
    ids = obj.get("prompt_ids") or []
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return "prompt_ids: expected a list of chunk ids"
    by, when = obj.get("by"), obj.get("when")
    return Grade(case, sha, tuple(ids), sup, cor, str(by or ""), str(when or ""))


MAX_BYTES = 256 << 20  # about a million grades


def when_utc(when: str) -> datetime | None:
    """``when`` as an aware UTC time (a time without a zone is UTC); None when it is empty or
    not ISO-8601."""
    text = when.strip()
    if not text:
        return None
    if text[-1] in "zZ":
        text = text[:-1] + "+00:00"  # (fromisoformat of Python 3.10 does not read Z)
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def _when_problem(when: str) -> str | None:
    if not when.strip():
        return "when: empty (ordered before every dated grade of the same answer)"
    if when_utc(when) is None:
        return f"when: {when!r} is not an ISO-8601 time (ordered before every dated grade of the same answer)"
    return None


def read_grades(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Grade], list[Problem]]:
    """Every grade of the files (missing files hold none), and warnings for skipped lines."""
    grades: list[Grade] = []
    warnings: list[Problem] = []
    for path in paths:
        p = Path(path)
        try:
            data = read_bounded(p, MAX_BYTES, "grades file")
        except InputError as e:  # a FIFO, a device, a link loop, a huge file: said, not read
            warnings += [Problem(x.file, x.line, x.message, severity="error") for x in e.problems]
            continue
        if data is None:
            continue
        for lineno, raw in enumerate(data.splitlines(), 1):
            if not raw.strip():
                continue
            if raw.startswith(_MARKERS):
                warnings.append(
                    Problem(
                        str(p),
                        lineno,
                        "git conflict marker skipped (both sides' grades are kept)",
                        severity="warning",
                    )
                )
                continue
            try:
                g = _grade(orjson.loads(raw))
            except orjson.JSONDecodeError:
                g = "not valid JSON"
            if isinstance(g, str):
                warnings.append(Problem(str(p), lineno, f"grade skipped: {g}", severity="warning"))
            else:
                grades.append(g)
                bad = _when_problem(g.when)
                if bad:
                    warnings.append(Problem(str(p), lineno, f"grade kept, but {bad}", severity="warning"))
    return grades, warnings


def latest(grades: Iterable[Grade]) -> dict[tuple[str, str], Grade]:
    """(case, answer_sha) -> the grade that wins: latest ``when`` in UTC, then the later line
    (an empty or bad ``when`` is before every time)."""
    out: dict[tuple[str, str], tuple[datetime, Grade]] = {}
    for g in grades:
        key = (g.case, g.answer_sha)
        t = when_utc(g.when) or _NEVER
        old = out.get(key)
        if old is None or t >= old[0]:
            out[key] = (t, g)
    return {key: g for key, (_, g) in out.items()}


_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def grade_for(record: Mapping[str, Any], table: Mapping[tuple[str, str], Grade]) -> Grade | None:
    """The grade that applies to the answer in ``record`` (None: not graded, or another answer)."""
    answer = record.get("answer")
    if not isinstance(answer, str):
        return None
    return table.get((record["id"], answer_sha(answer)))


def undo_append(path: str | os.PathLike[str], grade: Grade) -> bool:
    """Take back ``grade`` if it is still the file's last line (nothing appended since):
    the file returns to the bytes it had before. False, and nothing changed, otherwise."""
    p = Path(path)
    line = orjson.dumps(grade.to_json(), option=orjson.OPT_APPEND_NEWLINE)
    try:
        with open(p, "r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if size < len(line):
                return False
            f.seek(size - len(line))
            if f.read(len(line)) != line:
                return False
            f.truncate(size - len(line))
            f.flush()
            os.fsync(f.fileno())
    except OSError:
        return False
    return True
