"""A checkbox that says its state in text: ``[x]`` checked, ``[ ]`` not.

Textual's own draws ``▐X▌`` either way and tells the two apart by colour alone."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox


class TickBox(Checkbox):
    @property
    def _button(self) -> Content:
        style = self.get_visual_style("toggle--label")
        return Content.assemble(("[x]" if self.value else "[ ]", style))
