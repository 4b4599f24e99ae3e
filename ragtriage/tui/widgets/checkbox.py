"""A checkbox that reads as one in any terminal: ``[x]`` checked, ``[ ]`` unchecked.

Textual's own draws ``▐X▌`` both ways and tells them apart by colour only; at 256
colours the two are nearly the same.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox as _Checkbox


class Checkbox(_Checkbox):
    """:class:`textual.widgets.Checkbox`, drawn ``[x] label`` / ``[ ] label``."""

    DEFAULT_CSS = """
    Checkbox > .toggle--button { color: $text-muted; background: transparent; }
    Checkbox.-on > .toggle--button { color: $text-success; background: transparent; text-style: bold; }
    """

    @property
    def _button(self) -> Content:
        style = self.get_visual_style("toggle--button")
        return Content.assemble(("[x]" if self.value else "[ ]", style))
