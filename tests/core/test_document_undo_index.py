"""Undo gives the case index back as it was (shared with the snapshot, never rebuilt): the
ids an undone edit added are gone, those it removed are back, at their places."""

from __future__ import annotations

import shutil

from ragtriage.core.document import TestSetDocument
from tests.conftest import TESTSETS


def _doc(tmp_path) -> TestSetDocument:
    shutil.copy(TESTSETS / "shop-es.yaml", tmp_path / "shop-es.yaml")
    return TestSetDocument.load(tmp_path / "shop-es.yaml", use_cache=False)


def _consistent(doc: TestSetDocument) -> None:
    assert [doc.index_of(c.id) for c in doc.cases] == list(range(len(doc)))


def test_undo_and_redo_of_appends_in_a_batch_and_in_the_middle(tmp_path):
    doc = _doc(tmp_path)
    before = [c.id for c in doc.cases]
    with doc.batch():  # an import: appended one by one, one undo step
        for i in range(3):
            doc.add_case(None, id=f"nuevo-{i}", question="?")
    doc.add_case(2, id="medio", question="?")
    doc.remove_case("domingo")
    _consistent(doc)
    assert doc.undo() and "domingo" in doc and doc.index_of("domingo") == before.index("domingo") + 1
    _consistent(doc)
    assert doc.undo() and "medio" not in doc
    assert doc.undo() and not any(f"nuevo-{i}" in doc for i in range(3))
    assert [c.id for c in doc.cases] == before
    _consistent(doc)
    assert doc.redo() and doc.index_of("nuevo-2") == len(before) + 2
    doc.add_case(None, id="after-redo", question="?")  # changes the index the redo gave back
    _consistent(doc)
    assert doc.undo() and "after-redo" not in doc and "nuevo-2" in doc
    assert doc.undo() and "nuevo-0" not in doc
    _consistent(doc)
