"""The CI gate's retrieval bars at several k from stored rankings: ragtriage vs trec_eval.

    python benchmarks/bench_gate.py            # 20,000 questions, depth 100
    python benchmarks/bench_gate.py 100000

Both sides score the same data (1-4 expected chunks per question, rankings 100
deep, no ties, no duplicates) for P, recall and RR at k = 1, 3, 5, 10:

- ragtriage: ``gate.measure`` on the run-file case records, as ``check --min
  precision@5=…`` does (string ids; first positions found once, then each k);
- trec_eval (pytrec-eval-terrier): ``RelevanceEvaluator(qrels, {P, recall,
  recip_rank}).evaluate(run)`` on dicts, with recip_rank on the run cut at each k
  (trec_eval has no RR cut-off); building its dicts is timed separately.

Also times writing the TREC qrels + run that ``export --format trec --run``
produces, and checks that both sides agree on the means.
"""

from __future__ import annotations

import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(fn):
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def make(n: int, depth: int = 100, seed: int = 3):
    rng = random.Random(seed)
    pool = [f"chunk-{i}" for i in range(200_000)]
    records = []
    for i in range(n):
        ranking = rng.sample(pool, depth)
        expected = rng.sample(ranking[:30], rng.randint(0, 2)) + rng.sample(pool, rng.randint(1, 2))
        expected = list(dict.fromkeys(expected))
        records.append({"id": f"q{i}", "reason": "wrong-answer", "ranking": ranking, "expected": expected})
    return records


def main(n: int) -> None:
    from ragtriage.core.exchange import export_qrels, export_trec_run
    from ragtriage.core.gate import collect_bars, measure
    from ragtriage.core.schema import Case

    ks = (1, 3, 5, 10)
    records = make(n)
    print(f"{n:,} questions, rankings 100 deep, k = {', '.join(map(str, ks))}")

    bars = collect_bars({}, [f"{m}@{k}=0" for k in ks for m in ("precision", "recall", "mrr")])

    def ours_fn():
        res = measure(bars, records, {}, 3)
        return {
            k: {
                m: next(b.value for b in res if b.bar.metric == f"{m}@{k}")
                for m in ("precision", "recall", "mrr")
            }
            for k in ks
        }

    t_ours, ours = timed(ours_fn)

    try:
        import pytrec_eval
    except ImportError:
        print("pytrec_eval not installed (pip install pytrec-eval-terrier): ragtriage only")
        print(f"ragtriage check bars (4 k)      {t_ours:8.2f} s")
        return

    def build():
        qrels = {r["id"]: {c: 1 for c in r["expected"]} for r in records}
        run = {r["id"]: {c: float(100 - i) for i, c in enumerate(r["ranking"])} for r in records}
        cuts = {
            k: {r["id"]: {c: float(100 - i) for i, c in enumerate(r["ranking"][:k])} for r in records}
            for k in ks
        }
        return qrels, run, cuts

    t_build, (qrels, run, cuts) = timed(build)

    def peer():
        measures = {f"P.{','.join(map(str, ks))}", f"recall.{','.join(map(str, ks))}"}
        full = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        rr_ev = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"})
        rr = {k: rr_ev.evaluate(cuts[k]) for k in ks}
        return full, rr

    t_peer, (full, rr) = timed(peer)

    cases = [Case(id=r["id"], question="q", expected=tuple(r["expected"])) for r in records]
    t_export, _ = timed(lambda: (export_qrels(cases), export_trec_run(records)))

    for k in ks:
        p = sum(v[f"P_{k}"] for v in full.values()) / n
        rc = sum(v[f"recall_{k}"] for v in full.values()) / n
        m = sum(v["recip_rank"] for v in rr[k].values()) / n
        assert abs(p - ours[k]["precision"]) < 1e-9, (k, p, ours[k]["precision"])
        assert abs(rc - ours[k]["recall"]) < 1e-9, (k, rc, ours[k]["recall"])
        assert abs(m - ours[k]["mrr"]) < 1e-9, (k, m, ours[k]["mrr"])
    print("means agree at every k (P, recall, RR)")
    print(f"{'':34}{'seconds':>8}")
    print(f"{'ragtriage check bars (4 k)':34}{t_ours:8.2f}")
    print(f"{'trec_eval evaluate (4 k)':34}{t_peer:8.2f}   + {t_build:.2f} s to build its dicts")
    print(f"{'export qrels + TREC run (text)':34}{t_export:8.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
