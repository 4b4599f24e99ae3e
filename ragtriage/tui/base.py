"""The typed way a screen reaches the app, and hears about its state.

``Screen.app`` is typed as ``App[Any]``, so ``self.app.session`` is invisible to
mypy and a typo is found only at run time. Every ragtriage screen derives from
:class:`AppScreen` (or :class:`AppModal`) and reaches the app through
``self.rt``, which is the :class:`~ragtriage.tui.app.RagtriageApp` itself.

The app announces every change with a message (:mod:`ragtriage.tui.messages`):
an :class:`AppScreen` turns :class:`DocumentChanged` into :meth:`document_changed`,
:class:`RunChanged` into :meth:`run_changed` and :class:`AppStateChanged` into
:meth:`show_state`, which a screen overrides to redraw what changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

from textual import on
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.filter import LineFilter
from textual.screen import ModalScreen, Screen
from textual.strip import Strip

from .messages import AppStateChanged, DocumentChanged, RunChanged
from .shown import UNSAFE, masked

if TYPE_CHECKING:
    from rich.segment import Segment
    from textual.color import Color

    from .app import RagtriageApp
    from .run_session import RunEvent

R = TypeVar("R")


class ControlsShown(LineFilter):
    """The last guard between data and the terminal: a control, C1 or bidi character
    left in a painted line (what an input field holds, a table cell) becomes one visible
    glyph (``␛``), so no escape sequence in a file is ever obeyed. Such a character takes
    no cell and its glyph one: the line is cut back to its width."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not UNSAFE.search("".join(seg.text for seg in segments)):
            return segments
        width = Strip(segments).cell_length
        out = [
            seg if seg.control or not UNSAFE.search(seg.text) else seg._replace(text=masked(seg.text))
            for seg in segments
        ]
        return list(Strip(out).crop(0, width))


def detail_bindings(screen: str) -> list[Binding]:
    """J / K scroll a screen's detail pane from the list: at 80x24 the pane shows only
    its first lines (the answer, must-contain, the candidates) and the list keeps focus."""
    return [
        Binding("J", "scroll_detail(3)", "Scroll detail down", show=False, id=f"{screen}.detail_down"),
        Binding("K", "scroll_detail(-3)", "Scroll detail up", show=False, id=f"{screen}.detail_up"),
    ]


class AppScreen(Screen[R]):
    """A full screen of the ragtriage app.

    ``HELP_TITLE`` and ``HELP_INTRO`` are what ``?`` shows above the keys; a key named in
    the intro is written in braces (``{l} checks again``): help shows it bold, and a test
    checks that every key named so is bound on the screen."""

    DETAIL: str | None = None  # the selector of the screen's scrollable detail pane
    HELP_TITLE = ""
    HELP_INTRO = ""

    def action_scroll_detail(self, lines: int) -> None:
        if self.DETAIL is None:
            return
        pane = self.query_one(self.DETAIL, ScrollableContainer)
        pane.scroll_relative(y=lines, animate=False)

    def detail_home(self) -> None:
        """Show the top of the detail pane (a new case: its id and reason first)."""
        if self.DETAIL is not None:
            self.query_one(self.DETAIL, ScrollableContainer).scroll_home(animate=False)

    @property
    def rt(self) -> RagtriageApp:
        return cast("RagtriageApp", self.app)

    def show_state(self) -> None:
        """Show the app's current state (called on mount, on resume and after each announcement)."""

    def commit(self) -> bool:
        """Apply what was typed into the document; False while a field has an error.

        The app asks every screen before a save, an undo and a quit."""
        return True

    @on(DocumentChanged)
    def _document_changed(self, event: DocumentChanged) -> None:
        if self.is_mounted:
            self.document_changed(event)

    @on(RunChanged)
    def _run_changed(self, event: RunChanged) -> None:
        if self.is_mounted:
            self.run_changed(event.event)

    @on(AppStateChanged)
    def _app_state_changed(self, event: AppStateChanged) -> None:
        if self.is_mounted:
            self.show_state()

    def document_changed(self, event: DocumentChanged) -> None:
        """The test set changed; by default, show the new state."""
        self.show_state()

    def run_changed(self, event: RunEvent) -> None:
        """The open run changed (the screens that show it override this)."""


class AppModal(ModalScreen[R]):
    """A dialog of the ragtriage app. In a form (``FORM = True``), ``ctrl+s`` — the
    app's save key — calls :meth:`action_apply`; in any other dialog it saves the test set."""

    FORM = False

    @property
    def rt(self) -> RagtriageApp:
        return cast("RagtriageApp", self.app)

    def action_apply(self) -> None:
        """ctrl+s in a form: apply what it holds (a form overrides this)."""
