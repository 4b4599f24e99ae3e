"""Ask a system every case: concurrency, per-case timeout, retries with back-off.

A case that still fails becomes a result with ``error`` (the cause) and the run
goes on. Results are handed to ``on_done(case, result)`` in the order they
finish. ``cancel`` (a ``threading.Event``) stops the run cleanly: cases not yet
finished are left out, nothing half-written. Local systems (``builtin``,
``results:``) answer synchronously and skip the event loop.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeGuard

from . import secrets
from .systems import CaseError

if TYPE_CHECKING:
    from rich.progress import Progress as Bar

    from .schema import Case

BACKOFF = 0.5  # seconds before the first retry; doubles each time, capped at 8
RETRY_AFTER_MAX = 30.0  # a server's Retry-After is honoured up to this many seconds
CAUSE_MAX = 500  # characters of an error kept in the run file

Result = dict[str, Any]  # a system's answer to one case (formats.md §3), or {"error": cause}
OnDone = Callable[["Case", Result], None]


class System(Protocol):
    """What the runner asks of a system (the classes of :mod:`.systems`)."""

    async def ask(self, case: Case, k: int) -> Mapping[str, Any]: ...

    async def aclose(self) -> None: ...


class LocalSystem(Protocol):
    """A system that answers synchronously (``builtin``, ``results:``)."""

    def ask_sync(self, case: Case, k: int) -> Result: ...


def _is_local(system: object) -> TypeGuard[LocalSystem]:
    return hasattr(system, "ask_sync")


class Progress:
    """Progress on stderr: a rich bar with count and ETA on a terminal; otherwise
    plain lines (about every 10 %, at most one per ``min_interval`` seconds, so a
    run of a few seconds stays silent in CI logs); nothing when ``enabled`` is false."""

    def __init__(
        self,
        total: int,
        label: str = "cases",
        enabled: bool = True,
        stream: TextIO | None = None,
        min_interval: float = 2.0,
    ) -> None:
        self.total = total
        self.done = 0
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self._bar: Bar | None = None
        self._t0 = time.monotonic()
        self._last = 0.0
        self._next_pct = 10
        self.min_interval = min_interval
        self._printed = False
        # plain lines: below this count no line is due (no clock read per case)
        self._quiet_until = 0 if self.tty or not self.enabled else self._first_done_at(self._next_pct)

    def _first_done_at(self, pct: int) -> int:
        """The smallest count ``done`` with ``100 * done // total >= pct``."""
        return -(-pct * self.total // 100)

    def __enter__(self) -> Progress:
        if self.tty:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as Bar

            self._bar = Bar(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TimeElapsedColumn(),
                console=Console(file=getattr(self.stream, "data", self.stream)),  # the bar's own escapes
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled or self.done < self._quiet_until:
            return
        now = time.monotonic()
        if self._bar is not None:
            if now - self._last > 0.1 or self.done >= self.total:
                self._bar.update(self._task, completed=self.done)
                self._last = now
            return
        pct = 100 * self.done // self.total
        if pct >= self._next_pct and self.done < self.total:
            if now - max(self._t0, self._last) < self.min_interval:
                return
            el = now - self._t0
            eta = el / self.done * (self.total - self.done)
            print(
                f"{self.done}/{self.total} {self.label} ({pct}%), {el:.1f} s, ETA {eta:.0f} s",
                file=self.stream,
                flush=True,
            )
            self._printed = True
            self._last = now
            self._next_pct = (pct // 10 + 1) * 10
            self._quiet_until = self._first_done_at(self._next_pct)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif (
            self.enabled
            and self.done >= self.total
            and (self._printed or time.monotonic() - self._t0 >= self.min_interval)
        ):
            print(
                f"{self.done}/{self.total} {self.label} in {time.monotonic() - self._t0:.1f} s",
                file=self.stream,
                flush=True,
            )


def _text(e: BaseException) -> str:
    try:
        return str(e)
    except Exception:  # a user's exception whose __str__ fails
        return ""


def clean_text(text: str, limit: int = CAUSE_MAX) -> str:
    """Text safe to record and print: secrets blanked; terminal escapes, bidi controls and
    lone surrogates written as ``\\x1b``, ``\\u202e``, ``\\ud800``; length bounded."""
    text = secrets.redact(text)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cause(e: BaseException, timeout: float) -> str:
    import asyncio

    if isinstance(e, asyncio.TimeoutError):
        return f"no answer within {timeout:g} s (timeout)"
    msg = _text(e)
    if isinstance(e, CaseError):
        return clean_text(msg)
    return clean_text(f"{type(e).__name__}: {msg}" if msg else type(e).__name__)


def retry_delay(e: BaseException, attempt: int, backoff: float) -> float:
    """Seconds before try ``attempt + 2``: the back-off, or longer when the server asked
    (``Retry-After``, honoured up to :data:`RETRY_AFTER_MAX`)."""
    delay: float = min(backoff * (2**attempt), 8.0)
    asked = getattr(e, "retry_after", None)
    if isinstance(asked, (int, float)) and asked == asked and asked > delay:
        delay = min(float(asked), RETRY_AFTER_MAX)
    return delay


def _tidy(res: Result) -> Result:
    """A system's own ``error`` made safe like any cause; its answer without secrets."""
    err = res.get("error")
    if type(err) is str:
        res["error"] = clean_text(err)
    answer = res.get("answer")
    if type(answer) is str and secrets.active():
        res["answer"] = secrets.redact(answer)
    return res


async def ask_with_retries(
    system: System, case: Case, k: int, *, timeout: float, retries: int, backoff: float | None = None
) -> Result:
    """The system's result for one case, or ``{"error": cause}`` after the last try."""
    import asyncio

    attempt = 0
    while True:
        t0 = time.perf_counter()
        try:
            res = await asyncio.wait_for(system.ask(case, k), timeout)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # any failure of the user's system is that case's error
            retry = getattr(e, "retry", True) if isinstance(e, CaseError) else True
            if attempt >= retries or not retry:
                cause = _cause(e, timeout)
                if attempt:
                    cause += f" (after {attempt + 1} tries)"
                return {"error": cause}
            await asyncio.sleep(retry_delay(e, attempt, BACKOFF if backoff is None else backoff))
            attempt += 1
            continue
        res = dict(res)
        if res.get("latency_ms") is None:
            res["latency_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        return _tidy(res) if "error" in res or secrets.active() else res


async def run_async(
    system: System,
    cases: Sequence[Case],
    k: int,
    on_done: OnDone,
    *,
    concurrency: int = 8,
    timeout: float = 60.0,
    retries: int = 2,
    backoff: float | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """Ask every case with at most ``concurrency`` calls in flight; returns how many finished."""
    import asyncio

    queue = iter(cases)
    done = 0

    async def worker() -> None:
        nonlocal done
        for case in queue:
            if cancel is not None and cancel.is_set():
                return
            res = await ask_with_retries(system, case, k, timeout=timeout, retries=retries, backoff=backoff)
            if cancel is not None and cancel.is_set():
                return
            on_done(case, res)
            done += 1

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(cases))))]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        await system.aclose()
    return done


def run_sync(
    system: LocalSystem,
    cases: Sequence[Case],
    k: int,
    on_done: OnDone,
    *,
    cancel: threading.Event | None = None,
) -> int:
    """Local systems: no event loop, no timeout (nothing to wait on)."""
    done = 0
    for case in cases:
        if cancel is not None and cancel.is_set():
            break
        try:
            res = system.ask_sync(case, k)
        except Exception as e:
            res = {"error": _cause(e, 0)}
        on_done(case, res)
        done += 1
    return done


def run_cases(
    system: System,
    cases: Sequence[Case],
    k: int,
    on_done: OnDone,
    *,
    concurrency: int = 8,
    timeout: float = 60.0,
    retries: int = 2,
    backoff: float | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """Run every case through ``system``; KeyboardInterrupt propagates after the
    finished cases were handed to ``on_done``."""
    if _is_local(system):
        return run_sync(system, cases, k, on_done, cancel=cancel)
    from . import aio  # only for systems that answer over the network or asynchronously

    if cancel is None and aio.in_running_loop():  # a notebook cell: Ctrl-C must reach the run
        cancel = threading.Event()
    stop = cancel
    return aio.run(
        lambda: run_async(
            system,
            cases,
            k,
            on_done,
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            cancel=stop,
        ),
        cancel,
    )
