"""Document gold and quotes as a person edits and reads them (Textual-free: the app's
picker, Cases detail, Triage and stale review call these; tests call them directly).

* :func:`sentence_at` — the sentence of a chunk's text under a cursor, to become a quote;
  :func:`sentences` — every sentence of a chunk's text, for a cursor that moves by sentence;
  :func:`closest_sentence` — the sentence of a candidate chunk most like a quote that is
  found nowhere (what Stale review offers to write when a person picks that candidate);
* :func:`with_quote` / :func:`with_doc` — a case's ``evidence`` / ``expected_docs`` with
  one more (or one fewer) entry, for the test-set document's ``update_case``;
* :func:`detail_lines` — what a detail pane shows: each expected document and the rank it
  reached in the document ranking, each quote and where it resolved.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .quotes import norm

# a sentence ends at . ! ? … (and closing quotes or brackets after them) before whitespace,
# or at a line break (a slide's bullet, a heading): never inside 2.5 or z.B.-like tokens
_END = re.compile(r"(?<=[.!?…])[\"'”’»)\]]*(?=\s)|\n")


def sentence_at(text: str, pos: int) -> str:
    """The sentence of ``text`` around character ``pos`` (clamped), trimmed; a line of its
    own (a bullet, a title) counts as a sentence. Empty when ``pos`` is on blank space."""
    if not text:
        return ""
    pos = max(0, min(pos, len(text) - 1))
    start = 0
    for m in _END.finditer(text):
        if m.end() > pos:
            return _clean(text[start : m.end()]) or _clean(text[m.end() :].split("\n", 1)[0])
        start = m.end()
    return _clean(text[start:])


def sentences(text: str) -> list[tuple[int, int, str]]:
    """Every sentence of ``text`` as :func:`sentence_at` cuts them: ``(start, end, sentence)``
    in order, the sentence trimmed as a quote is written; blank pieces are left out."""
    out: list[tuple[int, int, str]] = []
    start = 0
    for m in [*_END.finditer(text), None]:
        end = len(text) if m is None else m.end()
        piece = _clean(text[start:end])
        if piece:
            out.append((start, end, piece))
        if m is None:
            break
        start = end
    return out


def closest_sentence(text: str, quote: str) -> str:
    """The sentence of ``text`` most like ``quote`` (characters compared after the
    resolution's normalisation, case folded; the first of equals); "" when ``text`` has none."""
    from difflib import SequenceMatcher

    want = norm(quote).casefold()
    best, score = "", -1.0
    for _start, _end, sentence in sentences(text):
        r = SequenceMatcher(None, want, norm(sentence).casefold(), autojunk=False).ratio()
        if r > score:
            best, score = sentence, r
    return best


def _clean(s: str) -> str:
    s = " ".join(s.split())
    return s.lstrip("-*•–# ").strip()


def with_quote(case: Any, quote: str) -> tuple[str, ...]:
    """``case.evidence`` with ``quote`` added (or removed when already there, compared as
    the resolution compares: whitespace and Unicode form do not make two quotes)."""
    key = norm(quote)
    if not key:
        return tuple(case.evidence)
    kept = tuple(q for q in case.evidence if norm(q) != key)
    return kept if len(kept) != len(case.evidence) else (*case.evidence, quote)


def with_doc(case: Any, doc: str) -> tuple[str, ...]:
    """``case.expected_docs`` with ``doc`` toggled in or out."""
    docs = tuple(case.expected_docs)
    return tuple(d for d in docs if d != doc) if doc in docs else (*docs, doc)


def detail_lines(case: Any, record: Mapping[str, Any] | None, k: int | None) -> list[str]:
    """Lines for a detail pane: the case's expected documents (with the document rank each
    reached in ``record``'s ``doc_ranking`` at cut-off ``k``) and its quotes (with where each
    resolved in ``record``'s ``evidence``). Plain text; empty when the case has neither."""
    out: list[str] = []
    docs = tuple(getattr(case, "expected_docs", ()) or ())
    if docs:
        ranked = list((record or {}).get("doc_ranking") or ())
        all_ = " (all of them)" if getattr(case, "expect", "any") == "all" and len(docs) > 1 else ""
        out.append(f"expected documents{all_}")
        for d in docs:
            if record is None or "doc_ranking" not in record:
                out.append(f"  {d}")
                continue
            rank = ranked.index(d) + 1 if d in ranked else 0
            if not rank:
                out.append(f"  {d}  not retrieved")
            elif k is not None and rank > k:
                out.append(f"  {d}  at document rank {rank}, outside k = {k}")
            else:
                out.append(f"  {d}  at document rank {rank}")
    quotes = tuple(getattr(case, "evidence", ()) or ())
    if quotes:
        stored = _resolutions(record)
        out.append("evidence")
        for i, q in enumerate(quotes):
            r = stored[i] if i < len(stored) and norm(str(stored[i].get("quote", ""))) == norm(q) else None
            out.append(f"  “{q}”")
            out.append(f"    {_where(r)}")
    return out


def _resolutions(record: Mapping[str, Any] | None) -> Sequence[Mapping[str, Any]]:
    kept = (record or {}).get("evidence")
    return [d for d in kept if isinstance(d, dict)] if isinstance(kept, list) else []


def _where(r: Mapping[str, Any] | None) -> str:
    if r is None:
        return "not resolved yet (run the test set, or ragtriage validate)"
    status = r.get("status")
    chunks = [c for c in r.get("chunks") or () if isinstance(c, str)]
    docs = r.get("docs") or [None] * len(chunks)
    where = ", ".join(f"{c} ({d})" if isinstance(d, str) else c for c, d in zip(chunks, docs))
    if status == "found":
        return f"→ {where}"
    if status == "split":
        return f"→ {where.replace(', ', ' + ')} (split over chunks: expect all)"
    cands = [c.get("id") for c in r.get("candidates") or () if isinstance(c, dict)]
    shown = f"; candidates {', '.join(map(str, cands[:3]))}" if cands else ""
    what = {
        "missing": "found nowhere in the corpus (edited or deleted?)",
        "ambiguous": "in several documents: name the right one in expected_docs",
        "elsewhere": "only in documents expected_docs does not name",
    }.get(str(status), str(status))
    return f"✗ {what}{shown}"
