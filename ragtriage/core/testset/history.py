"""Undo and redo: whole-state snapshots of the document's pieces.

A snapshot is cheap: it copies the lists of pieces, never the texts (they are
immutable strings shared between snapshots).
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

from ..schema import Settings
from .regions import Coll, Item, Region

UNDO_LIMIT = 200
_versions = itertools.count(1)  # a process-wide counter: each edit gets a new version number


def next_version() -> int:
    return next(_versions)


class CollState(NamedTuple):
    coll: Coll
    gaps: list[str]
    items: list[Item]
    missing: bool
    open_end: bool  # these items may hold an entry without its final newline


class Snapshot(NamedTuple):
    regions: list[Region]
    colls: list[CollState]
    expected_changed: bool
    version: int
    raw_settings: dict[str, Any]
    settings: Settings
    case_index: dict[str, int]  # case id -> position: shared, never changed in place once taken


def take(
    regions: list[Region],
    colls: tuple[Coll, ...],
    expected_changed: bool,
    version: int,
    raw_settings: dict[str, Any],
    settings: Settings,
    index: dict[str, int],
) -> Snapshot:
    states = [CollState(c, list(c.gaps), list(c.items), c.missing, c.open_end) for c in colls]
    return Snapshot(list(regions), states, expected_changed, version, raw_settings, settings, index)


def restore_colls(snap: Snapshot) -> bool:
    """Put the snapshot's entries back; True when the labels differ from those replaced
    (a list compare by identity, in C: the lookups built over 90,000 labels stay valid
    through the undo of a case edit)."""
    labels_changed = False
    for st in snap.colls:
        if st.coll.name == "labels":
            labels_changed = st.items != st.coll.items
        st.coll.gaps, st.coll.items, st.coll.missing = st.gaps, st.items, st.missing
        # as it was then: checking every entry again costs 20 ms at 100,000 cases
        st.coll.open_end = st.open_end
    return labels_changed


class History:
    """The undo and redo stacks (at most :data:`UNDO_LIMIT` steps back)."""

    __slots__ = ("undo", "redo")

    def __init__(self) -> None:
        self.undo: list[Snapshot] = []
        self.redo: list[Snapshot] = []

    def record(self, snap: Snapshot) -> None:
        """A new edit: remember the state before it; the redo stack is gone."""
        self.undo.append(snap)
        if len(self.undo) > UNDO_LIMIT:
            del self.undo[0]
        self.redo.clear()

    def back(self, now: Snapshot) -> Snapshot | None:
        if not self.undo:
            return None
        self.redo.append(now)
        return self.undo.pop()

    def forward(self, now: Snapshot) -> Snapshot | None:
        if not self.redo:
            return None
        self.undo.append(now)
        return self.redo.pop()
