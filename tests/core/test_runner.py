"""Runner pieces without a network: progress lines, retries, cancel."""
import asyncio
import io
import threading

from ragtriage.core.runner import Progress, ask_with_retries, run_async
from ragtriage.core.schema import Case
from ragtriage.core.systems import CaseError


def test_plain_progress_lines_when_not_a_terminal():
    out = io.StringIO()
    with Progress(20, stream=out, min_interval=0) as p:
        for _ in range(20):
            p.advance()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("2/20 cases (10%)") and "ETA" in lines[0]
    assert lines[-1].startswith("20/20 cases in ")
    assert len(lines) == 10  # about every 10 %, then the total
    fast = io.StringIO()
    with Progress(20, stream=fast) as p:  # a run of a moment prints nothing
        p.advance(20)
    assert fast.getvalue() == ""
    quiet = io.StringIO()
    with Progress(5, stream=quiet, enabled=False) as p:
        p.advance(5)
    assert quiet.getvalue() == ""


class Flaky:
    def __init__(self, fails, retry=True):
        self.fails = fails
        self.calls = 0
        self.retry = retry

    async def ask(self, case, k):
        self.calls += 1
        if self.calls <= self.fails:
            raise CaseError("busy", retry=self.retry)
        return {"ranking": ["a"], "answer": "x"}

    async def aclose(self):
        pass


def test_retries_then_success_and_no_retry_for_permanent_errors():
    case = Case(id="a", question="q", expected=["a"])
    s = Flaky(2)
    res = asyncio.run(ask_with_retries(s, case, 1, timeout=5, retries=2, backoff=0.001))
    assert res["ranking"] == ["a"] and s.calls == 3 and res["latency_ms"] >= 0
    s = Flaky(5)
    res = asyncio.run(ask_with_retries(s, case, 1, timeout=5, retries=1, backoff=0.001))
    assert res == {"error": "busy (after 2 tries)"}
    s = Flaky(5, retry=False)
    res = asyncio.run(ask_with_retries(s, case, 1, timeout=5, retries=3, backoff=0.001))
    assert res == {"error": "busy"} and s.calls == 1


def test_cancel_stops_handing_out_cases():
    cases = [Case(id=f"c{i}", question="q", expected=["a"]) for i in range(50)]
    cancel = threading.Event()
    done = []

    def on_done(case, res):
        done.append(case.id)
        if len(done) == 3:
            cancel.set()

    n = asyncio.run(run_async(Flaky(0), cases, 1, on_done, concurrency=1, cancel=cancel))
    assert n == 3 and done == ["c0", "c1", "c2"]
