"""The judge: throughput against a slow model, and a fully cached re-run.

    python benchmarks/bench_judge.py             # 2,000 calls at concurrency 32; 100,000 cached cases
    python benchmarks/bench_judge.py 640 20000

1. Throughput. A real HTTP server on 127.0.0.1, in its own process (asyncio,
   keep-alive, as small as bench_run.py's), answers every chat call after 50 ms.
   At concurrency 32 the ideal is 32 / 0.05 = 640 verdicts a second; the figure
   is ideal time / measured time for N verdicts, all uncached (target ≥ 0.9),
   after 64 calls that warm the server process up (as bench_run.py does).
   On a shared machine the figure follows its load: bench_run.py's http:
   figure, measured in the same minutes, is the fair comparison.
2. Cached re-run. N judged cases (a question, a 1-2 sentence answer, 3 chunks
   of ~300 characters, a reference) whose verdicts are all in the cache file:
   the time for a fresh ``Judge`` to read its cache and give every case its
   verdict (``judge_records``), which is what ``run --judge`` adds to a run
   whose cases did not change (target < 3 s at 100,000). Also the whole
   ``ragtriage.evaluate`` of the same cases through ``results:`` with and
   without the cached judge, so the judge's share is visible.
"""

from __future__ import annotations

import gc
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The model for the throughput figure: as small as bench_run.py's http: server, so the
# figure measures the judge's client, not the stand-in's parsing (tests/judgekit.py).
SERVER = textwrap.dedent('''
    import asyncio, sys
    LATENCY = float(sys.argv[1])
    import json
    VERDICT = json.dumps({"supported": True, "correct": True, "reason": "bien"})
    BODY = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": VERDICT}}],
                       "usage": {"prompt_tokens": 400, "completion_tokens": 20, "total_tokens": 420}}).encode()
    RESP = (b"HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\ncontent-length: "
            + str(len(BODY)).encode() + b"\\r\\n\\r\\n" + BODY)
    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\\r\\n\\r\\n")
                n = 0
                for line in head.split(b"\\r\\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                if n:
                    await reader.readexactly(n)
                await asyncio.sleep(LATENCY)
                writer.write(RESP)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
    async def main():
        srv = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
        print(srv.sockets[0].getsockname()[1], flush=True)
        async with srv:
            await srv.serve_forever()
    asyncio.run(main())
''')


def start_model(delay_ms: int) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(delay_ms / 1000)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


WORDS = "envío devolución garantía tarjeta pedido días laborables oficina entrega reembolso cuenta factura".split()


def make_cases(n: int, seed: int = 14):
    rng = random.Random(seed)
    texts = {
        f"c{i}": " ".join(rng.choice(WORDS) for _ in range(40)) + f" {rng.randint(1, 99)} €."
        for i in range(3000)
    }
    cases, records = {}, []
    for i in range(n):
        cid = f"caso-{i}"
        ids = rng.sample(sorted(texts), 3)
        question = "¿" + " ".join(rng.choice(WORDS) for _ in range(8)) + "?"
        answer = " ".join(rng.choice(WORDS) for _ in range(20)) + f" [{ids[0]}]."
        cases[cid] = SimpleNamespace(
            id=cid, question=question, answer=None, must_contain=(rng.choice(WORDS),)
        )
        records.append({"id": cid, "question": question, "answer": answer, "prompt_ids": ids, "ranking": ids})
    return cases, records, texts


def throughput(n: int, concurrency: int = 32, delay_ms: int = 50, rounds: int = 3) -> None:
    from ragtriage.core.judge import Judge

    cases, records, texts = make_cases(n)
    proc, port = start_model(delay_ms)
    try:
        spec = f"openai:http://127.0.0.1:{port}/v1#large"
        ideal = n / concurrency * delay_ms / 1000
        warm = [dict(r) for r in records[:64]]  # the server process's first calls (imports, JIT-free warm-up)
        Judge(spec, cache_path=None, concurrency=concurrency).judge_records(warm, cases, texts.get, "es", 3)
        ratios = []
        for _ in range(rounds):
            recs = [dict(r) for r in records]
            j = Judge(spec, cache_path=None, concurrency=concurrency, timeout=30)
            t, c = time.perf_counter(), time.process_time()
            j.judge_records(recs, cases, texts.get, "es", 3)
            dt, dc = time.perf_counter() - t, time.process_time() - c
            assert all("supported" in r["judge"] for r in recs), "a verdict failed"
            ratios.append(ideal / dt)
            print(
                f"  {n} verdicts in {dt:.3f} s (ideal {ideal:.3f} s): {n / dt:.0f}/s, {ideal / dt:.3f} of ideal; "
                f"client CPU {dc * 1000 / n:.2f} ms per verdict"
            )
        print(
            f"throughput at concurrency {concurrency}, server {delay_ms} ms: "
            f"median {statistics.median(ratios):.3f} of ideal, best {max(ratios):.3f} (target ≥ 0.9)"
        )
    finally:
        proc.terminate()
        proc.wait()


