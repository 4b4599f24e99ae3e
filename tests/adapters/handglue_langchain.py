"""The glue an engineer wrote before the adapters existed, for the same chain as
``pipe_langchain.py`` (kept to prove that the adapter gives the same per-case numbers,
and to count what it saves): ids for split documents (``Document.id`` is None after
splitting), the chunks file, the chain's ``{"context", "answer"}`` mapped to a ranking,
prompt ids and citations, and a test-set header.
``--system python:tests.adapters.handglue_langchain:answer``."""

import json
import re
from pathlib import Path

from langchain_community.document_loaders import TextLoader
from langchain_community.retrievers import BM25Retriever
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_text_splitters import RecursiveCharacterTextSplitter

from tests.adapters.stand_ins import chain_answer

docs = [
    d
    for p in sorted(Path("tests/adapters/docs").glob("*.txt"))
    for d in TextLoader(p, encoding="utf-8").load()
]
splitter = RecursiveCharacterTextSplitter(chunk_size=800, add_start_index=True)
chunks = splitter.split_documents(docs)

# split Documents have id=None, and a vector store would give them random uuids: name
# them file stem + position, and keep the same ids on the documents the retriever returns
counts = {}
for chunk in chunks:
    stem = Path(chunk.metadata["source"]).stem
    counts[stem] = counts.get(stem, 0) + 1
    chunk.id = f"{stem}-{counts[stem]}"

retriever = BM25Retriever.from_documents(chunks, k=5)
chain = RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(
    answer=RunnableLambda(chain_answer)
)


def write_chunks(path):
    with open(path, "w", encoding="utf-8") as f:
        for chunk in chunks:
            start = chunk.metadata.get("start_index")
            row = {"id": chunk.id, "text": chunk.page_content, "doc": Path(chunk.metadata["source"]).name}
            if isinstance(start, int) and start >= 0:
                row["start"], row["end"] = start, start + len(chunk.page_content)
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_header(path, chunks_file, k=5):
    Path(path).write_text(
        f"version: 1\ncorpus: {chunks_file}\nlanguage: en\nk: {k}\ncases:\n", encoding="utf-8"
    )


def doc_id(doc: Document) -> str:
    if doc.id:
        return doc.id
    raise ValueError(f"a context document without an id: {doc.page_content[:40]!r}")


def answer(question, k):
    out = chain.invoke(question)
    if not isinstance(out, dict) or "context" not in out or "answer" not in out:
        raise ValueError("the chain must return {'context': [...], 'answer': ...}")
    ids = [doc_id(d) for d in out["context"]]
    text = out["answer"]
    if hasattr(text, "content"):  # a chat model's message
        text = text.content

    def to_id(m):
        parts = [int(p) for p in m.group(1).split(",")]
        cited = [ids[p - 1] if 0 < p <= len(ids) else str(p) for p in parts]
        return "[" + ", ".join(dict.fromkeys(cited)) + "]"

    text = re.sub(r"\[(\d+(?:\s*,\s*\d+)*)\]", to_id, text or "")
    ranking = list(dict.fromkeys(ids))
    result = {"ranking": ranking, "answer": text or None, "prompt_ids": ranking}
    scores = [d.metadata.get("score") for d in out["context"]]
    if scores and all(isinstance(s, (int, float)) for s in scores):
        result["scores"] = [float(s) for s in scores]
    return result


if __name__ == "__main__":
    write_chunks("tests/adapters/pydocs-langchain.chunks.jsonl")
