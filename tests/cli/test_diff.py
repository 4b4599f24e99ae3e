"""`ragtriage diff`: exit codes, --fail-on-regression, --markdown, --json, bad files."""

from __future__ import annotations

import json

from tests.core.runkit import write_run


def _pair(tmp_path, regress=True):
    a = write_run(
        tmp_path / "a.jsonl", [("q1", "supported-correct"), ("q2", "retrieval-miss")], summary={"hit": 0.5}
    )
    b = write_run(
        tmp_path / "b.jsonl",
        [("q1", "wrong-answer" if regress else "supported-correct"), ("q2", "supported-correct")],
        summary={"hit": 1.0},
    )
    return a, b


def test_diff_prints_changes_and_exits_0(cli, tmp_path):
    a, b = _pair(tmp_path)
    r = cli("diff", a, b)
    assert r.returncode == 0, r.stderr
    assert "Regressed (was good, now failing): 1" in r.stdout
    assert "q1  supported-correct → wrong-answer" in r.stdout
    assert "Fixed (was failing, now good): 1" in r.stdout


def test_one_flip_is_noise_unless_any_flip_is_asked(cli, tmp_path):
    a, b = _pair(tmp_path)
    r = cli("diff", a, b, "--fail-on-regression")
    assert r.returncode == 0, r.stdout  # 1 ↓ / 1 ↑ on two cases: no evidence of anything
    assert "verdict: inconclusive" in r.stdout and "too few cases to detect a change of any size" in r.stdout
    assert cli("diff", a, b, "--fail-on-regression", "--any-flip").returncode == 1  # the old rule
    a, b = _pair(tmp_path, regress=False)
    assert cli("diff", a, b, "--fail-on-regression", "--any-flip").returncode == 0


def _many(tmp_path, worse: int, better: int, n: int = 200):
    good, bad = "supported-correct", "wrong-answer"
    a = [(f"q{i}", good if i < 159 else bad) for i in range(n)]
    b = [(cid, r) for cid, r in a]
    for i in range(worse):
        b[i] = (b[i][0], bad)
    for i in range(better):
        b[159 + i] = (b[159 + i][0], good)
    meta = {"system": "builtin"}
    return write_run(tmp_path / "a.jsonl", a, meta=meta), write_run(tmp_path / "b.jsonl", b, meta=meta)


def test_fail_on_regression_fails_on_the_worked_real_regression(cli, tmp_path):
    a, b = _many(tmp_path, worse=9, better=2)  # 150 / 9 / 2 / 39
    r = cli("diff", a, b, "--fail-on-regression", "--cluster", "none")
    assert r.returncode == 1, r.stdout
    assert "verdict: a real regression — pass −3.5 pp [−7.1, −0.1], one-sided p 0.019 < α 0.05" in r.stdout
    assert cli("diff", a, b, "--fail-on-regression", "--margin", "0.05").returncode == 0
    assert cli("diff", a, b, "--fail-on-regression", "--alpha", "0.01").returncode == 0
    js = tmp_path / "d.json"
    assert cli("diff", a, b, "--json", js).returncode == 0
    comp = json.loads(js.read_text(encoding="utf-8"))["comparison"]
    assert comp["verdict"] == "a real regression" and comp["metrics"][0]["flips"]["worse"] == 9


def test_four_flips_and_conservative(cli, tmp_path):
    a, b = _many(tmp_path, worse=4, better=0)
    assert cli("diff", a, b, "--fail-on-regression").returncode == 1  # mid-p 0.031
    r = cli("diff", a, b, "--fail-on-regression", "--conservative")
    assert r.returncode == 0 and "exact McNemar" in r.stdout  # exact 0.063


def test_bad_comparison_options_are_exit_2(cli, tmp_path):
    a, b = _pair(tmp_path)
    r = cli("diff", a, b, "--alpha", "1.5")
    assert r.returncode == 2 and "--alpha" in r.stderr
    r = cli("diff", a, b, "--metric", "faithfulness")
    assert r.returncode == 2 and "--metric" in r.stderr
    r = cli("diff", a, b, "--metric", "hitt")
    assert r.returncode == 2 and "did you mean 'hit'" in r.stderr


def test_a_a_diff_prints_the_noise_floor(cli, tmp_path):
    a, b = _many(tmp_path, worse=3, better=4)
    r = cli("diff", a, b)
    assert "A/A: the same system on the same test set" in r.stdout
    assert "changes below 3.3 pp cannot be told from it" in r.stdout  # 7 flips in 200


def test_markdown_and_json_outputs(cli, tmp_path):
    a, b = _pair(tmp_path)
    r = cli("diff", a, b, "--markdown", tmp_path / "d.md", "--json", tmp_path / "d.json")
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "d.md").read_text(encoding="utf-8")
    assert md.startswith("## ragtriage diff") and "| `q1` | supported-correct | wrong-answer |" in md
    js = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert js["counts"]["regressed"] == 1 and js["counts"]["fixed"] == 1
    assert js["metrics"]["hit"] == {"a": 0.5, "b": 1.0, "delta": 0.5}


