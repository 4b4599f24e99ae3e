"""Judging a run against the test set: the records of its cases (rescored when the test
set changed since), the bars measured on them, where to look for each failing case —
a :class:`~ragtriage.core.gate.CheckResult`. ``gate.judge`` is the public name."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .diagnosis import PASSING
from .gate import Bar, CheckResult, explain, measure
from .idcheck import check_notes, cite_mode
from .records import CaseRecord, Summary

if TYPE_CHECKING:
    from .evaluate import Run
    from .runfile import RunFile


def _judged_records(
    doc: Any, run: Any, k: int, chunk_text: Any, notes: list[str], cases: Any = None, cite: str | None = None
) -> tuple[list[CaseRecord], Summary, list[str]]:
    """(the run's records for the test set's cases — or the selected ``cases`` — in its
    order; the summary they give; the case ids the run lacks). A run of another version of
    the test set, or judged with another ``cite`` mode than it was made with, is rescored."""
    from .summary import summarize

    selected = cases is not None
    cases = doc.cases if cases is None else cases
    by_id = {r["id"]: r for r in run.cases}
    ids = [c.id for c in cases]
    missing = [cid for cid in ids if cid not in by_id]
    known = set(ids)
    extra = [cid for cid in by_id if cid not in known]
    run_hash = run.meta.get("testset_hash")
    doc_hash = getattr(doc, "content_hash", None)
    changed = bool(run_hash and doc_hash and run_hash != doc_hash)
    made_with = run.meta.get("cite") or "inline"
    mode = cite_mode(doc, cite)
    summary = run.summary
    records = [by_id[cid] for cid in ids if cid in by_id]
    if changed or mode != made_with:
        from .rerun import rescored_records

        chosen = {cid: by_id[cid] for cid in ids if cid in by_id}
        records = rescored_records(doc, chosen, k, chunk_text, mode, made_with, changed, notes)
        summary = None
    if extra and selected:
        summary = None  # cases of the run outside the selection: not judged here
    elif extra:
        notes.append(
            f"{len(extra)} case(s) of the run are not in the test set any more: left out "
            f"({', '.join(extra[:5])}{' …' if len(extra) > 5 else ''})"
        )
        summary = None
    if summary is None or missing:
        _recomputed(run, changed, notes)
        summary = summarize(records, k)
    return records, summary, missing


def _recomputed(run: Any, changed: bool, notes: list[str]) -> None:
    """Why the summary was computed here rather than read from the run."""
    if run.meta.get("merged"):
        notes.append(
            f"{len(run.meta['merged'])} shards judged as one run (summary computed from their cases)"
        )
    elif run.summary is None and not changed:
        notes.append("the run has no summary line (interrupted?): summary recomputed from its cases")


def _depth_note(bars: list[Bar], records: list[CaseRecord], k: int) -> str | None:
    """A note when a bar's k is deeper than the stored rankings reach."""
    deep = [(b, b.k) for b in bars if b.k is not None and b.k > k]
    if not deep:
        return None
    depth = max((len(r.get("ranking") or ()) for r in records), default=0)
    if depth >= max(bk for _, bk in deep):
        return None
    return (
        f"{', '.join(b.metric for b, _ in deep)}: above the run's k = {k}, measured on the stored "
        f"rankings, which are at most {depth} deep (a chunk the system did not return counts as "
        "not found)"
    )


def _case_lines(doc: Any) -> dict[str, int]:
    """Every case's line in one pass over the text (``case_line`` per case walked every
    earlier case: 10k cases took 34 s, 50k six minutes)."""
    try:
        return dict(doc.case_lines())
    except Exception:  # a document without line info still gets a report
        return {}


def judge(
    doc: Any,
    run: RunFile | Run,
    bars: list[Bar],
    *,
    stale: Iterable[object] = (),
    run_label: str | None = None,
    chunk_text: Callable[[str], str | None] | None = None,
    stale_corpus: str | None = None,
    cases: Any = None,
    cite: str | None = None,
) -> CheckResult:
    """Judge ``run`` (``meta``, ``cases``, ``summary``) against the test set ``doc``.

    When the run was made on another version of the test set (the meta hash
    differs), its stored answers are rescored against the current cases (no
    system call; ``chunk_text`` looks chunk texts up for the grounding check)
    and the summary recomputed, so the bars judge the test set as it is now."""
    k = run.meta.get("k") or doc.settings.k
    notes: list[str] = []
    records, summary, missing = _judged_records(doc, run, k, chunk_text, notes, cases, cite)
    results = measure(bars, records, summary, k)
    unknown = check_notes(records, k, run.meta.get("corpus"), cite_mode(doc, cite), notes)
    deep = _depth_note(bars, records, k)
    if deep is not None:
        notes.append(deep)
    cases = {c.id: c for c in doc.cases}
    details = {r["id"]: explain(r, cases.get(r["id"]), k) for r in records if r.get("reason") not in PASSING}
    meta = {key: v for key, v in run.meta.items() if key != "type"}
    return CheckResult(
        testset=str(doc.path),
        run=run_label,
        k=k,
        records=records,
        summary=summary,
        bars=results,
        stale=list(stale),
        missing=missing,
        notes=notes,
        case_lines=_case_lines(doc),
        details=details,
        meta=meta,
        stale_corpus=stale_corpus if stale else None,
        errors=[r["id"] for r in records if r.get("reason") == "error"],
        unknown_ids=unknown,
    )
