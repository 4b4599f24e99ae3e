"""Where runs and the files made from them go, and the command that continues a run.

``ragtriage run`` without ``--out`` writes ``runs/<test set stem>-<UTC stamp>.jsonl``
in the current folder (the repository root in the README's examples, where
``/runs/`` is ignored by git); the app puts the runs it starts and the exports
and reports it writes in the same ``runs/`` folder, so nothing lands beside the
tracked test set. A run's sidecar (``RUN.triage.json``) lives beside its run.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

RUNS = Path("runs")


def runs_folder() -> Path:
    """``runs/`` in the current folder (created when something is written there)."""
    return RUNS


def default_run_path(testset: str | Path, folder: Path | None = None) -> Path:
    """``runs/<stem>-<UTC stamp>.jsonl``; a name already taken gets ``-2``, ``-3``…"""
    folder = runs_folder() if folder is None else folder
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    stem = Path(testset).stem
    p = folder / f"{stem}-{stamp}.jsonl"
    n = 2
    while p.exists():
        p = folder / f"{stem}-{stamp}-{n}.jsonl"
        n += 1
    return p


def resume_command(
    testset: str | Path,
    out: str | Path,
    system: str = "builtin",
    k: int | None = None,
    retriever: str | None = None,
    extra: Sequence[str] = (),
) -> str:
    """The command that continues an interrupted run, as typed: the same system and k
    (resume refuses another k) and retriever, then ``extra`` (the selection, shard and
    executor options as given), every argument shell-quoted."""
    argv = ["ragtriage", "run", str(testset), "--out", str(out), "--resume"]
    if system != "builtin":
        argv += ["--system", system]
    if k is not None:
        argv += ["--k", str(k)]
    if retriever:
        argv += ["--retriever", retriever]
    return shlex.join([*argv, *extra])
