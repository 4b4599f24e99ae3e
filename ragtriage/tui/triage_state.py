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
* :func:`stream_run` runs a test set on a system and hands each case record to a
  callback as it finishes (the app's run worker).
"""
from __future__ import annotations

import bisect
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path

from ..core.diagnosis import PASSING, TRIAGE_ORDER
from ..core.errors import InputError, Problem

UNLABELLED_WHY = "no expected chunk yet"
SIDECAR_VERSION = 1


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def verdict_text(reason: str | None) -> str:
    """Glyph and word, never colour alone."""
    if not reason:
        return "… pending"
    return "✓ pass" if reason in PASSING else "✗ fail"


def group_order(reasons: Iterable[str]) -> list[str]:
    """The reasons present, failures first in diagnosis order, then passes; unknown last."""
    present = set(reasons)
    out = [r for r in TRIAGE_ORDER if r in present]
    out += sorted(r for r in present if r not in TRIAGE_ORDER)
    return out


# ---------------------------------------------------------------------------- the run file's test set

def resolve_testset(run_path: Path, meta: dict, given=None) -> Path:
    """The test set of a run: ``given`` (``--testset``) or the one named in its meta line,
    tried as written (relative to the working folder), then relative to the run file."""
    if given:
        p = Path(given)
        if not p.is_file():
            raise InputError(Problem(str(p), None, "test set not found"))
        return p
    named = meta.get("testset")
    if not named:
        raise InputError(Problem(str(run_path), 1, "the run names no test set: pass --testset TESTSET",
                                 field="testset"))
    p = Path(named)
    for cand in ([p] if p.is_absolute() else [p, run_path.parent / p, run_path.parent / p.name]):
        if cand.is_file():
            return cand
    raise InputError(Problem(str(run_path), 1, f"the run's test set {named} was not found: pass --testset TESTSET",
                             field="testset"))


def read_meta(run_path) -> dict:
    """The meta line of a run file (first line only: cheap on a huge run)."""
    import orjson

    run_path = Path(run_path)
    if not run_path.is_file():
        raise InputError(Problem(str(run_path), None, "run file not found"))
    with open(run_path, "rb") as f:
        first = f.readline()
    if first.startswith(b"\xef\xbb\xbf"):
        first = first[3:]
    try:
        meta = orjson.loads(first)
    except orjson.JSONDecodeError:
        meta = None
    if not isinstance(meta, dict) or meta.get("type") != "meta":
        raise InputError(Problem(str(run_path), 1, "the first line must be the meta line "
                                 "({\"type\": \"meta\", ...}); is this a ragtriage run file?", field="type"))
    return meta


# ---------------------------------------------------------------------------- sidecar

def sidecar_path(run_path) -> Path:
    p = Path(run_path)
    return p.with_name(p.name.removesuffix(".jsonl") + ".triage.json")


class Sidecar:
    """Reviewed marks, notes and re-run records of one run, kept in ``RUN.triage.json``."""

    def __init__(self, path: Path, data: dict | None = None):
        self.path = Path(path)
        data = data if isinstance(data, dict) else {}
        cases = data.get("cases")
        self.cases: dict[str, dict] = {str(k): dict(v) for k, v in (cases or {}).items() if isinstance(v, dict)}
        rerun = data.get("rerun")
        self.rerun: dict[str, dict] = {str(k): v for k, v in (rerun or {}).items() if isinstance(v, dict)}
        self.rescored: set[str] = set(data.get("rescored") or ())
        self.testset_hash: str | None = data.get("testset_hash")

    @classmethod
    def load(cls, run_path) -> "Sidecar":
        path = sidecar_path(run_path)
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
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
        out: dict = {"version": SIDECAR_VERSION, "run": self.path.name.removesuffix(".triage.json") + ".jsonl",
                     "cases": self.cases}
        if self.rescored:
            out["rescored"] = sorted(self.rescored)
            out["testset_hash"] = self.testset_hash
        if self.rerun:
            out["rerun"] = self.rerun
        return out

    def save(self) -> None:
        """Atomic: a temp file in the same folder, then replace."""
        data = json.dumps(self.to_json(), ensure_ascii=False, indent=1).encode("utf-8")
        d = self.path.parent
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=d)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def carried_to(self, run_path) -> "Sidecar":
        """The notes and reviewed marks, for a new run of the same test set."""
        new = Sidecar(sidecar_path(run_path))
        new.cases = {k: dict(v) for k, v in self.cases.items()}
        return new


# ---------------------------------------------------------------------------- recompute

def relabel_record(record: dict, case, k: int, settings) -> dict:
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
            if why == UNLABELLED_WHY:
                why = ""
            if new["reason"] == "unlabelled" and not why:
                why = UNLABELLED_WHY
            new["why"] = why
    return new


def _no_text(_cid: str) -> None:
    return None


# ---------------------------------------------------------------------------- grouped records

class TriageState:
    """Case records in run order, grouped by reason."""

    def __init__(self, records: list[dict] | None = None, k: int = 3):
        self.k = k
        self.records: list[dict] = []
        self.pos: dict[str, int] = {}
        self.groups: dict[str, list[int]] = {}
        self._order: list[str] | None = None
        self._lines: list[tuple[str, int]] | None = None
        self.version = 0  # bumped on every change; views compare it
        for r in records or ():
            self._append(r)

    def _append(self, record: dict) -> int:
        i = len(self.records)
        self.records.append(record)
        self.pos[record["id"]] = i
        self.groups.setdefault(record.get("reason") or "", []).append(i)
        return i

    def __len__(self) -> int:
        return len(self.records)

    def record(self, case_id: str) -> dict:
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

    def lines(self) -> list[tuple[str, int]]:
        """The flat list the table paints: ``(reason, -1)`` for a group header, then
        ``(reason, position)`` for each of its cases."""
        if self._lines is None:
            out: list[tuple[str, int]] = []
            for reason in self.order:
                out.append((reason, -1))
                out.extend((reason, i) for i in self.groups[reason])
            self._lines = out
        return self._lines

    def line_of(self, case_id: str) -> int | None:
        """Index in :meth:`lines` of a case (a walk over the group headers, not the cases)."""
        i = self.pos.get(case_id)
        if i is None:
            return None
        reason = self.records[i].get("reason") or ""
        at = 0
        for r in self.order:
            members = self.groups[r]
            if r == reason:
                return at + 1 + bisect.bisect_left(members, i)
            at += 1 + len(members)
        return None

    def _changed(self, regroup: bool) -> None:
        self.version += 1
        self._lines = None
        if regroup:
            self._order = None

    def replace(self, record: dict) -> tuple[str, str]:
        """Put a recomputed record in place; returns (old reason, new reason)."""
        i = self.pos[record["id"]]
        old = self.records[i].get("reason") or ""
        new = record.get("reason") or ""
        self.records[i] = record
        regroup = False
        if old != new:
            members = self.groups[old]
            del members[bisect.bisect_left(members, i)]
            bisect.insort(self.groups.setdefault(new, []), i)
            regroup = not members or len(self.groups[new]) == 1
        self._changed(regroup)
        return old, new

    def add(self, record: dict) -> None:
        """A record streamed in from a run (new case, or one asked again)."""
        if record["id"] in self.pos:
            self.replace(record)
            return
        reason = record.get("reason") or ""
        new_group = not self.groups.get(reason)
        self._append(record)
        self._changed(new_group)

    def summary(self) -> dict:
        from ..core.summary import summarize

        return summarize(self.records, self.k)


# ---------------------------------------------------------------------------- sweep from stored rankings

def retrieval_sweep(records: list[dict], ks: Iterable[int]) -> list[tuple[int, float | None]]:
    """Hit rate per k from the stored rankings (no system call); unscored and
    unanswerable cases are left out, as in the summary."""
    from ..core.metrics import at_k, first_positions, mean_or_none

    scored = [r for r in records if r.get("reason") not in ("error", "unlabelled") and r.get("expected")]
    if not scored:
        return [(k, None) for k in ks]
    pos = first_positions([r.get("ranking") or [] for r in scored], [r["expected"] for r in scored],
                          [r.get("expect", "any") for r in scored])
    ans = pos.n_gold > 0
    return [(k, mean_or_none(at_k(pos, k)["hit"], ans)) for k in ks]


def ranking_depth(records: list[dict]) -> int:
    return max((len(r.get("ranking") or ()) for r in records), default=0)


# ---------------------------------------------------------------------------- a run from the app

def default_run_path(folder: Path, testset: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    p = folder / f"{testset.stem}-{stamp}.jsonl"
    n = 2
    while p.exists():
        p = folder / f"{testset.stem}-{stamp}-{n}.jsonl"
        n += 1
    return p


def stream_run(doc, system: str, k: int, out, on_record: Callable[[dict], None], *,
               cancel: threading.Event | None = None, corpus=None, ids=None) -> tuple[dict | None, bool]:
    """Run the cases of ``doc`` (all, or ``ids``) through ``system`` at ``k``, writing the
    run file ``out`` and calling ``on_record(record)`` as each case finishes.

    Returns ``(summary, interrupted)``; a cancelled run keeps the finished cases
    in ``out`` (no summary line, so ``ragtriage run --resume`` can continue it).
    The same steps as ``core.evaluate.evaluate``, which has no per-case callback."""
    from .. import __version__
    from ..core.evaluate import open_system
    from ..core.runfile import RunWriter, make_meta
    from ..core.runner import run_cases
    from ..core.scoring import make_record
    from ..core.summary import summarize

    if not isinstance(k, int) or k < 1:
        raise InputError(Problem("k", None, f"k must be a whole number of 1 or more, got {k!r}"))
    ctx, sys_ = open_system(doc, system, corpus=corpus)
    cases = list(doc.cases)
    if ids is not None:
        wanted = set(ids)
        cases = [c for c in cases if c.id in wanted]
    order = {c.id: i for i, c in enumerate(cases)}
    meta = make_meta(testset=str(doc.path), testset_hash=doc.content_hash, system=sys_.spec, k=k,
                     version=__version__, corpus=str(ctx.corpus_path) if ctx.corpus_path is not None else None)
    if hasattr(sys_, "prepare"):
        sys_.prepare()
    records: dict[str, dict] = {}
    settings = doc.settings
    local = hasattr(sys_, "ask_sync")
    writer = RunWriter(out, meta) if out is not None else None
    try:
        def on_done(case, res):
            rec = make_record(case, res, k, ctx.chunk_text, settings)
            records[case.id] = rec
            if writer is not None:
                writer.write_case(rec, flush=not local or len(records) % 50 == 0)
            on_record(rec)

        run_cases(sys_, cases, k, on_done, cancel=cancel)
        interrupted = bool(cancel is not None and cancel.is_set() and len(records) < len(cases))
        summary = None
        if not interrupted:
            summary = summarize(sorted(records.values(), key=lambda r: order[r["id"]]), k)
            if writer is not None:
                writer.write_summary(summary)
    finally:
        if writer is not None:
            writer.close()
    return summary, interrupted
