"""``python:`` systems that raise, hang or return what JSON cannot hold (issue 12,
items 13 and 15): each is that case's error, the run goes on, the process ends."""

from __future__ import annotations

import sys

import orjson
import pytest

from ragtriage import cli
from tests.conftest import run_cli

MODULE = '''
import asyncio, time

def fine(q, k):
    return {"ranking": ["entrega-1"], "answer": "A:" + q}

def raises(q, k):
    raise RuntimeError("boom \\ud800 here")

class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no")

def raises_unprintable(q, k):
    raise Unprintable()

def exits(q, k):
    raise SystemExit(3)

def hangs(q, k):
    time.sleep(3600)

async def hangs_async(q, k):
    await asyncio.sleep(3600)

async def blocks_async(q, k):
    time.sleep(3600)

async def exits_async(q, k):
    raise SystemExit(4)

def surrogate(q, k):
    return {"answer": "bad \\ud800 text"}

def surrogate_id(q, k):
    return {"ranking": ["ok", "\\udcff"], "answer": "x"}

def huge_tokens(q, k):
    return {"answer": "x", "tokens": 10**30}

def giant_int(q, k):
    return {"answer": "x", "tokens": 10**5000}

def extra_object(q, k):
    return {"answer": "x", "meta": object()}

def extra_int_key(q, k):
    return {"answer": "x", "meta": {1: "a"}}

def number(q, k):
    return 5

def nothing(q, k):
    return None
'''

FAILING = [
    ("raises", "RuntimeError: boom \\ud800 here"),
    ("raises_unprintable", "Unprintable"),
    ("exits", "SystemExit"),
    ("hangs_async", "timeout"),
    ("exits_async", "SystemExit"),
    ("surrogate", "cannot be written as JSON"),
    ("surrogate_id", "cannot be written as JSON"),
    ("huge_tokens", "tokens: must be a whole number, got 1000000000000000000000000000000"),
    ("giant_int", "tokens: must be a whole number, got a number too large to print"),
    ("extra_object", "cannot be written as JSON"),
    ("extra_int_key", "cannot be written as JSON"),
    ("number", "expected a result object"),
    ("nothing", "returned nothing"),
]


@pytest.fixture
def module(tmp_path, monkeypatch):
    name = f"hostile_sys_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


@pytest.mark.parametrize("attr, cause", FAILING)
def test_failing_python_system_is_a_per_case_error(attr, cause, module, tmp_path, testset, capsys):
    out = tmp_path / "run.jsonl"
    # a short timeout only where the system hangs: under load a worker that answers at
    # once may take longer than half a second to start, and the cause would read "timeout"
    timeout = "0.5" if cause == "timeout" else "60"
    code = cli.main(
        ["run", str(testset), "--system", f"python:{module}:{attr}", "--out", str(out), "--retries", "0",
         "--timeout", timeout, "--quiet"]
    )  # fmt: skip
    err = capsys.readouterr().err
    # every case failed: exit 1 and the first cause on stderr, even with --quiet (issue 22)
    assert code == 1 and "Traceback" not in err and "every case failed (8 of 8)" in err
    cases = [orjson.loads(x) for x in out.read_bytes().splitlines()][1:-1]
    assert len(cases) == 8
    assert all(cause in c["error"] for c in cases), cases[0]["error"]


def test_fine_python_system_still_answers(module, tmp_path, testset, capsys):
    out = tmp_path / "run.jsonl"
    assert cli.main(["run", str(testset), "--system", f"python:{module}:fine", "--out", str(out)]) == 0
    cases = [orjson.loads(x) for x in out.read_bytes().splitlines()][1:-1]
    assert [c["answer"] for c in cases] == ["A:" + c["question"] for c in cases]


def test_a_call_that_never_returns_does_not_keep_the_process_alive(module, tmp_path, testset):
    """A sync system stuck in time.sleep(3600): the run ends at --timeout and so does the process."""
    proc = run_cli(
        "run", testset, "--system", f"python:{module}:hangs", "--timeout", "0.5", "--retries", "0",
        "--out", tmp_path / "run.jsonl", cwd=tmp_path, timeout=90,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # every case failed (issue 22): exit 1
    assert "Traceback" not in proc.stderr
    assert "no answer within 0.5 s (timeout)" in (tmp_path / "run.jsonl").read_text()


def test_an_async_system_that_blocks_its_loop_still_times_out(module, tmp_path, testset):
    """``async def`` calling time.sleep(3600): every case ends at --timeout, and so does the process."""
    proc = run_cli(
        "run", testset, "--system", f"python:{module}:blocks_async", "--timeout", "0.5", "--retries", "0",
        "--out", tmp_path / "run.jsonl", cwd=tmp_path, timeout=90,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # every case failed (issue 22): exit 1
    assert "Traceback" not in proc.stderr
    cases = [orjson.loads(x) for x in (tmp_path / "run.jsonl").read_bytes().splitlines()][1:-1]
    assert [c["error"] for c in cases] == ["no answer within 0.5 s (timeout)"] * 8
