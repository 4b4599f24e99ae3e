"""Chunk picker: search the corpus, toggle the chunks that answer a case.

The search index (:mod:`ragtriage.tui.picker_index`: accents folded, words stemmed
in the test set's language, close spellings when nothing matches) is built once
per app, in a worker, as soon as the corpus is read; each search runs in a worker
too, so typing never waits on it. An empty query lists the corpus by document.

From the search box, ``↑``/``↓`` move the highlight in the list; ``space`` then
toggles the highlighted chunk (right after typing, ``space`` types a space).

Beyond chunk ids (issue 24): ``D`` toggles the highlighted chunk's document in the case's
``expected_docs``; the preview under the list shows the highlighted chunk one sentence at
a time (``←``/``→`` move the sentence), and ``Q`` toggles that sentence in the case's
``evidence`` (the core's :func:`~ragtriage.core.gold_view.sentences` cuts them, so the quote
resolves back to the chunk it came from).
"""

from __future__ import annotations

import textwrap

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...core.corpus import Chunk, Corpus
from ...core.gold_view import sentences, with_doc, with_quote
from ...core.quotes import norm
from ...core.schema import Case
from ..base import AppScreen
from ..edits import UpdateCase
from ..shown import plain, shown_line, shown_text
from ..widgets.footer import Footer  # whole keys that fit, the rest in ?

RESULTS = 30
SYSTEM = "system:"  # the option id of a chunk --system retrieved (a chunk may be in both lists)
BROWSE = 200  # an empty query lists this many chunks, by document
INDENT = 11
PREVIEW_LINES = 2


class ChunkList(OptionList):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="picker.down"),
        Binding("k", "cursor_up", "Up", show=False, id="picker.up"),
        Binding("home", "first", "First", show=False, id="picker.first"),
        Binding("G,end", "last", "Last", show=False, id="picker.last"),
        Binding("left", "sentence(-1)", "Previous sentence", show=False, id="picker.sentence_prev"),
        Binding("right", "sentence(1)", "Next sentence", show=False, id="picker.sentence_next"),
    ]

    def action_sentence(self, by: int) -> None:
        screen = self.screen
        if isinstance(screen, PickerScreen):
            screen.move_sentence(by)


class QueryInput(Input):
    """The search box. ``↑``/``↓``/``pgup``/``pgdn`` move the results' highlight without
    leaving the box; after that, ``space`` toggles the highlighted chunk instead of typing
    a space (typing again makes ``space`` a space again)."""

    BINDINGS = [
        Binding("down", "move(1)", "Next hit", show=False),
        Binding("up", "move(-1)", "Previous hit", show=False),
        Binding("pagedown", "move(10)", "Next page", show=False),
        Binding("pageup", "move(-10)", "Previous page", show=False),
    ]

    picking = False  # the last key moved the highlight: space toggles

    def action_move(self, by: int) -> None:
        screen = self.screen
        if isinstance(screen, PickerScreen):
            self.picking = screen.move_highlight(by)

    def on_focus(self) -> None:
        self.picking = False  # coming back to the box (/, tab, esc): space types again

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "space" and self.picking and isinstance(self.screen, PickerScreen):
            event.stop()
            event.prevent_default()
            self.screen.action_toggle_chunk()
            return
        if event.is_printable or event.key in ("backspace", "delete", "ctrl+u", "ctrl+w"):
            self.picking = False
        await super()._on_key(event)


