"""The typed way a screen reaches the app, and hears about its state.

``Screen.app`` is typed as ``App[Any]``, so ``self.app.session`` is invisible to
mypy and a typo is found only at run time. Every ragtriage screen derives from
:class:`AppScreen` (or :class:`AppModal`) and reaches the app through
``self.rt``, which is the :class:`~ragtriage.tui.app.RagtriageApp` itself.

The app announces every change with a message (:mod:`ragtriage.tui.messages`);
an :class:`AppScreen` turns both announcements into one call of
:meth:`AppScreen.show_state`, which a screen overrides to redraw itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

from textual import on
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.screen import ModalScreen, Screen

from .messages import AppStateChanged, DocumentChanged

if TYPE_CHECKING:
    from .app import RagtriageApp

R = TypeVar("R")


def detail_bindings(screen: str) -> list[Binding]:
    """J / K scroll a screen's detail pane from the list: at 80x24 the pane shows only
    its first lines (the answer, must-contain, the candidates) and the list keeps focus."""
    return [
        Binding("J", "scroll_detail(3)", "Scroll detail down", show=False, id=f"{screen}.detail_down"),
        Binding("K", "scroll_detail(-3)", "Scroll detail up", show=False, id=f"{screen}.detail_up"),
    ]


class AppScreen(Screen[R]):
    """A full screen of the ragtriage app."""

    DETAIL: str | None = None  # the selector of the screen's scrollable detail pane

    def action_scroll_detail(self, lines: int) -> None:
        if self.DETAIL is None:
            return
        pane = self.query_one(self.DETAIL, ScrollableContainer)
        pane.scroll_relative(y=lines, animate=False)

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

    @on(AppStateChanged)
    def _app_state_changed(self, event: AppStateChanged) -> None:
        if self.is_mounted:
            self.show_state()

    def document_changed(self, event: DocumentChanged) -> None:
        """The test set changed; by default, show the new state."""
        self.show_state()


class AppModal(ModalScreen[R]):
    """A dialog of the ragtriage app."""

    @property
    def rt(self) -> RagtriageApp:
        return cast("RagtriageApp", self.app)
