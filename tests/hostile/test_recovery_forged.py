"""Issue 19 item 4, a fresh campaign over the recovery design: recovery files that a
hostile pull request commits, a broken disk leaves, or another version wrote.

Each forged file is put beside the test set as an orphaned window's file; the app is
opened through Pilot and every prompt is answered "restore". What must hold for every
input: the app neither crashes nor hangs; the test set on disk is unchanged until the
person saves; nothing in the file is parsed as markup or reaches the terminal raw; a
save afterwards (when the restore was accepted) writes a test set that loads again; and
an edit that cannot apply is reported, not half-applied."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.tui import make_app
from ragtriage.tui.dialogs.common import Choice
from ragtriage.tui.recovery import PREFIX, find_recoveries
from tests.tui.conftest import settle

SIZE = (100, 30)
UPDATE = "update_case"


def _deep(n: int) -> object:
    value: object = {"op": "batch", "args": [], "kwargs": {}}
    for _ in range(n):
        value = {"op": "batch", "args": [value], "kwargs": {}}
    return value


def _op(name: str, *args: object, **kwargs: object) -> dict:
    return {"op": name, "args": list(args), "kwargs": kwargs}


# name -> the "ops" list (or a whole-file replacement under the key "raw")
FORGED: dict[str, object] = {
    "ops-not-a-list": "update_case",
    "ops-of-numbers": [1, 2, None],
    "unknown-op": [_op("exec", "rm -rf /")],
    "update-no-args": [_op(UPDATE, question="x")],
    "update-two-args": [_op(UPDATE, "devolucion", "x", question="x")],
    "update-args-not-list": [{"op": UPDATE, "args": "devolucion", "kwargs": {"question": "x"}}],
    "update-missing-case": [_op(UPDATE, "no-existe", question="x")],
    "update-id-number": [_op(UPDATE, 12345, question="x")],
    "update-unknown-field": [_op(UPDATE, "devolucion", evil="x")],
    "update-expected-number": [_op(UPDATE, "devolucion", expected=5)],
    "update-question-list": [_op(UPDATE, "devolucion", question=["a", "b"])],
    "update-unanswerable-text": [_op(UPDATE, "devolucion", unanswerable="yes")],
    "update-kwargs-list": [{"op": UPDATE, "args": ["devolucion"], "kwargs": ["question"]}],
    "update-markup-click": [_op(UPDATE, "devolucion", question="[@click=app.quit]q[/]")],
    "update-escape-osc52": [_op(UPDATE, "devolucion", notes="\x1b]52;c;cHduZWQ=\x07 \x9b2J ‮x")],
    "update-nul-and-surrogate": [_op(UPDATE, "devolucion", question="a\x00b\ud800c")],
    "update-huge-text": [_op(UPDATE, "devolucion", notes="x" * 2_000_000)],
    "add-duplicate-id": [_op("add_case", id="devolucion", question="¿otra?")],
    "add-no-id": [_op("add_case", question="¿sin id?")],
    "add-markup-id": [_op("add_case", id="m[/]x", question="¿markup?")],
    "add-control-id": [_op("add_case", id="a\x1b[2Jb", question="¿escape?")],
    "add-bad-fields": [_op("add_case", id="nuevo-1", question=None, expected={"a": 1})],
    "remove-missing": [_op("remove_case", "no-existe")],
    "remove-all-then-update": [_op("remove_case", "devolucion"), _op(UPDATE, "devolucion", question="x")],
    "move-huge-index": [_op("move_case", "devolucion", 10**30)],
    "move-negative-index": [_op("move_case", "devolucion", -7)],
    "move-index-text": [_op("move_case", "devolucion", "arriba")],
    "set-label-garbage": [_op("set_label", {"a": 1}, [1, 2, 3])],
    "point-corpus-dev-zero": [_op("point_corpus", "/dev/zero")],
    "point-corpus-traversal": [_op("point_corpus", "../../../../etc/passwd")],
    "point-corpus-markup": [_op("point_corpus", "[@click=app.save]x[/].jsonl")],
    "batch-not-list": [{"op": "batch", "args": "x", "kwargs": {}}],
    "batch-of-garbage": [_op("batch", 1, "x", None)],
    "batch-half-valid": [
        _op("batch", _op(UPDATE, "devolucion", notes="ok"), _op(UPDATE, "no-existe", notes="x"))
    ],
    "batch-deep-nesting": [_deep(200)],
    "undo-storm": [{"op": "undo"}] * 500 + [{"op": "redo"}] * 500,
    "many-ops": [_op(UPDATE, "devolucion", notes=f"nota {i}") for i in range(20_000)],
    "typing-garbage": {"raw": {"version": 2, "ops": [], "typing": [1, {"op": UPDATE}, {"op": "exec"}]}},
    "typing-invalid-value": {
        "raw": {"version": 2, "ops": [], "typing": [_op(UPDATE, "devolucion", expected=7, notes="kept")]}
    },
    "json-deep-nesting": {"raw_text": "[" * 100_000 + "]" * 100_000},
    "json-not-utf8": {"raw_bytes": b"\xff\xfe{\x00}"},
    "json-truncated": {"raw_text": '{"version": 2, "ops": [{"op": "update_case", "args": ["devol'},
    "version-future": {"raw": {"version": 999, "ops": [_op(UPDATE, "devolucion", notes="futuro")]}},
    "owner-markup": {
        "raw": {
            "version": 2,
            "owner": {"pid": 1, "host": "[@click=app.quit]h", "started": "[b]2026[/b]\x1b]0;t\x07-12-07"},
            "ops": [_op(UPDATE, "devolucion", notes="x")],
        }
    },
}


def _write(testset: Path, name: str, spec: object) -> Path:
    path = testset.with_name(f"{PREFIX}{testset.name}.4242-{abs(hash(name)) % 16**8:08x}.json")
    owner = {"pid": 4242, "host": socket.gethostname() + "-gone", "started": "2026-12-07T10:00:00+0000"}
    if isinstance(spec, dict) and "raw_text" in spec:
        path.write_text(str(spec["raw_text"]), encoding="utf-8")
    elif isinstance(spec, dict) and "raw_bytes" in spec:
        path.write_bytes(spec["raw_bytes"])
    elif isinstance(spec, dict) and "raw" in spec:
        path.write_text(json.dumps(spec["raw"]), encoding="utf-8")
    else:
        path.write_text(json.dumps({"version": 2, "owner": owner, "ops": spec}), encoding="utf-8")
    return path


def _terminal_safe(text: str) -> bool:
    return not any(c in text for c in ("\x1b", "\x9b", "\u202e", "\x00"))


@pytest.mark.parametrize("name", sorted(FORGED))
async def test_a_forged_recovery_file_neither_crashes_nor_acts(testset, name):
    before = testset.read_bytes()
    _write(testset, name, FORGED[name])
    app = make_app(testset)
    shown: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for _ in range(3):  # every prompt answered "restore"
            if not isinstance(app.screen, Choice):
                break
            shown.append(str(app.screen.question))
            await pilot.press("r")
            await settle(app, pilot)
        assert testset.read_bytes() == before  # nothing is written until the person saves
        assert app.is_running  # no markup acted (a [@click=app.quit] would end it)
        for text in shown:
            assert _terminal_safe(text), text[:200]
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        for _ in range(3):  # a save that asks (labels, a forced save) is answered no
            if app.screen is app.screen_stack[0] or not hasattr(app.screen, "dismiss"):
                break
            await pilot.press("escape")
            await settle(app, pilot)
    # whatever was saved loads again as a valid test set
    TestSetDocument.load(testset, use_cache=False)
    for path in testset.parent.iterdir():
        assert not (path.is_symlink() and not path.exists())
    assert app.return_code in (None, 0)


def test_a_deeply_nested_or_unreadable_file_is_left_alone_not_offered(testset):
    """Files the tool cannot read as a recovery file are kept (maybe a newer version's)
    and not offered; reading them never raises."""
    paths = [_write(testset, n, FORGED[n]) for n in ("json-deep-nesting", "json-not-utf8", "json-truncated")]
    assert find_recoveries(testset) == []
    assert all(p.exists() for p in paths)


def test_a_forged_file_cannot_name_a_file_outside_the_folder(testset, tmp_path):
    """Removing a recovery file only ever removes the file found beside the test set:
    a symlink named like one is removed as a link, its target kept."""
    victim = tmp_path / "victim.txt"
    victim.write_text("a person's file")
    link = testset.with_name(f"{PREFIX}{testset.name}.4243-0000beef.json")
    os.symlink(victim, link)
    for r in find_recoveries(testset):
        r.discard()
    assert victim.read_text() == "a person's file"


DEEP = "[" * 100_000 + "]" * 100_000


def test_a_deeply_nested_triage_sidecar_is_read_as_none(tmp_path):
    """A sidecar committed nested past what ``json`` reads is ignored (as a file that is
    not JSON is), never a RecursionError that ends ``triage``."""
    from ragtriage.tui.triage_state import Sidecar, sidecar_path

    run = tmp_path / "r.jsonl"
    sidecar_path(run).write_text(DEEP, encoding="utf-8")
    side = Sidecar.load(run)
    assert side.note("any") == ""
    assert sidecar_path(run).read_text(encoding="utf-8") == DEEP


def test_a_deeply_nested_config_file_is_read_as_empty(tmp_path, monkeypatch):
    from ragtriage.core.userconfig import read_config

    cfg = tmp_path / "config.json"
    cfg.write_text(DEEP, encoding="utf-8")
    monkeypatch.setenv("RAGTRIAGE_CONFIG", str(cfg))
    assert read_config() == {}


def test_a_restore_writes_this_window_s_recovery_file_once(testset, monkeypatch):
    """Restoring N edits writes the window's own file once, not N times (20,000 logged
    edits took minutes: every edit rewrote the whole, growing log)."""
    from ragtriage.tui.recovery import Recovery, RecoveryFile
    from ragtriage.tui.session import Session

    writes: list[int] = []
    real = RecoveryFile.write
    monkeypatch.setattr(
        RecoveryFile, "write", lambda self, data: (writes.append(len(data["ops"])), real(self, data))
    )
    s = Session(TestSetDocument.load(testset, use_cache=False))
    ops = [_op(UPDATE, "devolucion", notes=f"nota {i}") for i in range(50)] + [{"op": "undo"}]
    applied, problems = s.replay(Recovery(testset.with_name("x.json"), ops))
    assert (applied, problems) == (50, [])
    assert writes == [51]
    assert s.doc.case("devolucion").notes == "nota 48"
    assert json.loads(s.recovery_file.read_text(encoding="utf-8"))["ops"][-1] == {"op": "undo"}


def _disk_full(*a, **k):
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("how", ["typed", "edit"])
async def test_the_person_is_told_once_when_edits_cannot_be_kept(testset, monkeypatch, how):
    """Disk full (or a folder that refuses files): the recovery file cannot be written, so
    a crash would lose the edits. The person is told once, in words, not on every key."""
    import tempfile

    from ragtriage.tui.screens.editor import EditorScreen
    from tests.tui.conftest import until

    app = make_app(testset)
    told: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        real_notify = app.notify
        monkeypatch.setattr(app, "notify", lambda msg, **kw: (told.append(str(msg)), real_notify(msg, **kw)))
        monkeypatch.setattr(tempfile, "mkstemp", _disk_full)
        if how == "edit":
            await pilot.press("j", "u")
            await settle(app, pilot)
            await pilot.press("j", "u")
            await settle(app, pilot)
        else:
            await pilot.press("enter")
            await settle(app, pilot)
            assert isinstance(app.screen, EditorScreen)
            await pilot.press("end", *" uno")
            await until(pilot, lambda: any("recovery" in t for t in told))
            await pilot.press(*" dos")
            await pilot.pause(0.8)
        warned = [t for t in told if "not being kept for recovery" in t]
        assert len(warned) == 1, told
        assert "No space left on device" in warned[0] and "ctrl+s" in warned[0]
        monkeypatch.undo()
