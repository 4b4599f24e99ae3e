"""``python:MODULE:ATTR`` — a callable in the user's code, ``f(question, k)``.

It returns a §3 result (dict, dataclass or object with those attributes), sync or
async. A sync callable runs in a worker thread so that ``--concurrency`` applies.
The current directory is importable, as with ``python -m``. A callable that cannot be
called as ``f(question, k)`` (its signature says so) is refused before the run.

The user's code may raise, hang or return what JSON cannot hold: each is that
case's error and the run goes on. Worker threads are daemons, so a call that
never returns (abandoned at ``--timeout``) cannot keep the process alive after
the run has ended.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import queue
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, NoReturn, cast

import orjson

from ..errors import InputError, Problem
from . import CaseError, Context, coerce_result

if TYPE_CHECKING:
    from ..schema import Case
    from .executors import ProcessExecutor
    from .ray_executor import RayExecutor

#: the user's ``f(question, k)``, sync or async: what it returns is checked by :func:`checked`
UserFunction = Callable[..., Any]
#: a call queued on a :class:`DaemonPool`: its future, the function and its arguments
_Job = tuple[Future[object], Callable[..., object], tuple[object, ...]]


def spec_of(obj: object) -> str:
    """The run file's ``system`` for a callable given directly: ``python:MODULE:NAME`` when
    it has a module-level name, an adapter's own ``spec`` as ``python:<spec>``, else its type."""
    own = getattr(obj, "spec", None)
    if isinstance(own, str) and own:
        return f"python:<{own}>"
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(name, str) and "<" not in name:
        return f"python:{module}:{name}"
    return f"python:<{type(obj).__name__}>"


def import_failure(module: str, e: BaseException, cwd: str) -> str:
    """Why ``module`` did not import, and — when the module itself was not found — where
    ragtriage looked for it."""
    text = f"cannot import {module!r}: {type(e).__name__}: {e}"
    missing = getattr(e, "name", None)
    if isinstance(e, ModuleNotFoundError) and missing and (module + ".").startswith(missing + "."):
        path = module.replace(".", "/")
        text += (
            f". MODULE is imported from the current directory ({cwd}) and PYTHONPATH: run ragtriage from "
            f"the folder that holds {path}.py (or {path}/__init__.py), or add that folder to PYTHONPATH"
        )
    return text


def check_callable(obj: object, name: str, spec: str) -> None:
    """Refuse, before the run, a system that cannot be called as ``f(question, k)`` or
    does not return its result (formats.md §3): a case-by-case error would repeat it."""

    def refuse(message: str) -> NoReturn:
        raise InputError(Problem("--system", None, f"{spec}: {message}"))

    if not callable(obj):
        kind = type(obj).__name__
        refuse(f"{name!r} is not callable (it is a{'n' * (kind[:1].lower() in 'aeiou')} {kind})")
    call = obj if inspect.isfunction(obj) or inspect.ismethod(obj) else type(obj).__call__
    if inspect.isasyncgenfunction(obj) or inspect.isasyncgenfunction(call):
        refuse(f"{name} is an async generator function: return the result (a dict), do not yield it")
    if inspect.isgeneratorfunction(obj) or inspect.isgeneratorfunction(call):
        refuse(f"{name} is a generator function: return the result (a dict), do not yield it")
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # a builtin without a signature: the call will tell
        return
    try:
        sig.bind("question", 3)
    except TypeError:
        refuse(
            f"{name}{sig} cannot be called as {name}(question, k): ragtriage calls it with two positional "
            "arguments, the question (a str) and k, the cut-off (an int: how many of the ranked chunks are "
            f"scored; a system may ignore it), e.g. def {name}(question, k): ..."
        )


class DaemonPool:
    """Threads for a sync callable: one more whenever none is free, each a daemon.

    Unlike ``ThreadPoolExecutor`` (whose threads the interpreter joins at exit), a
    thread stuck in a call that never returns neither blocks the process's end nor
    takes a slot from the cases that follow."""

    def __init__(self, name: str):
        self.name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0

    def submit(self, fn: Callable[..., object], *args: object) -> Future[object]:
        fut: Future[object] = Future()
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                self._threads += 1
                threading.Thread(target=self._work, name=f"{self.name}-{self._threads}", daemon=True).start()
        self._jobs.put((fut, fn, args))
        return fut

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fut, fn, args = job
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args))
                except Exception as e:
                    fut.set_exception(e)
                except (
                    BaseException
                ) as e:  # SystemExit in the user's code: that case's error, not the run's end
                    fut.set_exception(CaseError(f"the system raised {type(e).__name__}: {e}"))
            with self._lock:
                self._idle += 1

    def shutdown(self) -> None:
        """Let the free threads end; a thread still in a call ends with the process."""
        with self._lock:
            n, self._idle = self._idle, 0
            self._threads -= n
        for _ in range(n):
            self._jobs.put(None)


