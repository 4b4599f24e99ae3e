"""The slide decks of ``testsets/folien-de/``: split into one chunk per slide, as the
committed chunks file is (a test keeps the two the same), and re-chunked with the real
splitters of LangChain and LlamaIndex for the re-chunking tests."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parents[2] / "testsets" / "folien-de"
DECKS = HERE / "decks"
SEP = "\n---\n"


def decks() -> dict[str, str]:
    """Document name -> its text, in name order."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(DECKS.glob("*.md"))}


def slide_chunks() -> list[dict]:
    """One chunk per slide (``---`` between slides): ``STEM-N``, its text, doc and span."""
    out = []
    for name, text in decks().items():
        stem = name.rsplit(".", 1)[0]
        at = 0
        for n, part in enumerate(text.split(SEP), 1):
            lead = len(part) - len(part.lstrip())
            body = part.strip()
            start = at + lead
            out.append(
                {"id": f"{stem}-{n}", "text": body, "doc": name, "start": start, "end": start + len(body)}
            )
            at += len(part) + len(SEP)
    return out


def write_jsonl(chunks: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks), encoding="utf-8")
    return path


def langchain_chunks(size: int = 160, overlap: int = 30) -> list[dict]:
    """Every deck re-chunked by LangChain's RecursiveCharacterTextSplitter."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    sp = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, add_start_index=True)
    out = []
    for name, text in decks().items():
        for n, d in enumerate(sp.create_documents([text]), 1):
            s = d.metadata["start_index"]
            out.append({"id": f"lc-{name}-{n}", "text": d.page_content, "doc": name, "start": s,
                        "end": s + len(d.page_content)})  # fmt: skip
    return out


def llamaindex_chunks(size: int = 64, overlap: int = 8) -> list[dict]:
    """Every deck re-chunked by LlamaIndex's SentenceSplitter (sizes in tokens)."""
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter

    sp = SentenceSplitter(chunk_size=size, chunk_overlap=overlap)
    out = []
    for name, text in decks().items():
        for n, node in enumerate(sp.get_nodes_from_documents([Document(text=text)]), 1):
            out.append({"id": f"li-{name}-{n}", "text": node.get_content(), "doc": name})
    return out
