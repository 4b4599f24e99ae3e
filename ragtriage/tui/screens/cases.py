"""Cases: every case in a virtual table, a detail pane, filter, sort, actions."""

from __future__ import annotations

import time

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Input, Static

from ..base import AppScreen, detail_bindings
from ..case_ops import delete_case, duplicate_case, toggle_unanswerable
from ..messages import DocumentChanged
from ..rows import COLUMNS, CaseRows, Row, make_row
from ..run_session import MarksChanged, RecordsChanged, RunEvent, RunOpened
from ..shown import plain, shown_line
from ..widgets.case_detail import CaseDetail, describe_case
from ..widgets.case_table import CaseTable
from ..widgets.footer import Footer  # whole keys that fit, the rest in ?

#: the detail pane of a test set with no case yet (``ragtriage init``, or ``edit NEW.yaml --corpus``)
NO_CASES = (
    "No cases yet. Press n to write the first: the question as a user would ask it. "
    "Then p picks the chunks that answer it, and ctrl+s saves."
)
DETAIL_DELAY = 0.05  # seconds between keys below which the detail pane waits


class CasesScreen(AppScreen[None]):
    """Home of ``ragtriage edit``."""

    HELP_TITLE = "Cases"
    HELP_INTRO = """
Every case of the test set. Flags: ✎ draft (no expected chunk yet),
∅ unanswerable, ⚠ stale label. With a run (--run, or one started with {ctrl+r}),
the reason of each case as the run's records say it now (✓ pass, ✗ fail), and in
the detail pane the latest review note written in triage. Filter with {/}
(matches id, topic, question, chunk ids, flags, reason, pass/fail, tags).
{t} opens the run's failures (Triage); {ctrl+e} exports the test set (every
format of ragtriage export, or the CI report of the run).
Saving is the same on every screen: each change is one undo step ({ctrl+z}),
{ctrl+s} writes the file, {q} asks before dropping unsaved changes, and a crash
leaves a recovery file the next start offers to restore.
"""

    DETAIL = "#detail"

    BINDINGS = [
        # Help and quit first, so that a narrow footer (80 columns) still shows them.
        Binding("question_mark", "app.help", "Help", key_display="?", id="cases.help"),
        Binding("q", "app.request_quit", "Quit", id="cases.quit"),
        Binding(
            "slash",
            "filter",
            "Filter",
            key_display="/",
            id="cases.filter",
            tooltip='filter as you type: words in id, topic, question, chunk ids, flags, reason, tags',
        ),
        Binding(
            "e", "edit", "Edit", show=False, id="cases.edit", tooltip='open the case editor (also enter)'
        ),
        # enter and n open the editor in the same key dispatch (priority: before the key goes
        # to the table and bubbles back), so keys typed right after them reach the editor
        Binding("enter", "edit", "Open", key_display="⏎", priority=True, id="cases.open"),
        Binding(
            "p",
            "pick",
            "Pick",
            id="cases.pick",
            tooltip='chunk picker: search the corpus and toggle expected chunks',
        ),
        Binding("n", "add", "New", priority=True, id="cases.new", tooltip='new case (ctrl+n in the editor)'),
        Binding(
            "d",
            "duplicate",
            "Duplicate",
            show=False,
            id="cases.duplicate",
            tooltip='copy this case right below it (ctrl+d in the editor)',
        ),
        Binding(
            "x,delete,f8",
            "delete",
            "Delete",
            id="cases.delete",
            tooltip='delete this case (asks first; ctrl+z undoes; f8 in the editor)',
        ),
        Binding(
            "u",
            "toggle_unanswerable",
            "Unanswerable",
            id="cases.unanswerable",
            tooltip='mark unanswerable (drops its expected chunks) or answerable again',
        ),
        Binding(
            "f",
            "next_flagged",
            "Flagged",
            id="cases.next_flagged",
            tooltip='jump to the next draft, unanswerable, stale or failed case',
        ),
        Binding(
            "l",
            "review_stale",
            "Stale",
            id="cases.stale",
            tooltip='review stale labels: accept a candidate, pick, or mark unanswerable (l: labels)',
        ),
        Binding(
            "s",
            "sort",
            "Sort",
            id="cases.sort",
            tooltip='sort by the next column (id, topic, question, ...; then file order)',
        ),
        Binding(
            "S",
            "reverse_sort",
            "Reverse sort",
            show=False,
            id="cases.reverse_sort",
            tooltip='reverse the sort order',
        ),
        Binding(
            "escape",
            "clear_filter",
            "Clear filter",
            show=False,
            id="cases.clear_filter",
            tooltip='clear the filter',
        ),
        Binding(
            "ctrl+r",
            "run",
            "Run…",
            id="cases.run",
            tooltip="run the test set on a system (builtin, a results file, your RAG); results go to Triage",
        ),
        Binding(
            "ctrl+e",
            "export",
            "Export…",
            id="cases.export",
            tooltip="the test set in another tool's format (jsonl, csv, ragas, deepeval, trec) or a CI report",
        ),
        Binding(
            "t",
            "triage",
            "Triage",
            id="cases.triage",
            tooltip='failures of the loaded run, grouped by reason',
        ),
        *detail_bindings("cases"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows = CaseRows()
        self.rows.hint = self._file_position
        self._row_cache: dict[tuple, tuple] = {}
        self._seen: object | None = None  # the session the rows were built from
        self._pending: set[str] | None = None  # cases whose rows are out of date (None: all)
        self._stale_ids: set[str] = set()
        self._detail_for: str | None = None
        self._detail_pending = False
        self._detail_timer: Timer | None = None
        self._last_highlight = 0.0

    def compose(self) -> ComposeResult:
        yield Static(plain(f"{self.rt.testset_path.name} · loading…"), id="status", markup=False)
        yield Input(placeholder="filter: words in id, topic, question, chunk ids, flags, reason", id="filter")
        with Horizontal(id="cases-main"):
            yield CaseTable(self.rows, id="cases")
            yield CaseDetail(id="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#filter", Input).display = False
        self.query_one(CaseTable).focus()
        if self.rt.loaded:
            self.show_state()

    def on_screen_resume(self) -> None:
        self.show_state()

    @property
    def table(self) -> CaseTable:
        return self.query_one(CaseTable)

    # -- state: only the rows of the cases a change touched are made again ----------------
    def _outdated(self, ids: frozenset[str] | set[str] | None) -> None:
        if ids is None or self._pending is None:
            self._pending = None
        else:
            self._pending |= ids

    def document_changed(self, event: DocumentChanged) -> None:
        self._outdated(event.case_ids)
        self.show_state()
        focus = event.focus
        if focus is not None and self.rt.screen is self and focus != self.table.current_id:
            self.table.move_to(focus)  # the case an undo brought back: show it

    def run_changed(self, event: RunEvent) -> None:
        if isinstance(event, RecordsChanged):
            self._outdated(event.case_ids)
        elif isinstance(event, RunOpened):
            self._outdated(None)
        elif not isinstance(event, MarksChanged):
            return
        self.show_state()

    def show_state(self) -> None:
        app = self.rt
        if not app.loaded:
            if app.preview and not len(self.rows.rows):
                self.rows.replace([make_row(c) for c in app.preview])
                self.table.set_rows(self.rows)
                self.query_one("#status", Static).update(
                    plain(f"{app.testset_path.name} · loading… (showing the first {len(app.preview)} cases)")
                )
                self._show_detail(self.table.current_id)
            return
        stale = app.stale.ids
        if stale != self._stale_ids:
            self._outdated(stale ^ self._stale_ids)
            self._stale_ids = stale
        if not self.is_current:
            return  # under another screen: caught up when shown again
        self._sync_rows()
        self._update_status()
        self._show_detail(self.table.current_id)

    def _sync_rows(self) -> None:
        app = self.rt
        session, table = app.session, self.table
        pending, self._pending = self._pending, set()
        keep = table.current_id
        table.show_reason = app.run_session.has_reasons()
        if self._seen is not session or pending is None or not self.rows.rows:
            self._seen = session
            self.rows.replace(self._build_rows())
            table.set_rows(self.rows, keep)
            return
        if not pending:
            return
        doc, run, stale = session.doc, app.run_session, self._stale_ids
        changed = {
            cid: make_row(doc.case(cid), cid in stale, run.reason(cid)) if cid in doc else None
            for cid in pending
        }
        rows = self.rows
        # no filter, no sort, no case added or gone: every row keeps its place
        in_place = not rows.query and rows.sort_column is None and None not in changed.values()
        n = len(rows.rows)
        if not rows.update(changed, doc.index_of):
            rows.replace(self._build_rows())
            table.set_rows(rows, keep)
            return
        widened = table.widen(r for r in changed.values() if r is not None)
        if in_place and len(rows.rows) == n and not widened:
            table.refresh_positions(doc.index_of(cid) for cid in changed)
        else:
            table.refresh_rows(keep)

    def _file_position(self, case_id: str) -> int | None:
        """Where ``case_id`` is in the file: where its row is, unless a preview or an edit
        not yet shown puts the rows out of step (:meth:`CaseRows._row` checks)."""
        app = self.rt
        if not app.loaded or case_id not in app.doc:
            return None
        return app.doc.index_of(case_id)

    def _build_rows(self) -> list[Row]:
        app = self.rt
        stale = self._stale_ids
        run = app.run_session
        reason = run.reason if run.has_reasons() else (lambda _cid: None)
        cache = self._row_cache
        fresh: dict[tuple, tuple] = {}
        rows = []
        for case in app.doc.cases:
            k = (id(case), case.id in stale, reason(case.id))
            hit = cache.get(k)
            if hit is None or hit[0] is not case:
                hit = (case, make_row(case, k[1], k[2]))
            fresh[k] = hit
            rows.append(hit[1])
        self._row_cache = fresh
        return rows

    def _update_status(self) -> None:
        app = self.rt
        parts = [app.testset_path.name]
        total = len(self.rows.rows)
        parts.append(f"{total} case{'s' * (total != 1)}")
        if self.rows.query:
            parts.append(f"{len(self.rows)} match “{self.rows.query}”")
        if self.rows.sort_column:
            parts.append(
                f"sorted by {self.rows.sort_column}{' (reversed)' if self.rows.sort_reverse else ''}"
            )
        stale = app.stale.report
        if stale:
            parts.append(f"⚠ {len(stale)} stale label{'s' * (len(stale) != 1)}")
        quotes = len(app.stale.open_quotes)
        if quotes:
            parts.append(f"⚠ {quotes} quote{'s' * (quotes != 1)} unresolved")
        if app.corpus is None and app.corpus_path is not None and not app.corpus_error:
            parts.append("loading corpus…")
        elif app.corpus_error:
            parts.append("corpus not loaded")
        if app.loaded and app.session.saving is not None:
            parts.append("saving…")
        elif app.loaded and app.session.unsaved:
            parts.append("● unsaved")
        # one line of fixed height and width (app.tcss): no layout of the whole screen
        self.query_one("#status", Static).update(
            plain(" · ".join(shown_line(p) for p in parts)), layout=False
        )

    def _show_detail(self, case_id: str | None) -> None:
        app = self.rt
        detail = self.query_one(CaseDetail)
        if case_id is None or (not app.loaded and not app.preview):
            empty = app.loaded and not app.doc.cases  # a new test set: say how to begin
            detail.show("no case matches" if self.rows.query else NO_CASES if empty else "")
            return
        try:
            case = (
                app.doc.case(case_id) if app.loaded else next(c for c in app.preview or () if c.id == case_id)
            )
        except (KeyError, StopIteration):
            return
        run = app.run_session
        note = run.note(case_id) if app.loaded else None
        corpus_note = "loading corpus…" if app.corpus is None and app.corpus_path is not None else "no corpus"
        labels = app.doc.labels if app.loaded else {}
        detail.show(
            describe_case(
                case,
                corpus=app.corpus,
                labels=labels,
                stale=app.stale.entries_of(case_id),
                reason=run.reason(case_id),
                corpus_note=corpus_note,
                review_note=note,
                note_current=note.about(run.record(case_id)) if note is not None else False,
                record=run.record(case_id),
                k=run.k if run.record(case_id) is not None else (app.doc.settings.k if app.loaded else None),
                quotes_now=app.stale.quotes_of(case_id) if app.loaded else None,
            ),
            case_id,
        )

    @on(CaseTable.Highlighted)
    def _highlighted(self, event: CaseTable.Highlighted) -> None:
        self._queue_detail(event.case_id)

    def _queue_detail(self, case_id: str | None) -> None:
        # The table's frame goes out first and the detail pane follows. While keys
        # repeat faster than DETAIL_DELAY (holding j), the detail waits for a pause:
        # re-wrapping the pane on every row would halve the frame rate.
        self._detail_for = case_id
        now = time.monotonic()
        repeating = now - self._last_highlight < DETAIL_DELAY
        self._last_highlight = now
        if self._detail_timer is not None:
            self._detail_timer.stop()
            self._detail_timer = None
        if repeating:
            self._detail_timer = self.set_timer(DETAIL_DELAY, self.flush_detail)
        elif not self._detail_pending:
            self._detail_pending = True
            self.call_after_refresh(self.flush_detail)

    def flush_detail(self) -> None:
        """Show the detail of the case under the cursor now (tests call it after fast key bursts)."""
        self._detail_pending = False
        if self._detail_timer is not None:
            self._detail_timer.stop()
            self._detail_timer = None
        self._show_detail(self._detail_for if self._detail_for is not None else self.table.current_id)

    @on(CaseTable.Selected)
    def _selected(self, event: CaseTable.Selected) -> None:
        self.open_editor(event.case_id)

    @on(CaseTable.HeaderClicked)
    def _header_clicked(self, event: CaseTable.HeaderClicked) -> None:
        if self.rows.sort_column == event.column:
            self._sort(event.column, not self.rows.sort_reverse)
        else:
            self._sort(event.column, False)

    # -- filter --------------------------------------------------------------------------
    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        keep = self.table.current_id
        self.rows.set_filter(event.value)
        self.table.refresh_rows(keep)
        self._update_status()
        self._queue_detail(self.table.current_id)

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        if not event.value:
            event.input.display = False
        self.table.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus or self.rows.query:
            box.value = ""
            box.display = False
            self.table.focus()

    # -- sort ----------------------------------------------------------------------------
    def action_sort(self) -> None:
        cols = list(self.table.columns)
        cur = self.rows.sort_column
        nxt = (
            cols[0]
            if cur is None
            else (cols[cols.index(cur) + 1] if cols.index(cur) + 1 < len(cols) else None)
        )
        self._sort(nxt, False)

    def action_reverse_sort(self) -> None:
        self._sort(self.rows.sort_column or COLUMNS[0], not self.rows.sort_reverse)

    def _sort(self, column: str | None, reverse: bool) -> None:
        keep = self.table.current_id
        self.rows.set_sort(column, reverse)
        self.table.refresh_rows(keep)
        self._update_status()
        self.notify(
            f"sorted by {column}" + (" (reversed)" if reverse else "") if column else "file order",
            timeout=1.5,
        )

    # -- navigation and edits --------------------------------------------------------------
    def _current(self) -> str | None:
        if not self.rt.loaded:
            self.notify("still loading")
            return None
        cid = self.table.current_id
        if cid is None:
            self.notify("no case selected")
        return cid

    def action_next_flagged(self) -> None:
        pos = self.rows.next_flagged(self.table.cursor)
        if pos is None:
            self.notify(
                "no flagged case: no draft, no stale label"
                + (", no failure" if self.rt.run_session.has_reasons() else "")
            )
        else:
            self.table.cursor = pos

    def open_editor(self, case_id: str | None) -> None:
        self.rt.open_editor(case_id)

    def action_edit(self) -> None:
        cid = self._current()
        if cid is not None:
            self.open_editor(cid)

    def action_add(self) -> None:
        if self.rt.loaded:
            self.rt.open_editor(None, after=self.table.current_id)

    def action_duplicate(self) -> None:
        cid = self._current()
        if cid is None:
            return
        new = duplicate_case(self.rt, cid)
        self.table.move_to(new)
        self.open_editor(new)

    def action_delete(self) -> None:
        cid = self._current()
        if cid is not None:
            delete_case(self.rt, cid)

    def action_toggle_unanswerable(self) -> None:
        cid = self._current()
        if cid is None:
            return
        toggle_unanswerable(self.rt, cid)

    def action_pick(self) -> None:
        cid = self._current()
        if cid is not None:
            self.rt.open_picker(cid)

    def action_review_stale(self) -> None:
        self.rt.open_stale()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("edit", "add") and not isinstance(self.focused, CaseTable):
            return False  # in the filter box, enter submits the filter and n is a letter
        return True

    def action_triage(self) -> None:
        self.rt.open_triage()

    def action_run(self) -> None:
        self.rt.open_run()

    def action_export(self) -> None:
        self.rt.open_export()
