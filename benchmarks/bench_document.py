"""Open and save a big test set: ragtriage's document vs a plain ruamel.yaml round trip.

    python benchmarks/bench_document.py            # 10,000 cases
    python benchmarks/bench_document.py 10000 100000

Prints, per size: ruamel rt load and dump-after-one-edit, ragtriage first open
(parse + validate, every case ready), reopen (unchanged file, cache), and save
after editing one case, with the ratios the issue sets as targets
(first open <= 1/4 of ruamel load, reopen <= 1/12, save <= 1/30 of ruamel dump).
Also checks that our save changed exactly the edited line.
"""

from __future__ import annotations

import gc
import io
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gen_testset import generate


def timed(fn, repeat=1):
    best = None
    out = None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, out


def main(sizes):
    from ruamel.yaml import YAML

    from ragtriage.core.document import TestSetDocument

    tmp = Path(tempfile.mkdtemp(prefix="rt-bench-"))
    os.environ["RAGTRIAGE_CACHE_DIR"] = str(tmp / "cache")
    print(
        f"{'cases':>8} {'ruamel load':>12} {'ours open':>10} {'ratio':>7} {'ours reopen':>12} {'ratio':>7} "
        f"{'ruamel dump':>12} {'ours save':>10} {'ratio':>7}"
    )
    for n in sizes:
        path = tmp / f"ts{n}.yaml"
        path.write_text(generate(n), encoding="utf-8")
        mid = f"caso-{n // 2}"

        yaml = YAML(typ="rt")
        yaml.preserve_quotes = True
        yaml.width = 4096
        yaml.indent(mapping=2, sequence=4, offset=2)
        t_rload, data = timed(lambda: yaml.load(path.read_text(encoding="utf-8")))
        data["cases"][n // 2]["question"] = "¿una pregunta nueva?"

        def rdump(data=data):
            buf = io.StringIO()
            yaml.dump(data, buf)
            return buf.getvalue()

        t_rdump, _ = timed(rdump)
        del data, rdump
        gc.collect()

        t_open, doc = timed(lambda: (_ := TestSetDocument.load(path), _.cases)[0])
        doc.flush_cache()  # big sets write the reopen cache at exit, off the first screen's path
        t_reopen, doc = timed(lambda: (_ := TestSetDocument.load(path), _.cases)[0], repeat=3)
        before = path.read_bytes().split(b"\n")

        def edit_and_save():
            doc.update_case(mid, question="¿una pregunta nueva?")
            doc.save(record_labels=False)

        t_save, _ = timed(edit_and_save)
        after = path.read_bytes().split(b"\n")
        changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
        assert len(before) == len(after) and len(changed) == 1, changed
        print(
            f"{n:>8} {t_rload:>11.2f}s {t_open:>9.3f}s {t_rload / t_open:>6.1f}x {t_reopen:>11.3f}s "
            f"{t_rload / t_reopen:>6.1f}x {t_rdump:>11.2f}s {t_save:>9.4f}s {t_rdump / t_save:>6.0f}x"
        )
    print("targets: open >= 4x, reopen >= 12x faster than ruamel load; save >= 30x faster than ruamel dump")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000])
