"""``--executor ray``: a ``python:`` system's calls as Ray tasks, on a pool of actors.

Imported only when ``--executor ray`` is given: the core path never imports Ray
(``pip install 'ragtriage[ray]'`` brings it). ``--ray-address`` joins a cluster
(``ray://HEAD:10001``, or ``auto`` for one already running on this machine); without it a
local Ray is started for the run and stopped after it.

Each actor imports the system once (a model is loaded once per actor, not per call) and
answers calls on threads, so one actor serves several calls at once; there are as many
actors as the cluster has CPUs, up to ``--concurrency``, and the runner keeps at most
``--concurrency`` calls in flight across them. What the system module must satisfy on a
cluster: it is importable on every worker node (installed there, or shipped with the
job's ``runtime_env``; the current directory is put on the workers' path when Ray runs
locally), and a call's arguments and result cross processes, so the result must be a
§3 result Ray can pickle (a dict of plain values is). An actor that dies (``os._exit``,
a crash) makes the cases it was answering errors that are retried; Ray restarts it.

The result of every call is checked on the actor (:func:`.python.checked`), so the run
file is the one a local run writes.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from typing import Any

import orjson

from ..errors import InputError, Problem
from . import CaseError


def _ray() -> Any:  # the ray module (installed without type information)
    try:
        import ray
    except ImportError:
        raise InputError(
            Problem(
                "--executor", None, "ray: needs Ray (pip install 'ragtriage[ray]'), or use --executor process"
            )
        ) from None
    return ray


def _actor_class(ray: Any) -> Any:  # a Ray actor class
    @ray.remote(max_restarts=-1, max_task_retries=0, num_cpus=1)
    class SystemActor:
        def __init__(self, target: str, max_body: int, path: list[str]):
            for p in reversed(path):
                if p not in sys.path:
                    sys.path.insert(0, p)
            from ragtriage.core.systems.python import load_callable

            self.target = target
            self.max_body = max_body
            self.func, self.is_async = load_callable(target)

        def ready(self) -> bool:
            return True

        def call(self, question: str, k: int) -> bytes:
            from ragtriage.core.systems.python import checked

            if self.is_async:
                out = asyncio.run(self.func(question, k))
            else:
                out = self.func(question, k)
            return checked(out, f"python:{self.target}", self.max_body)

    return SystemActor


class RayExecutor:
    name = "ray"

    def __init__(self, target: str, spec: str, *, address: str | None = None, concurrency: int = 8):
        from .wire import max_body

        ray = self.ray = _ray()
        self.spec = spec
        self.started_here = False
        if not ray.is_initialized():
            try:
                if address:
                    ray.init(address=address, log_to_driver=False)
                else:
                    ray.init(log_to_driver=False, include_dashboard=False)
                    self.started_here = True
            except Exception as e:
                raise InputError(
                    Problem("--ray-address", None, f"cannot start or join Ray: {type(e).__name__}: {e}")
                ) from None
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        n = max(1, min(concurrency, cpus))
        per = -(-concurrency // n)  # calls one actor answers at once
        path = [os.getcwd(), *sys.path]
        cls = _actor_class(ray).options(max_concurrency=per)
        self.actors = [cls.remote(target, max_body(), path) for _ in range(n)]
        try:
            ray.get([a.ready.remote() for a in self.actors])
        except Exception as e:
            self._shutdown()
            cause = getattr(e, "cause", None) or e
            raise InputError(Problem("--system", None, f"{spec}: {_first_line(cause)}")) from None
        self._next = itertools.cycle(range(n))

    async def call(self, question: str, k: int) -> dict[str, Any]:
        ray = self.ray
        actor = self.actors[next(self._next)]
        ref = actor.call.remote(question, k)
        try:
            body = await ref
        except asyncio.CancelledError:
            ray.cancel(ref, force=False)
            raise
        except ray.exceptions.RayTaskError as e:  # the system raised: that case's error
            cause = e.cause if getattr(e, "cause", None) is not None else e
            if isinstance(cause, CaseError):
                raise CaseError(str(cause)) from None
            raise CaseError(_first_line(cause)) from None
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as e:
            raise CaseError(
                f"the Ray actor answering this case died ({type(e).__name__}): the system called os._exit, "
                "crashed, or was killed",
                retry=True,
            ) from None
        result: dict[str, Any] = orjson.loads(body)  # the worker sent a checked result object
        return result

    def _shutdown(self) -> None:
        for a in getattr(self, "actors", ()):
            try:
                self.ray.kill(a)
            except Exception:
                pass
        if self.started_here:
            self.ray.shutdown()

    async def aclose(self) -> None:
        self._shutdown()


def _first_line(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return text.strip().splitlines()[0][:500] if text.strip() else type(e).__name__
