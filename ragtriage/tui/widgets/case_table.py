"""A virtual table of cases: paints only the rows on screen.

Textual's ``DataTable`` builds every row up front (9–19 s for 100k rows, see
PERFORMANCE-NOTES.md). This is a ``ScrollView`` whose ``render_line`` cuts the
visible rows out of :class:`~ragtriage.tui.rows.CaseRows`, so opening, sorting
and filtering cost a list operation, not a widget per cell.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.diagnosis import REASONS
from ..rows import COLUMNS, FLAG_TEXT, CaseRows, Row, reason_text

#: the reason column holds the longest reason whole ("✗ unnecessary-abstention")
REASON_WIDTH = max(cell_len(reason_text(r)) for r in REASONS)

TITLES = {
    "id": "id",
    "topic": "topic",
    "question": "question",
    "expected": "expected",
    "flags": "flags",
    "reason": "reason",
}


class CaseTable(ScrollView, can_focus=True):
    """Rows of cases with a cursor; header fixed on the first line."""

    # The moves are priority bindings, like the Cases screen's enter: a priority binding runs
    # as its key arrives, an ordinary one only after the key has passed through the widgets,
    # so with enter priority and the moves not, "j j enter" typed fast opened the case the
    # cursor was on before the j's. (Priority bindings apply only while the table has focus.)
    BINDINGS = [
        Binding("down,j", "cursor_down", "Down", show=False, priority=True, id="table.down"),
        Binding("up,k", "cursor_up", "Up", show=False, priority=True, id="table.up"),
        Binding("pagedown", "page_down", "Page down", show=False, priority=True, id="table.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, priority=True, id="table.page_up"),
        Binding("home", "first", "First", show=False, priority=True, id="table.first"),  # g grades on Triage
        Binding("G,end", "last", "Last", show=False, priority=True, id="table.last"),
        Binding("enter", "select", "Open", id="table.open"),
    ]

    COMPONENT_CLASSES = {
        "case-table--header",
        "case-table--cursor",
        "case-table--flag",
        "case-table--fail",
        "case-table--pass",
        "case-table--dim",
    }

    DEFAULT_CSS = """
    CaseTable {
        background: $surface;
        scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    CaseTable > .case-table--header { background: $panel; color: $text; text-style: bold; }
    CaseTable:focus > .case-table--header { background: $accent 35%; }
    CaseTable > .case-table--cursor { background: $block-cursor-blurred-background; color: $block-cursor-blurred-foreground; }
    CaseTable:focus > .case-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
    CaseTable > .case-table--flag { color: $warning; }
    CaseTable > .case-table--fail { color: $error; }
    CaseTable > .case-table--pass { color: $success; }
    CaseTable > .case-table--dim { color: $text-muted; }
    """

    cursor = reactive(0, always_update=True, init=False)

    class Highlighted(Message):
        """The cursor moved onto a case."""

        def __init__(self, table: CaseTable, case_id: str | None) -> None:
            super().__init__()
            self.table = table
            self.case_id = case_id

        @property
        def control(self) -> CaseTable:
            return self.table

    class Selected(Message):
        """Enter (or a click) on a case."""

        def __init__(self, table: CaseTable, case_id: str) -> None:
            super().__init__()
            self.table = table
            self.case_id = case_id

        @property
        def control(self) -> CaseTable:
            return self.table

    def __init__(
        self, rows: CaseRows | None = None, *, show_reason: bool = False, name=None, id=None, classes=None
    ):
        super().__init__(name=name, id=id, classes=classes)
        self.rows = rows if rows is not None else CaseRows()
        self.show_reason = show_reason
        self._widths: dict[str, int] = {}
        self._max_id = 8
        self._max_topic = 8
        self._max_expected = 8
        self._max_flags = 5
        self._styles: dict[str, Style] = {}
        self._strips: dict[tuple, tuple[Row, Strip]] = {}
        self._measure()

    # -- data ------------------------------------------------------------------------
    def set_rows(self, rows: CaseRows, keep: str | None = None) -> None:
        """Show ``rows``; keep the cursor on case ``keep`` when it is still visible."""
        self.rows = rows
        self._measure()
        self.refresh_rows(keep)

    def refresh_rows(self, keep: str | None = None) -> None:
        """The rows' order or content changed: resize, re-place the cursor, repaint."""
        self.virtual_size = Size(self.size.width, len(self.rows) + 1)
        pos = self.rows.position_of(keep) if keep is not None else None
        self._widths = {}
        self._strips.clear()
        self.cursor = pos if pos is not None else min(self.cursor, max(0, len(self.rows) - 1))
        self.refresh()

    def _measure(self) -> None:
        rows = self.rows.rows
        sample = rows if len(rows) <= 20000 else rows[:: len(rows) // 20000]
        self._max_id = max([cell_len(r.id) for r in sample] + [2])
        self._max_topic = max([cell_len(r.topic) for r in sample] + [5])
        self._max_expected = max([cell_len(r.expected) for r in sample] + [8])
        self._max_flags = max([cell_len(r.flags_text) for r in sample] + [5])
        self._widths = {}

    def widen(self, rows: Iterable[Row]) -> bool:
        """Rows changed in place: let their cells widen the columns (never narrower).
        True when a column widened (every row is painted again)."""
        was = (self._max_id, self._max_topic, self._max_expected, self._max_flags)
        for r in rows:
            self._max_id = max(self._max_id, cell_len(r.id))
            self._max_topic = max(self._max_topic, cell_len(r.topic))
            self._max_expected = max(self._max_expected, cell_len(r.expected))
            self._max_flags = max(self._max_flags, cell_len(r.flags_text))
        if was == (self._max_id, self._max_topic, self._max_expected, self._max_flags):
            return False
        self._widths = {}
        return True

    def refresh_positions(self, positions: Iterable[int]) -> None:
        """The rows at these visible positions changed in place (same order, same column
        widths): repaint only their lines, and only those on screen (a full repaint of the
        table is most of an edit's key -> frame time at 100,000 cases)."""
        top, width = int(self.scroll_offset.y), self.size.width
        body = max(1, self.scrollable_content_region.height - 1)
        for p in positions:
            if top <= p < top + body:
                self.refresh(Region(0, p - top + 1, width, 1))

    @property
    def current_id(self) -> str | None:
        if not len(self.rows):
            return None
        return self.rows.visible(min(self.cursor, len(self.rows) - 1)).id

    @property
    def columns(self) -> tuple[str, ...]:
        return COLUMNS if self.show_reason else COLUMNS[:-1]

    def column_widths(self) -> dict[str, int]:
        """Each column as wide as its longest cell (sampled), the question the rest. A reason
        or a flag is never cut: when the room runs out, expected and then topic are left out
        whole (the detail pane has them) rather than shown cut to a stump."""
        width = self.scrollable_content_region.width or self.size.width
        if self._widths and self._widths.get("_total") == width:
            return self._widths
        w: dict[str, int] = {"id": min(self._max_id, max(8, width // 4)), "flags": min(self._max_flags, 24)}
        if self.show_reason:
            w["reason"] = REASON_WIDTH
        used = sum(w.values()) + len(w)  # one space after each column before the question
        least = max(20, width * 2 // 5)  # the question keeps 40 % of a wide table
        for name, size in (("expected", min(self._max_expected, 32)), ("topic", min(self._max_topic, 20))):
            if width - (used + size + 1) >= least:
                w[name] = size
                used += size + 1
            else:
                w[name] = 0
        w["question"] = max(10, width - used)
        w["_total"] = width
        self._widths = w
        return w

    # -- painting ----------------------------------------------------------------------
    def _style(self, name: str) -> Style:
        """Base style + a component class, cached until the theme or focus changes."""
        st = self._styles.get(name)
        if st is None:
            st = self.rich_style if name == "" else self.rich_style + self.get_component_rich_style(name)
            self._styles[name] = st
        return st

    def _forget_styles(self) -> None:
        self._styles.clear()
        self._strips.clear()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._forget_styles()

    def on_focus(self) -> None:
        self._forget_styles()
        self.refresh()

    def on_blur(self) -> None:
        self._forget_styles()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width or self.size.width
        if y == 0:
            return self._header(width)
        pos = int(self.scroll_offset.y) + y - 1
        if pos >= len(self.rows):
            return Strip.blank(width, self._style(""))
        row = self.rows.visible(pos)
        cursor = pos == self.cursor
        key = (id(row), width, cursor, self.show_reason)
        hit = self._strips.get(key)
        if hit is not None and hit[0] is row:
            return hit[1]
        if cursor:
            strip = self._row_strip(row, width, self._style("case-table--cursor"), plain=True)
        else:
            strip = self._row_strip(row, width, self._style(""), plain=False)
        if len(self._strips) > 4000:
            self._strips.clear()
        self._strips[key] = (row, strip)  # the row is kept so its id() is not reused
        return strip

    def _header(self, width: int) -> Strip:
        style = self._style("case-table--header")
        w = self.column_widths()
        segs = []
        for i, col in enumerate(self.columns):
            if not w.get(col):
                continue
            title = TITLES[col]
            if self.rows.sort_column == col:
                title += " ▼" if self.rows.sort_reverse else " ▲"
            segs.append(
                Segment(set_cell_size(title, w[col]) + (" " if i < len(self.columns) - 1 else ""), style)
            )
        return Strip(segs).adjust_cell_length(width, style)

    def _row_strip(self, row: Row, width: int, style: Style, plain: bool) -> Strip:
        w = self.column_widths()
        segs = []
        last = len(self.columns) - 1
        for i, col in enumerate(self.columns):
            cw = w.get(col)
            if not cw:
                continue
            text = set_cell_size(row.cell(col), cw) + (" " if i < last else "")
            s = style
            if not plain:
                if col == "flags" and row.flags:
                    s = self._style("case-table--flag")
                elif col == "reason" and row.reason:
                    s = self._style(
                        "case-table--fail" if row.cell("reason").startswith("✗") else "case-table--pass"
                    )
                elif col in ("expected", "topic"):
                    s = self._style("case-table--dim")
            segs.append(Segment(text, s))
        return Strip(segs).adjust_cell_length(width, style)

    def on_resize(self, event: events.Resize) -> None:
        self._widths = {}
        self._strips.clear()
        self.virtual_size = Size(event.size.width, len(self.rows) + 1)
        self._scroll_cursor_into_view()

    # -- cursor ------------------------------------------------------------------------
    def watch_cursor(self, old: int, new: int) -> None:
        n = len(self.rows)
        if n and not 0 <= new < n:
            self.cursor = max(0, min(new, n - 1))
            return
        top = int(self.scroll_offset.y)
        self._scroll_cursor_into_view()
        if int(self.scroll_offset.y) == top:  # only two rows changed: repaint just those
            width = self.size.width
            for p in (old, new):
                self.refresh(Region(0, p - top + 1, width, 1))
        else:
            self.refresh()
        self.post_message(self.Highlighted(self, self.current_id))

    def _scroll_cursor_into_view(self) -> None:
        body = max(1, self.scrollable_content_region.height - 1)
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 2)

    def action_cursor_down(self) -> None:
        if self.cursor < len(self.rows) - 1:
            self.cursor += 1

    def action_cursor_up(self) -> None:
        if self.cursor > 0:
            self.cursor -= 1

    def action_page_down(self) -> None:
        self.cursor = min(len(self.rows) - 1, self.cursor + self._page()) if len(self.rows) else 0

    def action_page_up(self) -> None:
        self.cursor = max(0, self.cursor - self._page())

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = max(0, len(self.rows) - 1)

    def action_select(self) -> None:
        cid = self.current_id
        if cid is not None:
            self.post_message(self.Selected(self, cid))

    def move_to(self, case_id: str) -> bool:
        pos = self.rows.position_of(case_id)
        if pos is None:
            return False
        self.cursor = pos
        return True

    def on_click(self, event: events.Click) -> None:
        y = event.y
        if y <= 0:
            col = self._column_at(event.x)
            if col is not None:
                self.post_message(self.HeaderClicked(self, col))
            return
        pos = int(self.scroll_offset.y) + y - 1
        if 0 <= pos < len(self.rows):
            if pos == self.cursor and event.chain >= 2:
                self.action_select()
            self.cursor = pos

    def _column_at(self, x: int) -> str | None:
        w = self.column_widths()
        at = 0
        for col in self.columns:
            cw = w.get(col) or 0
            if not cw:
                continue
            if at <= x < at + cw + 1:
                return col
            at += cw + 1
        return None

    class HeaderClicked(Message):
        def __init__(self, table: CaseTable, column: str) -> None:
            super().__init__()
            self.table = table
            self.column = column


__all__ = ["CaseTable", "FLAG_TEXT"]
