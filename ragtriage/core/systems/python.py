"""``python:MODULE:ATTR`` — a callable in the user's code, ``f(question, k)``.

It returns a §3 result (dict, dataclass or object with those attributes), sync or
async. A sync callable runs in a worker thread so that ``--concurrency`` applies.
The current directory is importable, as with ``python -m``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys

from ..errors import InputError, Problem
from . import CaseError, Context, coerce_result


class PythonSystem:
    def __init__(self, target: str, ctx: Context, workers: int = 8):
        self.spec = f"python:{target}"
        self.warnings: list = []
        mod_name, sep, attr = target.rpartition(":")
        if not sep or not mod_name or not attr:
            raise InputError(
                Problem(
                    "--system", None, f"{self.spec}: expected python:MODULE:ATTR, e.g. python:my_rag:answer"
                )
            )
        cwd = os.getcwd()
        if cwd not in sys.path:
            sys.path.insert(0, cwd)
        try:
            obj = importlib.import_module(mod_name)
        except Exception as e:  # the user's import failed: say so, no traceback
            raise InputError(
                Problem("--system", None, f"{self.spec}: cannot import {mod_name!r}: {type(e).__name__}: {e}")
            ) from None
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise InputError(
                    Problem("--system", None, f"{self.spec}: {mod_name!r} has no attribute {attr!r}")
                ) from None
        if not callable(obj):
            raise InputError(Problem("--system", None, f"{self.spec}: {attr!r} is not callable"))
        self.func = obj
        self.is_async = inspect.iscoroutinefunction(obj) or inspect.iscoroutinefunction(
            type(obj).__call__ if callable(obj) else None
        )
        self.workers = max(1, workers)
        self._pool = None

    def prepare(self) -> None:
        pass

    async def ask(self, case, k: int) -> dict:
        if self.is_async:
            out = await self.func(case.question, k)
        else:
            if self._pool is None:  # as many threads as calls in flight (asyncio's default pool has ~6)
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="ragtriage-system")
            out = await asyncio.get_running_loop().run_in_executor(self._pool, self.func, case.question, k)
            if inspect.isawaitable(out):
                out = await out
        try:
            return coerce_result(out)
        except ValueError as e:
            raise CaseError(f"bad result from {self.spec}: {e}") from None

    def estimate_tokens(self, case, k: int) -> int:
        return 0

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
