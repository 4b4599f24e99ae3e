"""Typed modal dialogs of the Triage screen: pick a retrieved chunk, edit the
must-contain strings, write a note. Each dismisses with its value, or None on
escape."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from ..base import AppModal
from ..shown import plain, shown_line

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 90; max-width: 95%; height: auto; max-height: 90%;
    border: thick $primary; background: $surface; padding: 1 2;
}}
{name} .dialog-title {{ text-style: bold; }}
{name} .dialog-hint {{ color: $text-muted; }}
"""


class ChunkChoice(AppModal[str | None]):
    """Choose one retrieved chunk: 1–9, or j/k and enter."""

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="ChunkChoice")
        + """
    ChunkChoice OptionList { height: auto; max-height: 20; }
    """
    )

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="choice.cancel"),
        Binding("j", "down", "Down", show=False, id="choice.down"),
        Binding("k", "up", "Up", show=False, id="choice.up"),
    ]

    def __init__(self, title: str, chunks: list[tuple[str, str]], hint: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.chunks = chunks  # (chunk id, description)
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(plain(self.title_text), classes="dialog-title")
            if self.hint:
                yield Static(plain(self.hint), classes="dialog-hint")
            options = []
            for n, (cid, desc) in enumerate(self.chunks, 1):
                t = Text(f"{n if n < 10 else ' '} ", style="bold")
                t.append(shown_line(cid), style="bold")
                if desc:
                    t.append(f"  {shown_line(desc)}")
                options.append(Option(t, id=cid))
            yield OptionList(*options, id="chunk-options")
            yield Static("1–9 or enter: choose · escape: cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        ol.focus()
        if self.chunks:
            ol.highlighted = 0

    def on_key(self, event) -> None:
        if event.character and event.character.isdigit() and event.character != "0":
            n = int(event.character)
            if n <= len(self.chunks):
                event.stop()
                self.dismiss(self.chunks[n - 1][0])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_down(self) -> None:
        self.query_one(OptionList).action_cursor_down()

    def action_up(self) -> None:
        self.query_one(OptionList).action_cursor_up()

    def action_cancel(self) -> None:
        self.dismiss(None)


class MustContainDialog(AppModal[list[str] | None]):
    """The must-contain strings, one per line; ctrl+s (or the button) applies."""

    FORM = True

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="MustContainDialog")
        + """
    MustContainDialog TextArea { height: 8; }
    MustContainDialog Button { width: 100%; }
    """
    )

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="must.cancel"),
        # ctrl+s applies a dialog's form, as it saves on a screen (enter is a new line here)
        Binding("ctrl+s", "apply", "Apply", priority=True, id="must.apply"),
    ]

    def __init__(self, case_id: str, strings: list[str], answer: str | None = None) -> None:
        super().__init__()
        self.case_id = case_id
        self.strings = strings
        self.answer = answer

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(plain(f"Must contain — {shown_line(self.case_id)}"), classes="dialog-title")
            yield Static(
                "One string per line; each must appear, exactly, in a correct answer.", classes="dialog-hint"
            )
            if self.answer:
                yield Static(Text("answer: ", style="dim") + plain(" ".join(self.answer.split())))
            yield TextArea("\n".join(self.strings), id="must-text", soft_wrap=True)
            yield Button("apply (ctrl+s)", id="must-apply", compact=True)
            yield Static("escape: cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_apply()

    def action_apply(self) -> None:
        text = self.query_one(TextArea).text
        self.dismiss([line.strip() for line in text.split("\n") if line.strip()])

    def action_cancel(self) -> None:
        self.dismiss(None)


class NoteDialog(AppModal[str | None]):
    """A reviewer's note on one case of the run (empty removes it)."""

    FORM = True

    DEFAULT_CSS = DIALOG_CSS.format(name="NoteDialog")

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="note.cancel")]

    def __init__(self, case_id: str, note: str) -> None:
        super().__init__()
        self.case_id = case_id
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(plain(f"Note — {shown_line(self.case_id)}"), classes="dialog-title")
            yield Static(
                "Kept beside the test set (its .notes.jsonl) and shown on every later run of "
                "this case. Empty removes it.",
                classes="dialog-hint",
            )
            yield Input(self.note, placeholder="what you found", id="note-input")
            yield Static("enter: keep · escape: cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_apply(self) -> None:
        """ctrl+s applies, as enter does (the app routes its save key to a dialog's form)."""
        self.dismiss(self.query_one(Input).value)

    def action_cancel(self) -> None:
        self.dismiss(None)
