"""Where a ``python:`` system's calls run: the executor seam.

Three executors answer ``await call(question, k) -> result`` and ``await aclose()``:

- :class:`.python.ThreadExecutor` — in this process (``--executor thread``; the API's
  default, so a notebook's callable works as it is);
- :class:`ProcessExecutor` — in one worker process (``--executor process``, the CLI's
  default), several calls at once;
- :class:`.ray_executor.RayExecutor` — as Ray tasks on a local Ray or a cluster.

The runner above them is the same (concurrency, timeouts, retries, resume, progress), so
the run file does not depend on the executor.

Why a worker process: a system that calls ``os._exit(0)``, segfaults in a native
library or is killed by the OOM killer ended the whole run — and a ``check`` exited 0
with no case measured. In a worker, the process that dies is the worker: the cases it
was answering get an error and a new worker answers the rest. Those cases are asked
again one at a time, alone in their worker, so the one that kills it is found and the
others are answered (a case that kills its worker on every try ends as that case's
error).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError, Problem
from . import CaseError

_BOOT = (
    "import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
    "from ragtriage.core.systems.worker import serve; serve(sys.argv[2], int(sys.argv[3]))"
)
START_TIMEOUT = 300.0  # seconds a worker may take to import the system (a model loads)


class _Worker:
    """One worker process and the calls it is answering."""

    def __init__(self, target: str, max_body: int):
        from .worker import READY

        root = str(Path(__file__).resolve().parents[3])
        path = [root, *[p for p in sys.path if p != root]]
        if os.getcwd() not in path:
            path.insert(1, os.getcwd())
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT, json.dumps(path), target, str(max_body)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # ctrl-c reaches the parent only; it ends the worker
        )
        self.pending: dict[int, tuple[asyncio.Future[dict[str, Any]], asyncio.AbstractEventLoop]] = {}
        self.lock = threading.Lock()
        self.dead = False
        self.exit_code: int | None = None
        self.started = threading.Event()
        self.start_error: str | None = None
        self.is_async = False
        self._ready = READY
        threading.Thread(target=self._read, name="ragtriage-worker-reader", daemon=True).start()

    def _read(self) -> None:
        from .worker import _HEAD, IMPORT_FAILED, OK, READY, read_frame

        assert self.proc.stdout is not None
        while True:
            payload = read_frame(self.proc.stdout)
            if payload is None:
                break
            call_id, status = _HEAD.unpack_from(payload)
            body = payload[_HEAD.size :]
            if status == READY:
                self.is_async = body == b"async"
                self.started.set()
                continue
            if status == IMPORT_FAILED:
                self.start_error = body.decode("utf-8", "replace")
                self.started.set()
                continue
            with self.lock:
                entry = self.pending.pop(call_id, None)
            if entry is not None:
                fut, loop = entry
                loop.call_soon_threadsafe(_settle, fut, status == OK, body)
        self.exit_code = self.proc.wait()
        with self.lock:
            self.dead = True
            pending, self.pending = self.pending, {}
        self.started.set()
        for fut, loop in pending.values():
            loop.call_soon_threadsafe(_died, fut, self.exit_code, len(pending))

    def send(
        self,
        call_id: int,
        question: str,
        k: int,
        fut: asyncio.Future[dict[str, Any]],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        from .worker import frame

        with self.lock:
            if self.dead:
                raise CaseError("the system's worker process has ended", retry=True)
            self.pending[call_id] = (fut, loop)
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(frame(orjson.dumps({"id": call_id, "q": question, "k": k})))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            with self.lock:
                self.pending.pop(call_id, None)
            raise CaseError("the system's worker process has ended", retry=True) from None

    def forget(self, call_id: int) -> None:
        with self.lock:
            self.pending.pop(call_id, None)

    def stop(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                self.proc.kill()  # a call that never returns (left at --timeout)
                self.proc.wait()


def _settle(fut: asyncio.Future[dict[str, Any]], ok: bool, body: bytes) -> None:
    if fut.done():
        return
    if ok:
        fut.set_result(orjson.loads(body))
    else:
        fut.set_exception(CaseError(body.decode("utf-8", "surrogatepass")))


def _died(fut: asyncio.Future[dict[str, Any]], code: int | None, n: int) -> None:
    if fut.done():
        return
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
    others = f" (with {n - 1} other case(s) in flight)" if n > 1 else ""
    fut.set_exception(
        CaseError(
            f"the system's worker process {how} while answering this case{others}: the system called "
            "os._exit or exit in a thread, crashed, or was killed",
            retry=True,
        )
    )


class ProcessExecutor:
    """Calls in a worker process (see the module doc). The worker is started at once, so a
    system that cannot be imported is a located exit 2 before anything is written."""

    name = "process"

    def __init__(self, target: str, spec: str):
        from .wire import max_body

        self.target = target
        self.spec = spec
        self.max_body = max_body()
        self._ids = itertools.count(1)
        self._suspects: set[str] = set()  # questions in flight when a worker died
        self._alone = asyncio.Lock()
        self._busy = 0
        self._idle: asyncio.Event | None = None
        self._exclusive = False
        self._worker = self._start()

    def _start(self) -> _Worker:
        w = _Worker(self.target, self.max_body)
        if not w.started.wait(START_TIMEOUT) or (w.dead and w.start_error is None):
            w.stop()
            code = w.exit_code
            raise InputError(
                Problem(
                    "--system",
                    None,
                    f"{self.spec}: the worker process ended while importing the system"
                    + (f" (exit code {code})" if code is not None else " (it took more than 300 s)"),
                )
            )
        if w.start_error is not None:
            w.stop()
            from ..runner import clean_text

            raise InputError(Problem("--system", None, clean_text(w.start_error, 2000)))
        return w

    def _live(self) -> _Worker:
        if self._worker.dead:
            try:
                self._worker = self._start()
            except InputError as e:
                raise CaseError(f"the system's worker process could not be restarted: {e}") from None
        return self._worker

    async def call(self, question: str, k: int) -> dict[str, Any]:
        if self._idle is None:
            self._idle = asyncio.Event()
            self._idle.set()
        if question in self._suspects:
            async with self._alone:  # one suspect at a time, with nothing else in flight
                self._exclusive = True
                try:
                    await self._idle.wait()
                    return await self._send(question, k)
                finally:
                    self._exclusive = False
        while self._exclusive:
            await asyncio.sleep(0.01)
        return await self._send(question, k)

    async def _send(self, question: str, k: int) -> dict[str, Any]:
        assert self._idle is not None
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        call_id = next(self._ids)
        worker = self._live()
        self._busy += 1
        self._idle.clear()
        try:
            worker.send(call_id, question, k, fut, loop)
            return await fut
        except CaseError as e:
            if e.retry:
                self._suspects.add(question)
            raise
        finally:
            worker.forget(call_id)
            self._busy -= 1
            if self._busy == 0:
                self._idle.set()

    async def aclose(self) -> None:
        self._worker.stop()
