"""The Triage screen's account of one case, as Rich text (no Textual).

Everything a reviewer needs to decide whether the system or the test set is
wrong: the question, where each expected chunk was ranked against k, the
retrieved chunks in order with their scores, the answer with its citations and
the offending number or source marked, the grounding reason, and which
must-contain strings the answer has. Pass/fail is always a glyph and a word.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ..core.grounding import CITATION, citations
from .triage_state import verdict_text

if TYPE_CHECKING:
    from ..core.notes import Note
    from ..core.quote_check import QuoteEntry
    from ..core.records import CaseRecord
    from ..core.schema import Case

_NUMBER_WHY = re.compile(r"^number (\S+) missing from source")
_OUTSIDE_WHY = re.compile(r"^source outside prompt: (\S+)")
MARK = "bold reverse"  # theme-neutral emphasis; always with a glyph or a word beside it


def first_rank(ranking, chunk_id: str) -> int:
    """1-based position of ``chunk_id`` in the whole ranking, 0 when absent."""
    for i, c in enumerate(ranking):
        if c == chunk_id:
            return i + 1
    return 0


def expected_line(chunk_id: str, ranking, k: int, system: str | None = None) -> tuple[str, bool]:
    """ "expected devolver-1 at rank 4, outside k = 3" and whether it is inside k; a chunk the
    system did not return says so in words (:func:`ragtriage.core.analysis.not_retrieved`)."""
    from ..core.analysis import not_retrieved

    r = first_rank(ranking, chunk_id)
    if r == 0:
        return f"expected {chunk_id} {not_retrieved(len(ranking), system)}", False
    inside = r <= k
    return f"expected {chunk_id} at rank {r}, {'inside' if inside else 'outside'} k = {k}", inside


def offending(why: str) -> tuple[str | None, str | None]:
    """(number, source id) the grounding reason points at."""
    if not why:
        return None, None
    m = _NUMBER_WHY.match(why)
    if m:
        return m.group(1), None
    m = _OUTSIDE_WHY.match(why)
    if m:
        return None, m.group(1)
    return None, None


def answer_text(answer: str, why: str, expected=()) -> Text:
    """The answer with citations underlined (expected ones starred) and the offending
    number or source marked."""
    t = Text(answer)
    for m in CITATION.finditer(answer):
        t.stylize("underline", m.start(), m.end())
    number, source = offending(why)
    if source:
        for m in CITATION.finditer(answer):
            if source in re.split(r"\s*[,;]\s*", m.group(1)):
                t.stylize(MARK, m.start(), m.end())
    if number:
        body = CITATION.sub(lambda m: " " * len(m.group(0)), answer)
        for m in re.finditer(r"(?<![\w.,])" + re.escape(number) + r"(?![\w])", body):
            t.stylize(MARK, m.start(), m.end())
    return t


def review_note_text(note: Note, current: bool) -> Text:
    """ "✎ review note (ana, 2026-12-03, on this answer): …" — a note written in triage."""
    t = Text()
    t.append("✎ review note", style="bold")
    about = "on this answer" if current else "on an earlier answer" if note.answer_sha else ""
    who = ", ".join(x for x in (note.by, note.when[:10], about) if x)
    if who:
        t.append(f" ({who})", style="dim")
    t.append(": ")
    t.append(note.note + "\n")
    return t


def gold_text(
    case: Case | None,
    record: Mapping[str, Any] | None,
    k: int | None,
    quotes_now: Sequence[QuoteEntry] | None = None,
) -> Text:
    """A case's document gold and quotes: each expected document with the document rank it
    reached in the run (``record``) and ``doc_hit@k``; each quote with the chunks it resolves
    to now (``quotes_now``: the app's check against the loaded corpus), else where the run
    resolved it. Empty when the case has neither."""
    from ..core.gold_view import detail_lines

    if case is None or not (case.expected_docs or case.evidence):
        return Text()
    rec: dict[str, Any] = {}
    if record is not None and "doc_ranking" in record:
        rec["doc_ranking"] = record["doc_ranking"]
    if quotes_now is not None:
        rec["evidence"] = [e.resolution.to_dict() for e in quotes_now]
    elif record is not None and record.get("evidence"):
        rec["evidence"] = record["evidence"]
    t = Text("\n")
    if record is not None and "doc_hit" in record and case.expected_docs:
        rank = record.get("doc_rank")
        if record.get("doc_hit"):
            t.append(f"✓ doc_hit@{k}: an expected document at document rank {rank}\n")
        else:
            where = f" (first at document rank {rank})" if rank else ""
            t.append(f"✗ doc_hit@{k}: no expected document in the first {k} documents{where}\n", style="bold")
    for line in detail_lines(case, rec or None, k):
        if not line.startswith(" "):
            t.append(line + "\n", style="dim")
        elif line.lstrip().startswith("✗"):
            t.append(line + "\n", style="bold")
        else:
            t.append(line + "\n")
    return t


def describe(
    record: CaseRecord,
    k: int,
    *,
    case: Case | None = None,
    chunk_text: Callable[[str], str | None] | None = None,
    reviewed: dict | None = None,
    note: Note | None = None,
    note_current: bool = False,
    notes_field: str | None = None,
    system: str | None = None,
    max_chunk: int = 160,
    quotes_now: Sequence[QuoteEntry] | None = None,
) -> Text:
    """A readable account of one case of a run.

    ``case`` is the test set's current case (for must_contain and the reference
    answer; None while the test set loads), ``chunk_text(id)`` gives a chunk's text,
    ``note`` the case's latest review note (``note_current``: about this answer),
    ``quotes_now`` where the case's quotes resolve in the loaded corpus."""
    t = Text()
    _heading(t, record, reviewed)
    ranking = list(record.get("ranking") or [])
    expected = list(case.expected if case is not None else record.get("expected") or [])
    _expected(t, record, case, expected, ranking, k, system)
    t.append_text(gold_text(case, record, k, quotes_now))
    _retrieved(t, record, set(expected), ranking, k, chunk_text, max_chunk)
    _answer(t, record, set(expected))
    if case is not None:
        _reference(t, record, case)
    if notes_field:
        t.append("\ntest-set notes  ", style="dim")
        t.append(" ".join(notes_field.split()) + "\n")
    if note is not None:
        t.append("\n")
        t.append_text(review_note_text(note, note_current))
    return t


