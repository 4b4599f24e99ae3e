"""Review notes beside the test set (core/notes.py), the user's settings (core/userconfig.py),
where runs go and how one is continued (core/runpaths.py), saving from another thread
(core/testset/savecopy.py)."""

from __future__ import annotations

import json
import shlex
import shutil

from ragtriage.core.document import TestSetDocument
from ragtriage.core.judge.grades import default_grader
from ragtriage.core.notes import append_note, make_note, notes_path, read_notes
from ragtriage.core.runpaths import default_run_path, resume_command
from ragtriage.core.testset.savecopy import copy_for_save, saved_from
from ragtriage.core.userconfig import config_path, grader_name, read_config, write_config
from tests.conftest import TESTSETS


def test_notes_are_appended_and_the_latest_of_a_case_wins(tmp_path):
    ts = tmp_path / "shop-es.yaml"
    path = notes_path(ts)
    assert path == tmp_path / "shop-es.notes.jsonl"
    rec = {"id": "reembolso", "answer": "No lo sé."}
    append_note(
        path, make_note("reembolso", "  first  look ", rec, "run.jsonl", "ana", when="2026-01-01T00:00:00Z")
    )
    append_note(
        path, make_note("reembolso", "second look", rec, "run.jsonl", "ana", when="2026-01-02T00:00:00Z")
    )
    append_note(path, make_note("domingo", "to remove", None, None, "ana", when="2026-01-01T00:00:00Z"))
    append_note(path, make_note("domingo", "", None, None, "ana", when="2026-01-03T00:00:00Z"))  # removed
    path.write_bytes(path.read_bytes() + b"<<<<<<< HEAD\nnot json\n")
    notes, warnings = read_notes(path)
    assert list(notes) == ["reembolso"] and notes["reembolso"].note == "second look"
    assert notes["reembolso"].about(rec) and not notes["reembolso"].about({"answer": "otra"})
    assert len(warnings) == 2  # the conflict marker and the broken line: skipped, not fatal
    assert len(path.read_text("utf-8").splitlines()) == 6  # appended to, never rewritten


def test_the_grader_is_the_environment_then_the_kept_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("RAGTRIAGE_GRADER")
    assert grader_name() is None and read_config() == {}
    assert default_grader()  # the login name as a suggestion
    where = write_config(grader="ana", other="kept")
    assert where == config_path() and json.loads(where.read_text("utf-8")) == {
        "grader": "ana",
        "other": "kept",
    }
    assert grader_name() == "ana" == default_grader()
    write_config(grader=None)
    assert read_config() == {"other": "kept"}
    monkeypatch.setenv("RAGTRIAGE_GRADER", "luis")
    assert grader_name() == "luis"
    monkeypatch.setenv("RAGTRIAGE_CONFIG", str(tmp_path / "elsewhere.json"))
    assert config_path() == tmp_path / "elsewhere.json"


def test_runs_go_to_runs_and_the_resume_command_is_complete(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = default_run_path("testsets/shop-es.yaml")
    assert first.parent.as_posix() == "runs" and first.name.startswith("shop-es-")
    first.parent.mkdir()
    first.touch()
    assert default_run_path("testsets/shop-es.yaml") != first  # a taken name is never reused
    cmd = resume_command("my tests/shop.yaml", "runs/r.jsonl", "http://127.0.0.1:8000/ask", 5)
    assert shlex.split(cmd) == [
        "ragtriage", "run", "my tests/shop.yaml", "--out", "runs/r.jsonl", "--resume",
        "--system", "http://127.0.0.1:8000/ask", "--k", "5",
    ]  # fmt: skip


def test_a_copy_saves_what_was_there_and_an_edit_made_meanwhile_stays_unsaved(tmp_path):
    shutil.copy(TESTSETS / "shop-es.yaml", tmp_path / "shop-es.yaml")
    shutil.copy(TESTSETS / "shop-es.chunks.jsonl", tmp_path / "shop-es.chunks.jsonl")
    doc = TestSetDocument.load(tmp_path / "shop-es.yaml")
    doc.update_case("domingo", notes="before the save")
    copy = copy_for_save(doc)
    doc.update_case("domingo", notes="during the save")  # the interface thread goes on
    assert copy.save(record_labels=False)
    saved_from(doc, copy)
    on_disk = TestSetDocument.load(tmp_path / "shop-es.yaml", use_cache=False)
    assert on_disk.case("domingo").notes == "before the save"
    assert doc.dirty and doc.case("domingo").notes == "during the save"
    assert doc.save()  # and the next save writes it, with no conflict
    assert (
        TestSetDocument.load(tmp_path / "shop-es.yaml", use_cache=False).case("domingo").notes
        == "during the save"
    )
    assert not doc.dirty
