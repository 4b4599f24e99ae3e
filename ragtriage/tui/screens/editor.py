"""Case editor: every field of one case, checked as you type.

What is typed is checked with the same rules as ``validate`` (``schema.Case``
plus a unique id) and applied to the document when a field is left (tab,
enter), on escape and on ctrl+s — one undo step per field edit. Until then it is
logged to the recovery file as it is typed (:data:`TYPING_PAUSE` after the last
key), so a killed terminal loses none of it.
"""

from __future__ import annotations

from typing import Any

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widgets import Input, Label, Static, TextArea

from ...core.errors import InputError
from ...core.schema import Case
from ..base import AppScreen
from ..case_ops import delete_case, duplicate_case
from ..dialogs.common import confirm
from ..edits import AddCase, RemoveCase, UpdateCase
from ..messages import DocumentChanged
from ..shown import plain, shown_line
from ..widgets.checkbox import Checkbox  # [x]/[ ], not ▐X▌ both ways
from ..widgets.footer import Footer  # whole keys that fit, the rest in ?

#: seconds after the last key when what the form holds (not applied yet) reaches the recovery file
TYPING_PAUSE = 0.4
#: the form's key in :attr:`Session.typing`
TYPING_KEY = "editor"

FIELD_HELP = {
    "id": "unique, no spaces (Unicode is fine)",
    "topic": "short label shown in tables",
    "question": "what the user asks",
    "expected": "chunk ids that answer it, separated by commas (ctrl+o picks them)",
    "expect": "checked: the answer needs every expected chunk (all); unchecked: one suffices (any)",
    "must_contain": "one string per line; each must appear in a correct answer",
    "answer": "reference answer (optional)",
    "unanswerable": "the documents do not answer it; the right answer is to decline",
    "tags": "free labels, separated by commas",
    "notes": "the test set's own notes on the case (triage's review notes are kept apart)",
}


def _split(text: str, sep: str) -> list[str]:
    return [p.strip() for p in text.split(sep) if p.strip()]


