"""Case operations the Cases screen and the editor share: duplicate, unanswerable, delete.

Each is one edit through :meth:`RagtriageApp.edit` (one undo step) and says what it did."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .dialogs.common import confirm
from .edits import AddCase, RemoveCase, UpdateCase

if TYPE_CHECKING:
    from .app import RagtriageApp


def duplicate_case(app: RagtriageApp, case_id: str) -> str:
    """Copy a case right after itself under a fresh id; returns the new id."""
    doc = app.doc
    case = doc.case(case_id)
    n = 2
    new_id = f"{case_id}-copy"
    while new_id in doc:
        new_id = f"{case_id}-copy{n}"
        n += 1
    fields = case.model_dump(exclude_defaults=True)
    fields["id"] = new_id
    app.edit(AddCase(doc.index_of(case_id) + 1, fields))
    app.notify(f"duplicated as {new_id}")
    return new_id


def toggle_unanswerable(app: RagtriageApp, case_id: str) -> None:
    case = app.doc.case(case_id)
    if case.unanswerable:
        app.edit(UpdateCase(case_id, {"unanswerable": None}))
        app.notify(f"{case_id}: answerable again (✎ draft until a chunk is picked)")
    else:
        dropped = len(case.expected)
        app.edit(UpdateCase(case_id, {"unanswerable": True, "expected": None}))
        msg = f"{case_id}: ∅ unanswerable"
        if dropped:
            msg += f" · its {dropped} expected chunk{'s' * (dropped != 1)} removed (ctrl+z to undo)"
        app.notify(msg)


def delete_case(app: RagtriageApp, case_id: str, then: Callable[[], None] | None = None) -> None:
    """Ask, then delete ``case_id`` (ctrl+z undoes); ``then()`` runs after a deletion."""

    def answered(value: str | None) -> None:
        if value == "yes":
            app.edit(RemoveCase(case_id))
            app.notify(f"deleted {case_id} (ctrl+z to undo)")
            if then is not None:
                then()

    app.push_screen(confirm(f"Delete case “{case_id}”?", "delete it", title="Delete case"), answered)