def _heading(t: Text, record: CaseRecord, reviewed: dict | None) -> None:
    reason = record.get("reason")
    t.append(record["id"], style="bold")
    topic = record.get("topic")
    if topic:
        t.append(f"  · {topic}", style="italic")
    t.append("\n")
    t.append(f"{verdict_text(reason)} · {reason}", style="bold")
    if reviewed:
        t.append(f"   ☑ reviewed {reviewed.get('when', '')[:10]}")
    t.append("\n")
    if record.get("error"):
        t.append("error  ", style="bold")
        t.append(str(record["error"]) + "\n")
    t.append("\nquestion  ", style="dim")
    t.append(str(record.get("question", "")) + "\n")


def _expected(
    t: Text,
    record: CaseRecord,
    case: Case | None,
    expected: list[str],
    ranking: list[str],
    k: int,
    system: str | None = None,
) -> None:
    unanswerable = case.unanswerable if case is not None else bool(record.get("unanswerable"))
    expect = case.expect if case is not None else record.get("expect", "any")
    t.append("\n")
    if unanswerable:
        t.append("∅ unanswerable: the right answer is to decline\n")
    elif not expected and case is not None and (case.expected_docs or case.evidence):
        pass  # the gold is documents or quotes: gold_text shows it
    elif not expected:
        t.append(
            "✎ no expected chunk yet ("
            + ("a: accept a retrieved one" if ranking else "p: pick one from the corpus")
            + ")\n"
        )
    else:
        if expect == "all" and len(expected) > 1:
            t.append("expect all: every expected chunk must be in the top k\n", style="dim")
        for cid in expected:
            line, inside = expected_line(cid, ranking, k, system)
            t.append(("✓ " if inside else "✗ ") + line + "\n", style="" if inside else "bold")


