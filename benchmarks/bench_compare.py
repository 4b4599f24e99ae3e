"""The paired comparison's error rates on generated run pairs with a known true
difference: how often it cries "a real regression" when nothing changed (the false
alarm rate, target ≤ 5 % at α = 0.05) and how often it finds a real 5-point
regression (the power), beside the naive unclustered test in the same run.

    python benchmarks/bench_compare.py               # 2,000 pairs per scenario
    python benchmarks/bench_compare.py --pairs 10000 # the README's figures
    python benchmarks/bench_compare.py --scale       # seconds at 10k, 50k, 100k cases

``--scale`` times the comparison of two runs (pass, hit and recall, with Holm and
clusters of 10 cases) and the intervals of every summary rate, at 10,000 to
100,000 cases, beside ``summarize`` of the same records (the floor: one pass over
them), so a step that grows faster than the cases shows.

Each pair is 1,000 cases in 50 source documents of 20 questions. Per document the
change helps or hurts its questions together (one re-chunked document moves all of
them): document c has a discordance rate r = 0.12 and a difference Δ_c = μ + τ·ε_c
with ε_c = ±1 at random, so the true difference is exactly μ on average over
documents; each case is then pass-both / ↓ / ↑ / fail-both with probabilities from
its document's pass rate (uniform 0.55–0.95) and (r ∓ Δ_c)/2. Scenarios:

- no change, clustered (μ = 0, τ = 0.08): what the naive test gets wrong;
- no change, independent (μ = 0, τ = 0): both tests should hold α;
- a 5-point regression, clustered (μ = −0.05, τ = 0.06) and independent (τ = 0).

"ours" is ``ragtriage.core.stats``'s pass comparison as ``diff`` runs it (clusters =
the gold's document, a real regression = one-sided mid-p < α and Δ < 0); "naive" is
the same mid-p McNemar with every case counted as independent (``--cluster none``);
"any flip" is the old ``--fail-on-regression`` rule (one case regressed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragtriage.core.stats import REGRESSION, compare_binary, decide

DOCS, PER_DOC, RATE = 50, 20, 0.12


def make_pair(rng: np.random.Generator, mu: float, tau: float) -> tuple[np.ndarray, np.ndarray]:
    eps = rng.choice([-1.0, 1.0], DOCS)
    delta = mu + tau * eps  # per document
    better = np.repeat((RATE + delta) / 2, PER_DOC)
    worse = np.repeat((RATE - delta) / 2, PER_DOC)
    p_pass = np.repeat(rng.uniform(0.55, 0.95, DOCS), PER_DOC)
    both = (1 - RATE) * p_pass
    u = rng.random(DOCS * PER_DOC)
    a = (u < both) | ((u >= both) & (u < both + worse))
    b = (u < both) | ((u >= both + worse) & (u < both + worse + better))
    return a, b


def regression(a, b, clusters) -> bool:
    return decide([compare_binary("pass", a, b, clusters)], alpha=0.05).verdict == REGRESSION


def scenario(name: str, mu: float, tau: float, pairs: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    clusters = np.repeat(np.arange(DOCS), PER_DOC)
    ours = naive = anyflip = 0
    t0 = time.perf_counter()
    for _ in range(pairs):
        a, b = make_pair(rng, mu, tau)
        ours += regression(a, b, clusters)
        naive += regression(a, b, None)
        anyflip += bool(np.any(a & ~b))
    secs = time.perf_counter() - t0
    return {"name": name, "mu": mu, "ours": ours / pairs, "naive": naive / pairs,
            "any": anyflip / pairs, "secs": secs, "pairs": pairs}  # fmt: skip


def records(n: int, seed: int, shift: float = 0.0) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        ok = bool(rng.random() < 0.8 - shift)
        hit = bool(rng.random() < 0.9 - shift)
        out.append({"type": "case", "id": f"q{i}", "reason": "supported-correct" if ok else "wrong-answer",
                    "expected": [f"c{i}"], "ranking": [f"c{i}"] if hit else ["x"], "topic": f"t{i // 10}",
                    "hit": hit, "recall": float(hit), "rr": float(hit), "precision": float(hit) / 3,
                    "abstained": False, "supported": True, "correct": ok})  # fmt: skip
    return out


def scale() -> None:
    from ragtriage.core.comparison import compare_runs
    from ragtriage.core.rates import summary_intervals
    from ragtriage.core.summary import summarize

    print(
        f"{'cases':>8} {'summarize (floor)':>18} {'intervals':>10} {'compare (3 measures)':>21} {'ratio':>6}"
    )
    for n in (10_000, 50_000, 100_000):
        a, b = records(n, 1), records(n, 2, shift=0.01)
        labels = {r["id"]: r["topic"] for r in b}
        t0 = time.perf_counter()
        summarize(b, 3)
        t1 = time.perf_counter()
        summary_intervals(b, labels)
        t2 = time.perf_counter()
        compare_runs(a, b, ["pass", "hit", "recall"], clusters=labels)
        t3 = time.perf_counter()
        floor = t1 - t0
        print(f"{n:>8,} {floor:>17.3f}s {t2 - t1:>9.3f}s {t3 - t2:>20.3f}s {(t3 - t1) / floor:>5.1f}×")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=2000, help="run pairs per scenario (default 2000)")
    ap.add_argument(
        "--scale", action="store_true", help="time the comparison and intervals at 10k-100k cases"
    )
    args = ap.parse_args()
    if args.scale:
        scale()
        return
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{DOCS * PER_DOC:,} cases in {DOCS} documents of {PER_DOC}; {args.pairs:,} pairs per scenario; "
          f"α = 0.05; load average {load:.1f}")  # fmt: skip
    rows = [
        scenario("no change, clustered (τ 0.08)", 0.0, 0.08, args.pairs, 1),
        scenario("no change, independent", 0.0, 0.0, args.pairs, 2),
        scenario("5-point regression, clustered (τ 0.06)", -0.05, 0.06, args.pairs, 3),
        scenario("5-point regression, independent", -0.05, 0.0, args.pairs, 4),
    ]
    se = lambda p, n: (p * (1 - p) / n) ** 0.5  # noqa: E731
    print()
    print(f"{'scenario':<40} {'measures':<12} {'ours':>14} {'naive':>14} {'any flip':>9} {'s/pair':>7}")
    for r in rows:
        what = "false alarm" if r["mu"] == 0 else "power"
        ours = f"{r['ours']:.1%} ±{se(r['ours'], r['pairs']):.1%}"
        naive = f"{r['naive']:.1%} ±{se(r['naive'], r['pairs']):.1%}"
        print(f"{r['name']:<40} {what:<12} {ours:>14} {naive:>14} {r['any']:>9.0%} "
              f"{r['secs'] / r['pairs'] * 1000:>5.1f}ms")  # fmt: skip
    fa = rows[0]["ours"]
    power = rows[2]["ours"]
    print()
    print(f"false alarm at α = 0.05 on clustered cases: ours {fa:.1%} (target ≤ 5 %: "
          f"{'met' if fa <= 0.05 else 'NOT met'}), naive {rows[0]['naive']:.1%}")  # fmt: skip
    print(f"power for a real 5-point regression on 1,000 clustered cases: ours {power:.1%} "
          f"({'most of the time' if power > 0.5 else 'NOT most of the time'}), naive {rows[2]['naive']:.1%} "
          "(the naive figure is bought with its false alarms)")  # fmt: skip


if __name__ == "__main__":
    main()