def cached_rerun(n: int) -> None:
    import ragtriage
    from ragtriage.core.judge import Judge
    from ragtriage.core.judge.cache import JudgeCache

    cases, records, texts = make_cases(n)
    with tempfile.TemporaryDirectory() as tmp:
        cache_path = Path(tmp) / "judge.jsonl"
        spec = "openai:http://127.0.0.1:9/v1#large"  # nothing listens: any call would fail
        j = Judge(spec, cache_path=cache_path)
        t = time.perf_counter()
        asks = j.plan(records, cases, texts.get, "es", 3)
        cache = JudgeCache(cache_path)
        for a in asks:
            cache.put(a.key, (True, True, "bien"))
        cache.close()
        print(f"  filled the cache with {len(asks)} verdicts in {time.perf_counter() - t:.2f} s")
        times, cpus = [], []
        for _ in range(3):
            recs = [dict(r) for r in records]
            gc.collect()
            t, c = time.perf_counter(), time.process_time()
            j = Judge(spec, cache_path=cache_path)
            left = j.judge_records(recs, cases, texts.get, "es", 3)
            dt, dc = time.perf_counter() - t, time.process_time() - c
            assert left == 0 and j.calls == 0 and all(r["judge"]["cached"] for r in recs)
            times.append(dt)
            cpus.append(dc)
        print(
            f"fully cached judge pass over {n} cases (read the cache, key every case, attach): "
            f"wall best {min(times):.2f} s, median {statistics.median(times):.2f} s; "
            f"CPU best {min(cpus):.2f} s (target < 3 s)"
        )
        # the whole run through results:, with and without the cached judge
        tsdir = Path(tmp)
        (tsdir / "chunks.jsonl").write_text(
            "".join(json.dumps({"id": k, "text": v}, ensure_ascii=False) + "\n" for k, v in texts.items()),
            encoding="utf-8",
        )
        lines = ["version: 1", "corpus: chunks.jsonl", "language: es", "k: 3", "cases:"]
        for c in cases.values():
            lines += [
                f"  - id: {c.id}",
                f"    question: {json.dumps(c.question, ensure_ascii=False)}",
                "    expected: [c1]",
                f"    must_contain: [{c.must_contain[0]}]",
            ]
        (tsdir / "ts.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (tsdir / "answers.jsonl").write_text(
            "".join(
                json.dumps({k: r[k] for k in ("id", "answer", "prompt_ids", "ranking")}, ensure_ascii=False)
                + "\n"
                for r in records
            ),
            encoding="utf-8",
        )
        doc = ragtriage.load_testset(tsdir / "ts.yaml")
        system = f"results:{tsdir / 'answers.jsonl'}"
        os.environ["RAGTRIAGE_CACHE_DIR"] = tmp
        for label, judge in (("without judge", None), ("with the cached judge", spec)):
            gc.collect()
            t, c = time.perf_counter(), time.process_time()
            run = ragtriage.evaluate(doc, system, 3, out=tsdir / "run.jsonl", judge=judge)
            dt, dc = time.perf_counter() - t, time.process_time() - c
            extra = f", judge_calls {run.summary['judge_calls']}" if judge else ""
            print(f"  evaluate {n} cases via results: {label}: wall {dt:.2f} s, CPU {dc:.2f} s{extra}")


def main() -> None:
    n_calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    n_cached = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    throughput(n_calls)
    cached_rerun(n_cached)


if __name__ == "__main__":
    main()
