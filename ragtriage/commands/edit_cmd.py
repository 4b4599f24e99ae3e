"""``ragtriage edit TESTSET [--run RUN] [--corpus CHUNKS] [--system SPEC]``: the Textual app.

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
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("ragtriage edit: needs a terminal (stdin and stdout must be a TTY)", file=sys.stderr)
        return Exit.BAD_INPUT
    from ..tui import make_app

    app = make_app(
        path, getattr(args, "run", None), getattr(args, "corpus", None), system=getattr(args, "system", None)
    )
    app.run()
    if app.load_error is not None:
        raise app.load_error
    return int(app.return_code or 0)
