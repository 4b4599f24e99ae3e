"""Export from the app: a format (or a CI report) and a path, checked before anything is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from ...core.errors import InputError
from ..base import AppModal
from ..export import CHOICES, REPORTS, default_path, guard
from ..shown import plain, shown_line


@dataclass(frozen=True)
class ExportRequest:
    kind: str
    path: Path


class ExportDialog(AppModal[ExportRequest | None]):
    """Dismisses with an :class:`ExportRequest`, or None on escape."""

    FORM = True

    DEFAULT_CSS = """
    ExportDialog { align: center middle; }
    ExportDialog > Vertical {
        width: 76; max-width: 95%; height: auto; max-height: 95%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    ExportDialog .dialog-title { text-style: bold; }
    ExportDialog .dialog-hint { color: $text-muted; }
    ExportDialog .field-error { color: $error; height: auto; }
    ExportDialog OptionList { height: auto; max-height: 10; border: none; padding: 0; }
    ExportDialog Input { width: 1fr; }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="export.cancel"),
        Binding("ctrl+s", "apply", "Export", priority=True, id="export.apply"),  # or enter
    ]

    def __init__(self, testset: Path, inputs: list[Path | None], run: Path | None, cases: int) -> None:
        super().__init__()
        self.testset = testset
        self.inputs = inputs
        self.run = run
        self.cases = cases
        self.kind = CHOICES[0][0]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                plain(f"Export {shown_line(self.testset.name)} ({self.cases} case{'s' * (self.cases != 1)})"),
                classes="dialog-title",
            )
            options = []
            for name, label in CHOICES:
                if name in REPORTS:
                    label += f" of {shown_line(self.run.name)}" if self.run else " (needs a run: ctrl+r)"
                options.append(Option(plain(label), id=name))
            yield OptionList(*options, id="export-kind")
            yield Label("file", classes="dialog-hint")
            yield Input(str(default_path(self.testset, self.kind)), id="export-path", compact=True)
            yield Static("", id="export-error", classes="field-error", markup=False)
            yield Static(
                "↑↓ choose · tab the file · enter exports · escape cancels. "
                "The test set as it is here, unsaved changes included; never over an input.",
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        kinds = self.query_one("#export-kind", OptionList)
        kinds.highlighted = 0
        kinds.focus()

    @on(OptionList.OptionHighlighted, "#export-kind")
    def _chosen(self, event: OptionList.OptionHighlighted) -> None:
        box = self.query_one("#export-path", Input)
        new = event.option.id or self.kind
        if box.value.strip() in ("", str(default_path(self.testset, self.kind))):
            box.value = str(default_path(self.testset, new))  # a path typed by hand stays
        self.kind = new
        self.query_one("#export-error", Static).update("")

    @on(OptionList.OptionSelected, "#export-kind")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_apply()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_apply()

    def request(self) -> ExportRequest | None:
        err = self.query_one("#export-error", Static)
        if self.kind in REPORTS and self.run is None:
            err.update("a CI report needs a run: escape, then ctrl+r runs the test set")
            return None
        value = self.query_one("#export-path", Input).value.strip()
        if not value:
            err.update("file: give a path")
            return None
        path = Path(value)
        try:
            guard(path, [*self.inputs, self.run])
        except InputError as e:
            err.update(plain("; ".join(str(p) for p in e.problems[:2])))
            return None
        err.update("")
        return ExportRequest(self.kind, path)

    def action_apply(self) -> None:
        req = self.request()
        if req is not None:
            self.dismiss(req)

    def action_cancel(self) -> None:
        self.dismiss(None)
