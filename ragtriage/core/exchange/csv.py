"""``csv``: one case per row under a header; lists as ``a | b`` (or a JSON array when needed).

Written by spreadsheets too: the delimiter (``,``, ``;`` or tab) is read from the header,
column names are matched case-insensitively, and ``sí``/``ja``/``x`` are true."""

from __future__ import annotations

import csv
import difflib
import io
import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import Problem
from ..escape import csv_cell, csv_uncell
from ..schema import CASE_FIELDS, Case
from .common import LIST_FIELDS, Ids, Imported, TextMatcher, dumps, validate

_TRUE = {"true", "yes", "y", "1", "x", "sí", "si", "ja", "wahr"}
_FALSE = {"false", "no", "n", "0", "", "nein", "falsch"}


def _list_cell(values: Sequence[str]) -> str:
    """``a | b`` when that reads back unchanged, else a JSON array."""
    if not values:
        return ""
    plain = all(
        v and "|" not in v and v == v.strip() and not v.startswith("[") and "\n" not in v for v in values
    )
    return " | ".join(values) if plain else dumps(list(values))


def export_csv(cases: Sequence[Case], raw: bool = False) -> str:
    """The cases as CSV; a cell a spreadsheet would take as a formula (CWE-1236) gets a
    leading ``'`` (:func:`~ragtriage.core.escape.csv_cell`) unless ``raw``."""
    return export_csv_counted(cases, raw)[0]


def export_csv_counted(cases: Sequence[Case], raw: bool = False) -> tuple[str, int]:
    """:func:`export_csv`, and how many cells were (or with ``raw`` would be) neutralised."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CASE_FIELDS)
    formulas = 0
    for c in cases:
        row = []
        for name in CASE_FIELDS:
            v = getattr(c, name)
            if name in LIST_FIELDS:
                cell = _list_cell(v)
            elif name == "unanswerable":
                cell = "true" if v else "false"
            else:
                cell = "" if v is None else v
            safe = csv_cell(cell)
            formulas += safe is not cell
            row.append(cell if raw else safe)
        w.writerow(row)
    return buf.getvalue(), formulas


class _Row:
    """Where one row's problems go: the file, its line and its case id."""

    def __init__(self, name: str, line: int, cid: str | None, problems: list[Problem]):
        self.name, self.line, self.cid, self.problems = name, line, cid, problems
        self.bad = False

    def problem(self, msg: str, fld: str) -> None:
        self.problems.append(Problem(self.name, self.line, msg, case=self.cid, field=fld))
        self.bad = True


def _list_from_cell(cell: str, fld: str, row: _Row) -> list[str] | None:
    s = cell.strip()
    if not s:
        return []
    if s.startswith("["):
        try:
            v = json.loads(s)
        except (ValueError, RecursionError):  # includes 4,301+ digit integers
            v = None
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return v
        row.problem(
            "starts with [ but is not a JSON array of strings "
            '(write `a | b`, or a JSON array like ["a", "b"])',
            fld,
        )
        return None
    if fld == "expected" and "|" not in s:
        return s.replace(",", " ").split()  # chunk ids: spaces or commas also separate
    return [part.strip() for part in s.split("|") if part.strip()]


def _cell_value(k: str, v: str, row: _Row) -> Any:
    """One cell as the case field ``k`` holds it; a bad cell is a problem on ``row``."""
    if k in LIST_FIELDS:
        return _list_from_cell(v, k, row) or []
    if k == "unanswerable":
        s = v.strip().lower()
        if s in _TRUE:
            return True
        if s not in _FALSE:
            row.problem(f"{v!r} is not true/false", k)
        return False
    if k == "expect":
        return v.strip() or "any"
    if k == "question":
        return v
    return v if v.strip() else None


def _columns(header: list[str], name: str, problems: list[Problem], res: Imported) -> dict[str, int] | None:
    """Column name -> index, checked: a `question` column, no column twice; others noted."""
    cols = [h.strip().lstrip("\ufeff") for h in header]
    cols = [c.lower() if c.lower() in CASE_FIELDS else c for c in cols]  # "Question" is `question`
    if "question" not in cols:
        close = [c for c in cols if difflib.get_close_matches(c, ["question"], n=1)]
        hint = f" (did you mean to name {close[0]!r} `question`?)" if close else ""
        problems.append(
            Problem(name, 1, f"no `question` column; columns are: {', '.join(cols)}{hint}", field="question")
        )
        return None
    seen: dict[str, int] = {}
    for i, c in enumerate(cols):
        if c in seen:
            problems.append(Problem(name, 1, f"column {c!r} appears twice", field=c))
        seen[c] = i
    unknown = [c for c in cols if c not in CASE_FIELDS]
    if unknown:
        res.notes.append(f"column(s) {', '.join(repr(c) for c in unknown)} are not case fields: not imported")
    return seen


def _rows(reader: Any, name: str, problems: list[Problem]) -> Iterator[tuple[int, list[str]]]:
    """(first line, cells) of each non-blank row after the header; a CSV error ends the file."""
    start = 2
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            problems.append(Problem(name, reader.line_num, f"not valid CSV ({e})"))
            return
        line, start = start, reader.line_num + 1
        if any(cell.strip() for cell in row):
            yield line, row


def import_csv(text: str, name: str, problems: list[Problem], matcher: TextMatcher) -> Imported:
    res = Imported()
    first = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=first.count) if any(d in first for d in ",;\t") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        problems.append(Problem(name, None, "empty file (expected a header row)"))
        return res
    except csv.Error as e:
        problems.append(Problem(name, 1, f"not valid CSV ({e})"))
        return res
    cols = _columns(header, name, problems, res)
    if cols is None:
        return res
    ids = Ids(name, problems)
    for line, cells_in in _rows(reader, name, problems):
        if len(cells_in) > len(header):
            problems.append(
                Problem(name, line, f"{len(cells_in)} cells but the header has {len(header)} columns")
            )
            continue
        cells = {
            c: csv_uncell(cells_in[i]) if i < len(cells_in) else ""
            for c, i in cols.items()
            if c in CASE_FIELDS
        }  # a cell export neutralised against spreadsheet formulas ('=...) is read back as it was
        cid = cells.pop("id", "").strip() or None
        row = _Row(name, line, cid, problems)
        fields = {k: _cell_value(k, v, row) for k, v in cells.items()}
        if row.bad:
            continue
        if cid is None:
            cid = ids.make(fields.get("question") or "", line)
        else:
            ids.given(cid, line)
        case = validate({"id": cid, **fields}, name, line, problems)
        if case is not None:
            res.cases.append(case)
    if ids.generated:
        res.notes.append(f"{ids.generated} row(s) without an id: ids made from the question")
    return res
