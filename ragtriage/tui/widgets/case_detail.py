"""The selected case in full, with the text of each expected chunk."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..rows import FLAG_TEXT, reason_text
from ..shown import plain, shown_text
from ..triage_view import gold_text, review_note_text

if TYPE_CHECKING:
    from ...core.corpus import Chunk
    from ...core.notes import Note
    from ...core.quote_check import QuoteEntry
    from ...core.schema import Case, Label
    from ...core.staleness import StaleEntry


def describe_case(
    case: Case,
    *,
    corpus: Mapping[str, Chunk] | None = None,
    labels: Mapping[str, Label] | None = None,
    stale: Iterable[StaleEntry] = (),
    reason: str | None = None,
    corpus_note: str = "",
    review_note: Note | None = None,
    note_current: bool = False,
    record: Mapping[str, Any] | None = None,
    k: int | None = None,
    quotes_now: Sequence[QuoteEntry] | None = None,
) -> Text:
    """A readable account of one case (plain Rich text, theme-neutral styles).

    ``review_note``: the latest note written in triage about the case (``note_current``:
    it was about the answer of the run shown); ``record``: the case in the run loaded (its
    document ranks at ``k``), ``quotes_now``: where its quotes resolve in the loaded corpus."""
    t = Text()
    t.append(case.id, style="bold")
    if case.topic:
        t.append(f"  · {case.topic}", style="italic")
    t.append("\n")
    flags = []
    if case.unanswerable:
        flags.append(FLAG_TEXT["unanswerable"])
    elif case.unlabelled:
        flags.append(FLAG_TEXT["draft"] + " (no expected chunk yet: p picks one)")
    if stale:
        flags.append(FLAG_TEXT["stale"])
    if flags:
        t.append("  ".join(flags) + "\n", style="bold")
    if reason:
        t.append(f"run: {reason_text(reason)}\n", style="bold")
    t.append("\nquestion  ", style="dim")
    t.append(case.question + "\n")
    if case.answer:
        t.append("answer    ", style="dim")
        t.append(case.answer + "\n")
    if case.must_contain:
        t.append("must contain  ", style="dim")
        t.append(" · ".join(f"“{s}”" for s in case.must_contain) + "\n")
    if case.tags:
        t.append("tags      ", style="dim")
        t.append(", ".join(case.tags) + "\n")
    if case.notes:
        t.append("test-set notes  ", style="dim")
        t.append(case.notes + "\n")
    if review_note is not None:
        t.append_text(review_note_text(review_note, note_current))
    if case.expected:
        _expected_chunks(t, case, corpus, labels or {}, stale, corpus_note)
    t.append_text(gold_text(case, record, k, quotes_now))
    return t


def _expected_chunks(
    t: Text,
    case: Case,
    corpus: Mapping[str, Chunk] | None,
    labels: Mapping[str, Label],
    stale: Iterable[StaleEntry],
    corpus_note: str,
) -> None:
    """Each expected chunk with its text now (or the text its label remembers)."""
    t.append(
        f"\nexpected ({case.expect}: {'one suffices' if case.expect == 'any' else 'needs every one'})\n",
        style="dim",
    )
    stale_by_label = {e.label: e for e in stale}
    for cid in case.expected:
        t.append(f"● {cid}", style="bold")
        chunk = corpus.get(cid) if corpus is not None else None
        entry = stale_by_label.get(cid)
        if entry is not None:
            t.append(f"  ⚠ stale: {entry.status}", style="bold")
        if chunk is not None and chunk.doc:
            t.append(f"  ({chunk.doc})", style="dim")
        t.append("\n")
        if chunk is not None:
            t.append(f"  {chunk.text}\n")
            continue
        label = labels.get(cid)
        if label is not None and label.text:
            t.append("  remembered: ", style="dim")
            t.append(f"{label.text}\n", style="italic")
        elif corpus is not None:
            t.append("  not in the corpus\n", style="italic")
        else:
            t.append(f"  {corpus_note or 'corpus not loaded'}\n", style="dim italic")


class DetailText(Static):
    """The detail's text: a new text lays the screen out again only when its height changes.

    ``Static.update`` always asks for a layout, which makes Textual reflow and repaint every
    widget of the screen (the table's 40 rows, its scrollbar, the footer): most of a key's
    time on the Cases screen. Moving between cases or flagging one mostly keeps the height,
    measured here by Textual's own ``get_content_height`` at the width the text has now."""

    def update(self, content: Any = "", *, layout: bool = True) -> None:
        region = self.content_region
        super().update(content, layout=False)
        if not layout:
            return
        if (
            not region.width
            or self.get_content_height(region.size, self.app.size, region.width) != region.height
        ):
            self.refresh(layout=True)


class CaseDetail(VerticalScroll):
    """The selected case in full. Focusable (``tab`` from the table) so ``↑``/``↓``/``pgup``/
    ``pgdn``/``home``/``end`` scroll it: at 80×24 a case with long chunks does not fit.
    ``J``/``K`` scroll it from the list too (:func:`~ragtriage.tui.base.detail_bindings`)."""

    DEFAULT_CSS = """
    CaseDetail { background: $surface; padding: 0 1; }
    """

    _shown: str | None = None  # the case shown (None: a message)

    def compose(self) -> ComposeResult:
        yield DetailText("", id="detail-text")

    def show(self, text: Text | str, case_id: str | None = None) -> None:
        """Show ``text``; from the top for another case or a message, but a case shown
        again (a background stale check or corpus load finished) keeps where the person
        scrolled to."""
        self.query_one("#detail-text", DetailText).update(
            shown_text(text) if isinstance(text, Text) else plain(text)
        )
        if case_id is None or case_id != self._shown:
            self.scroll_home(animate=False)
        self._shown = case_id
