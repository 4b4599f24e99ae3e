"""Rebuild the pydocs example: three pages of the Python 3.11 documentation, chunked twice.

    apt-get install python3-doc          # Debian's HTML of the Python documentation (PSF licence)
    python testsets/pydocs/make_chunks.py

1. Each page's HTML is turned into plain text with the standard library's
   ``html.parser`` (the page body only; one blank line between blocks; code kept
   as it is laid out).
2. ``pydocs-paragraphs.chunks.jsonl``: one chunk per paragraph (the chunking the
   test set was labelled against).
3. ``pydocs-windows.chunks.jsonl``: the same text re-chunked the way many RAG
   pipelines do: windows of about 600 characters with 120 of overlap, cut at a
   space, lines re-flowed. Chunk ids follow the same ``page-N`` pattern, so most
   old ids now name other text — the dangerous kind of staleness.

Both files carry ``doc``/``start``/``end`` (the character span in the page text).
No network access: the HTML comes from the installed package.
"""
from __future__ import annotations

import html
import json
import sys
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
HTML = Path("/usr/share/doc/python3-doc/html")
PAGES = {"datastructures": "tutorial/datastructures.html", "errors": "tutorial/errors.html", "json": "library/json.html"}
WINDOW, OVERLAP = 600, 120
BLOCKS = {"p", "pre", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "div", "table", "tr", "blockquote", "section"}


class _Text(HTMLParser):
    """The text of ``<div class="body">``: blocks separated by blank lines."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0          # nesting inside the body div (0: outside)
        self.skip = 0           # inside script/style/headerlink
        self.pre = 0
        self.out: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.depth == 0:
            if tag == "div" and "body" in (a.get("class") or "").split():
                self.depth = 1
            return
        if tag == "div":
            self.depth += 1
        if tag in ("script", "style") or (tag == "a" and "headerlink" in (a.get("class") or "")):
            self.skip += 1
        if tag == "pre":
            self.pre += 1
        if tag in BLOCKS:
            self.out.append("\n\n")

    def handle_endtag(self, tag):
        if self.depth == 0:
            return
        if tag in ("script", "style") or (tag == "a" and self.skip):
            self.skip = max(0, self.skip - 1)
        if tag == "pre":
            self.pre -= 1
        if tag in BLOCKS:
            self.out.append("\n\n")
        if tag == "div":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.out.append(data if self.pre else " ".join(data.split("\n")))

    def text(self) -> str:
        raw = "".join(self.out)
        paras = []
        for block in raw.split("\n\n"):
            if "\n" in block.strip("\n"):       # code: keep its lines
                block = block.strip("\n").rstrip()
            else:
                block = " ".join(block.split())
            if block.strip():
                paras.append(block)
        return "\n\n".join(paras) + "\n"


def page_text(path: Path) -> str:
    p = _Text()
    p.feed(path.read_text(encoding="utf-8"))
    return html.unescape(p.text())


def by_paragraph(doc: str, text: str):
    pos = 0
    for i, par in enumerate(text.split("\n\n")):
        start = text.index(par, pos)
        pos = start + len(par)
        if par.strip():
            yield {"id": f"{doc}-{i}", "text": par, "doc": f"{doc}.txt", "start": start, "end": pos}


def by_window(doc: str, text: str):
    start, i = 0, 0
    while start < len(text):
        end = min(len(text), start + WINDOW)
        if end < len(text):
            cut = text.rfind(" ", start + WINDOW // 2, end)
            end = cut if cut > 0 else end
        piece = text[start:end]
        yield {"id": f"{doc}-{i}", "text": " ".join(piece.split()), "doc": f"{doc}.txt", "start": start, "end": end}
        i += 1
        if end >= len(text):
            break
        nxt = text.find(" ", max(start + 1, end - OVERLAP), end)
        start = (nxt + 1) if nxt > 0 else end


def main() -> int:
    if not HTML.is_dir():
        print(f"{HTML}: not found (apt-get install python3-doc)", file=sys.stderr)
        return 2
    texts = {doc: page_text(HTML / rel) for doc, rel in PAGES.items()}
    for name, chunker in (("pydocs-paragraphs", by_paragraph), ("pydocs-windows", by_window)):
        with open(HERE / f"{name}.chunks.jsonl", "w", encoding="utf-8") as f:
            n = 0
            for doc, text in texts.items():
                for ch in chunker(doc, text):
                    f.write(json.dumps(ch, ensure_ascii=False) + "\n")
                    n += 1
        print(f"{name}.chunks.jsonl: {n} chunks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
