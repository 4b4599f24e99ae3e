"""LlamaIndex → ragtriage: the chunks file and a ``python:`` system from your own pipeline.

``pip install "ragtriage[llamaindex]"``. A whole connection (formats.md §3)::

    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.retrievers.bm25 import BM25Retriever
    from ragtriage.adapters import llamaindex as rt

    docs = SimpleDirectoryReader("docs").load_data()
    nodes = rt.assign_ids(SentenceSplitter(chunk_size=256).get_nodes_from_documents(docs))
    rt.export_corpus(nodes, "docs.chunks.jsonl")        # once, and after every re-chunking
    system = rt.system(BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=5))

then ``ragtriage run TESTSET --system python:MODULE:system``, or
``ragtriage.evaluate(TESTSET, system=system)`` in a notebook.

Ids: LlamaIndex gives every node a new random uuid4 in every process.
:func:`assign_ids` replaces them before indexing with ``STEM-N`` (the document's file
name without extension, N the node's position in it, from 1), so the index, its
rankings and the chunks file all name ``errors-3``. Without it, :func:`chunk_id` names a
node ``FILE:START-END`` (its character span), the same in every process for the same
chunking, and :func:`system` maps the pipeline's nodes to those names.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import common

_SOURCE_LABEL = re.compile(r"^\s*Source \d+:\s*\n?")


def _require() -> None:
    try:
        import llama_index.core  # noqa: F401
    except ImportError:  # pragma: no cover - the extra not installed
        raise ImportError(
            'ragtriage.adapters.llamaindex needs llama-index-core: pip install "ragtriage[llamaindex]"'
        ) from None


_TYPES: dict[str, Any] = {}


def _schema() -> dict[str, Any]:
    """LlamaIndex's node types and metadata modes, imported once."""
    if not _TYPES:
        from llama_index.core.schema import MetadataMode, NodeWithScore

        _TYPES.update(scored=NodeWithScore, modes={m.value: m for m in MetadataMode})
    return _TYPES


def _node(obj: Any) -> Any:
    """The node of a node or of a ``NodeWithScore``."""
    return obj.node if isinstance(obj, _schema()["scored"]) else obj


def _text(node: Any, mode: str = "none") -> str:
    try:
        return str(node.get_content(metadata_mode=_schema()["modes"][mode]))
    except (AttributeError, TypeError, ValueError):
        return str(getattr(node, "text", "") or "")


def _doc_name(node: Any) -> str | None:
    meta = getattr(node, "metadata", None) or {}
    name = meta.get("file_name")
    if isinstance(name, str) and name and "/" not in name and "\\" not in name:
        return name  # SimpleDirectoryReader's: the usual case, nothing more to look at
    found = common.doc_name(name, meta.get("file_path"), meta.get("filename"), meta.get("source"))
    return found or common.doc_name(getattr(node, "ref_doc_id", None))


def _row(node: Any) -> common.ChunkRow:
    """A node's line of the chunks file, its id by the module's rule."""
    n = _node(node)
    text, name = _text(n), _doc_name(n)
    start, end = n.start_char_idx, n.end_char_idx
    if not (isinstance(start, int) and isinstance(end, int)):
        start = end = None
    return common.ChunkRow(common.derived_id(n.id_, name, start, end, text), text, name, start, end)


def chunk_id(node: Any) -> str:
    """The chunk id of a LlamaIndex node (or ``NodeWithScore``): its own id unless that is
    a random uuid4, else ``FILE:START-END`` (module doc)."""
    n = _node(node)
    own = n.id_
    if not common.is_random_id(own):
        return str(own)
    return _row(n).id


def nodes_of(source: Any) -> list[Any]:
    """The nodes of a list of nodes, an index or a docstore, in their stored order."""
    docstore = getattr(source, "docstore", None)
    if docstore is not None and not isinstance(source, (list, tuple)):
        source = docstore
    docs = getattr(source, "docs", None)
    if isinstance(docs, dict):
        return [n for n in docs.values() if _is_chunk(n)]
    if isinstance(source, (str, bytes, os.PathLike)) or not isinstance(source, Iterable):
        raise TypeError(
            f"export_corpus takes nodes, an index or a docstore, not {type(source).__name__} "
            "(for a persisted index: ragtriage corpus --from llamaindex PERSIST_DIR -o CHUNKS)"
        )
    return [_node(n) for n in source]


