"""Chunk picker search: index build and query time at 10k and 100k chunks, beside peers.

    .venv/bin/python benchmarks/bench_picker.py [--sizes 10000 100000] [--queries 50]

Ours is :class:`ragtriage.core.search.LexicalIndex`, the one index of the picker and the builtin
retriever (core/analysis.py: fold, Snowball stem, the language's lexicon; BM25 via
bm25s). Peers, timed in the same run on the same chunks and queries, when installed:

* ``bm25s`` with its own tokenizer and the same PyStemmer stemmer (``bm25s.tokenize``);
* ``rank_bm25`` (``BM25Okapi``, pure Python) on the same folded, stemmed tokens
  (`pip install rank-bm25`, or the ``bench`` extra).

Queries are 2–6 corpus words, a few accent-stripped or misspelt (those hit the fuzzy
fallback in ours). Figures are wall-clock medians; no assertion, see README in this folder.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from ragtriage.core.search import LexicalIndex, fold

STEMS = (
    "entreg envi ofici domicil preci cost devolu reembols garant tarjet pag transferenci "
    "factur pedid almac dias laborabl cambi tall color batidor cafeter horn never telefon "
    "pantall bateri cargador cuent contrasen corre direccion tiend peninsul isl canari aduan "
    "impuest descuent cupon ofert rebaj stock reserv montaj instalacion tecnic averi reparacion "
    "recambi manual instruccion segur nin"
).split()
ENDINGS = ("o", "a", "os", "as", "ar", "amos", "ía", "ías", "ión", "iones", "ado", "ada", "e", "es")


def make_words(rng: random.Random, n: int) -> list[str]:
    """A Spanish-looking vocabulary of about ``n`` inflected words (with accents)."""
    words: set[str] = set()
    while len(words) < n:
        stem = rng.choice(STEMS) + rng.choice(("", "", rng.choice("bcdfglmnprst") + rng.choice("aeiou")))
        words.add(stem + rng.choice(ENDINGS))
    return sorted(words)


def make_chunks(n: int, vocab: list[str], seed: int = 1) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(f"chunk-{i}", " ".join(rng.choice(vocab) for _ in range(rng.randint(20, 60)))) for i in range(n)]


def make_queries(n: int, vocab: list[str], seed: int = 2) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = [rng.choice(vocab) for _ in range(rng.randint(2, 6))]
        if i % 5 == 0:
            words = [fold(w) for w in words]  # typed without accents
        if i % 10 == 0:
            words = [w[:-1] + "x" for w in words]  # misspelt: nothing matches exactly
        out.append(" ".join(words))
    return out


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def ms(s: float) -> str:
    return f"{s * 1000:9.1f} ms"


def bench(n: int, n_queries: int) -> None:
    import bm25s  # imported once, as the app's worker does, outside the timings

    vocab = make_words(random.Random(0), 20_000)
    chunks = make_chunks(n, vocab)
    queries = make_queries(n_queries, vocab)
    print(f"\n{n:,} chunks, {n_queries} queries (vocabulary ~{len(vocab):,} words)")
    print(f"  {'':34} {'build':>12} {'query p50':>12} {'query max':>12}")

    idx, build = timed(LexicalIndex.build, chunks, "es")
    q = [timed(idx.hits, query, 30)[1] for query in queries]
    fuzzy = sum(bool(idx.hits(query, 30).fuzzy) for query in queries)
    print(
        f"  {'ragtriage LexicalIndex (es)':34} {ms(build)} {ms(statistics.median(q))} {ms(max(q))}"
        f"   ({fuzzy} queries used the fuzzy fallback)"
    )

    try:
        import bm25s
        import Stemmer
    except ImportError:
        print("  bm25s + PyStemmer: not installed")
    else:
        stemmer = Stemmer.Stemmer("spanish")

        def build_bm25s():
            toks = bm25s.tokenize(
                [t for _, t in chunks], stopwords="es", stemmer=stemmer, show_progress=False
            )
            r = bm25s.BM25()
            r.index(toks, show_progress=False)
            return r

        r, build = timed(build_bm25s)

        def q_bm25s(query):
            qt = bm25s.tokenize([query], stopwords="es", stemmer=stemmer, show_progress=False)
            try:
                return r.retrieve(qt, k=30, show_progress=False)
            except ValueError:  # no query word in the vocabulary
                return None

        q = [timed(q_bm25s, query)[1] for query in queries]
        print(f"  {'bm25s.tokenize + BM25 (peer)':34} {ms(build)} {ms(statistics.median(q))} {ms(max(q))}")

    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        print("  rank_bm25: not installed (pip install rank-bm25)")
        return
    analyzer = idx.analyzer
    toks, tok_time = timed(lambda: [analyzer.terms(t) for _, t in chunks])
    rb, build = timed(BM25Okapi, toks)
    build += tok_time

    def q_rank(query):
        scores = rb.get_scores(analyzer.terms(query))
        return sorted(range(len(scores)), key=scores.__getitem__, reverse=True)[:30]

    q = [timed(q_rank, query)[1] for query in queries[: max(5, n_queries // 5)]]
    print(f"  {'rank_bm25 BM25Okapi (peer)':34} {ms(build)} {ms(statistics.median(q))} {ms(max(q))}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()
    for n in args.sizes:
        bench(n, args.queries)


if __name__ == "__main__":
    main()
