"""The grouped list of a run's cases: a header line per reason with its count,
then its cases. Virtual (paints only the lines on screen), like ``CaseTable``,
so 100,000 cases open and regroup in a list operation."""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.diagnosis import PASSING
from ..triage_state import JUDGE_DISAGREES, TriageState, verdict_text


class TriageTable(ScrollView, can_focus=True):
    """Groups of cases; the cursor stops on cases only."""

    BINDINGS = [
        Binding("down,j", "cursor_down", "Next case", show=False, id="triage.down"),
        Binding("up,k", "cursor_up", "Previous case", show=False, id="triage.up"),
        Binding("tab", "next_group", "Next group", id="triage.next_group"),
        Binding("shift+tab", "previous_group", "Previous group", show=False, id="triage.previous_group"),
        Binding("pagedown", "page_down", "Page down", show=False, id="triage.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="triage.page_up"),
        Binding("home", "first", "First", show=False, id="triage.first"),  # g grades (judge.md)
        Binding("G,end", "last", "Last", show=False, id="triage.last"),
    ]

    COMPONENT_CLASSES = {
        "triage-table--group",
        "triage-table--cursor",
        "triage-table--fail",
        "triage-table--pass",
        "triage-table--dim",
    }

    DEFAULT_CSS = """
    TriageTable { background: $surface; scrollbar-gutter: stable; overflow-x: hidden; }
    TriageTable > .triage-table--group { background: $panel; color: $text; text-style: bold; }
    TriageTable:focus > .triage-table--group { background: $accent 35%; }
    TriageTable > .triage-table--cursor { background: $block-cursor-blurred-background; color: $block-cursor-blurred-foreground; }
    TriageTable:focus > .triage-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
    TriageTable > .triage-table--fail { color: $error; }
    TriageTable > .triage-table--pass { color: $success; }
    TriageTable > .triage-table--dim { color: $text-muted; }
    """

    cursor = reactive(1, always_update=True, init=False)  # a line index (see TriageState.line_at)

    class Highlighted(Message):
        def __init__(self, table: TriageTable, case_id: str | None) -> None:
            super().__init__()
            self.table = table
            self.case_id = case_id

        @property
        def control(self) -> TriageTable:
            return self.table

    def __init__(self, state: TriageState | None = None, *, marks=None, name=None, id=None, classes=None):
        super().__init__(name=name, id=id, classes=classes)
        self.state = state or TriageState()
        self.marks = marks  # callable(case_id) -> str (reviewed / note glyphs)
        self._seen_version = -1
        self._idw: int | None = None
        # the case under the cursor, remembered as the cursor moves: when the records change
        # under the table (a relabel, a re-run), the cursor's line may hold another case now
        self.selected: str | None = None

    # -- data ------------------------------------------------------------------------
    def set_state(self, state: TriageState, keep: str | None = None) -> None:
        self.state = state
        self._idw = None
        self.reload_lines(keep)

    def _measure(self) -> None:
        recs = self.state.records
        sample = recs if len(recs) <= 20000 else recs[:: len(recs) // 20000]
        self._idw = min(max([cell_len(r["id"]) for r in sample] + [8]), 24)

    def reload_lines(self, keep: str | None = None) -> None:
        """The groups changed: resize, put the cursor back on ``keep`` (default: the case it
        was on) or nearby, repaint."""
        if keep is None:
            keep = self.selected
        if self._idw is None or len(self.state) <= 20000:
            self._measure()
        count = self.state.line_count()
        self.virtual_size = Size(self.size.width, count)
        at = self.state.line_of(keep) if keep is not None else None
        if at is None:
            at = min(self.cursor, max(0, count - 1))
            at = self._nearest_case(at)
        self._seen_version = self.state.version
        self.cursor = at
        self.refresh()

    def _nearest_case(self, at: int) -> int:
        state = self.state
        count = state.line_count()
        if not count:
            return 0
        at = max(0, min(at, count - 1))
        for j in range(at, count):
            if state.line_at(j)[1] >= 0:
                return j
        for j in range(at, -1, -1):
            if state.line_at(j)[1] >= 0:
                return j
        return 0

    @property
    def current_id(self) -> str | None:
        if not 0 <= self.cursor < self.state.line_count():
            return None
        _reason, i = self.state.line_at(self.cursor)
        return self.state.records[i]["id"] if i >= 0 else None

    @property
    def current_group(self) -> str | None:
        if not 0 <= self.cursor < self.state.line_count():
            return None
        return self.state.line_at(self.cursor)[0]

    # -- painting ----------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width or self.size.width
        base = self.rich_style
        at = int(self.scroll_offset.y) + y
        if at >= self.state.line_count():
            return Strip.blank(width, base)
        reason, i = self.state.line_at(at)
        if i < 0:
            style = base + self.get_component_rich_style("triage-table--group")
            n = len(self.state.groups.get(reason, ()))
            title = f"{'✓' if reason in PASSING else '✗'} {reason or '(no reason)'}  {n}"
            if reason == JUDGE_DISAGREES:
                title = f"⚖ {reason}  {n}  to settle"
            elif reason in PASSING:
                title += "  pass"
            else:
                title += "  fail"
            return Strip([Segment(set_cell_size(" " + title, width), style)])
        rec = self.state.records[i]
        cursor = at == self.cursor
        style = base + self.get_component_rich_style("triage-table--cursor") if cursor else base
        reason = rec.get("reason") or ""  # the case's own verdict, also in the "judge disagrees" group
        verdict = verdict_text(reason)
        marks = self.marks(rec["id"]) if self.marks else ""
        head = f"  {verdict}  "
        label = rec.get("topic") or " ".join(str(rec.get("question", "")).split())
        tail = f" {marks}" if marks else ""
        idw = self._idw or 8
        rest = max(0, width - len(head) - idw - 1 - len(tail))
        segs = []
        vstyle = style
        if not cursor:
            vstyle = style + self.get_component_rich_style(
                "triage-table--pass" if reason in PASSING else "triage-table--fail"
            )
        segs.append(Segment(head, vstyle))
        segs.append(Segment(set_cell_size(rec["id"], idw) + " ", style))
        segs.append(
            Segment(
                set_cell_size(label, rest),
                style if cursor else style + self.get_component_rich_style("triage-table--dim"),
            )
        )
        if tail:
            segs.append(Segment(tail, style))
        return Strip(segs).adjust_cell_length(width, style)

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, self.state.line_count())
        self._scroll_cursor_into_view()

    # -- cursor ------------------------------------------------------------------------
    def watch_cursor(self, old: int, new: int) -> None:
        self._scroll_cursor_into_view()
        self.refresh()
        self.selected = self.current_id
        self.post_message(self.Highlighted(self, self.selected))

    def _scroll_cursor_into_view(self) -> None:
        body = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_offset.y)
        # show the group header too when on a group's first case
        want_top = (
            self.cursor - 1
            if 0 < self.cursor < self.state.line_count() and self.state.line_at(self.cursor - 1)[1] < 0
            else self.cursor
        )
        if want_top < top:
            self.scroll_to(y=want_top, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    def _step(self, direction: int) -> None:
        count = self.state.line_count()
        j = self.cursor + direction
        while 0 <= j < count:
            if self.state.line_at(j)[1] >= 0:
                self.cursor = j
                return
            j += direction

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_cursor_up(self) -> None:
        self._step(-1)

    def _group_starts(self) -> list[int]:
        return self.state._starts()

    def action_next_group(self) -> None:
        starts = self._group_starts()
        nxt = [s for s in starts if s > self.cursor]
        target = nxt[0] if nxt else (starts[0] if starts else 0)  # wraps to the first group
        self.cursor = self._nearest_case(target + 1)

    def action_previous_group(self) -> None:
        starts = self._group_starts()
        mine = max((s for s in starts if s < self.cursor), default=0)
        prev = [s for s in starts if s < mine]
        target = prev[-1] if prev else (starts[-1] if starts else 0)
        self.cursor = self._nearest_case(target + 1)

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def action_page_down(self) -> None:
        self.cursor = self._nearest_case(self.cursor + self._page())

    def action_page_up(self) -> None:
        self.cursor = self._nearest_case(max(0, self.cursor - self._page()))

    def action_first(self) -> None:
        self.cursor = self._nearest_case(0)

    def action_last(self) -> None:
        self.cursor = self._nearest_case(self.state.line_count() - 1)

    def move_to(self, case_id: str) -> bool:
        at = self.state.line_of(case_id)
        if at is None:
            return False
        self.cursor = at
        return True

    def on_click(self, event: events.Click) -> None:
        at = int(self.scroll_offset.y) + event.y
        if 0 <= at < self.state.line_count():
            self.cursor = self._nearest_case(at)
