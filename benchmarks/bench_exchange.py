"""Export and import of a big test set: reading/writing the file vs filling the document.

    python benchmarks/bench_exchange.py            # 1,000 and 10,000 cases
    python benchmarks/bench_exchange.py 2000

Per size: ragas JSONL read (``read_import``), then the new test set built through
the test-set document (``add_case`` + ``set_label`` per case, one ``save``), and
export of the result to jsonl, csv, ragas, deepeval and trec. The peer is a
plain ``json.loads`` of the same file, the floor of any reader.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(fn):
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main(sizes) -> None:
    from ragtriage.core.document import TestSetDocument
    from ragtriage.core.exchange import export_testset, label_from_text, read_import

    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        print(
            f"{'cases':>7} {'json.loads':>10} {'read_import':>11} {'document':>9} "
            + " ".join(f"{f:>8}" for f in ("jsonl", "csv", "ragas", "deepeval", "trec"))
        )
        for n in sizes:
            src = tmp / f"in-{n}.jsonl"
            with open(src, "w", encoding="utf-8") as f:
                for i in range(n):
                    cid = f"chunk-{rng.randint(0, 10 * n)}"
                    f.write(
                        json.dumps(
                            {
                                "user_input": f"¿Pregunta número {i} sobre el tema {rng.randint(0, 999)}?",
                                "reference_context_ids": [cid],
                                "reference_contexts": [f"Texto del fragmento {cid}: {i} días."],
                                "reference": f"{i} días",
                            },
                            ensure_ascii=False,
                        )
                        + "\n"
                    )
            t_json, _ = timed(
                lambda: [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]
            )
            t_read, imp = timed(lambda: read_import(src, "ragas"))

            def build():
                doc = TestSetDocument.create(tmp / f"out-{n}.yaml", language="es")
                with doc.batch():  # as `ragtriage import` does
                    for fields in imp.cases:
                        doc.add_case(**fields)
                    for cid, text in imp.labels.items():
                        doc.set_label(cid, label_from_text(text))
                doc.save()
                return doc

            t_doc, doc = timed(build)
            t_exp = [
                timed(lambda f=f: export_testset(doc, f))[0]
                for f in ("jsonl", "csv", "ragas", "deepeval", "trec")
            ]
            print(
                f"{n:>7,} {t_json:>10.3f} {t_read:>11.3f} {t_doc:>9.2f} "
                + " ".join(f"{t:>8.3f}" for t in t_exp)
            )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1_000, 10_000])