def _is_chunk(node: Any) -> bool:
    """A stored node that is a chunk (not a whole ``Document`` kept beside the nodes)."""
    from llama_index.core.schema import Document, TextNode

    return isinstance(node, TextNode) and not isinstance(node, Document)


def rows(source: Any) -> list[common.ChunkRow]:
    """The chunks-file lines of ``source`` (nodes, an index or a docstore)."""
    _require()
    with common.no_gc():
        return [_row(n) for n in nodes_of(source)]


def export_corpus(source: Any, path: str | os.PathLike[str]) -> list[str]:
    """Write the chunks file of ``source`` — a list of nodes, an index (its docstore) or a
    docstore — to ``path`` (atomically) and return the chunk ids in file order.

    Each line has ``id``, ``text``, ``doc`` (the file name) and ``start``/``end`` (the
    node's character span in its document) where LlamaIndex knows them. When nodes still
    have LlamaIndex's random ids, a :class:`UserWarning` says how to give the pipeline the
    same ids (:func:`assign_ids` before indexing)."""
    _require()
    with common.no_gc():
        nodes = nodes_of(source)
        out = [_row(n) for n in nodes]
    random = sum(1 for n in nodes if common.is_random_id(n.id_))
    if random:
        warnings.warn(
            f"{random} node(s) have LlamaIndex's random ids: the chunks file names them FILE:START-END, "
            "which ragtriage.adapters.llamaindex.system() maps the pipeline's nodes to. For the "
            "pipeline's own rankings to name them too, call ragtriage.adapters.llamaindex.assign_ids(nodes) "
            "before building the index.",
            UserWarning,
            stacklevel=2,
        )
    with common.no_gc():
        return common.write_chunks(out, path)


def file_name_only(path: str) -> dict[str, str]:
    """``SimpleDirectoryReader(folder, file_metadata=file_name_only)``: keep only the file's
    name as a document's metadata.

    LlamaIndex counts a node's metadata into its chunk size, and the reader's default
    metadata holds the file's absolute path and its creation and modification dates. So
    the same documents are split differently in another checkout, on another day or after
    a ``git clone`` (new dates): another chunking, other chunk ids, stale labels. With only
    the file name the chunking depends on the documents alone."""
    return {"file_name": os.path.basename(path)}


def assign_ids(nodes: Sequence[Any]) -> Sequence[Any]:
    """Replace every node's random id with one that is the same in every process:
    ``STEM-N`` (its document's file name without extension, N its position in that
    document from 1); an id you gave is kept. Links between the nodes (previous, next,
    parent, child) follow. Call it on the parser's nodes *before* they are indexed, and
    the index, its rankings and :func:`export_corpus` all name the chunks alike.
    Returns ``nodes`` (changed in place)."""
    _require()
    if not isinstance(nodes, (list, tuple)):
        raise TypeError(
            "assign_ids takes the list of nodes before it is indexed "
            "(parser.get_nodes_from_documents(docs)); an index already holds its ids"
        )
    plain = [_node(n) for n in nodes]
    names = common.ordinal_ids([(_doc_name(n), _text(n)) for n in plain])
    renamed: dict[str, str] = {}
    for n, new in zip(plain, names):
        old = n.id_
        if common.is_random_id(old):
            n.id_ = new
            renamed[old] = new
    if renamed:
        for n in plain:
            _relink(n, renamed)
    return nodes


def _relink(node: Any, renamed: dict[str, str]) -> None:
    for info in (getattr(node, "relationships", None) or {}).values():
        for one in info if isinstance(info, list) else [info]:
            new = renamed.get(str(getattr(one, "node_id", "")))
            if new is not None:
                one.node_id = new


