"""The worker process of ``--executor process``: it imports a ``python:`` system and
answers the calls the parent sends, several at once.

Started by :class:`.executors.ProcessExecutor` as ``python -c`` in its own session (a
ctrl-c goes to the parent, which ends it). Frames on stdin and on the protocol pipe are
``length (4 bytes, big-endian) + payload``. The parent sends ``{"id", "q", "k"}`` as
JSON; the worker answers ``id (8 bytes) + status (1 byte) + body``: the result as JSON
(:data:`OK`), an error message (:data:`FAILED`), or, once at start, :data:`READY` or
:data:`IMPORT_FAILED`. The protocol pipe is the stdout the worker was started with; the
user's own prints (``print``, a C library writing to fd 1) go to stderr instead, so they
can never corrupt it.

Each result is checked here (:func:`.python.checked`): a shape the run file cannot hold,
or one larger than the parent's answer limit, is that case's error — an 80 MB answer is
never sent across.
"""

from __future__ import annotations

import asyncio
import os
import signal
import struct
import sys
import threading
from typing import IO

import orjson

OK, FAILED, READY, IMPORT_FAILED = 0, 1, 2, 3
_LEN = struct.Struct(">I")
_HEAD = struct.Struct(">QB")


def _read_exact(f: IO[bytes], n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        got = f.read(n - len(data))
        if not got:
            return None
        data += got
    return data


def read_frame(f: IO[bytes]) -> bytes | None:
    head = _read_exact(f, 4)
    if head is None:
        return None
    return _read_exact(f, _LEN.unpack(head)[0])


def frame(payload: bytes) -> bytes:
    return _LEN.pack(len(payload)) + payload


class _Out:
    """The protocol pipe; answers from several threads, one frame at a time."""

    def __init__(self, fd: int):
        self.fd = fd
        self.lock = threading.Lock()

    def send(self, call_id: int, status: int, body: bytes) -> None:
        data = frame(_HEAD.pack(call_id, status) + body)
        with self.lock:
            view = memoryview(data)
            while view:
                n = os.write(self.fd, view)
                view = view[n:]


def serve(target: str, max_body: int) -> None:
    """Import ``target`` (``MODULE:ATTR``) and answer calls until stdin ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    out = _Out(os.dup(1))
    os.dup2(2, 1)  # the user's prints, even from C, go to stderr, never into the protocol
    sys.stdout = sys.stderr
    from .python import checked, load_callable

    try:
        func, is_async = load_callable(target)
    except Exception as e:  # InputError: its messages (the parent locates them at --system)
        problems = getattr(e, "problems", None)
        text = "; ".join(p.message for p in problems) if problems else str(e)
        out.send(0, IMPORT_FAILED, text.encode("utf-8", "surrogatepass"))
        return
    out.send(0, READY, b"async" if is_async else b"sync")
    loop = None
    if is_async:
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="ragtriage-worker-loop", daemon=True).start()

    async def guarded(question: str, k: int) -> object:
        try:
            return await func(question, k)
        except BaseException as e:  # SystemExit inside the loop would stop the loop itself
            if isinstance(e, (Exception, asyncio.CancelledError)):
                raise
            raise _Stopped(e) from None

    def answer(call_id: int, question: str, k: int) -> None:
        try:
            if loop is not None:
                raw = asyncio.run_coroutine_threadsafe(guarded(question, k), loop).result()
            else:
                raw = func(question, k)
            body = checked(raw, f"python:{target}", max_body)
        except BaseException as e:  # SystemExit, KeyboardInterrupt from the user's code: that case's error
            out.send(call_id, FAILED, _cause(e).encode("utf-8", "surrogatepass"))
            return
        out.send(call_id, OK, body)

    stdin = sys.stdin.buffer
    while True:
        payload = read_frame(stdin)
        if payload is None:
            os._exit(0)  # the parent closed the pipe: calls still running are abandoned
        req = orjson.loads(payload)
        threading.Thread(target=answer, args=(req["id"], req["q"], req["k"]), daemon=True).start()


class _Stopped(Exception):
    """SystemExit or KeyboardInterrupt raised by an async system, carried out of its loop."""

    def __init__(self, e: BaseException):
        super().__init__(str(e))
        self.original = e


def _cause(e: BaseException) -> str:
    from . import CaseError

    if isinstance(e, _Stopped):
        e = e.original
    if isinstance(e, CaseError):
        return str(e)
    try:
        msg = str(e)
    except Exception:
        msg = ""
    name = type(e).__name__
    if not isinstance(e, Exception):
        return f"the system raised {name}: {msg}" if msg else f"the system raised {name}"
    return f"{name}: {msg}" if msg else name
