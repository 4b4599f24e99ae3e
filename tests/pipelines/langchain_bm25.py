"""A real LangChain chain that does not cite (issue 20): its sources come back beside the
answer, as most LangChain apps return them, never as ``[id]`` inside it.

``BM25Retriever`` (langchain-community, on rank_bm25) over the pydocs paragraphs, each a
``Document`` with its chunk id; the "generator" is a ``RunnableLambda`` that answers from the
retrieved documents (the sentence of the first one sharing the most words with the question:
no model), and the chain returns ``{"answer", "source_documents"}``. ``ask`` turns that into
a result (ranking and prompt: the sources; the answer as the chain gave it);
``ask_fielded`` also gives the sources as ``cited`` (for ``--cite field``).

    ragtriage run testsets/pydocs/pydocs.yaml --system python:tests.pipelines.langchain_bm25:ask --cite prompt
"""

from __future__ import annotations

import re
from functools import cache

from tests.pipelines.llama_bm25 import _rows

WORD = re.compile(r"\w+")


@cache
def _chain(k: int):
    import warnings

    with warnings.catch_warnings():  # "langchain-community is being sunset": the retriever still works
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document
    from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough

    docs = [Document(page_content=r["text"], id=r["id"], metadata={"source": r["doc"]}) for r in _rows()]
    retriever = BM25Retriever.from_documents(docs, k=k)

    def generate(inputs: dict) -> str:
        q = set(WORD.findall(inputs["question"].lower()))
        sentences = [
            s
            for d in inputs["source_documents"][:1]
            for s in re.split(r"(?<=[.!?])\s", " ".join(d.page_content.split()))
        ]
        if not sentences:
            return "I don't know."
        return max(sentences, key=lambda s: len(q & set(WORD.findall(s.lower()))))

    return RunnableParallel(question=RunnablePassthrough(), source_documents=retriever) | RunnableParallel(
        answer=RunnableLambda(generate), source_documents=lambda x: x["source_documents"]
    )


def ask(question: str, k: int) -> dict:
    out = _chain(k).invoke(question)
    ids = [d.id for d in out["source_documents"]]
    return {"ranking": ids, "prompt_ids": ids, "answer": out["answer"]}


def ask_embellished(question: str, k: int) -> dict:
    """The chain with a generator that adds what no source says to every other answer (a
    model's embellishment): ``--cite prompt`` must find those, not pass everything."""
    res = ask(question, k)
    if len(question) % 2 and res["answer"]:
        res["answer"] += " This has worked the same way since Python 2.5."
    return res


def ask_fielded(question: str, k: int) -> dict:
    res = ask(question, k)
    res["cited"] = res["ranking"][:1]  # the document the answer was taken from
    return res
