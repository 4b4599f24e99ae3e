"""``ragtriage edit TESTSET [--run RUN] [--corpus CHUNKS]``: the Textual app.

Textual is imported here, never by the other commands."""

from __future__ import annotations

import sys
from pathlib import Path

from ..cli import Exit
from ..core.errors import InputError, Problem


def main(args) -> int:
    path = Path(args.testset)
    if not path.exists():
        raise InputError(Problem(str(path), None, "test set not found"))
    if path.is_dir():
        raise InputError(Problem(str(path), None, "is a folder, not a test set"))
    for opt in ("run", "corpus"):
        value = getattr(args, opt, None)
        if value and not Path(value).is_file():
            raise InputError(Problem(value, None, f"{opt} file not found"))
    from ..core.files import require_bounded
    from ..tui.session import RECOVERY_MAX, recovery_path

    require_bounded(recovery_path(path), RECOVERY_MAX, "recovery file")  # not a FIFO, not /dev/zero
    if getattr(args, "run", None):
        from ..tui.triage_state import SIDECAR_MAX, sidecar_path

        require_bounded(sidecar_path(args.run), SIDECAR_MAX, "triage sidecar")
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("ragtriage edit: needs a terminal (stdin and stdout must be a TTY)", file=sys.stderr)
        return Exit.BAD_INPUT
    from ..tui import make_app

    app = make_app(path, getattr(args, "run", None), getattr(args, "corpus", None))
    app.run()
    if app.load_error is not None:
        raise app.load_error
    return int(app.return_code or 0)