def test_markdown_appends_to_github_step_summary(cli, tmp_path):
    a, b = _pair(tmp_path)
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step output\n", encoding="utf-8")
    r = cli("diff", a, b, "--markdown", summary, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.returncode == 0, r.stderr
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step output\n## ragtriage diff")


def test_bad_run_file_exit_2_located(cli, tmp_path):
    a, _ = _pair(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "meta", "k": 3}\n{oops\n', encoding="utf-8")
    r = cli("diff", a, bad)
    assert r.returncode == 2
    assert f"{bad}:2: not valid JSON" in r.stderr
    assert "Traceback" not in r.stderr
    assert cli("diff", a, tmp_path / "missing.jsonl").returncode == 2


def test_diff_of_two_demo_runs_at_k1_and_k3_lists_exactly_the_changed_cases(cli, tmp_path):
    from tests.conftest import TESTSETS

    runs = {}
    for k in (1, 3):
        out = tmp_path / f"k{k}.jsonl"
        r = cli("run", TESTSETS / "shop-es.yaml", "--k", k, "--out", out, "--quiet")
        assert r.returncode == 0, r.stderr
        runs[k] = {
            rec["id"]: rec["reason"]
            for rec in map(json.loads, out.read_text(encoding="utf-8").splitlines())
            if rec["type"] == "case"
        }
    changed = {cid for cid in runs[1] if runs[1][cid] != runs[3][cid]}
    assert changed, "a deeper cut-off should change some reasons on the demo set"
    r = cli("diff", tmp_path / "k1.jsonl", tmp_path / "k3.jsonl", "--json", tmp_path / "d.json")
    assert r.returncode == 0, r.stderr
    d = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert {c["id"] for c in d["cases"]} == changed
    assert all((c["from"], c["to"]) == (runs[1][c["id"]], runs[3][c["id"]]) for c in d["cases"])
    assert d["counts"]["unchanged"] == 8 - len(changed)
    assert "k differs: 1 in run A, 3 in run B" in d["notes"]
    for cid in changed:
        assert cid in r.stdout


def test_diff_rescores_a_run_file_whose_reasons_were_edited(cli_in, tmp_path):
    """Issue 20: diff trusted the reasons written in a run file where check rescores: a run
    file edited to say every case passes showed "N fixed". Both runs are now rescored
    against their test set from their own fields (ranking, answer), as check judges them."""
    from tests.conftest import TESTSETS

    shop = TESTSETS / "shop-es.yaml"
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert cli_in("run", shop, "--out", a, "--quiet").returncode == 0
    lines = [json.loads(x) for x in a.read_text(encoding="utf-8").splitlines()]
    failing = [
        x["id"]
        for x in lines
        if x.get("type") == "case" and x["reason"] not in ("supported-correct", "appropriate-abstention")
    ]
    assert failing
    for x in lines:
        if x.get("type") == "case" and x["id"] in failing:
            x["reason"] = "supported-correct"  # edited by hand: nothing else changed
    b.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    r = cli_in("diff", a, b, "--json", tmp_path / "d.json")
    assert r.returncode == 0, r.stderr
    d = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert d["counts"]["fixed"] == d["counts"]["regressed"] == d["counts"]["changed"] == 0
    assert f"{len(failing)} stored reason(s) differ from what its own fields give" in r.stdout
    assert d["metrics"]["accuracy"]["delta"] == 0


def test_diff_of_two_runs_of_one_test_set_reads_it_once_and_leaves_the_gc_as_it_was(
    cli_in, tmp_path, monkeypatch
):
    """Issue 21: diff read the test set three times (once per run rescored, once for the
    clusters and tags) and, with the GC on, grew faster than the cases. It now reads it
    once when both runs name it, with the same output as reading it for each."""
    import gc

    from ragtriage.core.testset.document import TestSetDocument
    from tests.conftest import TESTSETS

    shop = TESTSETS / "shop-es.yaml"
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert cli_in("run", shop, "--k", 1, "--out", a, "--quiet").returncode == 0
    assert cli_in("run", shop, "--k", 3, "--out", b, "--quiet").returncode == 0
    from ragtriage.core import rerun

    real_rescored = rerun.rescored_run
    with monkeypatch.context() as m:  # as before: each run's test set read on its own
        m.setattr(rerun, "rescored_run", lambda run, opened=None: real_rescored(run))
        separately = cli_in("diff", a, b, "--json", tmp_path / "apart.json")
    loads = []
    real = TestSetDocument.load.__func__

    def counted(cls, path, *args, **kwargs):
        loads.append(str(path))
        return real(cls, path, *args, **kwargs)

    monkeypatch.setattr(TestSetDocument, "load", classmethod(counted))
    gc.enable()  # (run leaves it off: its process ends there)
    r = cli_in("diff", a, b, "--json", tmp_path / "d.json")
    assert r.returncode == 0, r.stderr
    assert gc.isenabled()  # off while it runs, back on for an in-process caller
    assert len(loads) == 1, loads
    assert r.stdout == separately.stdout
    assert (tmp_path / "d.json").read_bytes() == (tmp_path / "apart.json").read_bytes()
