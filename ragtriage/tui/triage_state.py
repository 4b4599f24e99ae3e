"""What the Triage screen shows, as plain data (no Textual): a run's case records
grouped by diagnosis reason, the reviewer's marks and notes, and the pieces that
recompute a case after a relabel or stream a new run.

* :class:`TriageState` holds the records in run order and one sorted list of
  positions per reason; moving a case between groups after a relabel is a
  bisect, so the group counts are ready at once even for 100,000 cases.
* :class:`Sidecar` keeps reviewed marks, notes and re-run records in
  ``RUN.triage.json`` next to the run file (written atomically), so they
  survive the session.
* :func:`relabel_record` recomputes every computed field of a case from the
  ranking and answer stored in the run (``scoring.make_record``), with no
  system call.
* :func:`stream_run` runs a test set on a system (``core.evaluate``) and hands
  each case record to a callback as it finishes (the app's run worker).

The :class:`~ragtriage.tui.run_session.RunSession` owns one of each.
"""

from __future__ import annotations

import bisect
import json
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..core.clock import utc_now
from ..core.diagnosis import PASSING, TRIAGE_ORDER
from ..core.files import atomic_write, read_bounded

if TYPE_CHECKING:
    from ..core.corpus import Corpus
    from ..core.document import TestSetDocument
    from ..core.records import CaseRecord, RunMeta

UNLABELLED_WHY = "no expected chunk yet"
SIDECAR_VERSION = 1


def verdict_text(reason: str | None) -> str:
    """Glyph and word, never colour alone."""
    if not reason:
        return "… pending"
    return "✓ pass" if reason in PASSING else "✗ fail"


JUDGE_DISAGREES = "judge disagrees"  # judge.md: the judge contradicts the deterministic result


def group_of(record: CaseRecord) -> str:
    """The group a case is listed under: its reason, or "judge disagrees" for a person to settle."""
    if "judge" in record:
        from ..core.judge import disagreements

        if disagreements(record):
            return JUDGE_DISAGREES
    return record.get("reason") or ""


def group_order(reasons: Iterable[str]) -> list[str]:
    """The reasons present, failures first in diagnosis order, then passes; unknown last."""
    present = set(reasons)
    out = [JUDGE_DISAGREES] if JUDGE_DISAGREES in present else []
    out += [r for r in TRIAGE_ORDER if r in present]
    out += sorted(r for r in present if r not in TRIAGE_ORDER and r != JUDGE_DISAGREES)
    return out


# ---------------------------------------------------------------------------- the run file's test set


# ---------------------------------------------------------------------------- sidecar


SIDECAR_MAX = 64 << 20  # reviewed marks and notes of a million cases fit well within it


def sidecar_path(run_path) -> Path:
    p = Path(run_path)
    return p.with_name(p.name.removesuffix(".jsonl") + ".triage.json")


class Sidecar:
    """Reviewed marks, notes and re-run records of one run, kept in ``RUN.triage.json``."""

    def __init__(self, path: Path, data: dict | None = None):
        self.path = Path(path)
        data = data if isinstance(data, dict) else {}
        cases = data.get("cases")
        self.cases: dict[str, dict] = {
            str(k): dict(v) for k, v in (cases or {}).items() if isinstance(v, dict)
        }
        rerun = data.get("rerun")
        # re-run records this app wrote, read back: an object with the case's id is taken as one
        self.rerun: dict[str, CaseRecord] = {
            str(k): cast("CaseRecord", v)
            for k, v in (rerun or {}).items()
            if isinstance(v, dict) and v.get("id") == k
        }
        self.rescored: set[str] = set(data.get("rescored") or ())
        self.testset_hash: str | None = data.get("testset_hash")

    @classmethod
    def load(cls, run_path) -> Sidecar:
        path = sidecar_path(run_path)
        raw = read_bounded(path, SIDECAR_MAX, "triage sidecar")  # InputError: a FIFO, /dev/zero, huge
        try:
            data = json.loads(raw) if raw else None
        except (ValueError, RecursionError):  # not JSON, or nested past what json reads
            data = None
        return cls(path, data)

    def reviewed(self, case_id: str) -> dict | None:
        entry = self.cases.get(case_id)
        return entry.get("reviewed") if entry else None

    def note(self, case_id: str) -> str:
        entry = self.cases.get(case_id)
        return (entry.get("note") or "") if entry else ""

    def set_reviewed(self, case_id: str, reason: str | None, on: bool = True) -> None:
        entry = self.cases.setdefault(case_id, {})
        if on:
            entry["reviewed"] = {"when": utc_now(), "reason": reason}
        else:
            entry.pop("reviewed", None)
        self._tidy(case_id)

    def set_note(self, case_id: str, note: str) -> None:
        entry = self.cases.setdefault(case_id, {})
        note = note.strip()
        if note:
            entry["note"] = note
        else:
            entry.pop("note", None)
        self._tidy(case_id)

    def _tidy(self, case_id: str) -> None:
        if not self.cases.get(case_id):
            self.cases.pop(case_id, None)

    def to_json(self) -> dict:
        out: dict = {
            "version": SIDECAR_VERSION,
            "run": self.path.name.removesuffix(".triage.json") + ".jsonl",
            "cases": self.cases,
        }
        if self.rescored:
            out["rescored"] = sorted(self.rescored)
            out["testset_hash"] = self.testset_hash
        if self.rerun:
            out["rerun"] = self.rerun
        return out

    def save(self) -> None:
        """Atomic (``core.files.atomic_write``): a crash never leaves half a file."""
        atomic_write(self.path, json.dumps(self.to_json(), ensure_ascii=False, indent=1))

    def carried_to(self, run_path) -> Sidecar:
        """The notes and reviewed marks, for a new run of the same test set."""
        new = Sidecar(sidecar_path(run_path))
        new.cases = {k: dict(v) for k, v in self.cases.items()}
        return new


