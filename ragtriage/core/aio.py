"""Running the tool's own event loop from synchronous code, also where a loop already runs.

``asyncio.run`` refuses to start inside a running loop — a Jupyter cell, an ``async def``
caller of :func:`ragtriage.evaluate`. There the loop is run on a thread of its own and the
caller's thread waits for it: the caller's loop is not re-entered (no ``nest_asyncio``),
and Ctrl-C (a kernel interrupt) cancels the run cleanly, as it does on a terminal."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def in_running_loop() -> bool:
    """Whether this thread is inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run(make: Callable[[], Coroutine[Any, Any, T]], cancel: threading.Event | None = None) -> T:
    """``asyncio.run(make())``, or — inside a running loop — the same on a new thread.

    ``cancel`` is set when the waiting thread is interrupted (KeyboardInterrupt), so that
    the coroutine (which watches it) stops; the interrupt is raised once it has."""
    if not in_running_loop():
        return asyncio.run(make())
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as e:  # handed to the waiting thread, raised there
            box["error"] = e

    thread = threading.Thread(target=work, name="ragtriage-loop", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.05)
    except KeyboardInterrupt:
        if cancel is not None:
            cancel.set()
        thread.join()
        raise
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value
