"""Retrieval metrics over many queries: ragtriage vs ranx vs pytrec_eval, one run.

    python benchmarks/bench_metrics.py              # 100,000 queries x depth 100
    python benchmarks/bench_metrics.py 20000        # smaller

Generated data without ties, duplicate IDs or gold-less queries (there the three
definitions agree): every query has 1-5 relevant chunk IDs, a ranking of 100
distinct string IDs with strictly decreasing scores. 20 metric x k values:
hit (success), recall, precision, mrr (rr@k) at k = 1, 3, 5, 10, 20 (ndcg is
not one of ragtriage's metrics: evaluation.md defines the four).

Each tool gets the data in its own native form, built before the clock starts
(ragtriage: lists of IDs; ranx: Qrels/Run dicts; pytrec_eval: qrel/run dicts),
and is timed from that input to per-query values of every metric. ranx's numba
functions are compiled on a small warm-up first (not counted). Per-query values
are then checked equal: ranx on all 20, pytrec_eval on P, recall,
success (its `recip_rank` has no cut-off: checked against our rr at k = 100).
Needs the `bench` extra: pip install ranx pytrec-eval-terrier
"""

from __future__ import annotations

import gc
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragtriage.core.metrics import at_k, first_positions

KS = (1, 3, 5, 10, 20)
DEPTH = 100


def generate(n: int, depth: int = DEPTH, pool: int = 2_000_000, seed: int = 7):
    rnd = random.Random(seed)
    rankings, golds = [], []
    for _ in range(n):
        ids = rnd.sample(range(pool), depth + 5)
        ranking = [f"d{i}" for i in ids[:depth]]
        g = rnd.randint(1, 5)
        gold = []
        for _ in range(g):  # about half of the gold is retrieved, at random depths
            if rnd.random() < 0.55:
                cand = ranking[min(int(rnd.expovariate(0.15)), depth - 1)]
                if cand not in gold:
                    gold.append(cand)
                    continue
            gold.append(f"d{ids[depth + len(gold)]}")
        rankings.append(ranking)
        golds.append(gold)
    return rankings, golds


def timed(fn):
    gc.collect()
    gc.disable()
    try:
        t = time.perf_counter()
        out = fn()
        return time.perf_counter() - t, out
    finally:
        gc.enable()


def ours(rankings, golds):
    p = first_positions(rankings, golds)
    out = {}
    for k in KS:
        m = at_k(p, k)
        out.update(
            {
                f"hit@{k}": m["hit"],
                f"recall@{k}": m["recall"],
                f"precision@{k}": m["precision"],
                f"mrr@{k}": m["rr"],
            }
        )
    return out


def main(n: int) -> None:
    print(f"generating {n:,} queries x depth {DEPTH} ...", flush=True)
    rankings, golds = generate(n)
    qids = [f"q{i}" for i in range(n)]
    scores = [float(DEPTH - j) for j in range(DEPTH)]  # strictly decreasing: no ties
    results = {}

    t, mine = timed(lambda: ours(rankings, golds))
    results["ragtriage"] = t
    print(f"ragtriage    {t:7.3f} s", flush=True)

    try:
        import ranx
    except ImportError:
        ranx = None
        print("ranx         not installed (pip install ranx)")
    if ranx is not None:
        metrics = [f"{m}@{k}" for k in KS for m in ("hit_rate", "recall", "precision", "mrr")]
        # warm-up: numba compiles on first use; not counted
        wq = ranx.Qrels({q: {d: 1 for d in g} for q, g in zip(qids[:50], golds[:50])})
        wr = ranx.Run({q: dict(zip(r, scores)) for q, r in zip(qids[:50], rankings[:50])})
        ranx.evaluate(wq, wr, metrics, return_mean=False, make_comparable=True)
        qrels_d = {q: {d: 1 for d in g} for q, g in zip(qids, golds)}
        run_d = {q: dict(zip(r, scores)) for q, r in zip(qids, rankings)}

        def run_ranx():
            qr = ranx.Qrels(qrels_d)
            ru = ranx.Run(run_d)
            return ranx.evaluate(qr, ru, metrics, return_mean=False, make_comparable=True)

        t, rx = timed(run_ranx)
        results["ranx"] = t
        print(f"ranx         {t:7.3f} s", flush=True)
        names = {
            "hit_rate": "hit",
            "recall": "recall",
            "precision": "precision",
            "mrr": "mrr",
        }
        bad = 0
        for metric, vals in rx.items():
            base, k = metric.split("@")
            got = mine[f"{names[base]}@{k}"]
            # ranx sorts query ids; ours follow input order
            order = np.argsort(np.array(qids, dtype=object).astype(str), kind="stable")
            if not np.allclose(np.asarray(vals), got[order], atol=1e-9):
                bad += 1
        print(f"             per-query values equal on {20 - bad}/20 metric x k", flush=True)
        del qrels_d, run_d, rx

    try:
        import pytrec_eval
    except ImportError:
        pytrec_eval = None
        print("pytrec_eval  not installed (pip install pytrec-eval-terrier)")
    if pytrec_eval is not None:
        cuts = ",".join(map(str, KS))
        measures = {f"P.{cuts}", f"recall.{cuts}", f"success.{cuts}", "recip_rank"}
        qrel = {q: {d: 1 for d in g} for q, g in zip(qids, golds)}
        run = {q: dict(zip(r, scores)) for q, r in zip(qids, rankings)}

        def run_trec():
            return pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(run)

        t, te = timed(run_trec)
        results["pytrec_eval"] = t
        print(f"pytrec_eval  {t:7.3f} s", flush=True)
        checks = 0
        bad = 0
        full = at_k(first_positions(rankings, golds), DEPTH)["rr"]
        for i, q in enumerate(qids[: min(n, 20000)]):
            row = te[q]
            for k in KS:
                for theirs, name in (
                    (f"P_{k}", f"precision@{k}"),
                    (f"recall_{k}", f"recall@{k}"),
                    (f"success_{k}", f"hit@{k}"),
                ):
                    checks += 1
                    if abs(row[theirs] - mine[name][i]) > 1e-4:
                        bad += 1
            checks += 1
            if abs(row["recip_rank"] - full[i]) > 1e-4:
                bad += 1
        print(
            f"             per-query values equal on {checks - bad}/{checks} checks "
            f"(P, recall, success at 5 k, recip_rank at depth; first 20k queries)",
            flush=True,
        )

    base = results["ragtriage"]
    print()
    for name, t in results.items():
        if name != "ragtriage":
            print(f"ragtriage is {t / base:5.1f}x faster than {name}")


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore")  # numba type-safety chatter from ranx
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
