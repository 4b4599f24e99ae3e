"""``ragtriage triage`` as a user types it: bad input is a located error, exit 2,
no traceback, nothing opened."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragtriage.core.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run_file(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(ROOT / "testsets" / name, tmp_path / name)
    evaluate(tmp_path / "shop-es.yaml", "builtin", out=tmp_path / "run.jsonl")
    return tmp_path / "run.jsonl"


def test_missing_run_file(cli, tmp_path):
    r = cli("triage", tmp_path / "none.jsonl")
    assert r.returncode == 2 and "none.jsonl: run file not found" in r.stderr
    assert "Traceback" not in r.stderr


def test_not_a_run_file(cli, tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"id": "a"}\n', "utf-8")
    r = cli("triage", p)
    assert r.returncode == 2 and "x.jsonl:1" in r.stderr and "meta line" in r.stderr


def test_test_set_not_found_says_testset(cli, run_file, tmp_path):
    (tmp_path / "shop-es.yaml").unlink()
    r = cli("triage", run_file)
    assert r.returncode == 2 and "--testset" in r.stderr and "Traceback" not in r.stderr
    r = cli("triage", run_file, "--testset", tmp_path / "nope.yaml")
    assert r.returncode == 2 and "nope.yaml: test set not found" in r.stderr


def test_needs_a_terminal(cli, run_file):
    r = cli("triage", run_file)  # stdin/stdout are pipes here
    assert r.returncode == 2 and "needs a terminal" in r.stderr
