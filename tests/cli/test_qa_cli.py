"""CLI wording a new user tripped over (QA pass)."""

from __future__ import annotations

from tests.cli.test_validate import HEAD, write


def test_validate_summary_uses_singular_for_one(cli, tmp_path):
    # "1 cases ..., 1 warnings" read as a typo in the one line every user sees
    p = write(tmp_path, HEAD + "  - id: x\n    question: hola\n    expected: [zz]\n")
    r = cli("validate", p)
    assert r.returncode == 1, r.stderr
    assert "t.yaml: 1 case (0 unanswerable), 0 errors, 1 warning\n" in r.stdout
    assert "'zz'" in r.stderr


def test_triage_finds_the_test_set_moved_next_to_the_run(cli, tmp_path):
    """`run` writes the test set's absolute path; a run copied elsewhere together with its
    test set (a CI artifact) was refused with 'pass --testset' though the file sat beside it."""
    import shutil

    from ragtriage.core.evaluate import evaluate
    from ragtriage.tui.triage_state import read_meta, resolve_testset
    from tests.conftest import TESTSETS

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, a / name)
    evaluate(a / "shop-es.yaml", "builtin", out=a / "run.jsonl")
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl", "run.jsonl"):
        shutil.move(a / name, b / name)
    run = b / "run.jsonl"
    assert read_meta(run)["testset"] == str(a / "shop-es.yaml")
    assert resolve_testset(run, read_meta(run)) == b / "shop-es.yaml"
    r = cli("triage", run)  # no terminal in tests: it gets past the test set, then asks for a TTY
    assert r.returncode == 2
    assert "not found" not in r.stderr and "needs a terminal" in r.stderr
