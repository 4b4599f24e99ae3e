"""What a stale-label check reports: statuses, one entry per (case, label), the report and
its safe fixes (staleness.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..clock import utc_now
from ..corpus import Chunk
from ..text import normalize_text
from .evidence import _fp

if TYPE_CHECKING:
    from ..document import TestSetDocument

from ..compat import StrEnum


class Status(StrEnum):
    """What became of one label against the new corpus (staleness.md, in report order)."""

    OK = "ok"
    MOVED = "moved"
    CHANGED = "changed"
    MERGED = "merged"
    SPLIT = "split"
    MISSING = "missing"
    UNRECORDED = "unrecorded"
    UNKNOWN = "unknown"


class Fix(StrEnum):
    """Who resolves a stale label: ``stale --fix`` or a person."""

    AUTO = "auto"
    REVIEW = "review"


STATUSES: tuple[str, ...] = tuple(s.value for s in Status)


class Cancelled(Exception):
    """The caller's cancel event was set; nothing was changed."""


@dataclass
class StaleEntry:
    """One expected chunk of one case, judged against the new corpus."""

    case: str
    label: str
    status: str  # a Status (a str)
    candidates: list[tuple[str, float]] = field(default_factory=list)
    fix: str | None = None  # Fix.AUTO | Fix.REVIEW | None
    expect: str | None = None  # proposed `expect` ("all" for a split), else None
    fixed: bool = False  # set by apply_fixes
    elsewhere: dict[str, str] = field(default_factory=dict)  # candidate id -> its other document
    note: str | None = None  # why a person must look, when the status does not say it

    @property
    def stale(self) -> bool:
        return self.status != Status.OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "label": self.label,
            "status": str(self.status),
            "candidates": [
                {
                    "id": i,
                    "score": s,
                    **({"doc": self.elsewhere[i], "elsewhere": True} if i in self.elsewhere else {}),
                }
                for i, s in self.candidates
            ],
            "fix": None if self.fix is None else str(self.fix),
            **({"fixed": True} if self.fixed else {}),  # applied by --fix (an optional field)
            **({"note": self.note} if self.note else {}),
        }


@dataclass
class StaleReport:
    labels: list[StaleEntry]
    corpus: str | None = None  # the chunks file judged against
    _corpus_hash: str | None = None  # see corpus_hash
    chunks: int = 0  # chunks read
    _found: dict[str, Chunk] = field(default_factory=dict, repr=False)  # chunk id -> Chunk, for auto fixes

    @property
    def corpus_hash(self) -> str | None:
        """The chunks file's content hash (recorded in fixed labels); computed when first asked,
        so a plain report does not pay for hashing a big corpus."""
        if self._corpus_hash is None and self.corpus is not None and Path(self.corpus).is_file():
            from ..text import file_hash

            self._corpus_hash = file_hash(self.corpus)
        return self._corpus_hash

    @corpus_hash.setter
    def corpus_hash(self, value: str | None) -> None:
        self._corpus_hash = value

    @property
    def counts(self) -> dict[str, int]:
        n = dict.fromkeys(STATUSES, 0)
        for e in self.labels:
            n[e.status] += 1
        return {s: v for s, v in n.items() if v}

    @property
    def stale(self) -> list[StaleEntry]:
        return [e for e in self.labels if e.status != Status.OK]

    @property
    def remaining(self) -> list[StaleEntry]:
        """Stale entries that no fix has resolved: the exit status is judged on these."""
        return [e for e in self.labels if e.status != Status.OK and not e.fixed]

    @property
    def auto(self) -> list[StaleEntry]:
        return [e for e in self.labels if e.fix == Fix.AUTO]

    def to_dict(self) -> dict[str, Any]:
        return {"labels": [e.to_dict() for e in self.labels], "counts": self.counts}

    def to_json(self) -> str:
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"

    # -------------------------------------------------------------- fixes

    def settle(self) -> dict[tuple[str, str], str]:
        """(case, label) -> target chunk id for the automatic fixes that are safe together.

        A label is keyed by chunk id: a fix must not write new text under an id that another
        case still expects with its old meaning (a stale label left for review); such a fix
        is turned into ``review``."""
        target: dict[tuple[str, str], str] = {}
        for e in self.labels:
            if e.fix == Fix.AUTO:
                target[(e.case, e.label)] = e.label if e.status == Status.UNRECORDED else e.candidates[0][0]
        while True:
            kept = {e.label for e in self.labels if e.status != Status.OK and (e.case, e.label) not in target}
            clash = [
                e
                for e in self.labels
                if (e.case, e.label) in target
                and target[(e.case, e.label)] in kept
                and target[(e.case, e.label)] != e.label
            ]
            if not clash:
                return target
            for e in clash:
                t = target.pop((e.case, e.label))
                e.fix = Fix.REVIEW
                e.note = f"{t} holds the text, but another case still expects {t} with its old text: review that one first"

    def fix_plan(self) -> tuple[dict[str, list[str]], dict[str, dict[str, Any]]]:
        """(case id -> new expected list, chunk id -> label to record) for the automatic fixes."""
        target = self.settle()
        when = utc_now()
        new_expected: dict[str, list[str]] = {}
        record: dict[str, dict[str, Any]] = {}
        by_case: dict[str, list[StaleEntry]] = {}
        for e in self.labels:
            by_case.setdefault(e.case, []).append(e)
        for case, entries in by_case.items():
            out: list[str] = []
            changed = False
            for e in entries:
                t = target.get((case, e.label), e.label)
                changed |= t != e.label
                if t not in out:
                    out.append(t)
                if (case, e.label) in target:
                    ch = self._found.get(t)
                    if ch is not None and t not in record:
                        record[t] = self._label_of(ch, when)
            if changed:
                new_expected[case] = out
        return new_expected, record

    def _label_of(self, ch: Chunk, when: str) -> dict[str, Any]:
        return {
            "sha": _fp(normalize_text(ch.text)),
            "text": ch.text,
            "doc": ch.doc,
            "start": ch.start,
            "end": ch.end,
            "when": when,
            "corpus": self.corpus_hash,
        }

    def apply_fixes(self, doc: TestSetDocument) -> int:
        """Apply the automatic fixes through the test-set document (no save). Returns the
        number of (case, label) entries fixed; marks them ``fixed``."""
        new_expected, record = self.fix_plan()  # may turn a clashing "auto" into "review"
        for case, expected in new_expected.items():
            doc.update_case(case, expected=expected)
        for cid, lab in record.items():
            doc.set_label(cid, lab)
        still = {c for case in doc.cases for c in case.expected}
        for e in self.labels:
            if e.fix == Fix.AUTO and e.label not in still and e.label in doc.labels:
                doc.set_label(e.label, None)
        n = 0
        for e in self.labels:
            if e.fix == Fix.AUTO:
                e.fixed = True
                n += 1
        return n