class SystemLoop:
    """An event loop on a daemon thread for an async callable.

    An ``async def`` that blocks (``time.sleep``, a sync client) would stop the
    runner's own loop, and with it every timeout; on its own loop it only stops
    itself, and each case still ends at ``--timeout``."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self._run, name="ragtriage-system-loop", daemon=True).start()

    def _run(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            pending = asyncio.all_tasks(loop)
            for t in pending:
                t.cancel()
            if pending:  # a task that ignores cancellation is left behind after a second
                loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def submit(self, coro: Coroutine[Any, Any, object]) -> Future[object]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.loop.stop)


def load_callable(target: str) -> tuple[UserFunction, bool]:
    """``(callable, is_async)`` named by ``MODULE:ATTR``, checked to be callable as
    ``f(question, k)``; :class:`InputError` with a message for people. The current
    directory is importable, as with ``python -m``."""
    spec = f"python:{target}"
    mod_name, sep, attr = target.rpartition(":")
    if not sep or not mod_name or not attr:
        raise InputError(
            Problem("--system", None, f"{spec}: expected python:MODULE:ATTR, e.g. python:my_rag:answer")
        )
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(mod_name)  # then any attribute of it
    except BaseException as e:  # the user's import failed (or exited): say so, no traceback
        raise InputError(Problem("--system", None, f"{spec}: {import_failure(mod_name, e, cwd)}")) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError(
                Problem("--system", None, f"{spec}: {mod_name!r} has no attribute {attr!r}")
            ) from None
    check_callable(obj, attr.rpartition(".")[2], spec)
    return obj, _is_async(obj)


def _is_async(obj: object) -> bool:
    return inspect.iscoroutinefunction(obj) or inspect.iscoroutinefunction(
        type(obj).__call__ if callable(obj) else None
    )


def checked(out: object, spec: str, max_body: int) -> bytes:
    """A system's return value as the JSON of a §3 result; CaseError when it is not one, or
    when it is larger than the answer limit of ``http:`` (``--max-response-mb``)."""
    try:
        res = coerce_result(out)
        body = orjson.dumps(res)  # what the run file cannot hold is this case's error, not a crash later
    except ValueError as e:
        raise CaseError(f"bad result from {spec}: {e}") from None
    except TypeError as e:  # orjson.JSONEncodeError: a lone surrogate, an int over 64 bits, an object
        raise CaseError(f"bad result from {spec}: cannot be written as JSON ({e})") from None
    if len(body) > max_body:
        raise CaseError(
            f"bad result from {spec}: {len(body) / (1 << 20):.1f} MB, over the {max_body / (1 << 20):g} MB "
            "answer limit (--max-response-mb)"
        )
    return body


class ThreadExecutor:
    """Calls in this process: a sync callable on daemon threads, an async one on its own
    loop (``--executor thread``, and the API's default)."""

    name = "thread"

    def __init__(self, func: UserFunction, spec: str):
        self.func = func
        self.spec = spec
        self.is_async = _is_async(func)
        self._pool: DaemonPool | None = None
        self._loop: SystemLoop | None = None

    async def call(self, question: str, k: int) -> dict[str, Any]:
        from .wire import max_body

        if self.is_async:
            if self._loop is None:
                self._loop = SystemLoop()
            out = await asyncio.wrap_future(self._loop.submit(self._call_async(question, k)))
        else:
            if self._pool is None:  # as many threads as calls in flight (asyncio's default pool has ~6)
                self._pool = DaemonPool("ragtriage-system")
            out = await asyncio.wrap_future(self._pool.submit(self.func, question, k))
            if inspect.isawaitable(out):
                out = await out
        checked(out, self.spec, max_body())
        return coerce_result(out)

    async def _call_async(self, question: str, k: int) -> object:
        try:
            return await self.func(question, k)
        except BaseException as e:
            if isinstance(e, (Exception, asyncio.CancelledError)):
                raise
            raise CaseError(
                f"the system raised {type(e).__name__}: {e}"
            ) from None  # SystemExit: not the run's end

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self._loop is not None:
            self._loop.stop()
            self._loop = None


EXECUTORS = ("process", "thread", "ray")


class PythonSystem:
    """``python:MODULE:ATTR`` through one of the executors: ``thread`` (this process),
    ``process`` (a worker process: a system that exits or crashes is that case's error)
    or ``ray`` (Ray tasks on a local Ray or a cluster). :meth:`of`: a callable given
    directly (the API, a notebook), always called in this process."""

    def __init__(
        self,
        target: str,
        ctx: Context,
        workers: int = 8,
        *,
        executor: str = "thread",
        ray_address: str | None = None,
    ):
        self.spec = f"python:{target}"
        self.warnings: list[Problem] = []
        self.workers = max(1, workers)
        if executor not in EXECUTORS:
            raise InputError(Problem("--executor", None, f"{executor!r}: one of {', '.join(EXECUTORS)}"))
        self.executor: ThreadExecutor | ProcessExecutor | RayExecutor
        if executor == "thread":
            self.func, _ = load_callable(target)
            self.executor = ThreadExecutor(self.func, self.spec)
        elif executor == "process":
            from .executors import ProcessExecutor

            self.executor = ProcessExecutor(target, self.spec)
        else:
            from .ray_executor import RayExecutor

            self.executor = RayExecutor(target, self.spec, address=ray_address, concurrency=self.workers)

    @classmethod
    def of(cls, obj: object, workers: int = 8) -> PythonSystem:
        """A system from a callable given directly (``ragtriage.evaluate(ts, system=answer)``)."""
        self = cls.__new__(cls)
        name = getattr(obj, "__name__", None) or type(obj).__name__
        self.spec = spec_of(obj)
        self.warnings = []
        self.workers = max(1, workers)
        check_callable(obj, name, self.spec)
        self.func = cast("UserFunction", obj)  # check_callable refused anything else
        self.executor = ThreadExecutor(self.func, self.spec)
        return self

    def prepare(self) -> None:
        pass

    async def ask(self, case: Case, k: int) -> dict[str, Any]:
        return await self.executor.call(case.question, k)

    def estimate_tokens(self, case: Case, k: int) -> int:
        return 0

    async def aclose(self) -> None:
        await self.executor.aclose()