# ---------------------------------------------------------------------------- recompute


def relabel_record(record: CaseRecord, case, k: int, settings) -> CaseRecord:
    """The case record recomputed after ``case`` changed (a relabel), from the ranking
    and answer stored in the run, without calling the system.

    Labels (expected, expect, must_contain, answer, unanswerable) never change the
    grounding check, which depends only on the answer and the chunks the generator
    saw; the run's grounding verdict is therefore kept as it was measured, so a
    relabel needs no chunk text and stays exact when the corpus changed since."""
    from ..core.scoring import make_record

    external = record.get("external_supported")
    shim = dict(record)
    if not isinstance(external, bool):
        shim["external_supported"] = bool(record.get("supported"))
    new = make_record(case, shim, k, _no_text, settings)
    if not isinstance(external, bool):
        new.pop("external_supported", None)
        if not new.get("error"):
            why = record.get("why") or ""
            if why == UNLABELLED_WHY:  # written by older runs; `why` is now empty when supported
                why = ""
            new["why"] = why
    return new


def _no_text(_cid: str) -> None:
    return None


# ---------------------------------------------------------------------------- grouped records


class TriageState:
    """Case records in run order, grouped by reason."""

    def __init__(self, records: list[CaseRecord] | None = None, k: int = 3):
        self.k = k
        self.records: list[CaseRecord] = []
        self.pos: dict[str, int] = {}
        self.groups: dict[str, list[int]] = {}
        self._order: list[str] | None = None
        self._group_starts: list[int] | None = None
        self._line_count = 0
        self.version = 0  # bumped on every change; views compare it
        for r in records or ():
            self._append(r)

    def _append(self, record: CaseRecord) -> int:
        i = len(self.records)
        self.records.append(record)
        self.pos[record["id"]] = i
        self.groups.setdefault(group_of(record), []).append(i)
        return i

    def __len__(self) -> int:
        return len(self.records)

    def record(self, case_id: str) -> CaseRecord:
        return self.records[self.pos[case_id]]

    def __contains__(self, case_id) -> bool:
        return case_id in self.pos

    @property
    def order(self) -> list[str]:
        """Non-empty groups in triage order."""
        if self._order is None:
            self._order = group_order(r for r, members in self.groups.items() if members)
        return self._order

    def counts(self) -> dict[str, int]:
        return {r: len(self.groups[r]) for r in self.order}

    def failures(self) -> int:
        return sum(len(v) for r, v in self.groups.items() if r and r not in PASSING)

    def _starts(self) -> list[int]:
        """Line index of each group's header (a few groups: cheap to recompute)."""
        if self._group_starts is None:
            out, at = [], 0
            for r in self.order:
                out.append(at)
                at += 1 + len(self.groups[r])
            self._group_starts = out
            self._line_count = at
        return self._group_starts

    def line_count(self) -> int:
        self._starts()
        return self._line_count

    def line_at(self, at: int) -> tuple[str, int]:
        """``(reason, -1)`` for a group header, ``(reason, position)`` for a case.
        The lines are never built as a list: a relabel only moves one position."""
        starts = self._starts()
        g = bisect.bisect_right(starts, at) - 1
        reason = self.order[g]
        off = at - starts[g]
        return (reason, -1) if off == 0 else (reason, self.groups[reason][off - 1])

    def lines(self) -> list[tuple[str, int]]:
        """Every line (for tests and small views); the table uses :meth:`line_at`."""
        return [self.line_at(i) for i in range(self.line_count())]

    def line_of(self, case_id: str) -> int | None:
        """Line index of a case."""
        i = self.pos.get(case_id)
        if i is None:
            return None
        group = group_of(self.records[i])  # "judge disagrees" lists a case apart from its reason
        order = self.order
        if group not in order:
            return None
        members = self.groups[group]
        return self._starts()[order.index(group)] + 1 + bisect.bisect_left(members, i)

    def _changed(self, regroup: bool) -> None:
        self.version += 1
        self._group_starts = None
        if regroup:
            self._order = None

    def replace(self, record: CaseRecord) -> tuple[str, str]:
        """Put a recomputed record in place; returns (old group, new group) (:func:`group_of`)."""
        i = self.pos[record["id"]]
        old = group_of(self.records[i])
        new = group_of(record)
        self.records[i] = record
        regroup = False
        if old != new:
            members = self.groups[old]
            del members[bisect.bisect_left(members, i)]
            bisect.insort(self.groups.setdefault(new, []), i)
            regroup = not members or len(self.groups[new]) == 1
        self._changed(regroup)
        return old, new

    def add(self, record: CaseRecord) -> None:
        """A record streamed in from a run (new case, or one asked again)."""
        if record["id"] in self.pos:
            self.replace(record)
            return
        new_group = not self.groups.get(group_of(record))
        self._append(record)
        self._changed(new_group)

    def summary(self) -> dict:
        from ..core.summary import summarize

        return summarize(self.records, self.k)


