"""Concurrent writers of one test set (issue 19 #1): no save that returned True is ever
lost; the later writer is refused with ConflictError instead."""

from __future__ import annotations

import shutil
import threading

import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.core.errors import ConflictError
from ragtriage.core.testset import saving
from tests.conftest import TESTSETS

from .writers import race


@pytest.fixture
def shop(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    return tmp_path / "shop-es.yaml"


def test_two_processes_saving_at_once_lose_nothing(shop):
    """Two real processes loop load -> update_case(own case) -> save() for 2 s each
    (the old code lost about a third of the saves that returned True)."""
    r = race(shop, seconds=2.0, writers=2)
    assert r["errors"] == 0
    assert r["saves"] > 0
    assert r["lost"] == 0
    doc = TestSetDocument.load(shop, use_cache=False)  # the file is whole and parses
    assert len(doc.cases) == 8


def test_a_save_inside_another_save_is_refused_not_lost(shop, monkeypatch):
    """The window between "changed on disk?" and "replace": a second writer saving there
    was accepted and then overwritten by the first (its save lost). Now it waits for the
    lock, and once the first save is done its check sees the change: ConflictError."""
    a = TestSetDocument.load(shop, use_cache=False)
    b = TestSetDocument.load(shop, use_cache=False)
    a.update_case(a.cases[0].id, notes="from A")
    b.update_case(b.cases[1].id, notes="from B")
    monkeypatch.setattr(saving, "LOCK_WAIT", 0.05)
    real = saving.atomic_write
    seen: list[str] = []

    def inside(path, data, **kw):
        # A holds the lock and has passed its check: B saves now (another open file
        # description: flock refuses it even from this thread)
        try:
            b.save(record_labels=False)
            seen.append("B saved")
        except ConflictError as e:
            seen.append(str(e))
        return real(path, data, **kw)

    monkeypatch.setattr(saving, "atomic_write", inside)
    assert a.save(record_labels=False)
    monkeypatch.setattr(saving, "atomic_write", real)
    assert seen and "another process has been saving it" in seen[0]
    with pytest.raises(ConflictError, match="changed on disk"):
        b.save(record_labels=False)
    text = shop.read_text(encoding="utf-8")
    assert "from A" in text and "from B" not in text


def test_a_waiting_writer_locks_the_file_that_replaced_the_one_it_waited_on(shop):
    """A save replaces the file (a new inode): whoever waited on the old one must lock the
    new one, else two saves could again run their check-and-replace at once."""
    got = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def holder():
        with saving.locked(shop):
            got.set()
            release.wait(5)
            shop.write_text(shop.read_text(encoding="utf-8"), encoding="utf-8")  # same inode
            tmp = shop.with_name("new.yaml")
            tmp.write_text(shop.read_text(encoding="utf-8"), encoding="utf-8")
            tmp.replace(shop)  # a new inode at the path
            order.append("holder done")

    t = threading.Thread(target=holder)
    t.start()
    got.wait(5)
    release.set()
    with saving.locked(shop) as held:
        order.append("waiter in")
        import os

        fd_ino = os.stat(shop).st_ino
        assert held
    t.join()
    assert order == ["holder done", "waiter in"]
    assert fd_ino == os.stat(shop).st_ino


def test_a_new_test_set_is_created_exclusively(shop, tmp_path, monkeypatch):
    """`import -o NEW` and a save-as: if another process makes the file between the check
    and the write, that file is kept and the save is refused."""
    new = tmp_path / "new.yaml"
    doc = TestSetDocument.create(new, corpus="shop-es.chunks.jsonl")
    doc.add_case(id="a", question="¿Qué?")
    real = saving.atomic_write

    def meanwhile(path, data, **kw):  # after the check, before the write
        new.write_text("someone else's file\n", encoding="utf-8")
        return real(path, data, **kw)

    monkeypatch.setattr(saving, "atomic_write", meanwhile)
    with pytest.raises(ConflictError, match="already exists"):
        doc.save()
    assert new.read_text(encoding="utf-8") == "someone else's file\n"
    assert not list(tmp_path.glob(".new.yaml.*.tmp"))


def test_the_fingerprint_is_of_the_bytes_written(shop, monkeypatch):
    """After a save the document remembers its own file, not whatever is at the path a
    moment later: a replace right after our save is a change, seen by the next save."""
    doc = TestSetDocument.load(shop, use_cache=False)
    doc.update_case(doc.cases[0].id, notes="mine")
    real = saving.atomic_write

    def then_replaced(path, data, **kw):
        st = real(path, data, **kw)
        other = shop.with_name("other.yaml")
        other.write_bytes(data.replace(b"mine", b"theirs"))
        other.replace(shop)  # another writer, right after ours, before we looked
        return st

    monkeypatch.setattr(saving, "atomic_write", then_replaced)
    doc.save(record_labels=False)
    monkeypatch.setattr(saving, "atomic_write", real)
    assert doc.changed_on_disk()
    doc.update_case(doc.cases[1].id, notes="more")
    with pytest.raises(ConflictError):
        doc.save(record_labels=False)
    assert b"theirs" in shop.read_bytes()