def _retrieved(
    t: Text,
    record: CaseRecord,
    exp: set[str],
    ranking: list[str],
    k: int,
    chunk_text: Callable[[str], str | None] | None,
    max_chunk: int,
) -> None:
    t.append(f"\nretrieved (k = {k})\n", style="dim")
    if not ranking:
        t.append("  (nothing retrieved)\n")
    scores = record.get("scores") or []
    shown = ranking[: max(k, 10)]
    for i, cid in enumerate(shown):
        score_text = f"{scores[i]:.3f}" if i < len(scores) and isinstance(scores[i], (int, float)) else ""
        row = Text(f" {'│' if i < k else '┆'}{i + 1:>3}. ")
        row.append(cid, style="bold" if cid in exp else "")
        if score_text:
            row.append(f"  {score_text}", style="dim")
        if cid in exp:
            row.append("  ★ expected", style="bold")
        t.append_text(row)
        t.append("\n")
        text = chunk_text(cid) if chunk_text is not None else None
        if text:
            text = " ".join(text.split())
            if len(text) > max_chunk:
                text = text[: max_chunk - 1] + "…"
            t.append(f"        {text}\n", style="dim")
        if i + 1 == k and len(ranking) > k:
            t.append("  ┄┄┄┄ k ┄┄┄┄ below this line the generator did not see\n", style="dim")
    if len(ranking) > len(shown):
        t.append(f"  … {len(ranking) - len(shown)} more\n", style="dim")


def _answer(t: Text, record: CaseRecord, exp: set[str]) -> None:
    t.append("\nanswer  ", style="dim")
    answer = record.get("answer")
    why = record.get("why") or ""
    if answer is None:
        t.append("(no answer)")
    else:
        t.append_text(answer_text(str(answer), why, exp))
    if record.get("abstained"):
        t.append("   (declined)", style="italic")
    t.append("\n")
    cited = citations(answer) if isinstance(answer, str) else []
    if cited:
        t.append("cites   ", style="dim")
        t.append(", ".join(f"{c}{' ★' if c in exp else ''}" for c in cited) + "\n")
    t.append("grounding  ", style="dim")
    if record.get("supported"):
        t.append("✓ supported\n")
    else:
        number, source = offending(why)
        t.append(f"✗ unsupported: {why or 'judged unsupported'}\n", style="bold")
        if number:
            t.append(f"           look for {number} in the cited chunks\n", style="dim")
        if source:
            t.append(f"           {source} was not among the chunks the generator saw\n", style="dim")
    t.append("correct    ", style="dim")
    t.append(("✓ correct" if record.get("correct") else "✗ not correct") + "\n")


def _reference(t: Text, record: CaseRecord, case: Case) -> None:
    if case.answer:
        t.append("reference  ", style="dim")
        t.append(case.answer + "\n")
    if case.must_contain:
        t.append("must contain\n", style="dim")
        answer = record.get("answer")
        ans = answer if isinstance(answer, str) else ""
        for s in case.must_contain:
            hit = s in ans and not record.get("abstained")
            t.append(f"  {'✓ has' if hit else '✗ missing'}  “{s}”\n", style="" if hit else "bold")


def retrieved_choices(
    rec: CaseRecord, exclude: set[str], k: int, lookup: Callable[[str], str | None] | None
) -> list[tuple[str, str]]:
    """The retrieved chunks not in ``exclude``, as (chunk id, description) for a chooser."""
    ranking = rec.get("ranking") or []
    scores = rec.get("scores") or []
    out = []
    seen = set()
    for i, cid in enumerate(ranking):
        if cid in exclude or cid in seen:
            continue
        seen.add(cid)
        desc = f"rank {i + 1}" + (" (inside k)" if i < k else "")
        if i < len(scores) and isinstance(scores[i], (int, float)):
            desc += f" · {scores[i]:.3f}"
        text = lookup(cid) if lookup else None
        if text:
            text = " ".join(text.split())
            desc += " · " + (text[:70] + "…" if len(text) > 70 else text)
        out.append((cid, desc))
    return out
