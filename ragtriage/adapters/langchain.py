"""LangChain → ragtriage: the chunks file and a ``python:`` system from your own chain.

``pip install "ragtriage[langchain]"``. A whole connection (formats.md §3)::

    from langchain_community.document_loaders import DirectoryLoader, TextLoader
    from langchain_community.retrievers import BM25Retriever
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from ragtriage.adapters import langchain as rt

    docs = DirectoryLoader("docs", glob="*.txt", loader_cls=TextLoader).load()
    splitter = RecursiveCharacterTextSplitter(chunk_size=800, add_start_index=True)
    chunks = rt.assign_ids(splitter.split_documents(docs))
    rt.export_corpus(chunks, "docs.chunks.jsonl")       # once, and after every re-chunking
    system = rt.system(BM25Retriever.from_documents(chunks, k=5))

then ``ragtriage run TESTSET --system python:MODULE:system``. A chain that answers is
adapted the same way when it returns ``{"context": [Document, ...], "answer": ...}``
(``answer_key``/``context_key`` name other keys; ``input_key`` when it takes a dict).

Ids: a split ``Document`` has ``id=None`` and vector stores give it a random uuid4.
:func:`assign_ids` sets ``STEM-N`` (the source's file name without extension, N the
chunk's position in it, from 1) on the documents before they are indexed, so the
retriever, the chain and the chunks file all name ``errors-3``. Without it,
:func:`chunk_id` names a document ``FILE:START-END`` from its ``source`` and
``start_index`` (``add_start_index=True``), else ``FILE#HASH`` of its text.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from . import common


def _require() -> None:
    try:
        import langchain_core  # noqa: F401
    except ImportError:  # pragma: no cover - the extra not installed
        raise ImportError(
            'ragtriage.adapters.langchain needs langchain-core: pip install "ragtriage[langchain]"'
        ) from None


def _doc_name(doc: Any) -> str | None:
    meta = getattr(doc, "metadata", None) or {}
    return common.doc_name(meta.get("source"), meta.get("file_path"), meta.get("file_name"))


def _span(doc: Any) -> tuple[int | None, int | None]:
    start = (getattr(doc, "metadata", None) or {}).get("start_index")
    if isinstance(start, int) and not isinstance(start, bool) and start >= 0:
        return start, start + len(doc.page_content)
    return None, None


def chunk_id(doc: Any) -> str:
    """The chunk id of a LangChain ``Document``: its ``id`` unless none or a random uuid4,
    else ``FILE:START-END`` (module doc)."""
    start, end = _span(doc)
    return common.derived_id(getattr(doc, "id", None), _doc_name(doc), start, end, doc.page_content)


def rows(documents: Sequence[Any]) -> list[common.ChunkRow]:
    """The chunks-file lines of ``documents`` (the split chunks)."""
    _require()
    out = []
    for d in _documents(documents, "export_corpus"):
        start, end = _span(d)
        out.append(common.ChunkRow(chunk_id(d), d.page_content, _doc_name(d), start, end))
    return out


def _documents(documents: Any, who: str) -> list[Any]:
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
        raise TypeError(f"{who} takes the list of split Documents, not {type(documents).__name__}")
    bad = next((d for d in documents if not hasattr(d, "page_content")), None)
    if bad is not None:
        raise TypeError(f"{who} takes LangChain Documents, got a {type(bad).__name__}")
    return list(documents)


def export_corpus(documents: Sequence[Any], path: str | os.PathLike[str]) -> list[str]:
    """Write the chunks file of the split ``documents`` to ``path`` (atomically) and return
    the chunk ids in file order. Each line has ``id``, ``text``, ``doc`` (the source's file
    name) and ``start``/``end`` when the splitter recorded ``start_index``. When documents
    have no id of their own, a :class:`UserWarning` says how to give the chain the same
    ids (:func:`assign_ids` before indexing)."""
    with common.no_gc():
        out = rows(documents)
    random = sum(1 for d in documents if common.is_random_id(getattr(d, "id", None)))
    if random:
        warnings.warn(
            f"{random} document(s) have no id of their own: the chunks file names them by file and "
            "position, which ragtriage.adapters.langchain.system() maps the chain's documents to. For "
            "the chain's own results to name them too, call ragtriage.adapters.langchain.assign_ids(docs) "
            "before indexing them.",
            UserWarning,
            stacklevel=2,
        )
    with common.no_gc():
        return common.write_chunks(out, path)


def assign_ids(documents: Sequence[Any]) -> Sequence[Any]:
    """Set ``id`` on every split document that has none (or a random uuid4) to ``STEM-N``
    (its source's file name without extension, N its position among that source's
    chunks, from 1); an id you gave is kept. Call it before the documents go into a
    retriever or vector store. Returns ``documents`` (changed in place)."""
    _require()
    docs = _documents(documents, "assign_ids")
    names = common.ordinal_ids([(_doc_name(d), d.page_content) for d in docs])
    for d, new in zip(docs, names):
        if common.is_random_id(getattr(d, "id", None)):
            d.id = new
    return documents


def _score(doc: Any) -> float | None:
    meta = getattr(doc, "metadata", None) or {}
    for key in ("score", "relevance_score", "similarity_score"):
        v = meta.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None


class LangChainSystem:
    """A LangChain retriever or chain as a ``python:`` system: ``f(question, k)`` returns
    the ranking (the retrieved or context documents, as chunk ids, with a score where the
    documents carry one in ``metadata``), the chain's answer, the prompt ids (the context
    documents) and, with ``numbered_citations``, ``[1]`` in the answer rewritten to the
    first context document's chunk id.

    ``k`` is ragtriage's cut-off; the retriever returns its own number of documents
    (set it at least as deep as the largest k you score)."""

    def __init__(
        self,
        target: Any,
        *,
        answer_key: str = "answer",
        context_key: str = "context",
        input_key: str | None = None,
        numbered_citations: bool = False,
    ):
        _require()
        from langchain_core.retrievers import BaseRetriever
        from langchain_core.runnables import Runnable

        if isinstance(target, BaseRetriever):
            self.kind = "retriever"
        elif isinstance(target, Runnable):
            self.kind = "chain"
        else:
            raise TypeError(f"system() takes a LangChain retriever or runnable, not {type(target).__name__}")
        self.target = target
        self.answer_key, self.context_key, self.input_key = answer_key, context_key, input_key
        self.numbered_citations = numbered_citations
        self.spec = f"langchain:{type(target).__name__}"

    def __repr__(self) -> str:
        return f"<ragtriage system {self.spec}>"

    def __call__(self, question: str, k: int) -> dict[str, Any]:
        given: Any = question if self.input_key is None else {self.input_key: question}
        out = self.target.invoke(given)
        if self.kind == "retriever":
            return common.result([(chunk_id(d), _score(d)) for d in out])
        if not isinstance(out, Mapping):
            raise TypeError(
                f"the chain returned a {type(out).__name__}, not a dict: ragtriage needs the documents the "
                f"answer was written from; return {{{self.context_key!r}: documents, {self.answer_key!r}: "
                "answer}, e.g. RunnableParallel(context=retriever, question=RunnablePassthrough())"
                ".assign(answer=prompt | llm | StrOutputParser())"
            )
        missing = [key for key in (self.context_key, self.answer_key) if key not in out]
        if missing:
            raise KeyError(
                f"the chain's result has no {' or '.join(map(repr, missing))} (it has "
                f"{', '.join(map(repr, out)) or 'no key'}): pass context_key=/answer_key= to system()"
            )
        context = out[self.context_key] or []
        if isinstance(context, str) or not all(hasattr(d, "page_content") for d in context):
            raise TypeError(
                f"the chain's {self.context_key!r} is not a list of Documents: keep the retrieved "
                "Documents in the result (format them for the prompt in a separate step)"
            )
        ids = [chunk_id(d) for d in context]
        answer = common.text_of(out[self.answer_key])
        if answer is not None and self.numbered_citations:
            answer = common.number_citations(answer, ids)
        return common.result(
            [(i, _score(d)) for i, d in zip(ids, context)], answer=answer, has_answer=True, prompt_ids=ids
        )


def system(
    target: Any,
    *,
    answer_key: str = "answer",
    context_key: str = "context",
    input_key: str | None = None,
    numbered_citations: bool = False,
) -> LangChainSystem:
    """A ``python:``-ready system from a LangChain retriever or a runnable chain that
    returns ``{context_key: [Document, ...], answer_key: answer}``: assign it to a
    module-level name and run ``ragtriage run TESTSET --system python:MODULE:NAME``.

    ``input_key``: the chain takes ``{input_key: question}`` (e.g. ``"input"`` for
    ``create_retrieval_chain``) instead of the question itself. ``numbered_citations``:
    the prompt numbers the context documents from 1 and the answer cites ``[1]``."""
    return LangChainSystem(
        target,
        answer_key=answer_key,
        context_key=context_key,
        input_key=input_key,
        numbered_citations=numbered_citations,
    )
