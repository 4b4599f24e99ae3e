"""Two (or more) real processes saving one test set at once (issue 19 #1).

Each writer loops ``load -> update_case(its own case) -> save()``: writer ``w`` only
ever changes case number ``w``, writing ``notes: w-N`` with its own counter ``N``.
Nobody else touches that case, so after a save of ``w-N`` that returned True, the
writer's next load must read ``w-N`` back: if it reads anything else, that save was
lost (another writer replaced the file with a copy loaded before it). A save refused
with :class:`ConflictError` is not a loss: the writer was told, and reloads.

    python -m tests.hostile.writers [SOURCE_ROOT] [--seconds 8] [--writers 2]

prints ``saves, lost, conflicts`` for the tree at SOURCE_ROOT (default: this
checkout), so the same loop measures the code before and after the fix. The
standing test (``test_writers.py``) runs it for about 2 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]

#: one writer, run as ``python -c WRITER PATH INDEX SECONDS`` with the tree on PYTHONPATH
WRITER = r"""
import json, sys, time
from ragtriage.core.document import TestSetDocument
from ragtriage.core.errors import ConflictError
path, me, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
saves = lost = conflicts = 0
n = 0
last = None  # the value this writer's last successful save wrote
start = time.monotonic()
while time.monotonic() - start < seconds:
    doc = TestSetDocument.load(path, use_cache=False)
    case = doc.cases[me]
    if last is not None and case.notes != last:
        lost += 1  # a save that returned True and is no longer there
    last = None
    n += 1
    doc.update_case(case.id, notes=f"{me}-{n}")
    try:
        wrote = doc.save(record_labels=False, write_cache=False)
    except ConflictError:
        conflicts += 1
        continue
    if wrote:
        saves += 1
        last = f"{me}-{n}"
doc = TestSetDocument.load(path, use_cache=False)
if last is not None and doc.cases[me].notes != last:
    lost += 1
print(json.dumps({"saves": saves, "lost": lost, "conflicts": conflicts}))
"""


def race(testset: Path, seconds: float, writers: int = 2, src: Path = ROOT) -> dict[str, int]:
    """Run ``writers`` processes on ``testset`` for ``seconds``; totals of their counts."""
    env = dict(os.environ, PYTHONPATH=str(src))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(testset), str(i), str(seconds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=src,
        )
        for i in range(writers)
    ]
    total = {"saves": 0, "lost": 0, "conflicts": 0, "errors": 0}
    for p in procs:
        out, err = p.communicate(timeout=seconds + 120)
        if p.returncode != 0:
            total["errors"] += 1
            sys.stderr.write(err[-2000:])
            continue
        for k, v in json.loads(out.strip().splitlines()[-1]).items():
            total[k] += v
    return total


def main(argv: list[str]) -> None:
    seconds, writers, src = 8.0, 2, ROOT
    it = iter(argv)
    for a in it:
        if a == "--seconds":
            seconds = float(next(it))
        elif a == "--writers":
            writers = int(next(it))
        else:
            src = Path(a).resolve()
    with tempfile.TemporaryDirectory() as d:
        ts = Path(d) / "shop-es.yaml"
        shutil.copy(ROOT / "testsets" / "shop-es.yaml", ts)
        shutil.copy(ROOT / "testsets" / "shop-es.chunks.jsonl", Path(d) / "shop-es.chunks.jsonl")
        t0 = time.monotonic()
        r = race(ts, seconds, writers, src)
        took = time.monotonic() - t0
    print(
        f"{src}: {writers} writers for {seconds:g} s ({took:.1f} s): {r['saves']} saves returned True, "
        f"{r['lost']} lost, {r['conflicts']} refused with ConflictError, {r['errors']} writers failed"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
