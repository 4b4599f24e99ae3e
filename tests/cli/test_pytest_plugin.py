"""The pytest plugin (``pytest --ragtriage TESTSET``): one item per case and per bar,
failure messages that are the reports' "where to look" text, run through pytester."""

from __future__ import annotations

import json
import shutil

from tests.conftest import TESTSETS

pytest_plugins = ["pytester"]


def _copy(pytester):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, pytester.path / name)
    return pytester.path / "shop-es.yaml"


def test_one_item_per_case_and_per_bar_with_where_to_look(pytester):
    ts = _copy(pytester)
    r = pytester.runpytest_subprocess("--ragtriage", str(ts), "-p", "no:cacheprovider", "-rA")
    out = r.stdout.str()
    # 8 cases, 2 bars of the test set's gates, fresh labels, completeness
    r.assert_outcomes(passed=7, failed=5)
    assert "FAILED shop-es.yaml::plazo-entrega" in out and "PASSED shop-es.yaml::precio-entrega" in out
    assert "FAILED shop-es.yaml::gate::hit@3" in out and "PASSED shop-es.yaml::gate::supported" in out
    assert "retrieval-miss: entrega-2 not in the top 3 (not retrieved)" in out  # the reports' text
    assert "hit@3 = 0.714 < 0.85" in out


def test_a_run_file_and_a_bar_from_the_command_line(pytester, tmp_path):
    ts = _copy(pytester)
    from ragtriage import cli

    run = tmp_path / "run.jsonl"
    assert cli.main(["run", str(ts), "--out", str(run), "--quiet"]) == 0
    r = pytester.runpytest_subprocess(
        "--ragtriage", str(ts), "--ragtriage-run", str(run), "--ragtriage-min", "hit@1=0.1", "-k", "gate"
    )
    r.assert_outcomes(passed=4, failed=1, deselected=8)


def test_stale_labels_fail_their_item_and_the_system_is_not_asked(pytester):
    ts = _copy(pytester)
    corpus = pytester.path / "shop-es.chunks.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["text"] = "La entrega a una oficina cuesta ahora 4 €."
    lines[0] = json.dumps(first, ensure_ascii=False)
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = pytester.runpytest_subprocess("--ragtriage", str(ts), "--ragtriage-system", "python:nowhere:f")
    out = r.stdout.str()
    assert "FAILED shop-es.yaml::gate::labels are fresh" in out and "label entrega-1 is changed" in out
    assert "nowhere" not in out  # stale first: the system was never imported or asked
    r.assert_outcomes(skipped=8, failed=3, passed=1)


def test_without_the_option_the_plugin_adds_nothing(pytester):
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    r = pytester.runpytest_subprocess()
    r.assert_outcomes(passed=1)


def test_a_broken_test_set_is_one_located_error(pytester):
    ts = pytester.path / "bad.yaml"
    ts.write_text("version: 1\ncases:\n  - id: a\n    questoin: typo\n", encoding="utf-8")
    r = pytester.runpytest_subprocess("--ragtriage", str(ts))
    r.assert_outcomes(failed=1)
    assert "bad.yaml:4" in r.stdout.str()
