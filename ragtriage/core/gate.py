"""The CI gate: bars from ``--min`` and the test set's ``gates``, judged on a run.

A bar is ``METRIC=VALUE`` where METRIC is a summary key (formats.md §5),
optionally ``@k`` for the retrieval ones (``hit@5``): those are recomputed from
each case's stored ranking at that k, so a bar at another k costs no new call.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_report(path, text: str) -> None:
    """Write a report file atomically; append when it is the GitHub step summary
    (``$GITHUB_STEP_SUMMARY`` collects what every command of the step writes)."""
    p = Path(path)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and os.path.abspath(summary) == os.path.abspath(p):
        with open(p, "a", encoding="utf-8") as f:
            f.write(text)
        return
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
