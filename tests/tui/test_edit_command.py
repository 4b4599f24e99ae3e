"""``ragtriage edit`` as a subprocess: bad input is a located message and exit 2, no traceback."""

from __future__ import annotations


def test_missing_test_set(cli, tmp_path):
    r = cli("edit", tmp_path / "nope.yaml")
    assert r.returncode == 2
    assert "nope.yaml: test set not found" in r.stderr and "Traceback" not in r.stderr


def test_missing_run_file(cli, shop):
    r = cli("edit", shop, "--run", shop.parent / "missing.jsonl")
    assert r.returncode == 2 and "run file not found" in r.stderr


def test_needs_a_terminal(cli, shop):
    r = cli("edit", shop)
    assert r.returncode == 2 and "needs a terminal" in r.stderr
