"""``ragtriage triage RUN [--testset TESTSET]``: the app on a run's failures.

The test set is the one named in the run's meta line unless ``--testset`` is
given. Bad input (no run file, not a run file, test set not found) is a located
error and exit 2 before any screen opens. Textual is imported here only.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..cli import Exit
from ..core.errors import InputError, Problem


def _own_files(run: Path, testset: Path) -> None:
    """The files the app opens by itself (the sidecar, the recovery file): regular files
    of a sane size, said here (exit 2) rather than the app hanging on a FIFO or reading
    /dev/zero."""
    from ..core.files import require_bounded
    from ..tui.session import RECOVERY_MAX, window_files
    from ..tui.triage_state import SIDECAR_MAX, sidecar_path

    require_bounded(sidecar_path(run), SIDECAR_MAX, "triage sidecar")
    for recovery in window_files(testset):  # every window's, and an older version's
        require_bounded(recovery, RECOVERY_MAX, "recovery file")


def main(args) -> int:
    from ..core.runfile import read_meta, resolve_testset
    from ..tui.run_session import Prefetch

    run = Path(args.run)
    if run.is_dir():
        raise InputError(Problem(str(run), None, "is a folder, not a run file"))
    meta = read_meta(run)
    testset = resolve_testset(run, meta, getattr(args, "testset", None))
    _own_files(run, testset)
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("ragtriage triage: needs a terminal (stdin and stdout must be a TTY)", file=sys.stderr)
        return Exit.BAD_INPUT
    prefetch = Prefetch(run)  # read the run while the terminal app starts
    from ..tui import make_app

    app = make_app(testset, run, None, mode="triage", prefetch=prefetch)
    app.run()
    if app.load_error is not None:
        raise app.load_error
    return int(app.return_code or 0)
