"""A test set whose last case lacks its final newline stays valid YAML through moves,
adds and undos (only the last entry is looked at when another one comes after it)."""

from __future__ import annotations

import yaml

from ragtriage.core.document import TestSetDocument

TEXT = "cases:\n  - id: a\n    question: A?\n  - id: b\n    question: B?\n  - id: c\n    question: C?"


def ids_of(doc: TestSetDocument) -> list[str]:
    return [c["id"] for c in yaml.safe_load(doc.render().decode())["cases"]]


def test_moving_the_last_case_up_gives_it_its_newline(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(TEXT, "utf-8")
    doc = TestSetDocument.load(p, use_cache=False)
    doc.move_case("c", 0)
    assert ids_of(doc) == ["c", "a", "b"]


def test_adds_and_moves_after_undos_stay_valid(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(TEXT, "utf-8")
    doc = TestSetDocument.load(p, use_cache=False)
    doc.add_case(question="X?", id="x")
    doc.undo()
    assert doc.render().decode() == TEXT  # the undo is byte-identical, newline-less end included
    doc.move_case("c", 1)
    doc.undo()
    doc.duplicate_case("c", "c2")
    assert ids_of(doc) == ["a", "b", "c", "c2"]
    doc.undo()
    doc.move_case("c", 0)
    doc.undo()
    doc.add_case(1, question="Y?", id="y")
    assert ids_of(doc) == ["a", "y", "b", "c"]