class LlamaIndexSystem:
    """A LlamaIndex retriever or query engine as a ``python:`` system: ``f(question, k)``
    returns the ranking (the retrieved nodes, as chunk ids, with their scores), the answer
    (a query engine's), the prompt ids (the nodes the answer was written from) and the
    answer's ``[1]`` citations rewritten to chunk ids, as CitationQueryEngine numbers
    its sources.

    ``k`` is ragtriage's cut-off; the pipeline retrieves its own ``similarity_top_k``
    (set it at least as deep as the largest k you score)."""

    def __init__(self, target: Any, *, numbered_citations: bool | None = None):
        _require()
        from llama_index.core.base.base_query_engine import BaseQueryEngine
        from llama_index.core.base.base_retriever import BaseRetriever

        if isinstance(target, BaseRetriever):
            self.kind = "retriever"
        elif isinstance(target, BaseQueryEngine):
            own = type(target).retrieve is not BaseQueryEngine.retrieve
            own = own and type(target).synthesize is not BaseQueryEngine.synthesize
            self.kind = "engine" if own else "query"
        elif hasattr(target, "as_retriever") and hasattr(target, "docstore"):
            raise TypeError(
                "system() takes a retriever or a query engine, not an index: pass "
                "index.as_retriever() or index.as_query_engine(llm=...)"
            )
        else:
            raise TypeError(
                f"system() takes a LlamaIndex retriever or query engine, not {type(target).__name__}"
            )
        self.target = target
        self.numbered_citations = numbered_citations
        self.spec = f"llamaindex:{type(target).__name__}"

    def __repr__(self) -> str:
        return f"<ragtriage system {self.spec}>"

    def __call__(self, question: str, k: int) -> dict[str, Any]:
        from llama_index.core.schema import QueryBundle

        if self.kind == "retriever":
            found = self.target.retrieve(question)
            return common.result([(chunk_id(n), getattr(n, "score", None)) for n in found])
        if self.kind == "engine":
            bundle = QueryBundle(question)
            found = self.target.retrieve(bundle)
            response = self.target.synthesize(bundle, found)
        else:
            response = self.target.query(question)
            found = None
        return self._answered(response, found)

    def _answered(self, response: Any, found: list[Any] | None) -> dict[str, Any]:
        if hasattr(response, "get_response"):  # a streaming response: read it whole
            response = response.get_response()
        sources = list(getattr(response, "source_nodes", None) or [])
        if found is None:
            found = sources
        seen = source_ids(sources, found)
        answer = common.text_of(getattr(response, "response", None))
        numbered = self.numbered_citations
        if numbered is None:
            numbered = any(_SOURCE_LABEL.match(_text(_node(s))) for s in sources)
        if answer is not None and numbered:
            answer = common.number_citations(answer, seen)
        return common.result(
            [(chunk_id(n), getattr(n, "score", None)) for n in found],
            answer=answer,
            has_answer=True,
            prompt_ids=seen,
        )


def source_ids(sources: Sequence[Any], found: Sequence[Any]) -> list[str]:
    """The chunk id of each of a response's ``source_nodes``, in order. A citation node
    (``Source N:`` and a piece of a retrieved node, as CitationQueryEngine makes them) is
    the retrieved node its text comes from; the search moves forward through ``found``,
    as the citation nodes follow the retrieved ones in order."""
    ids = [chunk_id(n) for n in found]
    known = set(ids)
    plain = [_squash(_text(_node(n))) for n in found]
    full = None
    out = []
    at = 0
    for s in sources:
        own = chunk_id(s)
        if own in known:
            out.append(own)
            continue
        piece = _squash(_SOURCE_LABEL.sub("", _text(_node(s)), count=1))
        j = _find(piece, plain, at)
        if j is None:  # CitationQueryEngine(metadata_mode=...): the metadata is in the piece
            full = full or [_squash(_text(_node(n), "all")) for n in found]
            j = _find(piece, full, at)
        if j is None:
            out.append(own)
        else:
            out.append(ids[j])
            at = j
    return out


def _squash(text: str) -> str:
    return " ".join(text.split())


def _find(piece: str, texts: Sequence[str], start: int) -> int | None:
    if not piece:
        return None
    for j in [*range(start, len(texts)), *range(0, start)]:
        if piece in texts[j]:
            return j
    return None


def system(target: Any, *, numbered_citations: bool | None = None) -> LlamaIndexSystem:
    """A ``python:``-ready system from a LlamaIndex retriever or query engine (including
    ``CitationQueryEngine``): assign it to a module-level name and run
    ``ragtriage run TESTSET --system python:MODULE:NAME``.

    ``numbered_citations``: rewrite ``[1]`` in the answer to the chunk id of source 1
    (default: when the sources are numbered ``Source N:``, as CitationQueryEngine does)."""
    return LlamaIndexSystem(target, numbered_citations=numbered_citations)


def load_docstore(persist_dir: str | os.PathLike[str]) -> Any:
    """The docstore of an index persisted with ``index.storage_context.persist(DIR)``."""
    _require()
    from llama_index.core.storage.docstore import SimpleDocumentStore

    path = Path(persist_dir)
    return SimpleDocumentStore.from_persist_dir(str(path))
