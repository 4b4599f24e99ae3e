"""The glue an engineer wrote before the adapters existed, for the same pipeline as
``pipe_llamaindex.py`` (kept to prove that the adapter gives the same per-case numbers,
and to count what it saves): ids that survive a new process, the chunks file, the
response mapped to a ranking, scores, prompt ids and citations, and a test-set header.
``--system python:tests.adapters.handglue_llamaindex:answer``."""

import json
import re
from pathlib import Path

from llama_index.core import SimpleDirectoryReader
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.schema import QueryBundle
from llama_index.retrievers.bm25 import BM25Retriever

from tests.adapters.stand_ins import ExtractiveLLM

docs = SimpleDirectoryReader(
    "tests/adapters/docs", file_metadata=lambda p: {"file_name": Path(p).name}
).load_data()
nodes = SentenceSplitter(chunk_size=256, chunk_overlap=20).get_nodes_from_documents(docs)

# LlamaIndex's node ids are new uuid4s in every process: name them file stem + position
old_to_new = {}
counts = {}
for node in nodes:
    stem = Path(node.metadata["file_name"]).stem
    counts[stem] = counts.get(stem, 0) + 1
    old_to_new[node.node_id] = f"{stem}-{counts[stem]}"
for node in nodes:
    node.id_ = old_to_new[node.node_id]
    for rel in node.relationships.values():
        if getattr(rel, "node_id", None) in old_to_new:
            rel.node_id = old_to_new[rel.node_id]

retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=5)
engine = CitationQueryEngine(retriever, llm=ExtractiveLLM())


def write_chunks(path):
    with open(path, "w", encoding="utf-8") as f:
        for node in nodes:
            row = {"id": node.node_id, "text": node.get_content(), "doc": node.metadata["file_name"]}
            if node.start_char_idx is not None:
                row["start"], row["end"] = node.start_char_idx, node.end_char_idx
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_header(path, chunks, k=5):
    Path(path).write_text(f"version: 1\ncorpus: {chunks}\nlanguage: en\nk: {k}\ncases:\n", encoding="utf-8")


def squash(text):
    return " ".join(text.split())


def answer(question, k):
    bundle = QueryBundle(question)
    found = engine.retrieve(bundle)
    response = engine.synthesize(bundle, found)
    # CitationQueryEngine re-splits the nodes into "Source N:" nodes with new ids: map each back
    texts = [squash(n.node.get_content()) for n in found]
    cited_ids = []
    for source in response.source_nodes:
        piece = squash(re.sub(r"^Source \d+:\n", "", source.node.get_content()))
        match = next((i for i, t in enumerate(texts) if piece in t), None)
        cited_ids.append(found[match].node.node_id if match is not None else source.node.node_id)

    def to_id(m):
        parts = [int(p) for p in m.group(1).split(",")]
        ids = [cited_ids[p - 1] if 0 < p <= len(cited_ids) else str(p) for p in parts]
        return "[" + ", ".join(dict.fromkeys(ids)) + "]"

    text = re.sub(r"\[(\d+(?:\s*,\s*\d+)*)\]", to_id, response.response or "")
    return {
        "ranking": [n.node.node_id for n in found],
        "scores": [float(n.score) for n in found],
        "answer": text or None,
        "prompt_ids": list(dict.fromkeys(cited_ids)),
    }


if __name__ == "__main__":
    write_chunks("tests/adapters/pydocs-llamaindex.chunks.jsonl")
