"""Issue 19, the app in a real terminal: what reaches the terminal from hostile data, and
what a quit, a SIGTERM and a SIGHUP leave behind.

Pilot checks what Textual paints (test_app_text.py); this test runs ``ragtriage edit`` and
``ragtriage triage`` as a person does, in a pseudo-terminal at 80×24, and reads every byte
the process writes to it. The test set's ids, questions, notes and the system's answer hold
a window-title write (OSC 0), a clipboard write (OSC 52), a hyperlink (OSC 8), a C1 CSI
and U+202E: none of them may reach the terminal as bytes, and whatever ends the app, the
terminal is handed back (alternate screen left, mouse reporting off).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.hostile.test_app_text import ESCAPES, hostile  # noqa: F401  (the fixture)

# What data carries and a terminal would act on. Textual writes OSC 22 (pointer shape)
# itself and never clears the screen with CSI 2J; every other OSC, a 2J, a C1 control or
# a bidi override in the stream came from data.
FROM_DATA = re.compile(rb"\x1b\](?!22;)|\x1b\[2J|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")
READY = 60.0  # seconds the app may take to paint on a loaded 2-core machine
RESTORED = (b"\x1b[?1049l", b"\x1b[?1000l")  # alternate screen left, mouse reporting off


def test_the_pattern_catches_every_sequence_the_data_carries():
    for sequence in ESCAPES.split(" "):
        assert FROM_DATA.search(sequence.encode()), sequence


def _read(fd: int, out: bytearray, until: float, want: bytes | None = None) -> bool:
    """Read the terminal until ``want`` appears (True) or the time is up / it closes."""
    while time.monotonic() < until:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            return False
        if not chunk:
            return False
        out += chunk
        if want is not None and want in out:
            return True
    return False


def _session(args: list[str], cwd: Path, end: str) -> tuple[bytes, int]:
    """Run ``ragtriage ARGS`` in an 80×24 pty, wait for its first frame, end it by
    ``end`` (ctrl+q, or a signal name), and return (every byte written, exit code)."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(cwd)
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "ragtriage", *args])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    out = bytearray()
    try:
        # the footer's last key is painted once the first frame is complete
        assert _read(fd, out, time.monotonic() + READY, b"palette"), f"no frame: {bytes(out[-400:])!r}"
        _read(fd, out, time.monotonic() + 1.0)  # let the rest of the first frames arrive
        if end == "ctrl+q":
            os.write(fd, b"\x11")
        else:
            os.kill(pid, getattr(signal, end))
        _read(fd, out, time.monotonic() + READY)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return bytes(out), os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize(("command", "end", "code"), [("edit", "ctrl+q", 0), ("triage", "SIGTERM", 143)])
def test_hostile_text_never_reaches_the_terminal_as_bytes(hostile, command, end, code):  # noqa: F811
    ts, run = hostile
    target = ts if command == "edit" else run
    out, rc = _session([command, target.name], ts.parent, end)
    assert rc == code, out[-600:]
    bad = FROM_DATA.search(out)
    assert bad is None, (
        f"{bad.group()!r} written to the terminal: {out[max(0, bad.start() - 80) : bad.end() + 40]!r}"
    )
    assert b"Traceback" not in out
    tail = out[-400:]
    assert all(seq in tail for seq in RESTORED), f"terminal not handed back: {tail!r}"


def test_a_closed_terminal_ends_the_app_and_hands_the_terminal_back(hostile):  # noqa: F811
    ts, _run = hostile
    before = ts.read_bytes()
    out, rc = _session(["edit", ts.name], ts.parent, "SIGHUP")
    assert rc == 129, out[-600:]
    assert b"Traceback" not in out
    assert all(seq in out[-400:] for seq in RESTORED)
    assert ts.read_bytes() == before  # nothing was edited, so nothing was written
