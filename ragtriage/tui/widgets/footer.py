"""A footer that is never cut: it shows the keys that fit and leaves the rest to help.

Textual's footer clips what does not fit (at 80 columns the Cases footer stopped
at ``f▏``, at 120 Triage showed ``v Rev…``). This one drops whole keys from the
end instead, never the ones that get you out or to the full list (help, back,
quit), and says how many it left out and where they are: the ``ctrl+p`` palette
(and ``?`` help) list every key.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Footer as _Footer
from textual.widgets._footer import FooterKey, FooterLabel

#: actions that always stay in the footer: the way to every other key, and the ways out
ESSENTIAL = ("help", "back", "request_quit")


def _width(key: FooterKey, compact: bool) -> int:
    """Columns a key takes: compact ``key description`` + one column of margin, else
    `` key description `` (Textual's paddings)."""
    from rich.cells import cell_len

    text = cell_len(key.key_display) + (1 + cell_len(key.description) if key.description else 0)
    return text + (1 if compact else 2)


def _essential(key: FooterKey) -> bool:
    return key.action.rsplit(".", 1)[-1] in ESSENTIAL


class Footer(_Footer):
    """:class:`textual.widgets.Footer` that shows only whole keys, the essential ones first."""

    hidden = 0  # how many keys the last compose left out
    _fitted_width: int | None = None

    def compose(self) -> ComposeResult:
        items: list[Widget] = list(super().compose())
        keys = [w for w in items if isinstance(w, FooterKey) and not w.has_class("-command-palette")]
        palette = [w for w in items if isinstance(w, FooterKey) and w.has_class("-command-palette")]
        width = self.size.width or self.app.size.width
        # the palette key is docked right with a border (and a padding when not compact)
        room = width - sum(_width(w, self.compact) + 2 for w in palette)
        more = len(" +99 more in ^p") + 1
        if sum(_width(k, self.compact) for k in keys) <= room:
            self.hidden = 0
            yield from items
            return
        keep: set[int] = set()
        used = more
        for k in sorted(keys, key=lambda k: not _essential(k)):  # essential first, else in order
            if used + _width(k, self.compact) <= room:
                keep.add(id(k))
                used += _width(k, self.compact)
        self.hidden = len(keys) - len(keep)
        for w in items:
            if isinstance(w, FooterKey) and not w.has_class("-command-palette") and id(w) not in keep:
                continue
            if w.has_class("-command-palette"):
                yield FooterLabel(f"+{self.hidden} more in ^p", classes="footer-more")
            yield w
        if not palette:
            yield FooterLabel(f"+{self.hidden} more in ^p", classes="footer-more")

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._fitted_width:
            self._fitted_width = event.size.width
            self.call_after_refresh(self.recompose)
