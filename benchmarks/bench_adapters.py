"""The framework adapters and ``ragtriage init`` at scale, each beside a floor measured in
the same run.

    python benchmarks/bench_adapters.py                 # 100,000 nodes; init over 1,000,000 chunks
    python benchmarks/bench_adapters.py 20000 200000

1. ``export_corpus`` of N LlamaIndex ``TextNode`` s (random uuid ids: the ids are derived
   from file and span) and of N LangChain ``Document`` s after ``assign_ids``, against
   the hand glue's ``write_chunks`` (tests/adapters/handglue_*.py) over the same objects.
2. ``ragtriage.adapters.llamaindex.system(retriever)`` over 500 questions on a BM25 index
   of 10,000 nodes at depth 100, against the retriever's own ``retrieve`` on the same
   questions: what the mapping to chunk ids adds.
3. ``ragtriage init`` over an M-chunk corpus (in-process), against ``load_corpus`` of it
   alone (init reads the corpus once to check it and guess its language).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = "lista tupla diccionario conjunto excepción error clave valor índice orden pila cola".split()


def _text(rng: random.Random, n: int = 60) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench_export(n: int, tmp: Path) -> None:
    from langchain_core.documents import Document
    from llama_index.core.schema import TextNode

    from ragtriage.adapters import langchain as lc
    from ragtriage.adapters import llamaindex as li

    rng = random.Random(1)
    nodes, docs = [], []
    for i in range(n):
        text = _text(rng)
        name = f"doc{i // 100}.md"
        start = (i % 100) * 500
        nodes.append(
            TextNode(
                text=text, metadata={"file_name": name}, start_char_idx=start, end_char_idx=start + len(text)
            )
        )
        docs.append(Document(page_content=text, metadata={"source": f"docs/{name}", "start_index": start}))
    lc.assign_ids(docs)

    def glue(path, rows):
        with open(path, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")

    def li_glue():  # handglue_llamaindex.write_chunks, over the same nodes
        glue(
            tmp / "li-glue.jsonl",
            (
                {
                    "id": n.node_id,
                    "text": n.get_content(),
                    "doc": n.metadata["file_name"],
                    "start": n.start_char_idx,
                    "end": n.end_char_idx,
                }
                for n in nodes
            ),
        )

    def lc_glue():  # handglue_langchain.write_chunks
        glue(
            tmp / "lc-glue.jsonl",
            (
                {
                    "id": d.id,
                    "text": d.page_content,
                    "doc": Path(d.metadata["source"]).name,
                    "start": d.metadata["start_index"],
                    "end": d.metadata["start_index"] + len(d.page_content),
                }
                for d in docs
            ),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours_li = timed(lambda: li.export_corpus(nodes, tmp / "li.jsonl"))
    floor_li = timed(li_glue)
    ours_lc = timed(lambda: lc.export_corpus(docs, tmp / "lc.jsonl"))
    floor_lc = timed(lc_glue)
    print(f"export_corpus, {n:,} chunks          ours      hand glue (json.dumps loop)")
    print(
        f"  LlamaIndex TextNode (derived ids) {ours_li:6.2f} s   {floor_li:6.2f} s   ({ours_li / floor_li:.2f}x)"
    )
    print(
        f"  LangChain Document (assign_ids)   {ours_lc:6.2f} s   {floor_lc:6.2f} s   ({ours_lc / floor_lc:.2f}x)"
    )


def bench_system(tmp: Path) -> None:
    from llama_index.core.schema import TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    from ragtriage.adapters import llamaindex as li

    rng = random.Random(2)
    nodes = [TextNode(text=_text(rng), metadata={"file_name": f"d{i // 50}.md"}) for i in range(10_000)]
    li.assign_ids(nodes)
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=100)
    system = li.system(retriever)
    questions = [_text(rng, 6) for _ in range(500)]
    floor = timed(lambda: [retriever.retrieve(q) for q in questions])
    ours = timed(lambda: [system(q, 100) for q in questions])
    print("system(retriever), 500 questions, depth 100 over 10,000 nodes")
    print(
        f"  ours {ours:.2f} s, retriever.retrieve alone {floor:.2f} s: the mapping adds {ours - floor:+.2f} s"
    )


def bench_init(m: int, tmp: Path) -> None:
    import argparse

    from ragtriage.commands import init_cmd
    from ragtriage.core.corpus import load_corpus

    rng = random.Random(3)
    corpus = tmp / "big.chunks.jsonl"
    with open(corpus, "w", encoding="utf-8") as f:
        for i in range(m):
            f.write(json.dumps({"id": f"c-{i}", "text": _text(rng, 20), "doc": f"d{i // 100}.md"}) + "\n")
    floor = timed(lambda: load_corpus(corpus))
    args = argparse.Namespace(testset=str(tmp / "new.yaml"), corpus=str(corpus), language=None, k=None)
    devnull = open(os.devnull, "w")
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = devnull
    try:
        ours = timed(lambda: init_cmd.main(args))
    finally:
        sys.stdout, sys.stderr = saved
    print(
        f"ragtriage init over {m:,} chunks: {ours:.2f} s; load_corpus alone {floor:.2f} s ({ours / floor:.2f}x)"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    m = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    print(f"load: {os.getloadavg()[0]:.2f} (1 min average), {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bench_export(n, tmp)
        bench_system(tmp)
        bench_init(m, tmp)


if __name__ == "__main__":
    main()
