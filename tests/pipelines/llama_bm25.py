"""A real LlamaIndex pipeline over the pydocs pages, as people write one (issue 20).

The three pages are split by ``SentenceSplitter`` into nodes with LlamaIndex's default ids (a
new ``uuid4`` in every process), retrieved by ``BM25Retriever`` (llama-index-retrievers-bm25)
and answered extractively from the top node, citing it ``[node id]`` (no model: the answer
is the node's first sentence). ``ask_stable`` is the same pipeline with the fix the warning
names: every node carries the id of its chunk in the test set's chunks file.

    ragtriage run testsets/pydocs/pydocs.yaml --system python:tests.pipelines.llama_bm25:ask
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import orjson

CHUNKS = Path(__file__).resolve().parents[2] / "testsets" / "pydocs" / "pydocs-paragraphs.chunks.jsonl"


def _rows() -> list[dict]:
    return [orjson.loads(line) for line in CHUNKS.read_bytes().splitlines() if line.strip()]


@cache
def _retriever(stable: bool, k: int):
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.schema import TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    rows = _rows()
    if stable:  # the fix: one node per chunk of the chunks file, under its id
        nodes = [TextNode(id_=r["id"], text=r["text"]) for r in rows]
    else:  # what the tutorials do: documents in, nodes out, ids made up
        pages: dict[str, list[str]] = {}
        for r in rows:
            pages.setdefault(r["doc"], []).append(r["text"])
        docs = [Document(text="\n\n".join(t)) for t in pages.values()]
        nodes = SentenceSplitter(chunk_size=256, chunk_overlap=0).get_nodes_from_documents(docs)
    return BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=k)


def _answer(question: str, k: int, stable: bool) -> dict:
    hits = _retriever(stable, k).retrieve(question)
    ids = [h.node.node_id for h in hits]
    top = hits[0].node.get_content() if hits else ""
    first = re.split(r"(?<=[.!?])\s", " ".join(top.split()), maxsplit=1)[0]
    return {"ranking": ids, "prompt_ids": ids, "answer": f"{first} [{ids[0]}]" if ids else None}


def ask(question: str, k: int) -> dict:
    return _answer(question, k, stable=False)


def ask_stable(question: str, k: int) -> dict:
    return _answer(question, k, stable=True)
