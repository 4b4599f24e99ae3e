"""Undo and redo: whole-state snapshots of the document's pieces.

A snapshot is cheap: it copies the lists of pieces, never the texts (they are
immutable strings shared between snapshots).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

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


class Snapshot(NamedTuple):
    regions: list[Region]
    colls: list[CollState]
    expected_changed: bool
    version: int
    raw_settings: dict
    settings: Settings


def take(
    regions: list[Region],
    colls: tuple[Coll, ...],
    expected_changed: bool,
    version: int,
    raw_settings: dict,
    settings: Settings,
) -> Snapshot:
    states = [CollState(c, list(c.gaps), list(c.items), c.missing) for c in colls]
    return Snapshot(list(regions), states, expected_changed, version, raw_settings, settings)


def restore_colls(snap: Snapshot) -> None:
    for st in snap.colls:
        st.coll.gaps, st.coll.items, st.coll.missing = st.gaps, st.items, st.missing
        st.coll.open_end = True


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
