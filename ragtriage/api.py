"""The public ``evaluate`` and ``aevaluate`` (formats.md §6): an explicit, typed signature
over :func:`ragtriage.core.evaluate.evaluate`, usable in a script, in an ``async def``
and in a notebook cell (where an event loop already runs)."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core.corpus import Corpus
    from .core.document import TestSetDocument
    from .core.evaluate import Run
    from .core.records import CaseRecord

#: what ``system`` may be: a ``--system`` SPEC string, or a callable ``f(question, k)``
#: returning a §3 result (an adapter's ``system(...)``, a function, an ``async def``)
SystemLike = str | Callable[[str, int], Any]
PathLike = str | os.PathLike[str]


def evaluate(
    testset: PathLike | TestSetDocument,
    system: SystemLike = "builtin",
    k: int | None = None,
    *,
    out: PathLike | None = None,
    resume: bool = False,
    concurrency: int = 8,
    timeout: float = 60.0,
    retries: int = 2,
    retriever: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    corpus: PathLike | Corpus | None = None,
    ids: Iterable[str] | None = None,
    on_record: Callable[[CaseRecord], None] | None = None,
    judge: str | None = None,
    judge_key_env: str = "OPENAI_API_KEY",
    progress: bool = False,
    cancel: threading.Event | None = None,
) -> Run:
    """Run every case of ``testset`` (a path or a loaded test set) through ``system`` and
    score it; returns a :class:`~ragtriage.core.evaluate.Run` (``summary``, ``cases``,
    ``to_pandas()``). Works inside a running event loop (a notebook cell) too.

    ``system``: a SPEC as for ``--system`` (``"builtin"``, ``"results:PATH"``,
    ``"python:MODULE:ATTR"``, ``"http://…"``, ``"openai:URL#MODEL"``) or a callable
    ``f(question, k)`` — a function, an ``async def``, or an adapter's ``system(...)``.
    ``k``: the cut-off (default: the test set's ``k``). ``out``: stream the run file
    there; ``resume``: keep the cases already in ``out``. ``concurrency``, ``timeout``
    (seconds per case), ``retries``: as the CLI options. ``retriever``: the retrieval of
    an ``openai:`` system. ``api_key_env``: the variable holding its key (none needed for
    a local server). ``corpus``: another chunks file (a path or a loaded corpus) than the
    test set's. ``ids``: only these cases. ``on_record(record)``: called as each case
    finishes. ``judge``: ``openai:URL#MODEL`` judging every answer (judge.md), its key
    from ``judge_key_env``. ``progress``: a bar on stderr. ``cancel``: a
    ``threading.Event`` that stops the run (``Run.interrupted``)."""
    from .core.evaluate import evaluate as _evaluate

    if isinstance(corpus, (str, os.PathLike)):
        from .core.corpus import load_corpus

        corpus = load_corpus(corpus)
    return _evaluate(
        testset,
        system,  # type: ignore[arg-type]  # a callable is a system too (systems.make_system)
        k,
        out=out,
        resume=resume,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        retriever=retriever,
        api_key_env=api_key_env,
        progress=progress,
        cancel=cancel,
        corpus=corpus,
        ids=ids,
        on_record=on_record,
        judge=judge,
        judge_key_env=judge_key_env,
    )


async def aevaluate(
    testset: PathLike | TestSetDocument,
    system: SystemLike = "builtin",
    k: int | None = None,
    *,
    out: PathLike | None = None,
    resume: bool = False,
    concurrency: int = 8,
    timeout: float = 60.0,
    retries: int = 2,
    retriever: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    corpus: PathLike | Corpus | None = None,
    ids: Iterable[str] | None = None,
    on_record: Callable[[CaseRecord], None] | None = None,
    judge: str | None = None,
    judge_key_env: str = "OPENAI_API_KEY",
    progress: bool = False,
    cancel: threading.Event | None = None,
) -> Run:
    """:func:`evaluate` for ``async`` callers: ``run = await ragtriage.aevaluate(...)``.

    The run goes on a worker thread, so the caller's event loop keeps serving; cancelling
    the awaiting task stops the run (as ``cancel`` would) and waits until it has stopped,
    so no case is still being asked after the ``CancelledError``."""
    stop = cancel if cancel is not None else threading.Event()
    call = functools.partial(
        evaluate,
        testset,
        system,
        k,
        out=out,
        resume=resume,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        retriever=retriever,
        api_key_env=api_key_env,
        corpus=corpus,
        ids=ids,
        on_record=on_record,
        judge=judge,
        judge_key_env=judge_key_env,
        progress=progress,
        cancel=stop,
    )
    import asyncio  # here: every command imports this module, and asyncio costs 0.1 s of start-up

    future = asyncio.get_running_loop().run_in_executor(None, call)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait([future])
        raise
