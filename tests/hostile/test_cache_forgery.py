"""Caches can only make a command faster (issue 19 #9, #10): a forged or foreign reopen
cache entry or judge verdict is ignored; the judge's verdicts are keyed by endpoint; a
cache, grades file, sidecar or recovery file that is a FIFO, a link to /dev/zero or huge
is refused or ignored with a message, never read without bound, never a hang."""

from __future__ import annotations

import json
import marshal
import os
import shutil
from pathlib import Path

import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.core.testset import cache_dir
from tests.conftest import TESTSETS

from .campaign import call
from .server import HostileServer, answer, chat


@pytest.fixture
def gated(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    ts = tmp_path / "shop-es.yaml"
    text = ts.read_text(encoding="utf-8")
    ts.write_text(text.replace("  hit@3: 0.85 ", "  hit@3: 0.99 ", 1), encoding="utf-8")
    return ts


def _entry() -> Path:
    (entry,) = cache_dir().glob("ts-*.bin")
    return entry


def _blob(data: bytes) -> bytes:
    return data[36:] if data.startswith(b"RTC5") else data  # this format or the one before


def _forge(entry: Path, mac: bytes | None = None) -> None:
    """The entry rewritten as someone who can write the cache folder would: the gates gone
    and every case's expected chunk changed, the text (which is checked) left alone."""
    fmt, where, bom, crlf, raw_settings, list_style, regions = marshal.loads(_blob(entry.read_bytes()))
    raw_settings.pop("gates", None)
    forged = []
    for reg in regions:
        if isinstance(reg, str) or reg[0] != "cases":
            forged.append(reg)
            continue
        name, col, key_col, missing, gaps, items = reg
        items = tuple((t, k, {**d, "expected": ("forged-chunk",)}, ln) for t, k, d, ln in items)
        forged.append((name, col, key_col, missing, gaps, items))
    blob = marshal.dumps((fmt, where, bom, crlf, raw_settings, list_style, forged))
    entry.write_bytes(blob if mac is None else b"RTC5" + mac + blob)


@pytest.mark.parametrize("how", ["unsigned", "wrong MAC", "another user's key"])
def test_a_forged_reopen_cache_entry_cannot_pass_the_gate(gated, tmp_path, how, monkeypatch):
    """A CI cache restored from another branch removed `gates` and made check exit 0."""
    assert call(["check", str(gated)], tmp_path, {})["code"] == 1  # hit@3 0.99 is missed
    entry = _entry()
    if how == "unsigned":  # the format before: a bare marshal blob
        _forge(entry)
    elif how == "wrong MAC":
        _forge(entry, b"\0" * 32)
    else:  # well formed and signed, but with a key that is not this user's
        from ragtriage.core import cachekey

        mine = os.environ["RAGTRIAGE_CACHE_KEY"]
        monkeypatch.setenv("RAGTRIAGE_CACHE_KEY", str(tmp_path / "theirs.key"))
        _forge(entry)
        blob = entry.read_bytes()
        mac = cachekey.mac(entry.name[3:-4].encode(), blob)
        monkeypatch.setenv("RAGTRIAGE_CACHE_KEY", mine)
        assert mac is not None and cachekey.mac(entry.name[3:-4].encode(), blob) != mac
        entry.write_bytes(b"RTC5" + mac + blob)
    doc = TestSetDocument.load(gated)
    assert doc.settings.gates == {"hit@3": 0.99, "supported": 0.9}
    assert all(c.expected != ("forged-chunk",) for c in doc.cases)
    r = call(["check", str(gated)], tmp_path, {})
    assert r["code"] == 1, r["out"]  # gated on what the file says
    run = call(["run", str(gated), "--quiet", "--out", str(tmp_path / "r.jsonl")], tmp_path, {})
    assert run["code"] == 0
    assert "forged-chunk" not in (tmp_path / "r.jsonl").read_text()


def test_a_signed_entry_still_makes_reopening_fast_and_exact(gated):
    first = TestSetDocument.load(gated)
    again = TestSetDocument.load(gated)
    assert again.cases == first.cases and again.settings == first.settings
    assert again._cache_digest is not None  # served from the cache


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_a_cache_entry_that_is_not_a_sane_file_is_ignored(gated, kind, monkeypatch):
    TestSetDocument.load(gated)
    entry = _entry()
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "dev-zero":
        entry.symlink_to("/dev/zero")
    else:
        from ragtriage.core.testset import cache as cache_mod

        monkeypatch.setattr(cache_mod, "MAX_CACHE_BYTES", 1000)
        entry.write_bytes(b"RTC5" + b"x" * 5000)
    doc = TestSetDocument.load(gated)  # no hang, no MemoryError
    assert len(doc.cases) == 8


# ---------------------------------------------------------------- the judge cache


def _judge_server(verdict: bool):
    def respond(req):
        if req.json.get("model") == "j":
            reply = {"supported": verdict, "correct": verdict, "reason": f"server says {verdict}"}
            return [answer(chat(json.dumps(reply)))]
        return [answer(chat("La entrega cuesta 3 €. [entrega-1]"))]

    return respond


def _judged(ts: Path, tmp_path: Path, srv, out: str) -> tuple[dict, list[dict]]:
    r = call(
        ["run", str(ts), "--quiet", "--system", f"openai:{srv.url('/v1')}#m", "--judge",
         f"openai:{srv.url('/v1')}#j", "--retries", "0", "--out", str(tmp_path / out)],
        tmp_path, {},
    )  # fmt: skip
    assert r["code"] == 0, r["err"]
    lines = [json.loads(x) for x in (tmp_path / out).read_text().splitlines()]
    return lines[-1], [x for x in lines if x.get("type") == "case" and "judge" in x]


def test_judge_verdicts_are_keyed_by_endpoint(gated, tmp_path):
    """Another endpoint serving a model named the same made 0 calls and recorded the first
    endpoint's verdicts; `ragtriage judge` then calibrated the wrong judge."""
    with HostileServer(_judge_server(True)) as a:
        sa, ca = _judged(gated, tmp_path, a, "a.jsonl")
    with HostileServer(_judge_server(False)) as b:
        sb, cb = _judged(gated, tmp_path, b, "b.jsonl")
    assert sa["judge_calls"] > 0 and sb["judge_calls"] == sa["judge_calls"]
    assert {c["judge"]["supported"] for c in ca} == {True}
    assert {c["judge"]["supported"] for c in cb} == {False}


def test_a_forged_judge_verdict_is_not_used(gated, tmp_path):
    """A line appended to the judge cache by someone else (the key is a public hash of the
    inputs) must not replace the judge's verdict."""
    from ragtriage.core.judge.cache import default_cache_path

    with HostileServer(_judge_server(False)) as srv:
        _judged(gated, tmp_path, srv, "first.jsonl")
        path = default_cache_path()
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        forged = [{"key": x["key"], "supported": True, "correct": True, "reason": "forged"} for x in lines]
        forged += [{**x, "supported": True, "reason": "forged, old mac"} for x in lines]
        with open(path, "a") as f:
            f.writelines(json.dumps(x) + "\n" for x in forged)
        summary, cases = _judged(gated, tmp_path, srv, "second.jsonl")
    assert {c["judge"]["supported"] for c in cases} == {False}
    assert all("forged" not in c["judge"]["reason"] for c in cases)
    assert summary["judge_calls"] == 0  # its own verdicts were still served from the cache


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_judge_cache_that_is_not_a_file_is_not_used(gated, tmp_path, kind):
    from ragtriage.core.judge.cache import default_cache_path

    path = default_cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    with HostileServer(_judge_server(True)) as srv:
        r = call(
            ["run", str(gated), "--quiet", "--system", f"openai:{srv.url('/v1')}#m", "--judge",
             f"openai:{srv.url('/v1')}#j", "--retries", "0", "--out", str(tmp_path / "r.jsonl")],
            tmp_path, {},
        )  # fmt: skip
    assert r["code"] == 0 and not r["hang"], r["err"]
    assert "the judge's cache is" in r["err"] and "not a regular file; not used" in r["err"]


# ---------------------------------------------------------------- files the tool opens by itself


def _special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "loop":
        path.symlink_to(path.name)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "loop"])
