"""SIGTERM handled like ctrl-c: what a CI cancel (or ``kill``, ``timeout``) sends.

A run stopped by ctrl-c keeps every finished case in its run file and prints the
``--resume`` command; a SIGTERM used to end the process at once (exit -15, no message).
:func:`stop_on_sigterm` makes SIGTERM raise :exc:`KeyboardInterrupt` in the main thread,
so both take the same path; :func:`stopped_by` then says which signal it was, and the
command exits 143 (128 + 15) instead of 130.
"""

from __future__ import annotations

import signal
from types import FrameType

_got: str | None = None


def _on_term(signum: int, frame: FrameType | None) -> None:
    global _got
    if _got is not None:  # a second SIGTERM while stopping: stop now
        raise SystemExit(128 + signal.SIGTERM)
    _got = "SIGTERM"
    raise KeyboardInterrupt


def stop_on_sigterm() -> None:
    """Install the handler (the process's own command line only: never in a caller's process)."""
    try:
        signal.signal(signal.SIGTERM, _on_term)
    except ValueError:  # not the main thread
        pass


def stopped_by() -> str | None:
    """``"SIGTERM"`` once one arrived, else None (a ctrl-c)."""
    return _got
