"""Stale labels: what a label said, what the corpus has now, one key to resolve."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...core.staleness import StaleEntry
from ..base import AppScreen, detail_bindings
from ..widgets.footer import Footer  # whole keys that fit, the rest in ?

STATUS_HELP = {
    "moved": "the id is gone; the same text is now under another id",
    "changed": "the id still exists but its text is different (a reused id)",
    "merged": "the remembered text now lies inside a larger chunk",
    "split": "the remembered text is now spread over several chunks",
    "missing": "nothing in the corpus holds the remembered text",
    "unknown": "no remembered text, and the id is not in the corpus",
}


class StaleList(OptionList):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="stale.down"),
        Binding("k", "cursor_up", "Up", show=False, id="stale.up"),
    ]


class StaleScreen(AppScreen[None]):
    """Every stale label, with the remembered text and the candidates side by side."""

    HELP_TITLE = "Stale labels"
    HELP_INTRO = """
A label is stale when the corpus no longer holds what the chunk said when it
was labelled (staleness.md). For the selected label: enter accepts the
proposal (the first candidate; for a split, all of them with expect: all),
1–9 accept one candidate, p opens the chunk picker, u marks the case
unanswerable. Changes are saved with ctrl+s like every edit.
"""

    DETAIL = "#stale-detail"

    BINDINGS = [
        Binding("escape", "back", "Back", id="stale.back"),
        Binding(
            "enter",
            "accept_proposed",
            "Accept",
            priority=True,
            id="stale.accept",
            tooltip="accept the proposal: the first candidate (a split: all of them, with expect: all)",
        ),
        Binding("1", "accept(0)", "Accept candidate n", key_display="1-9", id="stale.accept1"),
        Binding("2", "accept(1)", "Accept candidate 2", show=False, id="stale.accept2"),
        Binding("3", "accept(2)", "Accept candidate 3", show=False, id="stale.accept3"),
        Binding("4", "accept(3)", "Accept candidate 4", show=False, id="stale.accept4"),
        Binding("5", "accept(4)", "Accept candidate 5", show=False, id="stale.accept5"),
        Binding("6", "accept(5)", "Accept candidate 6", show=False, id="stale.accept6"),
        Binding("7", "accept(6)", "Accept candidate 7", show=False, id="stale.accept7"),
        Binding("8", "accept(7)", "Accept candidate 8", show=False, id="stale.accept8"),
        Binding("9", "accept(8)", "Accept candidate 9", show=False, id="stale.accept9"),
        Binding("p", "pick", "Pick chunks", id="stale.pick"),
        Binding("u", "unanswerable", "Unanswerable", id="stale.unanswerable"),
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

    def show_state(self) -> None:
        app = self.rt
        status = self.query_one("#stale-status", Static)
        lst = self.query_one(StaleList)
        if app.stale_report is None:
            status.update(app.corpus_error or "checking labels against the corpus…")
            lst.clear_options()
            return
        entries = self.entries
        keep = lst.highlighted
        lst.set_options(
            Option(
                Text.assemble(
                    ("⚠ ", "bold"),
                    (e.case, "bold"),
                    f"\n   {e.label} · {e.status}",
                    no_wrap=True,  # a long id is cut with …, never broken mid-word
                    overflow="ellipsis",
                ),
                id=str(i),
            )
            for i, e in enumerate(entries)
        )
        if entries:
            lst.highlighted = min(keep or 0, len(entries) - 1)
            status.update(
                f"⚠ {len(entries)} stale label{'s' * (len(entries) != 1)} · "
                "enter accept · 1–9 one candidate · p pick · u unanswerable"
            )
        else:
            status.update("✓ no stale label: every label matches the corpus")
        self._show()

    def _current(self) -> StaleEntry | None:
        lst = self.query_one(StaleList)
        entries = self.entries
        if lst.highlighted is None or not entries or lst.highlighted >= len(entries):
            return None
        return entries[lst.highlighted]

    @on(OptionList.OptionHighlighted, "#stale-list")
    def _moved(self, event: OptionList.OptionHighlighted) -> None:
        self._show()

    @on(OptionList.OptionSelected, "#stale-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.action_accept_proposed()

    def action_accept_proposed(self) -> None:
        e = self._current()
        if e is None:
            return
        if e.status == "split" and len(e.candidates) > 1:
            self._replace(e, [cid for cid, _ in e.candidates], expect=e.expect or "all")
        else:
            self.action_accept(0)

    def _show(self) -> None:
        e = self._current()
        box = self.query_one("#stale-text", Static)
        if e is None:
            box.update("")
            return
        app = self.rt
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
        t.append(f"\n⚠ {e.label} · {e.status}", style="bold")
        t.append(f" — {STATUS_HELP.get(e.status, '')}\n", style="dim")
        label = doc.labels.get(e.label)
        t.append("\nremembered text\n", style="dim")
        t.append((label.text if label and label.text else "(none recorded)") + "\n", style="italic")
        now = app.corpus.get(e.label) if app.corpus is not None else None
        if now is not None:
            t.append(f"\nnow under {e.label}\n", style="dim")
            t.append(now.text + "\n")
        t.append("\ncandidates\n", style="dim")
        if not e.candidates:
            t.append("  none found: p opens the picker, u marks the case unanswerable\n", style="italic")
        for i, (cid, score) in enumerate(e.candidates[:9], 1):
            chunk = app.corpus.get(cid) if app.corpus is not None else None
            t.append(f"[{i}] ", style="bold")
            t.append(cid, style="bold")
            t.append(f"  {score:.2f}", style="dim")
            if chunk is not None and chunk.doc:
                t.append(f"  {chunk.doc}", style="italic")
            t.append("\n    " + (chunk.text if chunk is not None else "(not in the corpus)") + "\n")
        box.update(t)

    # -- actions -----------------------------------------------------------------------
    def _resolved(self, e: StaleEntry) -> None:
        """Drop the entry at once (the next full check runs after the edit)."""
        app = self.rt
        app.set_stale_report(
            [x for x in app.stale_report or () if not (x.case == e.case and x.label == e.label)]
        )

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
        self._replace(e, [e.candidates[n][0]])

    def _replace(self, e: StaleEntry, new_ids: list[str], expect: str | None = None) -> None:
        """In case ``e.case``, put ``new_ids`` where the stale label was."""
        doc = self.rt.doc
        try:
            case = doc.case(e.case)
        except KeyError:
            return
        expected: list[str] = []
        for cid in case.expected:
            expected.extend(new_ids if cid == e.label else [cid])
        expected = list(dict.fromkeys(expected))  # a candidate may already be expected
        fields: dict[str, object] = {"expected": expected or None}
        if expect == "all" and len(expected) > 1:
            fields["expect"] = "all"
        self._resolved(e)
        self.rt.edit("update_case", e.case, **fields)  # the old label is pruned on save
        self.notify(f"{e.case}: {e.label} → {', '.join(new_ids)}")

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
