"""Evidence quotes resolved at scale: a 100k- and a 1M-chunk corpus, 1,000 to 10,000 quotes.

The corpus is bench_stale.py's re-chunked collection (400-character windows with 80 of
overlap, 1 % of the paragraphs edited); each quote is a passage of 8 to 20 words cut
from a labelled paragraph as it was before the re-chunking, so most quotes are held by
one window or two overlapping ones, some are cut in two by a window edge (``split``),
and the edited ones are found nowhere (``missing``). Each figure comes from a fresh
process, beside two floors measured in the same run:

* **read**: one pass that only parses every line of the chunks file (``orjson.loads``),
  the least any resolution that reads the corpus can cost;
* **naive**: every quote looked for in every chunk (``norm(q) in norm(chunk)``), timed on
  a sample of quotes and multiplied out: the quadratic way this module must not be.

    .venv/bin/python benchmarks/bench_quotes.py                         # 100k and 1M chunks
    .venv/bin/python benchmarks/bench_quotes.py --sizes 100000 --quotes 1000 10000

Generated files are cached in ``$TMPDIR/ragtriage-bench-stale`` (shared with bench_stale.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _quotes(data: Path, n: int, seed: int = 11) -> list[str]:
    import orjson

    labels = orjson.loads((data / "labels.json").read_bytes())["labels"]
    rnd = random.Random(seed)
    texts = [v["text"] for v in labels.values()]
    rnd.shuffle(texts)
    out = []
    for t in texts[:n]:
        words = t.split()
        size = rnd.randrange(8, 21)
        at = rnd.randrange(0, max(1, len(words) - size))
        out.append(" ".join(words[at : at + size]))
    return out


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure(data: Path, n_quotes: int, what: str) -> None:
    """In a fresh process: one JSON line of figures for ``what`` (ours, read, naive)."""
    corpus = data / "new.chunks.jsonl"
    quotes = _quotes(data, n_quotes)
    t0 = time.perf_counter()
    if what == "ours":
        from ragtriage.core.quotes import find_quotes, resolve

        hits = find_quotes(quotes, corpus)
        statuses: dict[str, int] = {}
        for q in quotes:
            from ragtriage.core.quotes import norm

            r = resolve(q, hits.get(norm(q)))
            statuses[r.status] = statuses.get(r.status, 0) + 1
        extra = {"statuses": statuses}
    elif what == "read":
        import orjson

        n = 0
        with open(corpus, "rb") as f:
            for line in f:
                orjson.loads(line)
                n += 1
        extra = {"chunks": n}
    else:  # naive: a sample of quotes against every chunk, multiplied out
        import orjson

        from ragtriage.core.quotes import norm

        sample = [norm(q) for q in quotes[:20]]
        found = 0
        with open(corpus, "rb") as f:
            for line in f:
                c = norm(orjson.loads(line)["text"])
                for q in sample:
                    if q in c:
                        found += 1
        extra = {"sample": len(sample), "found": found}
    secs = time.perf_counter() - t0
    if what == "naive":
        secs = secs * n_quotes / len(sample)
    print(json.dumps({"what": what, "quotes": n_quotes, "seconds": secs, "peak_mb": _peak_mb(), **extra}))


def _run(data: Path, n_quotes: int, what: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(data), str(n_quotes), what],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000], help="paragraphs")
    ap.add_argument("--quotes", type=int, nargs="+", default=[1_000, 10_000])
    ap.add_argument("--measure", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        _measure(Path(args.measure[0]), int(args.measure[1]), args.measure[2])
        return
    from benchmarks.bench_stale import generate

    cache = Path(tempfile.gettempdir()) / "ragtriage-bench-stale"
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores)")
    for n in args.sizes:
        data = cache / str(n)
        if not (data / "labels.json").exists():
            print(f"generating {n:,} paragraphs …", flush=True)
            generate(n, data)
        size_mb = (data / "new.chunks.jsonl").stat().st_size / 1e6
        read = _run(data, args.quotes[0], "read")
        print(f"\n{read['chunks']:,} chunks ({size_mb:.0f} MB): read floor {read['seconds']:.1f} s")
        print(f"{'quotes':>8}  {'ragtriage':>10}  {'× read':>7}  {'naive':>10}  {'peak MB':>8}  statuses")
        for q in args.quotes:
            ours = _run(data, q, "ours")
            naive = _run(data, q, "naive")
            st = ", ".join(f"{v} {k}" for k, v in sorted(ours["statuses"].items()))
            print(
                f"{q:>8,}  {ours['seconds']:>8.1f} s  {ours['seconds'] / read['seconds']:>6.1f}×  "
                f"{naive['seconds']:>8.0f} s  {ours['peak_mb']:>8.0f}  {st}"
            )
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
