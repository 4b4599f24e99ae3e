"""Every change the app makes to a test set, as a value (no Textual).

An edit is a frozen dataclass that knows what it does to the document
(:meth:`apply`), which cases it touches (:meth:`cases`; the labels of those
cases are touched too, and :meth:`labels` names any other) and how it is written
to the recovery file (:meth:`record`, read back by :func:`edit_from_record`).
The editing :class:`~ragtriage.tui.session.Session` applies one and answers
with a :class:`Change`: the cases and labels it touched and what it did in
words. Those are what the rest of the app needs to stay instant on 100,000
cases — the Cases rows, the run's records and the stale check look at the
touched cases and labels only, never at the whole set.

::

    change = app.edit(UpdateCase("garantía", {"unanswerable": True, "expected": None}))
    change.cases   # frozenset({"garantía"})
    change.labels  # the chunk ids the case expected before and after
    change.what    # "garantía: unanswerable, expected"

A field set to ``None`` is removed from the case (it takes its default).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from ..core.document import TestSetDocument
    from ..core.schema import Case, Label


def _frozen(fields: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(fields))


def _jsonable(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, BaseModel):  # a Label
        return value.model_dump(exclude_none=True)
    return value


@dataclass(frozen=True)
class UpdateCase:
    """Change fields of one case (a new ``id`` renames it)."""

    op: ClassVar[str] = "update_case"
    case_id: str
    fields: Mapping[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", _frozen(self.fields))

    def cases(self) -> frozenset[str]:
        new = self.fields.get("id")
        return frozenset({self.case_id, new} if isinstance(new, str) and new else {self.case_id})

    def labels(self) -> frozenset[str]:
        return frozenset()

    def apply(self, doc: TestSetDocument) -> Case:
        return doc.update_case(self.case_id, **self.fields)

    def record(self) -> dict[str, Any]:
        return {"op": self.op, "args": [self.case_id], "kwargs": _jsonable(self.fields)}


@dataclass(frozen=True)
class AddCase:
    """A new case at ``index`` (None: at the end)."""

    op: ClassVar[str] = "add_case"
    index: int | None
    fields: Mapping[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", _frozen(self.fields))

    def cases(self) -> frozenset[str]:
        cid = self.fields.get("id")
        return frozenset({cid} if isinstance(cid, str) else ())

    def labels(self) -> frozenset[str]:
        return frozenset()

    def apply(self, doc: TestSetDocument) -> Case:
        return doc.add_case(self.index, **self.fields)

    def record(self) -> dict[str, Any]:
        return {"op": self.op, "args": [self.index], "kwargs": _jsonable(self.fields)}


@dataclass(frozen=True)
class RemoveCase:
    op: ClassVar[str] = "remove_case"
    case_id: str

    def cases(self) -> frozenset[str]:
        return frozenset({self.case_id})

    def labels(self) -> frozenset[str]:
        return frozenset()

    def apply(self, doc: TestSetDocument) -> None:
        doc.remove_case(self.case_id)

    def record(self) -> dict[str, Any]:
        return {"op": self.op, "args": [self.case_id], "kwargs": {}}


@dataclass(frozen=True)
class MoveCase:
    op: ClassVar[str] = "move_case"
    case_id: str
    index: int

    def cases(self) -> frozenset[str]:
        return frozenset({self.case_id})

    def labels(self) -> frozenset[str]:
        return frozenset()

    def apply(self, doc: TestSetDocument) -> None:
        doc.move_case(self.case_id, self.index)

    def record(self) -> dict[str, Any]:
        return {"op": self.op, "args": [self.case_id, self.index], "kwargs": {}}


@dataclass(frozen=True)
class SetLabel:
    """Record what a chunk said (``label``), or forget it (None): the save records it again."""

    op: ClassVar[str] = "set_label"
    chunk_id: str
    label: Label | Mapping[str, Any] | None

    def cases(self) -> frozenset[str]:
        return frozenset()

    def labels(self) -> frozenset[str]:
        return frozenset({self.chunk_id})

    def apply(self, doc: TestSetDocument) -> None:
        doc.set_label(self.chunk_id, self.label)

    def record(self) -> dict[str, Any]:
        return {"op": self.op, "args": [self.chunk_id, _jsonable(self.label)], "kwargs": {}}


@dataclass(frozen=True)
class PointCorpus:
    """Point the test set's ``corpus:`` at another chunks file (relative to the test set)."""

    op: ClassVar[str] = "point_corpus"
    value: str

    def cases(self) -> frozenset[str]:
        return frozenset()

    def labels(self) -> frozenset[str]:
        return frozenset()

    def apply(self, doc: TestSetDocument) -> None:
        doc.update_settings(corpus=self.value)

    def record(self) -> dict[str, Any]:
        return {"op": self.op, "args": [self.value], "kwargs": {}}


