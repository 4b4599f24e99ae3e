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


class _PlainProgress(Progress):
    """The plain-lines logic read on every case (before it skipped cases with no line due)."""

    def advance(self, n: int = 1) -> None:
        import time

        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
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


def test_progress_lines_as_when_every_case_was_checked(monkeypatch):
    import ragtriage.core.runner as runner

    clock = [0.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    for total, step, tick, interval in [
        (7, 1, 0.5, 0.0),
        (13, 2, 0.3, 1.0),
        (1000, 7, 0.05, 2.0),
        (999, 1, 0.004, 0.5),
        (50, 50, 5.0, 2.0),
    ]:
        outs = []
        for cls in (Progress, _PlainProgress):
            clock[0] = 100.0
            out = io.StringIO()
            with cls(total, stream=out, min_interval=interval) as p:
                done = 0
                while done < total:
                    clock[0] += tick
                    p.advance(min(step, total - done))
                    done += step
            outs.append(out.getvalue())
        assert outs[0] == outs[1], (total, step)
        assert outs[0].count("\n") >= (2 if total > 50 else 1)