class EditorScreen(AppScreen[None]):
    """Edit one case (``case_id``), or a new one (``None``)."""

    HELP_TITLE = "Case editor"
    HELP_INTRO = """
{tab} / {shift+tab} move between fields; a field is applied when you leave it
(one undo step each). Errors appear under the field as you type; an invalid
field is never written. {escape} goes back to the cases.

The Cases keys, with ctrl because letters are typed here: {ctrl+n} new case
(placed after the case you came from, and the next after it), {ctrl+d}
duplicate; {ctrl+o} picks chunks (ctrl+p is the palette) and {f8} deletes the
case (ctrl+x cuts text). The test-set notes field is part of the case; review
notes written in triage are kept beside the test set and shown on Cases.
"""

    BINDINGS = [
        Binding("escape", "back", "Back", id="editor.back"),
        Binding("ctrl+o", "pick", "Pick chunks", priority=True, id="editor.pick"),
        Binding("ctrl+n", "new", "New case", priority=True, id="editor.new"),
        # ctrl+d: the same letter as d on Cases (delete-right stays on the delete key)
        Binding("ctrl+d", "duplicate", "Duplicate", priority=True, id="editor.duplicate"),
        # f8, as on Cases: ctrl+x cuts text in a field
        Binding("f8", "delete", "Delete case", priority=True, id="editor.delete"),
    ]

    def __init__(self, case_id: str | None, *, after: str | None = None) -> None:
        super().__init__()
        self.case_id = case_id
        # a new case goes after this one (the Cases cursor's), and the next after it: in order
        self.after = after if after is not None else case_id
        self.errors: dict[str, str] = {}
        self._shown: Case | None = None  # the case object the form was loaded from
        self._original: Case | None = None  # the case as it was when the editor opened
        self._early_keys: list[events.Key] | None = []  # typed before a field had focus
        self._typing_timer: Timer | None = None  # logs the form's text a moment after the last key

    # -- layout ------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("", id="editor-title")
        with VerticalScroll(id="form"):
            for name, widget in (
                ("id", Input(id="f-id", compact=True, select_on_focus=False)),
                ("topic", Input(id="f-topic", compact=True, select_on_focus=False)),
                ("question", Input(id="f-question", compact=True, select_on_focus=False)),
                ("expected", Input(id="f-expected", compact=True, select_on_focus=False)),
                ("expect", Checkbox("expect all", id="f-expect")),
                ("must_contain", TextArea(id="f-must_contain", soft_wrap=True)),
                ("answer", Input(id="f-answer", compact=True, select_on_focus=False)),
                ("unanswerable", Checkbox("unanswerable", id="f-unanswerable")),
                ("tags", Input(id="f-tags", compact=True, select_on_focus=False)),
                ("notes", TextArea(id="f-notes", soft_wrap=True)),
            ):
                yield Label(f"{name.replace('_', ' ')}  [dim]{FIELD_HELP[name]}[/]", classes="field-label")
                yield widget
                yield Static("", id=f"e-{name}", classes="field-error")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._start()
        early, self._early_keys = self._early_keys or [], None
        for key in early:  # through the app again: bindings first, then the field with focus
            self.app.post_message(events.Key(key.key, key.character))

    def open(self, case_id: str | None, *, after: str | None = None) -> None:
        """Show another case in this (kept) editor: a new editor screen costs ~100 ms of
        widgets and styles to build, so the app builds one and reuses it."""
        self.case_id = case_id
        self.after = after if after is not None else case_id
        self.errors = {}
        if self.is_mounted:
            self._start()

    def _start(self) -> None:
        if self.rt.closing:  # opened by a key typed right after q: the app is going away
            return
        self._original = self._case()
        self.load_form()
        self.set_focus(self.query_one("#f-question" if self.case_id else "#f-id"), scroll_visible=False)
        self.query_one("#form", VerticalScroll).scroll_home(animate=False)  # the id label first

    def _forward_event(self, event: events.Event) -> None:
        # Keys typed right after `enter` or `a` (the editor still mounting, no field focused
        # yet) come here and Textual would drop them: keep them for the field that gets focus.
        if isinstance(event, events.Key) and self._early_keys is not None:
            self._early_keys.append(event)
            return
        super()._forward_event(event)

    # -- form <-> case ----------------------------------------------------------------------
    def _case(self) -> Case | None:
        if self.case_id is None or not self.rt.loaded:
            return None
        try:
            return self.rt.doc.case(self.case_id)
        except KeyError:
            return None

    def load_form(self) -> None:
        case = self._case()
        self._shown = case
        title = f"case {self.case_id}" if case else "new case (added when id and question are valid)"
        self.query_one("#editor-title", Static).update(plain(f"✎ {shown_line(title)}"))
        v = _values(case) if case else {}
        self.query_one("#f-id", Input).value = v.get("id", "")
        self.query_one("#f-topic", Input).value = v.get("topic", "")
        self.query_one("#f-question", Input).value = v.get("question", "")
        self.query_one("#f-expected", Input).value = v.get("expected", "")
        self.query_one("#f-expect", Checkbox).value = v.get("expect", "any") == "all"
        self._set_area("#f-must_contain", v.get("must_contain", ""))
        self.query_one("#f-answer", Input).value = v.get("answer", "")
        self.query_one("#f-unanswerable", Checkbox).value = bool(v.get("unanswerable", False))
        self.query_one("#f-tags", Input).value = v.get("tags", "")
        self._set_area("#f-notes", v.get("notes", ""))
        self.validate()

    def _set_area(self, selector: str, text: str) -> None:
        area = self.query_one(selector, TextArea)
        if area.text != text:
            area.load_text(text)

    def form_fields(self) -> dict[str, Any]:
        """The form as case fields (the shape ``schema.Case`` takes)."""
        q = self.query_one
        return {
            "id": q("#f-id", Input).value.strip(),
            "topic": q("#f-topic", Input).value.strip() or None,
            "question": q("#f-question", Input).value,
            "expected": tuple(_split(q("#f-expected", Input).value, ",")),
            "expect": "all" if q("#f-expect", Checkbox).value else "any",
            "must_contain": tuple(s for s in q("#f-must_contain", TextArea).text.split("\n") if s.strip()),
            "answer": q("#f-answer", Input).value or None,
            "unanswerable": q("#f-unanswerable", Checkbox).value,
            "tags": tuple(_split(q("#f-tags", Input).value, ",")),
            "notes": q("#f-notes", TextArea).text.rstrip("\n") or None,
        }

    def validate(self) -> dict[str, str]:
        """Check the form with the rules of ``validate``; show each error at its field."""
        fields = self.form_fields()
        errors: dict[str, str] = {}
        case = self._case()
        problems = self.rt.doc.validate_case(
            case.id if case else None, **(self.changes() if case else fields)
        )
        for p in problems:
            name = p.field if p.field in FIELD_HELP else "question"
            errors.setdefault(name, p.message)
        if "unanswerable" in errors and fields["unanswerable"] and fields["expected"]:
            errors.setdefault("expected", "must be empty for an unanswerable case")
        if "question" not in errors and not fields["question"].strip():
            errors["question"] = "must not be empty"
        if "id" not in errors and not fields["id"]:
            errors["id"] = "is required"
        self.errors = errors
        warnings: dict[str, str] = {}
        corpus = self.rt.corpus
        if "expected" not in errors and corpus is not None:
            # `validate` warns about these; the form said nothing and the case only turned up ⚠ stale later
            unknown = [cid for cid in fields["expected"] if cid not in corpus]
            if unknown:
                warnings["expected"] = (
                    f"not in the corpus: {', '.join(unknown)} (a typo? ctrl+o picks from it)"
                )
        for name in FIELD_HELP:
            box = self.query_one(f"#e-{name}", Static)
            msg = errors.get(name, "")
            text = f"✗ {msg}" if msg else (f"⚠ {warnings[name]}" if name in warnings else "")
            box.update(plain(text))
            box.set_class(not msg and name in warnings, "-warning")  # not red: it does not block a save
            box.display = bool(text)
        return errors

    def changes(self) -> dict[str, Any]:
        """Fields that differ from the case in the document (None removes a key)."""
        case = self._case()
        fields = self.form_fields()
        if case is None:
            return fields
        return _differences(case, fields)

    def commit(self) -> bool:
        """Apply the form to the document; False (nothing written) while a field has an error."""
        if not self.rt.loaded or not self.is_mounted:
            return True
        case = self._case()
        if case is None and self.case_id is not None:
            return True  # deleted meanwhile (undo): nothing to apply
        changes = self.changes()
        if case is None:
            if not changes.get("id") and not changes.get("question", "").strip():
                self.log_typing()
                return True  # an untouched new form
        if not changes:
            self.log_typing()
            return True
        if self.validate():
            self.log_typing()  # kept in the recovery file until it is valid (or dropped)
            return False
        self._stop_typing_timer()
        self.rt.session.set_typing(TYPING_KEY, None, write=False)  # the edit below logs it
        try:
            if case is None:
                fields = {k: v for k, v in changes.items() if v not in (None, (), "any", False)}
                self.rt.edit(AddCase(self._insert_index(), fields))
                self.case_id = self.after = fields["id"]
                self.notify(f"added case {self.case_id}")
            else:
                self.rt.edit(UpdateCase(case.id, changes))
                if "id" in changes and changes["id"]:
                    self.case_id = changes["id"]
        except InputError as e:
            msg = "; ".join(p.message for p in e.problems[:2])
            field = next((p.field for p in e.problems if p.field), None)
            box = self.query_one(f"#e-{field}" if field in FIELD_HELP else "#e-question", Static)
            box.update(plain(f"✗ {msg}"))
            box.display = True
            self.log_typing()
            return False
        return True

    # -- what is typed, logged before it is applied -------------------------------------
    def typing_record(self) -> dict[str, Any] | None:
        """The edit the form would make now, as a recovery-file entry (None: nothing to apply)."""
        if not self.rt.loaded or not self.is_mounted:
            return None
        case = self._case()
        if case is None and self.case_id is not None:
            return None
        changes = self.changes()
        if case is not None:
            return UpdateCase(case.id, changes).record() if changes else None
        if not changes.get("id") and not changes.get("question", "").strip():
            return None
        fields = {k: v for k, v in changes.items() if v not in (None, (), "any", False)}
        return AddCase(self._insert_index(), fields).record()

    def log_typing(self) -> None:
        """Write what the form holds (and has not applied) to the recovery file now."""
        self._stop_typing_timer()
        if self.rt.loaded:
            self.rt.session.set_typing(TYPING_KEY, self.typing_record())
            self.rt.warn_recovery()

    def _log_typing_soon(self) -> None:
        self._stop_typing_timer()
        self._typing_timer = self.set_timer(TYPING_PAUSE, self.log_typing)

    def _stop_typing_timer(self) -> None:
        if self._typing_timer is not None:
            self._typing_timer.stop()
            self._typing_timer = None

    def _insert_index(self) -> int | None:
        """A new case goes right after the case it was started from — the Cases cursor's, then
        the last one added here, so several new cases keep the order they were written in —
        or at the end."""
        doc = self.rt.doc
        return doc.index_of(self.after) + 1 if self.after is not None and self.after in doc else None

    def document_changed(self, event: DocumentChanged) -> None:
        """The document changed elsewhere (undo, picker, reload): show it."""
        if self.case_id is not None and self._case() is None:
            if self.rt.screen is self:
                self.notify(f"case {self.case_id} no longer exists")
                self.dismiss()
            return
        if self.case_id is not None and self._case() is not self._shown:
            self.load_form()

    # -- events ------------------------------------------------------------------------
    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Checkbox.Changed)
    def _changed(self, event: Input.Changed | TextArea.Changed | Checkbox.Changed) -> None:
        self.validate()
        if self.rt.screen is self:  # typed (a form being loaded is not)
            self._log_typing_soon()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if self.commit():
            self.focus_next()

    @on(Input.Blurred)
    def _blurred(self, event: Input.Blurred) -> None:
        if self.rt.screen is self:
            self.commit()

    @on(Checkbox.Changed)
    def _toggled(self, event: Checkbox.Changed) -> None:
        self.call_after_refresh(self.commit)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if isinstance(event.widget, TextArea) and self.rt.screen is self:
            self.commit()

    # -- actions -----------------------------------------------------------------------
    def action_back(self) -> None:
        if self.commit():
            self.dismiss()
            return

        def answered(value: str | None) -> None:
            if value == "yes":
                self.drop_changes()
                self.dismiss()

        self.rt.push_screen(
            confirm("Some fields have errors and were not applied. Leave and drop them?", "leave, drop them"),
            answered,
        )

    def drop_changes(self) -> None:
        """Put the case back as it was when the editor opened (fields applied on the way
        included), as one undo step; a case this editor added is removed again."""
        current = self._case()
        original = self._original
        self._stop_typing_timer()
        self.rt.session.set_typing(TYPING_KEY, None)  # dropped: not to be recovered
        if current is None:
            return
        if original is None:
            self.rt.edit(RemoveCase(current.id))
        else:
            fields = _differences(current, {name: getattr(original, name) for name in FIELD_HELP})
            if fields:
                self.rt.edit(UpdateCase(current.id, fields))
        self.case_id = original.id if original is not None else None
        self.notify(
            "changes to this case dropped" + (f": {self.case_id} is as it was" if self.case_id else "")
        )

    def action_pick(self) -> None:
        if not self.commit():
            self.notify("fix the fields marked ✗ first", severity="error")
            return
        if self.case_id is None or self._case() is None:
            self.notify("give the new case an id and a question first", severity="warning")
            return
        self.rt.open_picker(self.case_id)

    def action_new(self) -> None:
        if not self.commit():
            self.notify("fix the fields marked ✗ first", severity="error")
            return
        if self.case_id is not None:
            self.after = self.case_id  # the new case goes right after this one
        self.case_id = None
        self.load_form()
        self.set_focus(self.query_one("#f-id"))  # at once: the next keys are the new id

    def action_duplicate(self) -> None:
        if not self.commit() or self.case_id is None or self._case() is None:
            return
        self.case_id = duplicate_case(self.rt, self.case_id)
        self.load_form()

    def action_delete(self) -> None:
        case = self._case()
        if case is None:
            self.dismiss()
            return

        def deleted() -> None:
            self.case_id = None
            self.dismiss()

        delete_case(self.rt, case.id, then=deleted)


DEFAULTS: dict[str, Any] = {
    "topic": None,
    "expected": (),
    "expect": "any",
    "must_contain": (),
    "answer": None,
    "unanswerable": False,
    "tags": (),
    "notes": None,
}


def _differences(case: Case, fields: dict[str, Any]) -> dict[str, Any]:
    """The ``update_case`` arguments that turn ``case`` into ``fields`` (None removes a key)."""
    out = {}
    for name, value in fields.items():
        if getattr(case, name) != value:
            out[name] = None if name in DEFAULTS and value == DEFAULTS[name] else value
    return out


def _values(case: Case) -> dict[str, Any]:
    return {
        "id": case.id,
        "topic": case.topic or "",
        "question": case.question,
        "expected": ", ".join(case.expected),
        "expect": case.expect,
        "must_contain": "\n".join(case.must_contain),
        "answer": case.answer or "",
        "unanswerable": case.unanswerable,
        "tags": ", ".join(case.tags),
        "notes": case.notes or "",
    }
