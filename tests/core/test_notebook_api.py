"""The Python API where notebooks and async code use it (formats.md §6): ``evaluate``
inside a running event loop and in a real Jupyter kernel, ``aevaluate``, a callable as
``system``, the typed signature, ``Run.to_pandas()``."""

from __future__ import annotations

import asyncio
import inspect
import sys
import textwrap
import threading

import pytest

import ragtriage
from ragtriage.core import aio
from ragtriage.core.errors import InputError
from tests.conftest import ROOT
from tests.evalkit import write_testset

ANSWERS = {
    "precio-oficina": (["entrega-1"], "Cuesta 3 € [entrega-1]"),
    "plazo-devolución": (["pago-1", "devolver-1"], "Tienes 14 días [devolver-1]"),
}


def answer(question: str, k: int) -> dict:
    for cid, (ranking, text) in ANSWERS.items():
        if cid.split("-")[0] in question.lower():
            return {"ranking": ranking, "answer": text}
    return {"ranking": [], "answer": "No lo sé."}


async def answer_async(question: str, k: int) -> dict:
    await asyncio.sleep(0)
    return answer(question, k)


@pytest.fixture
def ts(tmp_path):
    return write_testset(tmp_path / "ts")


def _same(a, b) -> bool:
    drop = {"latency_ms"}
    return a.summary == b.summary and [{k: v for k, v in r.items() if k not in drop} for r in a.cases] == [
        {k: v for k, v in r.items() if k not in drop} for r in b.cases
    ]


def test_a_callable_is_a_system(ts):
    run = ragtriage.evaluate(ts, system=answer, k=3)
    assert run.meta["system"] == f"python:{__name__}:answer"
    assert run.summary["n"] == 5 and not run.summary["errors"]
    again = ragtriage.evaluate(ts, system=answer_async, k=3)
    assert _same(run, again)
    with pytest.raises(InputError, match=r"<lambda>\(q\) cannot be called as <lambda>\(question, k\)"):
        ragtriage.evaluate(ts, system=lambda q: {"answer": "x"})


async def test_evaluate_inside_a_running_loop(ts):
    """What a Jupyter cell does: a plain ``ragtriage.evaluate`` while a loop runs in this thread
    (``asyncio.run() cannot be called from a running event loop`` before)."""
    assert aio.in_running_loop()
    inside = ragtriage.evaluate(ts, system=answer_async, k=3)
    outside = await asyncio.get_running_loop().run_in_executor(
        None, lambda: ragtriage.evaluate(ts, system=answer_async, k=3)
    )
    assert _same(inside, outside) and inside.summary["n"] == 5
    # an http/openai-style system (the runner's own loop) and a judge take the same path
    assert not inside.interrupted


async def test_aevaluate_lets_the_callers_loop_serve(ts):
    """Each case waits for a coroutine on the caller's loop: the run can only finish if that
    loop keeps running while it goes on (no timing involved)."""
    loop = asyncio.get_running_loop()
    served = []

    async def on_callers_loop(question):
        served.append(question)
        return question

    def system(question, k):
        asyncio.run_coroutine_threadsafe(on_callers_loop(question), loop).result()
        return answer(question, k)

    run = await ragtriage.aevaluate(ts, system=system, k=3, concurrency=2)
    assert len(served) == 5 and run.summary["n"] == 5 and not run.interrupted


async def test_cancelling_aevaluate_stops_the_run(ts):
    started, release = threading.Event(), threading.Event()
    calls = []

    def slow(question, k):
        calls.append(question)
        started.set()
        release.wait(30)
        return answer(question, k)

    stop = threading.Event()
    task = asyncio.ensure_future(ragtriage.aevaluate(ts, system=slow, k=3, concurrency=1, cancel=stop))
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    while not stop.is_set():  # the cancellation reached the run before the case in flight ends
        await asyncio.sleep(0.01)
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(calls) == 1  # the case in flight finished; no other case was asked after the cancel


def test_signature_is_explicit_and_typed():
    for fn in (ragtriage.evaluate, ragtriage.aevaluate):
        params = inspect.signature(fn).parameters
        assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        for name in ("out", "resume", "concurrency", "ids", "on_record", "judge", "timeout", "corpus"):
            assert (
                params[name].kind is inspect.Parameter.KEYWORD_ONLY
                and params[name].annotation != inspect._empty
            )
    assert inspect.iscoroutinefunction(ragtriage.aevaluate)
    assert (ROOT / "ragtriage" / "py.typed").exists()
    formats = (ROOT / "docs" / "spec" / "formats.md").read_text(encoding="utf-8")
    for name in inspect.signature(ragtriage.evaluate).parameters:
        assert f"`{name}`" in formats, name


def test_to_pandas_one_typed_row_per_case(ts):
    import pandas as pd  # a dev dependency

    run = ragtriage.evaluate(ts, system=answer, k=3)
    df = run.to_pandas()
    assert list(df["id"]) == [r["id"] for r in run.cases] and len(df) == 5
    assert str(df["hit"].dtype) == "boolean" and str(df["rank"].dtype) == "Int64"
    assert str(df["rr"].dtype) == "Float64" and str(df["reason"].dtype) == "string"
    domingo = df[df["id"] == "domingo"].iloc[0]
    assert domingo["unanswerable"] is True or bool(domingo["unanswerable"])
    assert pd.isna(domingo["hit"]) and pd.isna(domingo["rr"])
    first = df.iloc[0]
    rec = run.cases[0]
    assert (
        first["ranking"] == rec["ranking"]
        and bool(first["hit"]) is rec["hit"]
        and first["reason"] == rec["reason"]
    )
    assert type(rec["hit"]) is bool and type(rec["rank"]) is int  # the records keep their own types


def test_to_pandas_without_pandas_says_how_to_get_it(ts, monkeypatch):
    run = ragtriage.evaluate(ts, system=answer, k=3)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install pandas"):
        run.to_pandas()


CELL = """
import asyncio, ragtriage
async def answer(question, k):
    await asyncio.sleep(0)
    return {"ranking": ["entrega-1"], "answer": "Cuesta 3 € [entrega-1]"}
run = ragtriage.evaluate({ts!r}, system=answer, k=3)
print("cell:", run.summary["n"], run.summary["errors"], asyncio.get_event_loop().is_running())
"""
AWAIT_CELL = """
run2 = await ragtriage.aevaluate({ts!r}, system=answer, k=3)
print("await:", run2.summary == run.summary)
"""


def _execute(client, code: str, timeout: float = 120) -> tuple[str, list[str]]:
    msg_id = client.execute(code)
    out, errors = [], []
    while True:
        msg = client.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            errors.append(f"{content['ename']}: {content['evalue']}")
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(out), errors


def test_evaluate_in_a_real_jupyter_kernel(ts):
    """A real ipykernel (its cells run inside the kernel's event loop), driven by jupyter_client."""
    from jupyter_client.manager import start_new_kernel

    km, client = start_new_kernel(kernel_name="python3", cwd=str(ROOT), env=_kernel_env())
    try:
        out, errors = _execute(client, textwrap.dedent(CELL.replace("{ts!r}", repr(str(ts)))))
        assert errors == [] and "cell: 5 0 True" in out, (out, errors)
        out, errors = _execute(client, AWAIT_CELL.replace("{ts!r}", repr(str(ts))))
        assert errors == [] and "await: True" in out, (out, errors)
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


def _kernel_env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env
