"""Start a run from the app: system, k and the run file, checked before it starts."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Input, Label, Static

from ..base import AppModal
from ..shown import plain
from ..triage_run import RunRequest

SYSTEM_HINT = "builtin · results:FILE.jsonl · python:module:function · http://host/ask · openai:URL#model"


class RunDialog(AppModal[RunRequest | None]):
    """Dismisses with a :class:`RunRequest`, or None on escape."""

    FORM = True

    DEFAULT_CSS = """
    RunDialog { align: center middle; }
    RunDialog > Vertical {
        width: 84; max-width: 95%; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    RunDialog .dialog-title { text-style: bold; }
    RunDialog .dialog-hint { color: $text-muted; }
    RunDialog .field-error { color: $error; height: auto; }
    RunDialog Input { width: 1fr; }
    RunDialog Button { width: 100%; margin-top: 1; }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="run.cancel"),
        Binding("ctrl+s", "start", "Start", priority=True, id="run.start"),  # or enter in a field
    ]

    def __init__(self, system: str, k: int, out: Path, cases: int) -> None:
        super().__init__()
        self.system = system
        self.k = k
        self.out = out
        self.cases = cases

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                f"Run the test set ({self.cases} case{'s' * (self.cases != 1)})", classes="dialog-title"
            )
            yield Label("system", classes="dialog-hint")
            yield Input(self.system, id="run-system", compact=True)
            yield Static(SYSTEM_HINT, classes="dialog-hint")
            yield Label("k  (the cut-off: how many chunks the generator sees)", classes="dialog-hint")
            yield Input(str(self.k), id="run-k", compact=True, type="integer")
            yield Label("run file", classes="dialog-hint")
            yield Input(str(self.out), id="run-out", compact=True)
            yield Static("", id="run-error", classes="field-error", markup=False)
            yield Button("start (enter)", id="run-start", compact=True)
            yield Static(
                "Results stream into the table; c cancels and keeps what finished.", classes="dialog-hint"
            )

    def on_mount(self) -> None:
        self.query_one("#run-system", Input).focus()

    def request(self) -> RunRequest | None:
        system = self.query_one("#run-system", Input).value.strip()
        k_text = self.query_one("#run-k", Input).value.strip()
        out = self.query_one("#run-out", Input).value.strip()
        err = self.query_one("#run-error", Static)
        if not system:
            err.update("system: name one (e.g. builtin)")
            return None
        try:
            k = int(k_text)
        except ValueError:
            k = 0
        if k < 1:
            err.update(plain(f"k: a whole number of 1 or more, not {k_text!r}"))
            return None
        if not out:
            err.update("run file: give a path")
            return None
        p = Path(out)
        if p.is_dir():
            err.update("run file: is a folder")
            return None
        err.update("")
        return RunRequest(system, k, p)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_start()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_start()

    def action_start(self) -> None:
        req = self.request()
        if req is not None:
            self.dismiss(req)

    def action_apply(self) -> None:
        """ctrl+s in a dialog applies it (the app routes its save key here)."""
        self.action_start()

    def action_cancel(self) -> None:
        self.dismiss(None)
