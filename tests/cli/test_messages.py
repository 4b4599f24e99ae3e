"""Messages a person can act on (issue 19 #12): each names the file (and the test set's
line when the test set named it), and every command says the same about the same file."""

from __future__ import annotations

import contextlib
import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TESTSETS
from tests.hostile.campaign import call
from tests.hostile.server import HostileServer


@pytest.fixture
def shop(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    return tmp_path / "shop-es.yaml"


def _with_corpus(shop: Path, corpus: str) -> Path:
    text = shop.read_text(encoding="utf-8").replace("corpus: shop-es.chunks.jsonl", f"corpus: {corpus}", 1)
    out = shop.with_name("named.yaml")
    out.write_text(text, encoding="utf-8")
    return out


CORPORA = {
    "/proc/self/mem": ("/proc/self/mem", "/proc/self/mem: cannot read this chunks file (Input/output error)"),
    "a link loop": ("loop.jsonl", "loop.jsonl: is a symbolic link that loops"),
    "a 5,000-character name": ("c" * 5000 + ".jsonl", "characters): file name too long for this system"),
    "missing": ("gone.jsonl", "gone.jsonl: chunks file not found"),
    "a folder": ("folder.jsonl", "folder.jsonl: is a folder, not a chunks file"),
}


@pytest.mark.parametrize("what", list(CORPORA))
@pytest.mark.parametrize("command", ["validate", "stale", "check", "run"])
def test_an_unusable_corpus_is_said_at_the_test_sets_line(shop, tmp_path, command, what):
    """Was: `ragtriage: Input/output error` (no file), "not found" for a link loop, "File
    name too long" without the test set's file:line, and stale exit 1 (an empty corpus);
    `run` named the chunks file without the test set's line."""
    name, words = CORPORA[what]
    (tmp_path / "loop.jsonl").symlink_to("loop.jsonl")
    (tmp_path / "folder.jsonl").mkdir()
    ts = _with_corpus(shop, name)
    r = call([command, str(ts)], tmp_path, {})
    assert r["code"] == 2 and not r["traceback"], r["err"]
    assert f"{ts}:16: corpus: " in r["err"] and words in r["err"], r["err"]


def test_sweep_takes_a_threshold_list_that_starts_with_a_minus(shop, tmp_path):
    r = call(["sweep", str(shop), "--k", "1-2", "--threshold", "-0.2,0.5"], tmp_path, {})
    assert r["code"] == 0, r["err"]
    assert "-0.2" in r["out"] and "0.5" in r["out"]
    r = call(["sweep", str(shop), "--k", "-1,2"], tmp_path, {})
    assert r["code"] == 2 and "--k: '-1,2'" in r["err"]  # our parser's words, not argparse's


def test_a_gzip_answer_is_said_to_be_gzip(shop, tmp_path):
    body = gzip.compress(json.dumps({"ranking": ["entrega-1"], "answer": "x"}).encode())

    def respond(req):
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n"
        return [head.encode() + body]

    with HostileServer(respond) as srv:
        r = call(["run", str(shop), "--quiet", "--system", srv.url(), "--retries", "0",
                  "--out", str(tmp_path / "r.jsonl")], tmp_path, {})  # fmt: skip
    assert r["code"] == 1, r["err"]  # every case failed: said, exit 1
    assert "answered gzip-compressed bytes, not JSON" in r["err"]
    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    errors = [x.get("error") for x in lines if x.get("type") == "case"]
    assert errors and all("answered gzip-compressed bytes, not JSON" in e for e in errors), errors


def test_ids_that_differ_only_by_normalisation_are_warned(shop, tmp_path):
    text = shop.read_text(encoding="utf-8")
    text = text.replace("- id: precio-entrega", "- id: café", 1).replace(
        "- id: plazo-entrega", '- id: "cafe\\u0301"', 1
    )
    shop.write_text(text, encoding="utf-8")
    r = call(["validate", str(shop)], tmp_path, {})
    assert r["code"] == 1, r["err"]
    assert "only by Unicode normalisation: 'cafe\\u0301' and 'caf\\xe9' print the same" in r["err"]


# ---------------------------------------------------------------- real file systems (a tmpfs)


@contextlib.contextmanager
def _tmpfs(where: Path, size: str, read_only: bool = False, fill=None):
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)]).returncode:
        pytest.skip("mounting a tmpfs needs root (as in CI)")
    try:
        if fill:
            fill(where)
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)])


def _copy_shop(d: Path) -> None:
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, d / name)


def test_disk_full_mid_run_names_the_run_file(shop, tmp_path):
    with _tmpfs(tmp_path / "full", "16k") as d:
        (d / "filler").write_bytes(b"x" * 12000)
        out = d / "run.jsonl"
        r = call(["run", str(shop), "--quiet", "--out", str(out)], tmp_path, {})
    assert r["code"] == 2 and not r["traceback"], r["err"]
    assert f"{out}: No space left on device" in r["err"], r["err"]


def test_disk_full_mid_import_names_the_new_test_set(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": f"c{i}", "question": "¿q?" * 50}) + "\n" for i in range(200)))
    with _tmpfs(tmp_path / "full", "16k") as d:
        out = d / "new.yaml"
        r = call(["import", str(src), "--format", "jsonl", "-o", str(out)], tmp_path, {})
        assert not out.exists() and not list(d.glob(".new.yaml.*"))  # nothing half-written
    assert r["code"] == 2 and not r["traceback"], r["err"]
    assert f"{out}: No space left on device" in r["err"], r["err"]


def test_a_read_only_file_system_is_said_as_such(tmp_path):
    with _tmpfs(tmp_path / "ro", "1m", read_only=True, fill=_copy_shop) as d:
        from ragtriage.core.document import TestSetDocument
        from ragtriage.core.errors import TestSetError
        from ragtriage.core.testset.ondisk import unsaveable

        ts = d / "shop-es.yaml"
        assert "read-only file system: nothing can be saved here" in (unsaveable(ts) or "")
        doc = TestSetDocument.load(ts)
        doc.update_case(doc.cases[0].id, notes="x")
        with pytest.raises(TestSetError, match="read-only file system") as e:
            doc.save()
        assert "chmod" not in str(e.value)
        r = call(["stale", str(ts), "--fix", "--corpus", str(d / "shop-es.chunks.jsonl")], tmp_path, {})
        assert r["code"] in (0, 1)  # nothing to fix: no save attempted


async def test_the_app_says_on_opening_that_nothing_can_be_saved(tmp_path):
    """On a read-only file system the app suggested chmod at the first save and never
    said on opening that nothing could be saved."""
    from ragtriage.tui import make_app
    from tests.tui.conftest import settle

    with _tmpfs(tmp_path / "ro", "1m", read_only=True, fill=_copy_shop) as d:
        app = make_app(d / "shop-es.yaml", recovery=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            toasts = [str(n.message) for n in app._notifications]
    assert any("read-only file system: nothing can be saved here" in t for t in toasts), toasts