# ---------------------------------------------------------------------------- loading a run


def load_triage(run_path) -> tuple[RunMeta, dict | None, TriageState, Sidecar]:
    """Read a run for triage: (meta, summary, grouped state, sidecar). Re-run cases from the
    sidecar replace the run's records. Raises ``InputError`` on a bad run file."""
    import gc

    from ..core import scoring  # noqa: F401  (imported now, not on the first relabel's key press)
    from ..core.runfile import read_run

    was = gc.isenabled()
    gc.disable()  # a bulk load of small objects: the cyclic GC would dominate
    try:
        run = read_run(run_path)
        side = Sidecar.load(run_path)
        records = run.cases
        if side.rerun:
            records = [side.rerun.get(r["id"], r) for r in records]
        state = TriageState(records, run.k or 3)
    finally:
        if was:
            gc.enable()
    gc.freeze()  # keep the records out of every later collection: no pauses on keys
    return run.meta, run.summary, state, side


# ---------------------------------------------------------------------------- sweep from stored rankings


def retrieval_sweep(records: list[CaseRecord], ks: Iterable[int]) -> list[tuple[int, float | None]]:
    """Hit rate per k from the stored rankings (no system call): the summary's own
    definition, through the one metric path (``core.metrics.stored_positions`` + ``at_k``)."""
    from ..core.metrics import at_k, mean_or_none, stored_positions

    p = stored_positions([r for r in records if not r.get("unanswerable")])
    answerable = p.n_gold > 0
    return [(k, mean_or_none(at_k(p, k)["hit"], answerable)) for k in ks]


def ranking_depth(records: list[CaseRecord]) -> int:
    return max((len(r.get("ranking") or ()) for r in records), default=0)


# ---------------------------------------------------------------------------- a run from the app


def stream_run(
    doc: TestSetDocument,
    system: str,
    k: int,
    out: Path | None,
    on_record: Callable[[CaseRecord], None],
    *,
    cancel: threading.Event | None = None,
    corpus: Corpus | None = None,
    ids: Iterable[str] | None = None,
) -> tuple[dict | None, bool]:
    """Run the cases of ``doc`` (all, or ``ids``) through ``system`` at ``k``, writing the
    run file ``out`` and calling ``on_record(record)`` as each case finishes.

    Returns ``(summary, interrupted)``; a cancelled run keeps the finished cases
    in ``out`` (no summary line, so ``ragtriage run --resume`` can continue it).
    ``core.evaluate.evaluate`` does the work; this is its shape for the app."""
    from ..core.evaluate import evaluate

    run = evaluate(doc, system, k, out=out, cancel=cancel, corpus=corpus, ids=ids, on_record=on_record)
    return (None if run.interrupted else run.summary), run.interrupted