Single = UpdateCase | AddCase | RemoveCase | MoveCase | SetLabel | PointCorpus


@dataclass(frozen=True)
class Batch:
    """Several edits as one undo step (``what`` says it in words: "3 automatic fixes")."""

    op: ClassVar[str] = "batch"
    edits: tuple[Single, ...]
    what: str = ""

    def cases(self) -> frozenset[str]:
        return frozenset().union(*(e.cases() for e in self.edits))

    def labels(self) -> frozenset[str]:
        return frozenset().union(*(e.labels() for e in self.edits))

    def apply(self, doc: TestSetDocument) -> None:
        with doc.batch():
            for e in self.edits:
                e.apply(doc)

    def record(self) -> dict[str, Any]:
        return {"op": self.op, "args": [e.record() for e in self.edits], "kwargs": {"what": self.what}}


Edit = Single | Batch


def edit_from_record(entry: Mapping[str, Any]) -> Edit:
    """The edit a recovery-file entry describes (``ValueError`` when it is not one)."""
    op = entry.get("op")
    args = list(entry.get("args") or [])
    kwargs = dict(entry.get("kwargs") or {})
    if op == "batch":
        return Batch(tuple(_single(e) for e in args), str(kwargs.get("what") or ""))
    return _single(entry)


def _single(entry: Any) -> Single:
    if not isinstance(entry, Mapping):
        raise ValueError("not an edit")
    op, args, kwargs = entry.get("op"), list(entry.get("args") or []), dict(entry.get("kwargs") or {})
    if op == "update_case" and len(args) == 1:
        return UpdateCase(str(args[0]), kwargs)
    if op == "add_case" and len(args) <= 1:
        return AddCase(args[0] if args else None, kwargs)
    if op == "remove_case" and len(args) == 1:
        return RemoveCase(str(args[0]))
    if op == "move_case" and len(args) == 2:
        return MoveCase(str(args[0]), int(args[1]))
    if op == "set_label" and len(args) == 2:
        return SetLabel(str(args[0]), args[1])
    if op == "point_corpus" and len(args) == 1:
        return PointCorpus(str(args[0]))
    raise ValueError(f"unknown edit {op!r}")


# ---------------------------------------------------------------------------- what an edit did


@dataclass(frozen=True)
class Change:
    """What one step (an edit, its undo or redo, a save's recorded labels) changed.

    ``cases`` and ``labels`` are the case ids and chunk ids whose state may differ
    (None: any, after a reload); ``what`` says it in words for a toast; ``focus`` is
    a case the list should show (the one an undo brought back)."""

    cases: frozenset[str] | None
    labels: frozenset[str] | None
    what: str = ""
    focus: str | None = None
    edit: Edit | None = field(default=None, compare=False)

    def __or__(self, other: Change) -> Change:
        """Two changes as one (an undo that takes a save's labels step with it)."""
        cases = None if self.cases is None or other.cases is None else self.cases | other.cases
        labels = None if self.labels is None or other.labels is None else self.labels | other.labels
        return Change(cases, labels, self.what or other.what, self.focus or other.focus, self.edit)


EVERYTHING = Change(None, None)


def changed_fields(before: Case | None, after: Case | None) -> list[str]:
    """The fields that differ between two versions of a case, in schema order."""
    from ..core.schema import CASE_FIELDS

    if before is None or after is None:
        return []
    return [name for name in CASE_FIELDS if getattr(before, name, None) != getattr(after, name, None)]


def describe(edit: Edit, before: Mapping[str, Case], after: Mapping[str, Case]) -> str:
    """One edit in words, naming only what changed: "garantía: expected", "new case x"."""
    if isinstance(edit, Batch):
        return edit.what or f"{len(edit.edits)} changes"
    if isinstance(edit, UpdateCase):
        new_id = edit.fields.get("id")
        if isinstance(new_id, str) and new_id and new_id != edit.case_id:
            return f"{edit.case_id}: renamed to {new_id}"
        names = changed_fields(before.get(edit.case_id), after.get(edit.case_id))
        return f"{edit.case_id}: " + (", ".join(n.replace("_", " ") for n in names) or "no change")
    if isinstance(edit, AddCase):
        return f"new case {edit.fields.get('id', '')}".rstrip()
    if isinstance(edit, RemoveCase):
        return f"deleted case {edit.case_id}"
    if isinstance(edit, MoveCase):
        return f"moved case {edit.case_id}"
    if isinstance(edit, SetLabel):
        return f"label of {edit.chunk_id}"
    return f"corpus: {edit.value}"


def expected_of(cases: Iterable[Case | None]) -> frozenset[str]:
    return frozenset(cid for c in cases if c is not None for cid in c.expected)
