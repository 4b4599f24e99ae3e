"""Stale labels: what a label said, what the corpus has now, one key to resolve.

Every proposal shown and applied here is the engine's (:func:`..data.proposal`): ``enter``
writes for an automatic label exactly what ``ragtriage stale --fix`` writes, ``F`` writes
every automatic fix at once (one undo step), and a label the engine leaves for review is
applied only when a person chooses (``1``–``9`` one candidate, ``a`` the proposal of a
split with ``expect: all``).

Below the labels, the evidence quotes that do not resolve now (the core's
:func:`~ragtriage.core.quote_check.check_quotes`): found nowhere (edited or deleted text),
in several documents, or only in documents ``expected_docs`` leaves out. Each shows its
candidates and what picking one writes (``1``–``9``): the candidate's document added to
``expected_docs`` for a quote found in several, the candidate's closest sentence in place
of a quote found nowhere. Nothing is applied without a pick (``enter`` and ``F`` leave
quotes alone); ``L`` keeps a quote for later."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...core.corpus import Chunk
from ...core.gold_view import closest_sentence, with_doc
from ...core.quote_check import QuoteEntry
from ...core.quotes import norm
from ...core.staleness import Fix
from ...core.text import normalize_text
from ..base import AppScreen, detail_bindings
from ..data import LabelFix, Proposal, StaleEntry, fix_edits, held_back, proposal, remembered_spans, settled
from ..edits import UpdateCase
from ..shown import plain, shown_text
from ..widgets.footer import Footer  # whole keys that fit, the rest in ?

STATUS_HELP = {
    "moved": "the id is gone; the same text is now under another id",
    "changed": "the id still exists but its text is different (a reused id)",
    "merged": "the remembered text now lies inside a larger chunk",
    "split": "the remembered text is now spread over several chunks",
    "missing": "nothing in the corpus holds the remembered text",
    "unknown": "no remembered text, and the id is not in the corpus",
}

MARK = "reverse"  # the remembered text inside a candidate

QUOTE_HELP = {
    "missing": "found nowhere in the corpus (the text was edited or deleted?)",
    "ambiguous": "chunks of several documents hold it: which one is meant?",
    "elsewhere": "only documents the case's expected_docs leaves out hold it",
}


class StaleList(OptionList):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="stale.down"),
        Binding("k", "cursor_up", "Up", show=False, id="stale.up"),
    ]


def _fmt_ids(p: Proposal) -> str:
    ids = " + ".join(p.ids) if p.expect_all else ", ".join(p.ids)
    return ids + (", expect: all" if p.expect_all else "")


def how_close(remembered: str, chunk: Chunk | None, status: str, score: float) -> str:
    """A candidate's likeness to the remembered text, in words (the engine's score is a
    share of characters or words, not a confidence: a chunk four times as long as the text
    it holds whole scores 0.25)."""
    if chunk is None:
        return "not in the corpus"
    if not remembered:
        return "shares the question's rarer words"
    mine, theirs = normalize_text(remembered), normalize_text(chunk.text)
    if mine == theirs:
        return "the same text"
    if mine in theirs:
        return f"holds all of it (the text is {score:.0%} of this chunk)"
    if status == "split":
        return "holds a piece of it"
    return f"about {score:.0%} alike"


class StaleScreen(AppScreen[None]):
    """Every stale label, with the remembered text and the candidates, one under the other."""

    HELP_TITLE = "Stale labels"
    HELP_INTRO = """
A label is stale when the corpus no longer holds what the chunk said when it
was labelled (staleness.md). Each row says auto (ragtriage stale --fix would
fix it by itself) or review (a person decides). {enter} applies the automatic
fix shown exactly as --fix writes it, {F} applies every automatic fix at once
(one undo step); a review label is applied only by choosing: {1}–9 one
candidate, {a} the whole proposal of a split (expect: all). {p} opens the chunk
picker, {u} marks the case unanswerable, {l} checks the labels again,
{pgup}/{pgdn} scroll the candidates. An id another case still expects with
its old text is held back, as --fix holds it back.

Evidence quotes that no longer resolve are listed after the labels, with
candidates: {1}–9 picks one (for a quote in several documents, its document is
added to expected_docs; for a quote found nowhere, the candidate's closest
sentence replaces it, shown before you pick). A quote is never resolved
automatically: {L} (shift+l) keeps it for later, and ragtriage stale still
reports it.