class PickerScreen(AppScreen[None]):
    """Label one case: ranked chunks, ``space``/``enter`` toggles one in or out of ``expected``."""

    HELP_TITLE = "Chunk picker"
    HELP_INTRO = """
Search the corpus (the question is pre-filled); ● marks chunks the case
already expects. It is the same search the builtin system retrieves with:
accents don't matter, words match their other forms in the test set's language
(bestelle finds Bestellung), separable verbs and compounds are read (ruf … an
finds anrufen, Versandkosten finds Kosten), and the language's lexicon widens a
question with the words documents use (Porto asks for Versandkosten too). When
no word is found, close spellings are searched and the status line says which.
An empty search lists the chunks by document. With edit --system SPEC, the
chunks your system retrieves for the question are listed under the results.

Toggle a chunk with {space} or {enter}. In the search box, {up}/{down} move the
highlight in the list and {space} then toggles it (right after typing, space is
a space). {A} (shift+a) switches expect between any (one chunk suffices) and all
(the answer needs every one); {/} goes back to the search box. Labels (what the
chunk says now) are recorded when you save.

Gold in other words: {D} (shift+d) toggles the highlighted chunk's document in
the case's expected_docs (the case then counts as found when any chunk of that
document is retrieved). The preview under the list shows the highlighted
chunk's text a sentence at a time: {left}/{right} move to the previous / next
sentence, and {Q} (shift+q) takes the sentence shown as an evidence quote (Q
again on the same sentence removes it). A quote is found again in the corpus
by its words, so it survives re-chunking.
"""

    BINDINGS = [
        Binding("escape", "back", "Back", id="picker.back"),
        Binding("space", "toggle_chunk", "Toggle chunk", key_display="space", id="picker.toggle"),
        Binding("A", "toggle_expect", "Any/all", id="picker.expect", tooltip="expect any one chunk or all"),
        Binding("slash", "focus_query", "Search", key_display="/", id="picker.search"),
        Binding(
            "D", "toggle_doc", "Document", id="picker.doc", tooltip="the chunk's document in expected_docs"
        ),
        Binding(
            "Q", "toggle_quote", "Quote", id="picker.quote", tooltip="the sentence shown as an evidence quote"
        ),
    ]

    def __init__(self, case_id: str) -> None:
        super().__init__()
        self.case_id = case_id
        self.results: list[tuple[str, float]] = []
        self.fuzzy: dict[str, list[str]] = {}  # unknown query word → corpus words searched instead
        self.browsing = False  # the query is empty: the list shows the corpus by document
        self.shown: list[tuple[str, bool]] = []
        self._searched: str | None = None
        self.sentence = 0  # the sentence of the highlighted chunk the preview shows
        self._preview_of: str | None = None

    class Found(Message):
        """A search finished (posted by its worker)."""

        def __init__(
            self,
            query: str,
            results: list[tuple[str, float]],
            fuzzy: dict[str, list[str]],
            browsing: bool = False,
        ) -> None:
            super().__init__()
            self.query = query
            self.results = results
            self.fuzzy = fuzzy
            self.browsing = browsing

    def compose(self) -> ComposeResult:
        yield Static("", id="picker-case")
        yield QueryInput(id="query", placeholder="search the corpus (empty: browse by document)")
        yield Static("", id="picker-status", markup=False)
        yield ChunkList(id="results")
        yield Static("", id="picker-preview")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        case = self._case()
        q = self.query_one("#query", Input)
        q.value = case.question if case else ""
        self.query_one("#results", ChunkList).focus()
        self._show_case()
        self.show_state()

    def _case(self) -> Case | None:
        if not self.rt.loaded:
            return None
        try:
            return self.rt.doc.case(self.case_id)
        except KeyError:
            return None

    def _show_case(self) -> None:
        case = self._case()
        if case is None:
            return
        t = Text()
        t.append(f"{case.id}  ", style="bold")
        t.append(case.question + "\n")
        t.append("expected: ", style="dim")
        t.append(
            ", ".join(case.expected)
            if case.expected
            else (
                "∅ unanswerable"
                if case.unanswerable
                else "no chunk ids"
                if case.expected_docs or case.evidence
                else "none yet"
            )
        )
        t.append(f"   expect: {case.expect} ", style="dim")
        t.append("(A switches)", style="dim italic")
        if case.expected_docs:
            t.append("\ndocuments: ", style="dim")
            t.append(", ".join(case.expected_docs))
        if case.evidence:
            n = len(case.evidence)
            t.append(f"   {n} quote{'s' * (n != 1)}", style="dim")
        self.query_one("#picker-case", Static).update(shown_text(t))

    # -- state -----------------------------------------------------------------------
    def show_state(self) -> None:
        app = self.rt
        if self._case() is None:
            if app.screen is self:
                self.dismiss()
            return
        self._show_case()
        status = self.query_one("#picker-status", Static)
        if app.corpus is None:
            status.update(
                plain(
                    app.corpus_error
                    or (
                        "loading the corpus…"
                        if app.corpus_path
                        else "no corpus: the test set names none and --corpus was not given"
                    )
                )
            )
            return
        if app.index is None:
            status.update(
                plain(
                    app.index_error
                    and f"search unavailable: {app.index_error}"
                    or f"building the search index over {len(app.corpus):,} chunks…"
                )
            )
            return
        query = self.query_one("#query", Input).value
        if self._searched != query:
            self.search(query)
        else:
            self._render_results()

    @on(Input.Changed, "#query")
    def _query_changed(self, event: Input.Changed) -> None:
        if self.rt.index is not None:
            self.search(event.value)

    @on(Input.Submitted, "#query")
    def _query_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#results", ChunkList).focus()

    @work(thread=True, exclusive=True, group="picker-search", exit_on_error=False)
    def search(self, query: str) -> None:
        index = self.rt.index
        if index is None:
            self.post_message(self.Found(query, [], {}))
        elif not query.strip():
            self.post_message(self.Found(query, [(cid, 0.0) for cid in index.browse(BROWSE)], {}, True))
        else:
            hits = index.hits(query, RESULTS)
            self.post_message(self.Found(query, hits.results, hits.fuzzy))

    @on(Found)
    def _got_results(self, event: Found) -> None:
        query, results = event.query, event.results
        if not self.is_attached or query != self.query_one("#query", Input).value:
            return  # typed on since: a newer search is coming
        self._searched = query
        self.results = [(cid, float(score)) for cid, score in results]
        self.fuzzy = event.fuzzy
        self.browsing = event.browsing
        self._render_results()
        lst = self.query_one("#results", ChunkList)
        if not self.results and lst.has_focus:
            # the search found nothing: the next key is surely a search word, not a list
            # key (typing on the list fired `a`, switching expect any/all unseen)
            self.query_one("#query", Input).focus()

    def _render_results(self) -> None:
        case = self._case()
        corpus = self.rt.corpus
        expected = set(case.expected) if case else set()
        options = []
        shown: list[str] = []  # what the list shows, in order
        for rank, (cid, score) in enumerate(self.results, 1):
            options.append(
                Option(
                    self._prompt(
                        None if self.browsing else rank,
                        cid,
                        None if self.browsing else score,
                        cid in expected,
                        corpus,
                    ),
                    id=cid,
                )
            )
            shown.append(cid)
        for cid in case.expected if case else ():  # expected chunks the query did not find
            if cid not in shown:
                options.append(Option(self._prompt(None, cid, None, True, corpus), id=cid))
                shown.append(cid)
        self.shown = [(cid, cid in expected) for cid in shown]  # (chunk id, ● expected)
        options += self._system_options(expected)
        lst = self.query_one("#results", ChunkList)
        keep = lst.highlighted
        lst.set_options(options)
        if options:
            lst.highlighted = min(keep or 0, len(options) - 1)
        self.query_one("#picker-status", Static).update(plain(self._status()))
        self._show_preview()

    def _system_options(self, expected: set[str]) -> list[Option]:
        """What ``edit --system SPEC`` retrieves for the case's question, under the results
        (a person labels with what the real system finds, not only with the lexical search)."""
        spec = self.rt.system_spec
        if not spec or spec == "builtin":
            return []
        got = self.rt.system_ranking(self.case_id)
        if got is None:
            head = f"── asking {spec} what it retrieves for the question…"
        elif got.error and not got.ranking:
            head = f"── {spec} could not answer: {got.error}"
        else:
            head = f"── what {spec} retrieves for the question ({len(got.ranking)})"
        out = [Option(plain(head, style="bold"), disabled=True)]
        corpus = self.rt.corpus
        for rank, cid in enumerate(got.ranking[:10] if got is not None else [], 1):
            out.append(Option(self._prompt(rank, cid, None, cid in expected, corpus), id=f"{SYSTEM}{cid}"))
        return out

    def _status(self) -> str:
        n = len(self.results)
        if self.browsing:
            total = len(self.rt.index) if self.rt.index is not None else n
            first = f"the first {n:,} of " if n < total else ""
            return f"{first}{total:,} chunks by document · type to search · space toggles"
        if self.fuzzy:
            close = "; ".join(f"{w} → {', '.join(ws)}" for w, ws in self.fuzzy.items())
            return f"no exact match · close words: {close} · {n} result{'s' * (n != 1)}"
        if not n:
            return "no chunk matches · try other words, or clear the search to browse"
        return f"{n} result{'s' * (n != 1)} · ● = expected · space toggles (from the search box: ↑↓ first)"

    def _prompt(
        self, rank: int | None, cid: str, score: float | None, expected: bool, corpus: Corpus | None
    ) -> Text:
        """Two or three lines: mark, rank, id, source, score; then the chunk's text, indented."""
        chunk = corpus.get(cid) if corpus is not None else None
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append("● expected " if expected else "○          ", style="bold" if expected else "dim")
        t.append(f"{rank}. " if rank else "– ", style="dim")
        t.append(cid, style="bold")
        if chunk is not None and chunk.doc:
            case = self._case()
            if case is not None and chunk.doc in case.expected_docs:
                t.append(f"  ◆ {chunk.doc}", style="bold italic")
            else:
                t.append(f"  {chunk.doc}", style="italic")
        if score is not None:
            t.append(f"  {score:.2f}", style="dim")
        width = max(20, self.query_one("#results").scrollable_content_region.width - INDENT - 1)
        if chunk is None:
            lines = ["not in the corpus"]
        else:
            lines = textwrap.wrap(
                " ".join(shown_line(chunk.text).split()), width, max_lines=PREVIEW_LINES, placeholder=" …"
            )
        for line in lines:
            t.append("\n" + " " * INDENT + line)
        return shown_text(t)

    # -- the preview: the highlighted chunk, a sentence at a time --------------------------
    def highlighted_chunk(self) -> Chunk | None:
        lst = self.query_one("#results", ChunkList)
        corpus = self.rt.corpus
        if lst.highlighted is None or corpus is None or lst.highlighted >= lst.option_count:
            return None
        cid = lst.get_option_at_index(lst.highlighted).id
        return corpus.get(cid.removeprefix(SYSTEM)) if cid is not None else None

    def current_sentence(self) -> str:
        """The sentence of the highlighted chunk the preview shows ("" when none)."""
        chunk = self.highlighted_chunk()
        if chunk is None:
            return ""
        parts = sentences(chunk.text)
        return parts[min(self.sentence, len(parts) - 1)][2] if parts else ""

    def move_sentence(self, by: int) -> None:
        chunk = self.highlighted_chunk()
        if chunk is None:
            return
        n = len(sentences(chunk.text))
        self.sentence = max(0, min(n - 1, self.sentence + by))
        self._show_preview()

    @on(OptionList.OptionHighlighted, "#results")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_preview()

    def _show_preview(self) -> None:
        """The previous, current (reversed) and next sentence of the highlighted chunk."""
        box = self.query_one("#picker-preview", Static)
        chunk = self.highlighted_chunk()
        if chunk is None:
            box.update("")
            return
        if chunk.id != self._preview_of:
            self._preview_of, self.sentence = chunk.id, 0
        parts = sentences(chunk.text)
        case = self._case()
        quoted = {norm(q) for q in case.evidence} if case is not None else set()
        t = Text()
        t.append(chunk.id, style="bold")
        if chunk.doc:
            t.append(f" · {chunk.doc}", style="italic")
        if not parts:
            t.append("  (no text)", style="dim")
            box.update(shown_text(t))
            return
        i = self.sentence = min(self.sentence, len(parts) - 1)
        t.append(f"  sentence {i + 1}/{len(parts)} · ←→ move · Q quotes it", style="dim")
        width = max(20, self.app.size.width - 4)  # the sentences around it: one line each
        for j in (i - 1, i, i + 1):
            if not 0 <= j < len(parts):
                continue
            s = parts[j][2]
            mark = "❝ " if norm(s) in quoted else "  "
            t.append("\n" + mark, style="bold")
            if j == i:
                t.append(s, style="reverse")
            else:
                t.append(s if len(s) <= width else s[: width - 1] + "…", style="dim")
        box.update(shown_text(t))

    # -- actions -----------------------------------------------------------------------
    def action_toggle_doc(self) -> None:
        """``D``: the highlighted chunk's document in or out of ``expected_docs``."""
        case = self._case()
        chunk = self.highlighted_chunk()
        if case is None or chunk is None:
            return
        if not chunk.doc:
            self.notify(
                f"{chunk.id} names no document (no doc in the corpus)", severity="warning", markup=False
            )
            return
        docs = with_doc(case, chunk.doc)
        fields: dict[str, object] = {"expected_docs": list(docs) or None}
        added = chunk.doc in docs
        msg = f"{chunk.doc} {'added to' if added else 'removed from'} expected_docs"
        if case.unanswerable and added:
            fields["unanswerable"] = None
            msg += " · no longer unanswerable"
        self.rt.edit(UpdateCase(self.case_id, fields))
        self.notify(msg, timeout=2, markup=False)

    def action_toggle_quote(self) -> None:
        """``Q``: the sentence the preview shows in or out of ``evidence``."""
        case = self._case()
        quote = self.current_sentence()
        if case is None or not quote:
            return
        evidence = with_quote(case, quote)
        fields: dict[str, object] = {"evidence": list(evidence) or None}
        added = len(evidence) > len(case.evidence)
        msg = f"quote {'added' if added else 'removed'}: “{quote}”"
        if case.unanswerable and added:
            fields["unanswerable"] = None
            msg += " · no longer unanswerable"
        self.rt.edit(UpdateCase(self.case_id, fields))
        self.notify(msg, timeout=3, markup=False)

    def action_toggle_chunk(self) -> None:
        lst = self.query_one("#results", ChunkList)
        if lst.highlighted is None:
            return
        cid = lst.get_option_at_index(lst.highlighted).id
        if cid is not None:
            self.toggle_chunk(cid.removeprefix(SYSTEM))

    @on(OptionList.OptionSelected, "#results")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.toggle_chunk(event.option.id.removeprefix(SYSTEM))

    def toggle_chunk(self, chunk_id: str) -> None:
        case = self._case()
        if case is None:
            return
        expected = list(case.expected)
        if chunk_id in expected:
            expected.remove(chunk_id)
            msg = f"{chunk_id} removed from expected"
        else:
            expected.append(chunk_id)
            msg = f"{chunk_id} added to expected"
        fields: dict[str, object] = {"expected": expected or None}
        if case.unanswerable and expected:
            fields["unanswerable"] = None
            msg += " · no longer unanswerable"
        self.rt.edit(UpdateCase(self.case_id, fields))
        self.notify(msg, timeout=2, markup=False)

    def action_toggle_expect(self) -> None:
        case = self._case()
        if case is None:
            return
        new = "any" if case.expect == "all" else "all"
        self.rt.edit(UpdateCase(self.case_id, {"expect": None if new == "any" else "all"}))
        self.notify(f"expect: {new}", timeout=2)

    def move_highlight(self, by: int) -> bool:
        """Move the list's highlight ``by`` rows (from the search box); True if there is one."""
        lst = self.query_one("#results", ChunkList)
        if not lst.option_count:
            return False
        cur = lst.highlighted
        lst.highlighted = 0 if cur is None else max(0, min(lst.option_count - 1, cur + by))
        return True

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def action_back(self) -> None:
        if self.query_one("#query", Input).has_focus:
            self.query_one("#results", ChunkList).focus()
            return
        self.dismiss()
