"""``ragtriage edit TESTSET [--run RUN] [--corpus CHUNKS] [--system SPEC]``: the Textual app.

On a test set that does not exist yet, with ``--corpus``, it offers (on the terminal,
before the app opens) to create it as ``ragtriage init`` would, then opens its empty Cases
screen, where ``n`` writes the first case.

Textual is imported here, never by the other commands."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from ..cli import Exit
from ..core.errors import InputError, Problem


def _missing(path: Path, corpus: str | None) -> Problem:
    q = shlex.quote(str(path))
    how = (
        f"ragtriage edit {q} --corpus {shlex.quote(corpus)}"
        if corpus
        else f"ragtriage edit {q} --corpus CHUNKS"
    )
    return Problem(
        str(path),
        None,
        f"test set not found (to start a new one over your chunks file: `{how}`, or "
        f"`ragtriage init {q} --corpus {shlex.quote(corpus or 'CHUNKS')}`)",
    )


def _offer_new(path: Path, corpus: str) -> bool:
    """Ask on the terminal whether to create ``path``; create it on yes. Whether it was made."""
    from .init_cmd import _check_path, create

    _check_path(path)  # a name init would refuse: say so before asking
    try:
        reply = input(f"{path} does not exist. Create a new test set over {corpus}? [Y/n] ")
    except EOFError:
        reply = "n"
    if reply.strip().lower() not in ("", "y", "yes"):
        print("nothing created", file=sys.stderr)
        return False
    n, note = create(path, Path(corpus))
    print(f"{path}: a new test set over {corpus} ({n} chunks); {note}")
    return True


def main(args) -> int:
    path = Path(args.testset)
    corpus = getattr(args, "corpus", None)
    for opt in ("run", "corpus"):
        value = getattr(args, opt, None)
        if value and not Path(value).is_file():
            raise InputError(Problem(value, None, f"{opt} file not found"))
    if path.is_dir():
        raise InputError(Problem(str(path), None, "is a folder, not a test set"))
    made = False
    if not path.exists():
        if not corpus or not sys.stdin.isatty() or not sys.stdout.isatty():
            raise InputError(_missing(path, corpus))
        if not _offer_new(path, corpus):
            return Exit.OK
        made = True
    from ..core.files import require_bounded
    from ..tui.session import RECOVERY_MAX, window_files

    for recovery in window_files(path):  # every window's, and an older version's
        require_bounded(recovery, RECOVERY_MAX, "recovery file")  # not a FIFO, not /dev/zero
    if getattr(args, "run", None):
        from ..tui.triage_state import SIDECAR_MAX, sidecar_path

        require_bounded(sidecar_path(args.run), SIDECAR_MAX, "triage sidecar")
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("ragtriage edit: needs a terminal (stdin and stdout must be a TTY)", file=sys.stderr)
        return Exit.BAD_INPUT
    from ..tui import make_app

    # a set made just now names the chunks itself (corpus:), so no override is passed
    app = make_app(
        path, getattr(args, "run", None), None if made else corpus, system=getattr(args, "system", None)
    )
    app.run()
    if app.load_error is not None:
        raise app.load_error
    return int(app.return_code or 0)
