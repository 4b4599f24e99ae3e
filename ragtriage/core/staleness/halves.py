"""Work on a chunks file in two halves at once: the second in a helper process.

The stale check is CPU-bound Python, so a thread would not run beside it; a process on the
machine's second core does. :func:`in_halves` runs ``job(path, lo, hi, *args, on_block=...)``
on the first half here and on the second in a helper, when the file is big enough to pay
for the process (:data:`PARALLEL_MIN_BYTES`) and a second core is free; the caller joins the
two results (numbers in the second count from its start). A job is a plain function of a
byte range and of picklable arguments: :func:`.probe.probe_range`, the similarity pass's
:func:`.similarity.collect_range`.

The helper is a plain ``python -c`` child in its own session: ctrl+c goes to the parent,
which stops it, and nothing it prints reaches a terminal app. If it cannot start, fails or
dies, the parent does its half itself: a helper can cost time, never a result.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..corpus import MAX_LINE

PARALLEL_MIN_BYTES = 32 << 20  # below this a helper costs more than half the work saves
JOBS = frozenset(
    {"ragtriage.core.staleness.probe:probe_range", "ragtriage.core.staleness.similarity:collect_range"}
)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _cut(path: Path, size: int) -> int:
    """The start of the first line at or after the middle of the file (``size``: none)."""
    with open(path, "rb") as f:
        f.seek(max(0, size // 2 - 1))  # (so a line starting at the middle is cut before)
        line = f.readline(MAX_LINE + 2)
        if not line.endswith(b"\n"):
            return size  # the end of the file, or a line too long: one range says so
        return f.tell()


# The helper imports this very package (sys.path[0] is the working folder for -c: replaced),
# so it runs the parent's code even beside another installed ragtriage.
_SERVE = "import sys; sys.path[0] = sys.argv[1]; from ragtriage.core.staleness.halves import _serve; _serve()"


class _Helper:
    """A child process doing a job on one byte range; it reports bytes read, then its result."""

    def __init__(self, proc: subprocess.Popen[bytes], span: int) -> None:
        self.proc = proc
        self.span = span  # the bytes of its range: it cannot have read more
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buf = b""
        self.result: Any = None
        self.done = False
        self.dead = False
        self.reported = 0  # bytes the child said it read

    @classmethod
    def start(cls, job: str, path: Path, lo: int, hi: int, args: tuple[Any, ...]) -> _Helper | None:
        if not sys.executable or getattr(sys, "frozen", False):  # a frozen app is not a Python
            return None
        root = str(Path(__file__).resolve().parents[3])  # the folder holding this ragtriage package
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", _SERVE, root],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return None
        request = pickle.dumps((job, str(path), lo, hi, args), pickle.HIGHEST_PROTOCOL)

        def send() -> None:  # in a thread: the pipe takes 64 kB until the child reads
            assert proc.stdin is not None
            with contextlib.suppress(OSError):
                proc.stdin.write(request)
                proc.stdin.close()

        threading.Thread(target=send, name="ragtriage-helper-send", daemon=True).start()
        return cls(proc, hi - lo)

    def poll(self) -> int:
        """Take what the child wrote so far; returns the bytes it reported reading since."""
        done = 0
        while not self.done and not self.dead:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self.dead = True
                break
            self.buf += data
            while not self.done:
                nl = self.buf.find(b"\n")
                if nl < 0:
                    break
                head = self.buf[:nl]
                if head.startswith(b"="):  # the result: a pickle of the length given
                    n = int(head[1:])
                    if len(self.buf) < nl + 1 + n:
                        break
                    self.result = pickle.loads(self.buf[nl + 1 : nl + 1 + n])
                    self.done = True
                    self.buf = b""
                elif head.isdigit():
                    n = min(int(head), self.span - self.reported)
                    done += n
                    self.reported += n
                    self.buf = self.buf[nl + 1 :]
                else:  # the child failed: its range is done here
                    self.dead = True
                    break
        return done

    def wait(self, advance: Callable[[int], None]) -> tuple[bool, Any]:
        """``(True, result)``, or ``(False, None)`` if the child failed; reports its progress
        while it works."""
        while not self.done and not self.dead:
            select.select([self.fd], [], [], 0.05)
            advance(self.poll())
        return self.done, self.result

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _serve() -> None:
    """The helper: do the job asked on stdin, report progress and the result on stdout."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it
    out = sys.stdout.buffer
    try:
        job, path, lo, hi, args = pickle.load(sys.stdin.buffer)

        def report(block: bytes) -> None:
            out.write(b"%d\n" % len(block))
            out.flush()

        result = _job(job)(Path(path), lo, hi, *args, on_block=report)
        payload = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
        out.write(b"=%d\n" % len(payload) + payload)
        out.flush()
    except BaseException as e:  # anything: the parent does the range itself
        with contextlib.suppress(BaseException):
            out.write(b"!" + repr(e).encode("utf-8", "replace").replace(b"\n", b" ") + b"\n")
            out.flush()


def _job(name: str) -> Callable[..., Any]:
    if name not in JOBS:
        raise ValueError(f"not a job: {name}")
    module, func = name.split(":")
    job: Callable[..., Any] = getattr(importlib.import_module(module), func)
    return job


def _name(job: Callable[..., Any]) -> str:
    return f"{job.__module__}:{job.__name__}"


def in_halves(
    path: Path,
    size: int,
    advance: Callable[[int], None],
    job: Callable[..., Any],
    args: tuple[Any, ...],
    stop: Callable[[Any], bool] = lambda first: False,
) -> tuple[Any, Any]:
    """``(job on the first half, job on the second half)`` of the file (``size`` bytes), the
    second by a helper when the file is big and a second core is free; ``(job on the whole
    file, None)`` otherwise, or when ``stop(first)`` says the second half is not needed.
    ``advance(n)`` is told of every ``n`` bytes read (by either side); it may raise (a
    cancel), which stops the helper."""
    two = size >= PARALLEL_MIN_BYTES and os.name == "posix" and _cores() > 1  # (the helper's pipes: POSIX)
    cut = _cut(path, size) if two else size
    helper = _Helper.start(_name(job), path, cut, size, args) if cut < size else None
    if helper is None:
        return job(path, 0, size, *args, on_block=lambda block: advance(len(block))), None
    try:
        first = job(path, 0, cut, *args, on_block=lambda block: advance(len(block) + helper.poll()))
        if stop(first):
            return first, None
        ok, second = helper.wait(advance)
        if not ok:  # the helper failed: its half is done here (its bytes were counted once)
            credit = helper.reported

            def again(block: bytes) -> None:
                nonlocal credit
                take = min(len(block), credit)
                credit -= take
                advance(len(block) - take)

            second = job(path, cut, size, *args, on_block=again)
        return first, second
    finally:
        helper.stop()
