"""Which cases of a run to recompute after the test set changed (no Textual).

The Triage screen shows a run's records; each relabel, undo, reload or edit made
elsewhere changes the test set under them. :class:`RunSync` remembers the last
state of the editing session it saw and answers, from the session's log of
edits, which cases must be recomputed from their stored ranking: some ids, none,
or all (``None``). :func:`rescore` and :func:`rescore_all` do the recomputing;
:class:`RunReasons` keeps the reasons the Cases screen shows rescored the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .triage_state import Sidecar, TriageState, load_triage, relabel_record

if TYPE_CHECKING:
    from ..core.document import TestSetDocument
    from ..core.records import CaseRecord
    from .session import Session

SyncKey = tuple[int, int, int]  # (session identity, generation, length of the edit log)
ALL = None  # "recompute every case"


def _key(session: Session) -> SyncKey:
    return (id(session), session.generation, len(session.ops))


class RunSync:
    """The last session state a run's records were brought up to date with."""

    def __init__(self) -> None:
        self.synced: SyncKey | None = None

    @property
    def started(self) -> bool:
        return self.synced is not None

    def mark(self, session: Session) -> None:
        """The records are up to date with ``session`` as it is now."""
        self.synced = _key(session)

    def first(self, session: Session, meta: dict, sidecar: Sidecar) -> list[str] | None:
        """The test set just loaded: the cases whose labels may differ from the run's.

        Same test set as the run: only the cases re-run since. The test set as
        triage last saved it: those rescored or re-run then. Otherwise (changed
        outside triage): all of them."""
        self.mark(session)
        h = session.doc.content_hash
        if h == meta.get("testset_hash"):
            return list(sidecar.rerun)
        if sidecar.testset_hash and h == sidecar.testset_hash:
            return sorted(sidecar.rescored | set(sidecar.rerun))
        return ALL

    def changed(self, session: Session) -> list[str] | None:
        """The cases to recompute since the last call: ``[]`` none, ``None`` all."""
        key = _key(session)
        last, self.synced = self.synced, key
        if key == last:
            return []
        same = last is not None and last[0] == id(session)
        if same and last is not None and len(session.ops) < last[2]:
            return []  # a save cleared the log: the cases did not change
        if not same or last is None:
            return ALL  # a reload: another session
        ops = session.ops[last[2] :]
        if all(op["op"] == "update_case" for op in ops):
            ids = {op["args"][0] for op in ops if op.get("args")}
            ids |= {op["kwargs"]["id"] for op in ops if op.get("kwargs", {}).get("id")}
            return sorted(i for i in ids if i)
        if all(op["op"] == "set_label" for op in ops):
            return []
        return ALL  # undo, redo, add, remove: recompute all


def rescore(state: TriageState, ids: list[str] | None, doc: TestSetDocument, sidecar: Sidecar | None) -> int:
    """Recompute the given cases (None: all) from their stored ranking, in place;
    returns how many changed (each is noted in ``sidecar.rescored``)."""
    settings = doc.settings
    wanted = [r["id"] for r in state.records] if ids is None else ids
    n = 0
    for cid in wanted:
        if cid not in state or cid not in doc:
            continue
        old = state.record(cid)
        new = relabel_record(old, doc.case(cid), state.k, settings)
        if new != old:
            state.replace(new)
            if sidecar is not None:
                sidecar.rescored.add(cid)
            n += 1
    return n


def rescore_all(records: list[CaseRecord], doc: TestSetDocument, k: int) -> list[CaseRecord]:
    """The records (of all given) that differ when recomputed against ``doc``; for a worker."""
    settings = doc.settings
    cases = {c.id: c for c in doc.cases}
    new: list[CaseRecord] = []
    for rec in records:
        case = cases.get(rec["id"])
        if case is not None:
            r = relabel_record(rec, case, k, settings)
            if r != rec:
                new.append(r)
    return new


class RunReasons:
    """The reason of every case of a run, kept rescored against the test set as it is edited.

    The Cases screen's reason column reads these, so that it says what Triage says: the
    run file's stored reasons are those of the test set the run was made on."""

    def __init__(self, run_path: Path) -> None:
        self.run_path = run_path
        self.state: TriageState | None = None
        self.sync = RunSync()

    def load(self, session: Session) -> dict[str, str]:
        """Read the run and rescore every case against ``session`` (slow: call in a worker)."""
        _meta, _summary, state, _side = load_triage(self.run_path)
        for rec in rescore_all(list(state.records), session.doc, state.k):
            state.replace(rec)
        self.state = state
        return self.reasons()

    def mark(self, session: Session) -> None:
        self.sync.mark(session)

    def update(self, session: Session, *, limit: int = 5000) -> dict[str, str] | None:
        """The reasons after the edits made since the last call, or None when none changed.

        Recomputing every case of a run above ``limit`` cases (after an undo or a reload)
        is left to :meth:`load`: raises :class:`TooBig` then."""
        state = self.state
        if state is None:
            return None
        ids = self.sync.changed(session)
        if ids is not None and not ids:
            return None
        if ids is None and len(state) > limit:
            raise TooBig(len(state))
        return self.reasons() if rescore(state, ids, session.doc, None) else None

    def reasons(self) -> dict[str, str]:
        if self.state is None:
            return {}
        return {r["id"]: r["reason"] for r in self.state.records if r.get("reason")}


class TooBig(Exception):
    """Too many cases to recompute on the UI thread."""
