"""Small typed modal dialogs: confirm, choose, help."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Input, Static

from ...core.escape import inline
from ..base import AppModal, AppScreen
from ..keys import KEY_TABLE, help_intro


class Choice(AppModal[str | None]):
    """A question with a few answers, each on one key; escape answers None.

    ``choices`` is a list of ``(key, value, label)``; the first is the default on enter."""

    DEFAULT_CSS = """
    Choice { align: center middle; }
    Choice > Vertical {
        width: 64; max-width: 95%; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    Choice #question { margin-bottom: 1; }
    Choice Button { width: 100%; margin-top: 0; }
    """

    BINDINGS = [Binding("escape", "answer(None)", "Cancel", id="dialog.cancel")]

    def __init__(self, question: str, choices: list[tuple[str, str, str]], *, title: str = "") -> None:
        super().__init__()
        self.question = question
        self.choices = choices
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical():
            if self.title_text:
                yield Static(Text(self.title_text, style="bold"))
            yield Static(Text(self.question), id="question")
            for key, value, label in self.choices:
                yield Button(f"{key}  {label}", id=f"choice-{value}", compact=True)

    def on_mount(self) -> None:
        self.query(Button).first().focus()

    def on_key(self, event) -> None:
        for key, value, _label in self.choices:
            if event.key == key or event.character == key:
                event.stop()
                self.dismiss(value)
                return

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "").removeprefix("choice-"))

    def action_answer(self, value: str | None) -> None:
        self.dismiss(value)


def confirm(question: str, yes: str = "yes", *, title: str = "") -> Choice:
    """A yes/no question: dismisses with "yes" or None."""
    return Choice(question, [("y", "yes", yes), ("n", "no", "no, go back")], title=title)


def recovery_question(
    edits: int,
    base_changed: bool,
    what: list[str] | None = None,
    *,
    source: str = "an earlier session",
    which: tuple[int, int] = (1, 1),
) -> Choice:
    """Restore or discard the unsaved edits a crash left behind (escape: ask next time);
    ``what`` lists them in words (the dialog shows it as text, never as markup), ``source``
    says which window left them, ``which`` is (this one, of how many) when several did."""
    listed = "".join(f"\n  · {inline(line)}" for line in what or ())
    note = (
        "\nThe test set changed on disk since then; the edits are re-applied on top of it."
        if base_changed
        else ""
    )
    n, of = which
    return Choice(
        f"Unsaved edits from {inline(source)} were found ({edits} edit{'s' * (edits != 1)}):{listed}{note}",
        [("r", "restore", "restore them"), ("d", "discard", "discard them")],
        title="Recover unsaved edits?" + (f" ({n} of {of})" if of > 1 else ""),
    )


def conflict_question(name: str) -> Choice:
    """The file changed on disk since it was opened: reload, overwrite or cancel."""
    return Choice(
        f"{name} changed on disk since it was opened; it was not overwritten.",
        [
            ("r", "reload", "reload it from disk and re-apply my edits"),
            ("o", "overwrite", "overwrite it with my version"),
            ("escape", "cancel", "cancel (keep editing, save later)"),
        ],
        title="File changed on disk",
    )


def quit_question() -> Choice:
    """Quitting with unsaved changes: save, discard or cancel."""
    return Choice(
        "There are unsaved changes.",
        [
            ("s", "save", "save and quit"),
            ("d", "discard", "quit without saving (discard)"),
            ("escape", "cancel", "cancel, keep editing"),
        ],
        title="Quit?",
    )


class GraderDialog(AppModal[str | None]):
    """Who grades: asked once, kept in the user's settings (``grader`` in
    :mod:`ragtriage.core.userconfig`); enter keeps it, escape cancels the grade."""

    FORM = True

    DEFAULT_CSS = """
    GraderDialog { align: center middle; }
    GraderDialog > Vertical {
        width: 64; max-width: 95%; height: auto;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    GraderDialog .dialog-hint { color: $text-muted; }
    GraderDialog .field-error { color: $error; height: auto; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="grader.cancel")]

    def __init__(self, suggested: str, where: str) -> None:
        super().__init__()
        self.suggested = suggested
        self.where = where

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Your name for grades and review notes", style="bold"))
            yield Static(
                Text(
                    f"Written as “by” on every grade and note. Asked once: kept in {self.where} "
                    "($RAGTRIAGE_GRADER overrides it)."
                ),
                classes="dialog-hint",
            )
            yield Input(self.suggested, id="grader-name")
            yield Static("", id="grader-error", classes="field-error")
            yield Static(Text("enter: keep · escape: cancel"), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_apply()

    def action_apply(self) -> None:
        name = " ".join(self.query_one(Input).value.split())
        if not name:
            self.query_one("#grader-error", Static).update(
                Text("a name, please (it is written on every grade)")
            )
            return
        self.dismiss(name)

    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(AppModal[None]):
    """Every key of the screen below, built from its bindings."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 72; max-width: 95%; height: 90%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("escape,q,question_mark,f1", "dismiss_help", "Close help", id="help.close"),
    ]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self._text(), id="help-text")

    def _text(self) -> Text:
        app = self.app
        out = Text()
        under = self.under
        title = (under.HELP_TITLE if isinstance(under, AppScreen) else "") or type(under).__name__
        out.append(f"{title} — keys\n\n", style="bold")
        intro = under.HELP_INTRO if isinstance(under, AppScreen) else ""
        if intro:
            out.append_text(help_intro(intro))
        seen: dict[str, list[str]] = {}
        order: list[str] = []
        tips: dict[str, str] = {}
        for _key, active in self.under.active_bindings.items():
            b = active.binding
            if not b.description or b.system or b.id is None:
                continue
            if b.description not in seen:
                seen[b.description] = []
                order.append(b.description)
                tips[b.description] = b.tooltip
            disp = app.get_key_display(b)
            if disp not in seen[b.description]:
                seen[b.description].append(disp)
        for desc in order:
            keys = " / ".join(seen[desc])
            out.append(f"  {keys:<14}", style="bold")
            out.append(desc)
            if tips.get(desc):
                out.append(f" — {tips[desc]}", style="dim")
            out.append("\n")
        out.append("\n  ctrl+p                command palette: every action by name\n")
        out.append("  escape / q / ?        close this help\n")
        out.append("\nOne key, one meaning, on every screen\n\n", style="bold")
        for keys, what, where in KEY_TABLE:
            out.append(f"  {keys:<16}", style="bold")
            out.append(what)
            out.append(f" · {where}\n", style="dim")
        return out

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