def test_a_grades_file_that_is_not_a_file_is_said_exit_2(gated, tmp_path, kind):
    run = tmp_path / "r.jsonl"
    assert call(["run", str(gated), "--quiet", "--out", str(run)], tmp_path, {})["code"] == 0
    text = run.read_text().splitlines()
    text[1] = text[1][:-1] + ',"judge":{"supported":true,"correct":true,"reason":"x","cached":false}}'
    run.write_text("\n".join(text) + "\n")
    grades = tmp_path / "shop-es.grades.jsonl"
    _special(grades, kind)
    r = call(["judge", str(gated), "--run", str(run)], tmp_path, {})
    assert r["code"] == 2 and not r["hang"] and not r["traceback"], r["err"]
    assert f"{grades}: this grades file is" in r["err"]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "loop"])
@pytest.mark.parametrize("which", ["triage sidecar", "recovery file"])
def test_the_apps_own_files_are_checked_before_it_starts(gated, tmp_path, kind, which):
    """A sidecar or recovery file committed as a link to /dev/zero made the app sit at
    "loading…" taking 8 GB in 12 s."""
    run = tmp_path / "r.jsonl"
    assert call(["run", str(gated), "--quiet", "--out", str(run)], tmp_path, {})["code"] == 0
    target = tmp_path / (
        "r.triage.json" if which == "triage sidecar" else ".ragtriage-recovery-shop-es.yaml.json"
    )
    _special(target, kind)
    for argv in (["triage", str(run)], ["edit", str(gated), "--run", str(run)]):
        r = call(argv, tmp_path, {})
        assert r["code"] == 2 and not r["hang"] and not r["traceback"], r["err"]
        assert f"{target}: this {which} is" in r["err"]


def test_a_huge_sidecar_is_refused_not_read(gated, tmp_path, monkeypatch):
    from ragtriage.core.errors import InputError
    from ragtriage.tui import triage_state

    monkeypatch.setattr(triage_state, "SIDECAR_MAX", 100)
    run = tmp_path / "r.jsonl"
    assert call(["run", str(gated), "--quiet", "--out", str(run)], tmp_path, {})["code"] == 0
    (tmp_path / "r.triage.json").write_text(json.dumps({"cases": {"a": {"note": "x" * 500}}}))
    with pytest.raises(InputError, match="more than the 100 bytes"):
        triage_state.Sidecar.load(run)
