"""Stale labels: what a label said, what the corpus has now, one key to resolve.

Every proposal shown and applied here is the engine's (:func:`..data.proposal`): ``enter``
writes for an automatic label exactly what ``ragtriage stale --fix`` writes, and never
applies a label the engine leaves for review; a person chooses (``1``–``9`` one candidate,
``a`` the proposal of a split with ``expect: all``)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..base import AppScreen, detail_bindings
from ..data import Proposal, StaleEntry, held_back, proposal, remembered_spans
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


class StaleList(OptionList):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="stale.down"),
        Binding("k", "cursor_up", "Up", show=False, id="stale.up"),
    ]


def _fmt_ids(p: Proposal) -> str:
    ids = " + ".join(p.ids) if p.expect_all else ", ".join(p.ids)
    return ids + (", expect: all" if p.expect_all else "")


class StaleScreen(AppScreen[None]):
    """Every stale label, with the remembered text and the candidates, one under the other."""

    HELP_TITLE = "Stale labels"
    HELP_INTRO = """
A label is stale when the corpus no longer holds what the chunk said when it
was labelled (staleness.md). Each row says auto (ragtriage stale --fix would
fix it by itself) or review (a person decides). enter applies an automatic
fix exactly as --fix writes it; a review label is applied only by choosing:
1–9 one candidate, a the whole proposal of a split (expect: all). p opens the
chunk picker, u marks the case unanswerable, r checks again, pgup/pgdn (or
tab, then the arrows) scroll the candidates. An id another case still expects
with its old text is held back, as --fix holds it back. Changes are saved
with ctrl+s; the test set's corpus: then names the chunks file checked against.
"""

    DETAIL = "#stale-detail"

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
        Binding("1", "accept(0)", "Candidate", key_display="1-9", id="stale.accept1"),
        Binding("2", "accept(1)", "Accept candidate 2", show=False, id="stale.accept2"),
        Binding("3", "accept(2)", "Accept candidate 3", show=False, id="stale.accept3"),
        Binding("4", "accept(3)", "Accept candidate 4", show=False, id="stale.accept4"),
        Binding("5", "accept(4)", "Accept candidate 5", show=False, id="stale.accept5"),
        Binding("6", "accept(5)", "Accept candidate 6", show=False, id="stale.accept6"),
        Binding("7", "accept(6)", "Accept candidate 7", show=False, id="stale.accept7"),
        Binding("8", "accept(7)", "Accept candidate 8", show=False, id="stale.accept8"),
        Binding("9", "accept(8)", "Accept candidate 9", show=False, id="stale.accept9"),
        Binding("a", "accept_all", "Proposal", id="stale.accept_all", tooltip="accept the proposal shown"),
        Binding("pagedown", "page_detail(1)", "Scroll", key_display="pgdn", priority=True, id="stale.pgdn"),
        Binding("pageup", "page_detail(-1)", "Scroll up", show=False, priority=True, id="stale.pgup"),
        Binding("l", "review_stale", "Re-check", id="stale.recheck"),
        Binding("p", "pick", "Pick", id="stale.pick"),
        Binding("u", "unanswerable", "Unanswerable", id="stale.unanswerable"),
        Binding("escape", "back", "Back", id="stale.back"),
        *detail_bindings("stale"),
    ]

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
        return list(self.rt.stale_report or ())

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
        if app.stale_report is None:
            status.update(app.corpus_error or f"checking labels against {self.checked_against()}…")
            lst.clear_options()
            return
        entries = self.entries
        keep = lst.highlighted
        lst.set_options(self._row(e, i) for i, e in enumerate(entries))
        against = self.checked_against()
        if entries:
            lst.highlighted = min(keep or 0, len(entries) - 1)
            n_auto = sum(1 for e in entries if e.fix == "auto")
            status.update(
                f"⚠ {len(entries)} stale ({n_auto} auto, {len(entries) - n_auto} review) · "
                f"checked against {against}"
            )
        else:
            msg = f"✓ no stale label against {against}"
            if app.corpus_override is None:
                msg += " · re-chunked? open with --corpus NEW.chunks.jsonl"
            status.update(msg)
        self._show()

    @staticmethod
    def _row(e: StaleEntry, i: int) -> Option:
        """Two lines at every width (auto/review and the case; the label and its status): a
        long id is cut with …, never broken mid-word."""
        auto = e.fix == "auto"
        t = Text(no_wrap=True, overflow="ellipsis", end="")
        t.append("auto  " if auto else "review", style="bold green" if auto else "bold yellow")
        t.append("  ")
        t.append(e.case, style="bold")
        t.append("\n        ")
        t.append(f"{e.label} · {e.status}", style="dim")
        return Option(t, id=str(i))

    def _current(self) -> StaleEntry | None:
        lst = self.query_one(StaleList)
        entries = self.entries
        if lst.highlighted is None or not entries or lst.highlighted >= len(entries):
            return None
        return entries[lst.highlighted]

    @on(OptionList.OptionHighlighted, "#stale-list")
    def _moved(self, event: OptionList.OptionHighlighted) -> None:
        self._show()
        self.query_one("#stale-detail", VerticalScroll).scroll_home(animate=False)

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

    def _show(self) -> None:
        e = self._current()
        box = self.query_one("#stale-text", Static)
        app = self.rt
        if e is None:
            box.update(self._all_clear() if app.stale_report is not None and app.loaded else "")
            return
        if not app.loaded:
            return
        doc = app.doc
        t = Text()
        try:
            case = doc.case(e.case)
            t.append(f"{case.id}: ", style="bold")
            t.append(case.question + "\n")
        except KeyError:
            pass
        t.append(f"⚠ {e.label} · {e.status}", style="bold")
        t.append(f" — {STATUS_HELP.get(e.status, '')}\n", style="dim")
        p = proposal(self.entries, e)
        held = self._held_text(e, p.ids) if p is not None else None
        if p is not None and p.auto and held is None:
            t.append("auto: ", style="bold green")
            t.append(f"enter writes {_fmt_ids(p)} (as ragtriage stale --fix)\n")
        else:
            t.append("review: ", style="bold yellow")
            if p is not None and p.expect_all:
                t.append(f"a accepts {_fmt_ids(p)}; 1–{min(9, len(p.ids))} one candidate\n")
            elif e.candidates:
                n = min(9, len(e.candidates))
                t.append(f"choose: {'1' if n == 1 else f'1–{n}'} accepts a candidate\n")
            else:
                t.append("no candidate: p opens the picker, u marks the case unanswerable\n")
        if held is not None:
            t.append("held back: ", style="bold red")
            t.append(held + "\n")
        label = doc.labels.get(e.label)
        remembered = label.text if label and label.text else ""
        t.append("\nremembered text\n", style="dim")
        t.append((remembered or "(none recorded)") + "\n", style="italic")
        if e.candidates:
            t.append("\ncandidates (highlighted: the remembered text)\n", style="dim")
        for i, (cid, score) in enumerate(e.candidates[:9], 1):
            chunk = app.corpus.get(cid) if app.corpus is not None else None
            t.append(f"[{i}] ", style="bold")
            t.append(cid, style="bold")
            t.append(f"  {score:.2f}", style="dim")
            if chunk is not None and chunk.doc:
                t.append(f"  {chunk.doc}", style="italic")
            t.append("\n")
            t.append_text(
                self._marked(chunk.text if chunk is not None else "(not in the corpus)", remembered)
            )
            t.append("\n")
        now = app.corpus.get(e.label) if app.corpus is not None else None
        if now is not None and e.label not in {cid for cid, _ in e.candidates}:
            t.append(f"\nnow under {e.label}\n", style="dim")
            t.append(now.text + "\n", style="dim")
        box.update(t)

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
        self.rt.check_stale()
        self.notify(f"checking the labels again against {self.checked_against()}")

    def _resolved(self, e: StaleEntry) -> None:
        """Drop the entry at once (the next full check runs after the edit)."""
        app = self.rt
        app.set_stale_report(
            [x for x in app.stale_report or () if not (x.case == e.case and x.label == e.label)]
        )

    def action_accept_proposed(self) -> None:
        e = self._current()
        if e is None:
            return
        p = proposal(self.entries, e)
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

    def action_accept_all(self) -> None:
        e = self._current()
        if e is None:
            return
        p = proposal(self.entries, e)
        if p is None:
            self.notify(
                "no single proposal: 1–9 accepts one candidate" if e.candidates else "no candidate: p picks",
                severity="warning",
            )
            return
        self._replace(e, p.ids, expect_all=p.expect_all)

    def action_accept(self, n: int) -> None:
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
        """In case ``e.case``, put ``new_ids`` where the stale label was, unless an id is
        held back; the new ids' labels are recorded from the corpus checked against."""
        app = self.rt
        doc = app.doc
        try:
            case = doc.case(e.case)
        except KeyError:
            return
        held = self._held_text(e, new_ids)
        if held is not None:
            self.notify(
                f"{e.case}: held back, as ragtriage stale --fix does: {held}", severity="warning", timeout=10
            )
            return
        expected: list[str] = []
        for cid in case.expected:
            expected.extend(new_ids if cid == e.label else [cid])
        expected = list(dict.fromkeys(expected))  # a candidate may already be expected
        others = {c for other in doc.cases if other.id != e.case for c in other.expected}
        for cid in new_ids:
            # an old text under this id that no other case needs (or the label's own id, whose
            # verdict every case shares): forget it, the save records the chunk's text now
            if cid in doc.labels and (cid == e.label or cid not in others):
                app.edit("set_label", cid, None)
        fields: dict[str, object] = {"expected": expected or None}
        if expect_all and len(expected) > 1:
            fields["expect"] = "all"
        self._resolved(e)
        app.edit("update_case", e.case, **fields)  # the old label is pruned on save
        app.stale_fixed_against = app.corpus_path
        what = " + ".join(new_ids) if expect_all else ", ".join(new_ids)
        self.notify(f"{e.case}: {e.label} → {what}" + (", expect: all" if "expect" in fields else ""))

    def action_pick(self) -> None:
        e = self._current()
        if e is not None:
            self.rt.open_picker(e.case)

    def action_unanswerable(self) -> None:
        e = self._current()
        if e is None:
            return
        self._resolved(e)
        for x in list(self.rt.stale_report or ()):
            if x.case == e.case:
                self._resolved(x)
        self.rt.edit("update_case", e.case, unanswerable=True, expected=None)
        self.notify(f"{e.case}: ∅ unanswerable")

    def action_back(self) -> None:
        self.dismiss()
