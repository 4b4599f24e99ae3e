"""The typed way a screen reaches the app.

``Screen.app`` is typed as ``App[Any]``, so ``self.app.session`` is invisible to
mypy and a typo is found only at run time. Every ragtriage screen derives from
:class:`AppScreen` (or :class:`AppModal`) and reaches the app through
``self.rt``, which is the :class:`~ragtriage.tui.app.RagtriageApp` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

from textual.screen import ModalScreen, Screen

if TYPE_CHECKING:
    from .app import RagtriageApp

R = TypeVar("R")


class AppScreen(Screen[R]):
    """A full screen of the ragtriage app."""

    @property
    def rt(self) -> RagtriageApp:
        return cast("RagtriageApp", self.app)


class AppModal(ModalScreen[R]):
    """A dialog of the ragtriage app."""

    @property
    def rt(self) -> RagtriageApp:
        return cast("RagtriageApp", self.app)
