"""A stored run scored again against its test set, no system call: what ``check`` judges
and what ``diff`` compares (issue 20: ``diff`` trusted the reasons written in a run file, so
an edited run file showed "4 fixed").

:func:`rescored_run` reads the test set the run's meta names, rescores every stored case
that is still in it (``scoring.rescore``: the stored ranking and answer against the case's
labels, with the run's own k and ``cite``), and recomputes the summary. A case no longer in
the test set keeps its stored record; a test set that cannot be read leaves the run as it
is, with a note saying its reasons were not checked.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from .errors import InputError
from .runfile import RunFile


def _testset_path(run: RunFile) -> Path | None:
    named = run.meta.get("testset")
    if not isinstance(named, str) or not named:
        return None
    p = Path(named)
    for cand in (p, Path(run.path).parent / p) if not p.is_absolute() else (p,):
        if cand.is_file():
            return cand
    return None


def rescored_run(run: RunFile, opened: dict[Path, Any] | None = None) -> tuple[RunFile, str | None]:
    """``(run rescored against its test set, a note)``; the note says what could not be done,
    or how many stored reasons the rescoring changed (None when none). ``opened`` (resolved
    path -> ``(document, Context)``) keeps the test sets read so far: ``diff`` of two runs of
    one test set reads it, and its corpus, once."""
    from .document import TestSetDocument
    from .evaluate import with_cite
    from .scoring import rescore
    from .summary import summarize
    from .systems import Context

    path = _testset_path(run)
    if path is None:
        return run, (
            f"{run.path}: its test set {run.meta.get('testset')!r} is not there: its stored reasons are "
            "compared as written, not rescored"
        )
    key = path.resolve()
    got = opened.get(key) if opened is not None else None
    if got is None:
        try:
            doc = TestSetDocument.load(path)
        except InputError as e:
            return (
                run,
                f"{run.path}: its test set {path} cannot be read ({e}): stored reasons compared as written",
            )
        got = (doc, Context(doc))
        if opened is not None:
            opened[key] = got
    doc, ctx = got
    k = int(run.meta.get("k") or doc.settings.k)
    settings = with_cite(doc.settings, run.meta.get("cite") or "inline")
    look = ctx.lookup
    cases = {c.id: c for c in doc.cases}
    from .gold import Gold

    gold = Gold.of_testset(doc)
    out = []
    changed = 0
    for rec in run.cases:
        case = cases.get(rec["id"])
        if case is None:
            out.append(rec)
            continue
        new = rescore(rec, case, k, look, settings, gold=gold)
        changed += new.get("reason") != rec.get("reason")
        out.append(new)
    again = replace(run, cases=out, summary=summarize(out, k) if run.summary is not None else None)
    if changed:
        return again, (
            f"{run.path}: {changed} stored reason(s) differ from what its own fields give against "
            f"{path} (an edited run file, or a test set changed since): compared as rescored"
        )
    return again, None


def rescored_records(
    doc: Any,
    by_id: dict[str, Any],
    k: int,
    chunk_text: Any,
    mode: str,
    made_with: str,
    changed: bool,
    notes: list[str],
) -> list[Any]:
    """``check``'s rescoring of a stored run (no new calls): against the current cases when the
    test set changed since the run, and with ``mode`` as the cited set when the run was made
    with another (``made_with``); says why in ``notes``."""
    from .evaluate import with_cite
    from .scoring import rescore

    if changed:
        notes.append(
            "the test set changed since this run was made: its answers were rescored against the "
            "current cases (no new calls)"
        )
    if mode != made_with:
        notes.append(f"grounding judged with cite: {mode} (the run was made with {made_with}): rescored")
    look = chunk_text or (lambda _id: None)
    settings = with_cite(doc.settings, mode)
    from .gold import Gold

    gold = Gold.of_testset(doc)
    return [rescore(by_id[c.id], c, k, look, settings, gold=gold) for c in doc.cases if c.id in by_id]
