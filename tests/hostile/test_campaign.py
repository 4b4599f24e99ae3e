"""Issue 12's campaign as a standing test (every input through every command: no
traceback, no hang, exit 2 for bad input, inputs untouched, no secret, no raw escape), and
the defects it found after the first round of fixes, one test each."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import TESTSETS

from .campaign import call, campaign, failing


@pytest.fixture
def shop(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    return tmp_path / "shop-es.yaml"


def test_the_whole_campaign_holds(tmp_path):
    rows = campaign(tmp_path)
    assert len(rows) > 400
    bad = [(r["group"], r["name"], r["command"], r["code"], r["err"][-200:]) for r in failing(rows)]
    assert bad == []


def test_the_issue_19_campaign_holds(tmp_path):
    """People's files as outputs, report structure, escapes on every CLI path, cache
    forgery, special files, padded keys, signals on the CLI, concurrent writers."""
    from tests.conftest import ROOT

    from .campaign19 import campaign19

    rows = campaign19(tmp_path, ROOT)
    assert len(rows) > 120
    bad = [(r["group"], r["name"], r["code"], r["modified"], r["err"][-200:]) for r in failing(rows)]
    assert bad == []


def test_stale_reads_chunks_as_validate_does(shop, tmp_path):
    """Issue 12 #20: `start: "10"` was refused by validate and accepted by stale."""
    corpus = tmp_path / "shop-es.chunks.jsonl"
    corpus.write_text(corpus.read_text().replace('"start": 10,', '"start": "10",', 1))
    v = call(["validate", str(shop)], tmp_path, {})
    s = call(["stale", str(shop)], tmp_path, {})
    assert v["code"] == s["code"] == 2
    line = f"{corpus.name}:1: start: chunk 'entrega-1': start/end must be whole numbers"
    assert line in v["err"] and line in s["err"]


def test_stale_json_over_the_test_set_is_refused(shop, tmp_path):
    before = shop.read_bytes()
    r = call(["stale", str(shop), "--json", str(shop)], tmp_path, {})
    assert r["code"] == 2 and "--json" in r["err"]
    assert shop.read_bytes() == before


def _run(shop, tmp_path):
    run = tmp_path / "r.jsonl"
    assert call(["run", str(shop), "--quiet", "--out", str(run)], tmp_path, {})["code"] == 0
    return run


def test_triage_on_a_run_naming_a_number_as_its_test_set(shop, tmp_path):
    run = _run(shop, tmp_path)
    lines = run.read_text().splitlines()
    lines[0] = lines[0].replace('"testset":"', '"testset":5,"was":"', 1)
    run.write_text("\n".join(lines) + "\n")
    r = call(["triage", str(run)], tmp_path, {})
    assert not r["traceback"] and r["code"] == 2 and "test set" in r["err"]


def test_a_run_k_no_run_could_use_is_refused(shop, tmp_path):
    run = _run(shop, tmp_path)
    text = run.read_text()
    run.write_text(text.replace('"k":3', f'"k":{2**63}', 1))
    r = call(["check", str(shop), "--run", str(run)], tmp_path, {})
    assert r["code"] == 2 and f"{run}:1: k: must be at most 10,000" in r["err"]


def test_check_with_a_run_does_not_ignore_judge(shop, tmp_path):
    """Issue 14: `check --run RUN --judge SPEC` exited as if --judge had not been given."""
    run = _run(shop, tmp_path)
    r = call(
        ["check", str(shop), "--run", str(run), "--judge", "openai:http://127.0.0.1:9/v1#m"], tmp_path, {}
    )
    assert r["code"] == 2
    assert "--judge" in r["err"] and "holds no judge verdicts" in r["err"]


def _moved(shop, tmp_path):
    corpus = tmp_path / "shop-es.chunks.jsonl"
    new = tmp_path / "new.jsonl"
    new.write_text(corpus.read_text().replace('"entrega-1"', '"envio-1"'))
    return new


def test_validate_names_the_chunks_file_of_a_stale_label(shop, tmp_path):
    """Issue 11 #3: which chunks file was the label checked against? (--corpus or the set's)"""
    new = _moved(shop, tmp_path)
    r = call(["validate", str(shop), "--corpus", str(new)], tmp_path, {})
    assert (
        f"label 'entrega-1' is stale in {new} (moved; see `ragtriage stale {shop} --corpus {new}`)"
        in r["err"]
    )
    shutil.copy(new, tmp_path / "shop-es.chunks.jsonl")
    r = call(["validate", str(shop)], tmp_path, {})
    assert f"is stale in {tmp_path / 'shop-es.chunks.jsonl'} (moved; see `ragtriage stale`)" in r["err"]


def test_check_names_the_chunks_file_of_a_stale_label(shop, tmp_path):
    shutil.copy(_moved(shop, tmp_path), tmp_path / "shop-es.chunks.jsonl")
    corpus = tmp_path / "shop-es.chunks.jsonl"
    md, js = tmp_path / "m.md", tmp_path / "c.json"
    r = call(["check", str(shop), "--markdown", str(md), "--json", str(js)], tmp_path, {})
    assert r["code"] == 1
    assert f"label 'entrega-1' is moved in {corpus} (see `ragtriage stale`)" in r["out"]
    assert f"### ❌ Stale labels: 1 (against `{corpus}`)" in md.read_text()
    import json

    assert json.loads(js.read_text())["stale_corpus"] == str(corpus)
