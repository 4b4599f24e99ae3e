"""Recomputing a run's records after the test set changed (no Textual).

The records of a run were scored against the test set as it was when the run
was made; triage shows them against the test set as it is now. Which cases to
recompute comes from the edits themselves (each :class:`~ragtriage.tui.edits.Change`
names the cases it touched, and the :class:`~ragtriage.tui.run_session.RunSession`
collects them); :func:`first_sync` decides it once for a test set opened
beside a run, and :func:`rescore` / :func:`rescore_all` do the recomputing from
each case's stored ranking and answer, with no system call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .triage_state import Sidecar, TriageState, relabel_record

if TYPE_CHECKING:
    from ..core.document import TestSetDocument
    from ..core.records import CaseRecord


def first_sync(doc: TestSetDocument, meta: Mapping[str, Any], sidecar: Sidecar | None) -> list[str] | None:
    """The cases whose labels may differ from the run's, for a test set just opened beside it
    (None: all of them).

    The same test set as the run: only the cases re-run since. The test set as triage
    last saved it: those rescored or re-run then. Otherwise (changed outside triage): all."""
    rerun = list(sidecar.rerun) if sidecar is not None else []
    h = doc.content_hash
    if h == meta.get("testset_hash"):
        return rerun
    if sidecar is not None and sidecar.testset_hash and h == sidecar.testset_hash:
        return sorted(sidecar.rescored | set(sidecar.rerun))
    return None


def rescore(
    state: TriageState, ids: list[str] | None, doc: TestSetDocument, sidecar: Sidecar | None
) -> tuple[int, list[str]]:
    """Recompute the given cases (None: all) from their stored ranking, in place; returns
    how many changed and the ids looked at (each changed one is noted in ``sidecar.rescored``)."""
    settings = doc.settings
    wanted = [r["id"] for r in state.records] if ids is None else ids
    n = 0
    seen: list[str] = []
    for cid in wanted:
        if cid not in state or cid not in doc:
            continue
        seen.append(cid)
        old = state.record(cid)
        new = relabel_record(old, doc.case(cid), state.k, settings)
        if new != old:
            state.replace(new)
            if sidecar is not None:
                sidecar.rescored.add(cid)
            n += 1
    return n, seen


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
