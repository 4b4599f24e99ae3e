"""`ragtriage run` end to end: results files (depth 10 and 100), and an http: system.

    python benchmarks/bench_run.py                 # 100,000 cases at depth 10; 30k and 100k at depth 100; http: 2,000
    python benchmarks/bench_run.py 20000 1000 --deep 30000   # smaller
    python benchmarks/bench_run.py --no-http --deep 30000 100000 --depth 100

1. results: a generated test set, its corpus and a system-results JSONL (rankings
   ``depth`` deep, answers citing a chunk with a price, some abstentions, some wrong
   numbers). Timed: the whole `ragtriage run ... --quiet` command in a subprocess
   (interpreter start, test-set open, corpus load, exit included), once without the
   test set's reopen cache (the first run writes it), then ``--repeat`` times with it,
   alternating with the floor: a plain parse of the same results file by the standard
   library's json (as a script does it, and with the GC off) and by orjson. Each row:
   wall and CPU seconds (user + system of that child) and its peak memory (its own VmHWM;
   ru_maxrss would also count this process's pages at the fork).
   Targets (issue 21): at depth 100, run ≤ 1.0× the stdlib json parse at 30k and 100k
   cases, peak ≤ 600 MB at 100k; at depth 10, 100k cases < 3 s.
2. http: a server in another process answering every POST after 50 ms
   (asyncio, keep-alive); `run --concurrency 32`. Ideal wall time is
   n x 50 ms / 32; target efficiency (ideal / measured) >= 0.9.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.gen_testset import generate  # noqa: E402

SERVER = textwrap.dedent('''
    import asyncio, sys
    LATENCY = float(sys.argv[1])
    BODY = b'{"ranking": ["chunk-1", "chunk-2", "chunk-3"], "answer": "Cuesta 1 \\\\u20ac [chunk-1]"}'
    RESP = b"HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\ncontent-length: " + str(len(BODY)).encode() + b"\\r\\n\\r\\n" + BODY
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


def write_files(d: Path, n: int, seed: int = 3, depth: int = 10, labels: bool = False) -> tuple[Path, Path]:
    """A test set of ``n`` cases, its ``n``-chunk corpus and a results file whose rankings
    are ``depth`` deep; with ``labels`` the test set's labels are recorded (fresh)."""
    ts = d / "bench.yaml"
    ts.write_text(generate(n, chunks=n), encoding="utf-8")
    import ragtriage

    r = random.Random(seed)
    with open(d / "bench.chunks.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {"id": f"chunk-{i}", "text": f"El artículo {i} cuesta {i % 97} € y llega en cinco días."},
                    ensure_ascii=False,
                )
                + "\n"
            )
    doc = ragtriage.load_testset(ts)
    if labels:
        doc.record_labels(now="2026-12-01T00:00:00Z")
        doc.save()
    res = d / "answers.jsonl"
    with open(res, "w", encoding="utf-8") as f:
        for c in doc.cases:
            gold = c.expected[0]
            ranking = [f"chunk-{r.randrange(n)}" for _ in range(depth)]
            if r.random() < 0.8:
                ranking[min(int(r.expovariate(0.5)), depth - 1)] = gold
            price = int(gold.split("-")[1]) % 97
            roll = r.random()
            if roll < 0.1:
                answer = "No lo sé."
            elif roll < 0.2:
                answer = f"Cuesta {price + 1} € y llega en 5 días. [{gold}]"
            else:
                answer = f"Cuesta {price} € y llega en 5 días. [{gold}]"
            f.write(
                json.dumps(
                    {
                        "id": c.id,
                        "ranking": ranking,
                        "scores": [round(1 - j / depth, 3) for j in range(depth)],
                        "answer": answer,
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    return ts, res


FLOORS = {
    "stdlib json": "import json\nwith open(P, 'rb') as f:\n    out = [json.loads(line) for line in f]",
    "stdlib json, GC off": (
        "import gc, json\ngc.disable()\nwith open(P, 'rb') as f:\n    out = [json.loads(line) for line in f]"
    ),
    "orjson, GC off": (
        "import gc, orjson\ngc.disable()\nwith open(P, 'rb') as f:\n    out = [orjson.loads(line) for line in f]"
    ),
}


#: prefixed to every timed child: it reports its own peak (VmHWM of its memory map). The
#: kernel's ru_maxrss of a child also counts the benchmark's own pages at the fork (Linux
#: keeps the larger across exec), and this process holds a 100k-case test set by then.
PEAK = (
    "import atexit, sys\n"
    "def _peak():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM'):\n"
    "            sys.stderr.write('VMHWM ' + line.split()[1] + '\\n')\n"
    "atexit.register(_peak)\n"
)
RAGTRIAGE = "import runpy\nsys.argv[0] = 'ragtriage'\nrunpy.run_module('ragtriage', run_name='__main__', alter_sys=True)"


def bench_results(n: int, depth: int = 10, repeat: int = 3, code: list[Path] | None = None) -> dict:
    """``ragtriage run --system results:`` over ``n`` cases with rankings ``depth`` deep,
    beside a plain parse of the same results file (the floor), alternating."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        t = time.perf_counter()
        ts, res = write_files(d, n, depth=depth)
        size = res.stat().st_size
        print(
            f"{n:,} cases × depth {depth}: results file {size / 1e6:.0f} MB, generated in "
            f"{time.perf_counter() - t:.1f} s",
            flush=True,
        )
        env = dict(os.environ, PYTHONPATH=str(ROOT), RAGTRIAGE_CACHE_DIR=str(d / "cache"))
        others = {
            f"run ({c})": dict(env, PYTHONPATH=str(c), RAGTRIAGE_CACHE_DIR=str(d / f"cache{i}"))
            for i, c in enumerate(code or ())
        }
        out = d / "run.jsonl"
        cmd = [
            sys.executable,
            "-c",
            PEAK + RAGTRIAGE,
            "run",
            str(ts),
            "--system",
            f"results:{res}",
            "--quiet",
        ]
        cmd += ["--out", str(out)]
        # first run: no reopen cache yet (the YAML is parsed, the cache written at exit); then with it
        wall, cpu, rss = _timed(cmd, env, remove=out)
        print(
            f"  first run (parses the YAML, writes its reopen cache) {wall:6.2f} s wall, {cpu:.2f} s CPU",
            flush=True,
        )
        for other in others.values():
            _timed(cmd, other, remove=out)  # its own reopen cache
        samples: dict[str, list[tuple[float, float, int]]] = {
            "run": [],
            **{k: [] for k in [*others, *FLOORS]},
        }
        for _ in range(repeat):
            samples["run"].append(_timed(cmd, env, remove=out))
            for name, other in others.items():
                samples[name].append(_timed(cmd, other, remove=out))
            for name, code in FLOORS.items():
                samples[name].append(_timed([sys.executable, "-c", f"{PEAK}P = {str(res)!r}\n{code}"], env))
        got = {}
        for name, rows in samples.items():
            rows.sort(key=lambda r: r[1])
            wall, cpu, rss = rows[len(rows) // 2]
            got[name] = (wall, cpu, rss)
        run_cpu = got["run"][1]
        for name, (wall, cpu, rss) in got.items():
            ratio = "" if name == "run" else f"   run is {run_cpu / cpu:.2f}× this"
            label = (
                "`ragtriage run … --quiet`"
                if name == "run"
                else name.replace("run (", "the same, code in (")
                if name in others
                else f"parse only: {name}"
            )
            print(
                f"  {label:<34} {wall:6.2f} s wall {cpu:6.2f} s CPU  peak {rss / 1e6:6.0f} MB{ratio}",
                flush=True,
            )
        return got


def _timed(cmd, env, remove: Path | None = None) -> tuple[float, float, int]:
    """Wall and CPU seconds (user + system) and peak memory (bytes) of one subprocess."""
    if remove is not None and remove.exists():
        remove.unlink()
    t = time.perf_counter()
    # not in the repository: `python -m` would put it first on the path, before PYTHONPATH
    where = env.get("PYTHONPATH") or tempfile.gettempdir()
    p = subprocess.Popen(cmd, env=env, cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode() if p.stderr else ""
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, err
    own = [int(line.split()[1]) for line in err.splitlines() if line.startswith("VMHWM ")]
    return wall, ru.ru_utime + ru.ru_stime, (own[-1] if own else ru.ru_maxrss) * 1024


def bench_http(n: int, latency: float = 0.05, concurrency: int = 32) -> None:
    from ragtriage.core.evaluate import evaluate, load_testset

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        ts = d / "bench.yaml"
        ts.write_text(
            generate(n, chunks=1000).replace("corpus: bench.chunks.jsonl   # chunks file\n", ""),
            encoding="utf-8",
        )
        doc = load_testset(ts)
        srv = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(latency)], stdout=subprocess.PIPE, text=True
        )
        try:
            port = int(srv.stdout.readline())
            url = f"http://127.0.0.1:{port}/ask"
            evaluate(doc, url, 3, concurrency=concurrency, ids=[c.id for c in doc.cases[:64]])  # warm-up
            t = time.perf_counter()
            run = evaluate(doc, url, 3, concurrency=concurrency, out=d / "run.jsonl")
            wall = time.perf_counter() - t
        finally:
            srv.terminate()
            srv.wait()
        ideal = n * latency / concurrency
        assert run.summary["errors"] == 0, run.summary
        print(
            f"http: {n:,} cases, {latency * 1000:.0f} ms latency, concurrency {concurrency}: wall {wall:.2f} s, "
            f"ideal {ideal:.2f} s, efficiency {ideal / wall:.2f} (target >= 0.9)",
            flush=True,
        )


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description="ragtriage run end to end: results files and an http: system")
    ap.add_argument("n", nargs="?", type=int, default=100_000, help="cases of the depth-10 results run")
    ap.add_argument("m", nargs="?", type=int, default=2_000, help="cases of the http: run")
    ap.add_argument("--deep", type=int, nargs="*", default=[30_000, 100_000], help="sizes run at --depth")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-http", action="store_true")
    ap.add_argument(
        "--code",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also time the ragtriage package in DIR (e.g. an export of the code before a change), alternating",
    )
    a = ap.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    if not a.no_http:
        bench_http(a.m)
    rows = [(a.n, 10, bench_results(a.n, 10, a.repeat, a.code))] if a.n else []
    rows += [(n, a.depth, bench_results(n, a.depth, a.repeat, a.code)) for n in a.deep]
    print("\ntargets (issue 21): at depth 100, run ≤ 1.0× the stdlib json parse; peak ≤ 600 MB at 100k × 100")
    for n, depth, got in rows:
        ratio = got["run"][1] / got["stdlib json"][1]
        peak = got["run"][2] / 1e6
        verdict = ""
        if depth >= 100:
            met = ratio <= 1.0 and (n < 100_000 or peak <= 600)
            verdict = " — met" if met else " — NOT met"
        print(
            f"  {n:>7,} × {depth:<3}  run {got['run'][1]:.2f} s CPU = {ratio:.2f}× stdlib json "
            f"({got['stdlib json'][1]:.2f} s), {got['run'][1] / got['stdlib json, GC off'][1]:.2f}× json with "
            f"the GC off; peak {peak:.0f} MB{verdict}"
        )


if __name__ == "__main__":
    main()