Each candidate says how close it is to the remembered text in words: "holds
all of it (the text is 25 % of this chunk)" is a sure match inside a longer
chunk, not a weak one. Changes are saved with {ctrl+s}; the test set's corpus:
then names the chunks file checked against, and the save says how many labels
are still stale against it.
"""

    DETAIL = "#stale-detail"

    BINDINGS = [
        Binding(
            "enter",
            "accept_proposed",
            "Auto fix",
            priority=True,
            id="stale.accept",
            tooltip="apply the automatic fix (what ragtriage stale --fix writes); review labels: choose",
        ),
        Binding(
            "F",
            "fix_all",
            "Fix all auto",
            id="stale.fix_all",
            tooltip="every automatic fix, as one undo step",
        ),
        Binding("1", "accept(0)", "Candidate", key_display="1-9", id="stale.accept1"),
        *(
            Binding(str(n), f"accept({n - 1})", f"Accept candidate {n}", show=False, id=f"stale.accept{n}")
            for n in range(2, 10)
        ),
        Binding("a", "accept_all", "Proposal", id="stale.accept_all", tooltip="accept the proposal shown"),
        Binding("pagedown", "page_detail(1)", "Scroll", key_display="pgdn", priority=True, id="stale.pgdn"),
        Binding(
            "pageup",
            "page_detail(-1)",
            "Scroll up",
            key_display="pgup",
            show=False,
            priority=True,
            id="stale.pgup",
        ),
        Binding("l", "review_stale", "Re-check", id="stale.recheck"),
        Binding("p", "pick", "Pick", id="stale.pick"),
        Binding("u", "unanswerable", "Unanswerable", id="stale.unanswerable"),
        Binding("L", "later", "Later", id="stale.later", tooltip="keep the quote for later: nothing written"),
        Binding("escape", "back", "Back", id="stale.back"),
        *detail_bindings("stale"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._targets: dict[tuple[str, str], str] = {}
        self._targets_of: list[StaleEntry] | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="stale-status")
        with Horizontal(id="stale-main"):
            yield StaleList(id="stale-list")
            with VerticalScroll(id="stale-detail"):
                yield Static("", id="stale-text")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(StaleList).focus()
        self.show_state()

    @property
    def entries(self) -> list[StaleEntry]:
        return list(self.rt.stale.report or ())

    def targets(self) -> dict[tuple[str, str], str]:
        """The automatic fixes safe together, settled once per list shown (as --fix settles)."""
        report = self.rt.stale.report
        if report is not self._targets_of:
            self._targets_of = report
            self._targets = settled(report or [])
        return self._targets

    def _proposal(self, e: StaleEntry) -> Proposal | None:
        return proposal(self.entries, e, self.targets())

    def checked_against(self) -> str:
        """Which chunks file the labels were judged against, and why that one."""
        app = self.rt
        corpus = app.corpus
        path = corpus.path if corpus is not None and corpus.path else app.corpus_path
        name = Path(path).name if path else "?"
        why = "--corpus" if app.corpus_override is not None else "the test set's corpus:"
        size = f", {len(corpus):,} chunks" if corpus is not None else ""
        return f"{name} ({why}{size})"

    def show_state(self) -> None:
        app = self.rt
        status = self.query_one("#stale-status", Static)
        lst = self.query_one(StaleList)
        if app.stale.report is None:
            status.update(plain(app.corpus_error or f"checking labels against {self.checked_against()}…"))
            lst.clear_options()
            return
        entries = self.entries
        quotes = self.quote_entries
        keep = lst.highlighted
        lst.set_options(
            [
                *(self._row(e, i) for i, e in enumerate(entries)),
                *(self._quote_row(q, i, self.rt.stale.is_later(q)) for i, q in enumerate(quotes)),
            ]
        )
        against = self.checked_against()
        n_quotes = f" · {len(quotes)} quote{'s' * (len(quotes) != 1)} to review" if quotes else ""
        if entries or quotes:
            lst.highlighted = min(keep or 0, len(entries) + len(quotes) - 1)
            n_auto = sum(1 for e in entries if e.fix == Fix.AUTO)
            fix_all = " · F fixes every auto one" if n_auto > 1 else ""
            labels = (
                f"⚠ {len(entries)} stale ({n_auto} auto, {len(entries) - n_auto} review)"
                if entries
                else "✓ no stale label"
            )
            status.update(Text(f"{labels}{n_quotes} · checked against {against}{fix_all}"))
        else:
            msg = f"✓ no stale label against {against}"
            if app.corpus_override is None:
                msg += " · re-chunked? open with --corpus NEW.chunks.jsonl"
            status.update(plain(msg))
        self._show()

    @staticmethod
    def _row(e: StaleEntry, i: int) -> Option:
        """Two lines at every width (auto/review and the case; the label and its status): a
        long id is cut with …, never broken mid-word."""
        auto = e.fix == Fix.AUTO
        t = Text(no_wrap=True, overflow="ellipsis", end="")
        t.append("auto  " if auto else "review", style="bold green" if auto else "bold yellow")
        t.append("  ")
        t.append(e.case, style="bold")
        t.append("\n        ")
        t.append(f"{e.label} · {e.status}", style="dim")
        return Option(shown_text(t), id=str(i))

    @property
    def quote_entries(self) -> list[QuoteEntry]:
        return self.rt.stale.open_quotes if self.rt.stale.report is not None else []

    @staticmethod
    def _quote_row(q: QuoteEntry, i: int, later: bool) -> Option:
        t = Text(no_wrap=True, overflow="ellipsis", end="")
        t.append("later " if later else "quote ", style="dim" if later else "bold yellow")
        t.append("  ")
        t.append(q.case, style="bold")
        t.append("\n        ")
        t.append(f"“{q.resolution.quote}” · {q.resolution.status}", style="dim")
        return Option(t, id=f"quote:{i}")

    def _current_quote(self) -> QuoteEntry | None:
        lst = self.query_one(StaleList)
        n = len(self.entries)
        quotes = self.quote_entries
        if lst.highlighted is None or not n <= lst.highlighted < n + len(quotes):
            return None
        return quotes[lst.highlighted - n]

    def _current(self) -> StaleEntry | None:
        lst = self.query_one(StaleList)
        entries = self.entries
        if lst.highlighted is None or not entries or lst.highlighted >= len(entries):
            return None
        return entries[lst.highlighted]

    @on(OptionList.OptionHighlighted, "#stale-list")
    def _moved(self, event: OptionList.OptionHighlighted) -> None:
        self._show()
        self.detail_home()

    @on(OptionList.OptionSelected, "#stale-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.action_accept_proposed()

    def _held_text(self, e: StaleEntry, ids: tuple[str, ...] | list[str]) -> str | None:
        held = held_back(self.entries, e, ids)
        if not held:
            return None
        x = held[0]
        return (
            f"{x.label} is still expected by {x.case} with its old text ({x.status}): "
            f"resolve {x.case} first, or writing the new text under {x.label} would hide that case"
        )

    # -- the detail: the label, what to do, the remembered text, the candidates -------------
    def _show(self) -> None:
        e = self._current()
        box = self.query_one("#stale-text", Static)
        app = self.rt
        q = self._current_quote()
        if q is not None and app.loaded:
            box.update(self._quote_detail(q))
            return
        if e is None:
            box.update(self._all_clear() if app.stale.report is not None and app.loaded else Text())
            return
        if not app.loaded:
            return
        t = Text()
        self._heading(t, e)
        label = app.doc.labels.get(e.label)
        remembered = label.text if label and label.text else ""
        t.append("\nremembered text\n", style="dim")
        t.append((remembered or "(none recorded)") + "\n", style="italic")
        self._candidates(t, e, remembered)
        now = app.corpus.get(e.label) if app.corpus is not None else None
        if now is not None and e.label not in {cid for cid, _ in e.candidates}:
            t.append(f"\nnow under {e.label}\n", style="dim")
            t.append(now.text + "\n", style="dim")
        box.update(shown_text(t))

    def _heading(self, t: Text, e: StaleEntry) -> None:
        doc = self.rt.doc
        if e.case in doc:
            t.append(f"{e.case}: ", style="bold")
            t.append(doc.case(e.case).question + "\n")
        t.append(f"⚠ {e.label} · {e.status}", style="bold")
        t.append(f" — {STATUS_HELP.get(e.status, '')}\n", style="dim")
        p = self._proposal(e)
        held = self._held_text(e, p.ids) if p is not None else None
        if p is not None and p.auto and held is None:
            t.append("auto: ", style="bold green")
            t.append(f"enter writes {_fmt_ids(p)} (as ragtriage stale --fix)\n")
        else:
            t.append("review: ", style="bold yellow")
            t.append(self._how_to_choose(e, p) + "\n")
        if held is not None:
            t.append("held back: ", style="bold red")
            t.append(held + "\n")

    @staticmethod
    def _how_to_choose(e: StaleEntry, p: Proposal | None) -> str:
        if p is not None and p.expect_all:
            return f"a accepts {_fmt_ids(p)}; 1–{min(9, len(p.ids))} one candidate"
        if e.candidates:
            n = min(9, len(e.candidates))
            return f"choose: {'1' if n == 1 else f'1–{n}'} accepts a candidate"
        return "no candidate: p opens the picker, u marks the case unanswerable"

    def _candidates(self, t: Text, e: StaleEntry, remembered: str) -> None:
        if e.candidates:
            t.append("\ncandidates (highlighted: the remembered text)\n", style="dim")
        corpus = self.rt.corpus
        for i, (cid, score) in enumerate(e.candidates[:9], 1):
            chunk = corpus.get(cid) if corpus is not None else None
            t.append(f"[{i}] ", style="bold")
            t.append(cid, style="bold")
            t.append(f"  {how_close(remembered, chunk, e.status, score)}", style="dim")
            if chunk is not None and chunk.doc:
                t.append(f"  {chunk.doc}", style="italic")
            t.append("\n")
            t.append_text(
                self._marked(chunk.text if chunk is not None else "(not in the corpus)", remembered)
            )
            t.append("\n")

    # -- a quote that does not resolve: its candidates and what picking one writes ------------
    def _pick_writes(self, q: QuoteEntry, cid: str, doc: str | None) -> tuple[str, str] | None:
        """What picking candidate ``cid`` writes: ("doc", document) or ("quote", sentence)."""
        if q.resolution.status == "missing":
            chunk = self.rt.corpus.get(cid) if self.rt.corpus is not None else None
            sentence = closest_sentence(chunk.text, q.resolution.quote) if chunk is not None else ""
            return ("quote", sentence) if sentence else None
        return ("doc", doc) if doc else None

    def _quote_detail(self, q: QuoteEntry) -> Text:
        doc, r = self.rt.doc, q.resolution
        t = Text()
        if q.case in doc:
            t.append(f"{q.case}: ", style="bold")
            t.append(doc.case(q.case).question + "\n")
        t.append(f"⚠ quote {q.index + 1} · {r.status}", style="bold")
        t.append(f" — {QUOTE_HELP.get(r.status, '')}\n", style="dim")
        t.append("review: ", style="bold yellow")
        if r.candidates:
            n = min(9, len(r.candidates))
            t.append(f"{'1' if n == 1 else f'1–{n}'} picks a candidate; L keeps it for later\n")
        else:
            t.append("no candidate: p opens the picker, L keeps it for later\n")
        if self.rt.stale.is_later(q):
            t.append("kept for later (L again: not any more)\n", style="dim")
        t.append("\nquote\n", style="dim")
        t.append(f"“{r.quote}”\n", style="italic")
        if r.candidates:
            t.append("\ncandidates\n", style="dim")
        corpus = self.rt.corpus
        for i, (cid, score, cdoc) in enumerate(r.candidates[:9], 1):
            chunk = corpus.get(cid) if corpus is not None else None
            cdoc = cdoc or (chunk.doc if chunk is not None else None)
            t.append(f"[{i}] ", style="bold")
            t.append(cid, style="bold")
            how = how_close(r.quote, chunk, "missing", score) if r.status == "missing" else "holds the quote"
            t.append(f"  {how}", style="dim")
            if cdoc:
                t.append(f"  {cdoc}", style="italic")
            t.append("\n")
            writes = self._pick_writes(q, cid, cdoc)
            if writes is None:
                t.append("  (names no document: p picks its chunk instead)\n", style="dim")
            elif writes[0] == "doc":
                t.append(f"  {i} adds {writes[1]} to expected_docs\n")
            else:
                t.append(f"  {i} writes “{writes[1]}” in place of the quote\n")
            text = chunk.text if chunk is not None else "(not in the corpus)"
            t.append_text(self._marked(text, writes[1] if writes and writes[0] == "quote" else r.quote))
            t.append("\n")
        return t

    def _accept_quote(self, q: QuoteEntry, n: int) -> None:
        r = q.resolution
        app = self.rt
        if n >= len(r.candidates):
            self.notify(
                f"only {len(r.candidates)} candidate{'s' * (len(r.candidates) != 1)}"
                if r.candidates
                else "no candidate: p opens the picker",
                severity="warning",
            )
            return
        if q.case not in app.doc:
            return
        case = app.doc.case(q.case)
        if q.index >= len(case.evidence) or norm(case.evidence[q.index]) != norm(r.quote):
            self.notify(f"{q.case}: the quote changed since: l checks again", severity="warning")
            return
        cid, _score, cdoc = r.candidates[n]
        chunk = app.corpus.get(cid) if app.corpus is not None else None
        writes = self._pick_writes(q, cid, cdoc or (chunk.doc if chunk is not None else None))
        if writes is None:
            self.notify(f"{cid} names no document: p picks its chunk instead", severity="warning")
            return
        if writes[0] == "doc":
            fields: dict[str, object] = {"expected_docs": list(with_doc(case, writes[1]))}
            msg = f"{q.case}: {writes[1]} added to expected_docs"
        else:
            kept: dict[str, str] = {}
            for i, quote in enumerate(case.evidence):
                new = writes[1] if i == q.index else quote
                kept.setdefault(norm(new), new)  # the sentence may already be quoted: once
            fields = {"evidence": list(kept.values())}
            msg = f"{q.case}: quote {q.index + 1} → “{writes[1]}”"
        app.stale.quote_edited(q.case)
        app.edit(UpdateCase(q.case, fields))
        self.notify(msg, markup=False)

    def action_later(self) -> None:
        """``L``: keep the quote under the cursor for later (nothing is written), and move on."""
        q = self._current_quote()
        if q is None:
            self.notify("L keeps a quote for later; a stale label waits by itself", severity="warning")
            return
        kept = self.rt.stale.keep_for_later(q)
        self.show_state()
        if kept:
            self.query_one(StaleList).action_cursor_down()
        self.notify(f"{q.case}: quote {q.index + 1} {'kept for later' if kept else 'to review again'}")

    def _quote_not_automatic(self) -> None:
        self.notify(
            "a quote is never resolved automatically: 1–9 picks a candidate, L keeps it for later",
            severity="warning",
        )

    def _all_clear(self) -> Text:
        """No stale label: say against which chunks, and how to check a re-chunking."""
        app = self.rt
        t = Text()
        t.append(f"Every label matches {self.checked_against()}.\n")
        if app.corpus_override is None:
            t.append(
                "That is the file the test set's corpus: names. If the documents were re-chunked, "
                "open the new chunks to check the labels against them:\n"
            )
            t.append(f"  ragtriage edit {app.testset_path.name} --corpus NEW.chunks.jsonl\n", style="bold")
        return t

    @staticmethod
    def _marked(text: str, remembered: str) -> Text:
        out = Text(text)
        if remembered:
            for start, end in remembered_spans(remembered, text):
                out.stylize(MARK, start, end)
        return out

    # -- actions -----------------------------------------------------------------------
    def action_page_detail(self, direction: int) -> None:
        detail = self.query_one("#stale-detail", VerticalScroll)
        if direction > 0:
            detail.scroll_page_down(animate=False)
        else:
            detail.scroll_page_up(animate=False)

    def action_review_stale(self) -> None:
        """``l`` means the stale labels on every screen: here, check them again."""
        self.rt.check_stale(everything=True)
        self.notify(f"checking the labels again against {self.checked_against()}")

    def action_accept_proposed(self) -> None:
        if self._current_quote() is not None:
            self._quote_not_automatic()
            return
        e = self._current()
        if e is None:
            return
        p = self._proposal(e)
        if p is not None and p.auto:
            self._replace(e, p.ids, expect_all=p.expect_all)
            return
        if p is not None and p.expect_all:
            how = f"a accepts {_fmt_ids(p)}, 1–{min(9, len(p.ids))} one candidate"
        elif e.candidates:
            how = "1–9 accepts a candidate" if len(e.candidates) > 1 else "1 accepts the candidate"
        else:
            how = "p opens the picker, u marks the case unanswerable"
        self.notify(f"{e.case}: {e.label} needs review, enter does not apply it: {how}", severity="warning")

    def action_fix_all(self) -> None:
        """Every automatic fix the engine settles together, as ``stale --fix`` writes them."""
        entries = self.entries
        targets = self.targets()
        fixes = [
            LabelFix(e, (targets[(e.case, e.label)],))
            for e in entries
            if (e.case, e.label) in targets and e.case in self.rt.doc
        ]
        if not fixes:
            self.notify("no automatic fix to apply: each label left needs a person (1–9, a, p, u)")
            return
        n, left = len(fixes), len(entries) - len(fixes)
        what = f"{n} automatic fix{'es' * (n != 1)}"
        self.rt.stale.resolved((f.entry.case, f.entry.label) for f in fixes)
        self.rt.edit(fix_edits(self.rt.doc, fixes, what))
        self.rt.stale.fixed_against = self.rt.corpus_path
        self.notify(
            f"applied {what} (one undo step: ctrl+z) · {left} label{'s' * (left != 1)} left for review"
            + (" · ctrl+s saves" if n else "")
        )

    def action_accept_all(self) -> None:
        if self._current_quote() is not None:
            self._quote_not_automatic()
            return
        e = self._current()
        if e is None:
            return
        p = self._proposal(e)
        if p is None:
            self.notify(
                "no single proposal: 1–9 accepts one candidate" if e.candidates else "no candidate: p picks",
                severity="warning",
            )
            return
        self._replace(e, p.ids, expect_all=p.expect_all)

    def action_accept(self, n: int) -> None:
        q = self._current_quote()
        if q is not None:
            self._accept_quote(q, n)
            return
        e = self._current()
        if e is None:
            return
        if n >= len(e.candidates):
            self.notify(
                "no such candidate: p opens the picker"
                if not e.candidates
                else f"only {len(e.candidates)} candidate{'s' * (len(e.candidates) != 1)}",
                severity="warning",
            )
            return
        self._replace(e, (e.candidates[n][0],))

    def _replace(self, e: StaleEntry, new_ids: tuple[str, ...], expect_all: bool = False) -> None:
        """In case ``e.case``, put ``new_ids`` where the stale label was (one undo step), unless
        an id is held back; the new ids' labels are recorded on save from the corpus checked against."""
        app = self.rt
        if e.case not in app.doc:
            return
        held = self._held_text(e, new_ids)
        if held is not None:
            self.notify(
                f"{e.case}: held back, as ragtriage stale --fix does: {held}", severity="warning", timeout=10
            )
            return
        what = " + ".join(new_ids) if expect_all else ", ".join(new_ids)
        app.stale.resolved([(e.case, e.label)])
        app.edit(fix_edits(app.doc, [LabelFix(e, new_ids, expect_all)], f"{e.case}: {e.label} → {what}"))
        app.stale.fixed_against = app.corpus_path
        expect = ", expect: all" if expect_all and len(new_ids) > 1 else ""
        self.notify(f"{e.case}: {e.label} → {what}{expect}")

    def _current_case(self) -> str | None:
        q = self._current_quote()
        if q is not None:
            return q.case
        e = self._current()
        return e.case if e is not None else None

    def action_pick(self) -> None:
        case = self._current_case()
        if case is not None:
            self.rt.open_picker(case)

    def action_unanswerable(self) -> None:
        case = self._current_case()
        if case is None:
            return
        app = self.rt
        app.stale.resolved((x.case, x.label) for x in self.entries if x.case == case)
        app.stale.quote_edited(case)
        gold = {"expected": None, "expected_docs": None, "evidence": None}  # an unanswerable case has none
        app.edit(UpdateCase(case, {"unanswerable": True, **gold}))
        self.notify(f"{case}: ∅ unanswerable", markup=False)

    def action_back(self) -> None:
        self.dismiss()
