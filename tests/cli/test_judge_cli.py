"""`--judge` on run/check/sweep, `ragtriage judge`, and the CI bar on a judge metric
refused until the judge's κ on enough graded answers is known and high enough."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from ragtriage import cli
from ragtriage.core.judge import append_grade, make_grade
from tests.conftest import TESTSETS, run_cli
from tests.judgekit import FakeModel, verdict

KEY = "sk-judge-ECHO-1234"
# what the scripted judge says per question keyword (supported, correct)
SAYS = {
    "oficina": (True, True),
    "viernes": (False, False),
    "devolver": (True, True),
    "efectivo": (True, False),
}


def _script(req):
    user = req["body"]["messages"][1]["content"]
    question = next(line for line in user.splitlines() if line.startswith("Pregunta:"))
    for word, (sup, cor) in SAYS.items():
        if word in question:
            return verdict(sup, cor, f"{word}: visto {req['headers'].get('authorization', '')}")
    return verdict(True, True, "bien")


def shop(tmp_path, extra: str = "") -> str:
    shutil.copy(TESTSETS / "shop-es.chunks.jsonl", tmp_path / "shop-es.chunks.jsonl")
    text = (TESTSETS / "shop-es.yaml").read_text(encoding="utf-8")
    start, end = text.index("gates:"), text.index("\ncases:")
    text = text[:start] + (extra or "gates:\n  hit@3: 0.1\n") + text[end:]
    (tmp_path / "shop-es.yaml").write_text(text, encoding="utf-8")
    return str(tmp_path / "shop-es.yaml")


@pytest.fixture
def model(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeModel(_script) as m:
        yield m


def _grade_all(ts: str, run_path, agree: bool = True) -> int:
    """Grade every judged answer of the run: as the judge said (agree) or the opposite."""
    n = 0
    for line in open(run_path, "rb"):
        rec = orjson.loads(line)
        j = rec.get("judge")
        if rec.get("type") != "case" or not j or "error" in j:
            continue
        sup = j["supported"] if agree else not j["supported"]
        append_grade(ts.replace(".yaml", ".grades.jsonl"), make_grade(rec, sup, j["correct"], by="ana"))
        n += 1
    return n


def test_run_with_judge_prints_its_line_and_never_the_key(tmp_path, model, capsys):
    ts = shop(tmp_path)
    out = tmp_path / "run.jsonl"
    assert cli.main(["run", ts, "--judge", model.spec(), "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "judge: supported" in text and "calls" in text and "disagree" in text
    data = out.read_text(encoding="utf-8")
    assert KEY not in data and KEY not in text and "***" in data
    recs = [json.loads(x) for x in data.splitlines()]
    assert recs[0]["judge"] == model.spec()
    judged = [r for r in recs if r.get("type") == "case" and "judge" in r]
    assert len(judged) == len(model.requests) == 5  # the answered cases
    assert recs[-1]["judge_calls"] == 5


def test_dry_run_says_judge_calls_and_spends_nothing(tmp_path, model, capsys):
    ts = shop(tmp_path)
    assert cli.main(["run", ts, "--judge", model.spec(), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert f"judge {model.spec()}: 5 calls (not asked: 3 abstentions)" in text  # exactly what the run asks
    assert model.requests == []


def test_judge_report_and_json(tmp_path, model, capsys):
    ts = shop(tmp_path)
    out = tmp_path / "run.jsonl"
    cli.main(["run", ts, "--judge", model.spec(), "--out", str(out), "--quiet"])
    assert _grade_all(ts, out) == 5
    capsys.readouterr()
    jp = tmp_path / "cal.json"
    assert cli.main(["judge", ts, "--run", str(out), "--json", str(jp)]) == 0
    text = capsys.readouterr().out
    rep = json.loads(jp.read_text())
    assert set(rep) == {"supported", "correct", "grounding", "corrected"}
    sup = rep["supported"]
    assert sup["n"] == 5 and sup["agreement"] == 1.0
    assert sup["kappa_interval"]["hi"] == 1.0 and sup["kappa_interval"]["lo"] < 0.6  # 5 of 5: not a certainty
    # every judged answer is graded: the corrected rate is the grades' own, with an interval
    cor = rep["corrected"]["supported"]
    assert cor["graded"] == 5 and cor["unlabelled"] == 0 and cor["estimate"] == pytest.approx(0.8)
    assert cor["interval"]["lo"] < 0.8 < cor["interval"]["hi"]
    assert "judge_supported corrected by the grades: 0.800 [" in text
    assert sup["confusion"][0][1] == sup["confusion"][1][0] == 0
    # the grounding check said supported for every answer; the grades say one is not
    assert rep["grounding"]["confusion"] == [[4, 1], [0, 0]]
    assert "judge: supported" in text and "grounding check" in text
    assert "a CI bar on judge_supported: refused" in text  # 5 graded < 30


def test_judge_report_without_verdicts_is_exit_2(tmp_path, capsys):
    ts = shop(tmp_path)
    out = tmp_path / "run.jsonl"
    cli.main(["run", ts, "--out", str(out), "--quiet"])
    capsys.readouterr()
    assert cli.main(["judge", ts, "--run", str(out)]) == 2
    assert "has no judge verdicts" in capsys.readouterr().err


def test_ci_bar_on_judge_refused_then_allowed(tmp_path, model, capsys):
    ts = shop(tmp_path, "gates:\n  judge_min_grades: 5\n")
    out = tmp_path / "run.jsonl"
    cli.main(["run", ts, "--judge", model.spec(), "--out", str(out), "--quiet"])
    capsys.readouterr()
    # no grades yet: refused, with κ and n in the message
    assert cli.main(["check", ts, "--run", str(out), "--min", "judge_supported=0.5"]) == 2
    err = capsys.readouterr().err
    assert "judge_supported: refused" in err and "unknown on 0 graded" in err
    assert "lower bound of κ's 95 % interval ≥ 0.6 on ≥ 5 graded" in err
    # graded, but against the judge every time: judge yes 4 / no 1, grades yes 1 / no 4,
    # p_o = 0, p_e = 0.8·0.2 + 0.2·0.8 = 0.32, κ = -0.32 / 0.68 = -0.47
    _grade_all(ts, out, agree=False)
    assert cli.main(["check", ts, "--run", str(out), "--min", "judge_supported=0.5"]) == 2
    assert "is -0.47 [" in capsys.readouterr().err
    # later grades of the same answers agree with the judge: the last grade wins; κ = 1.00, but on
    # five grades its interval reaches far below 0.6, so the bar is still refused
    _grade_all(ts, out, agree=True)
    assert cli.main(["check", ts, "--run", str(out), "--min", "judge_supported=0.5"]) == 2
    assert "is 1.00 [-" in capsys.readouterr().err
    # a test set that accepts any judge whose κ is at least -0.5 at its lower bound: judged
    text = (
        Path(ts)
        .read_text(encoding="utf-8")
        .replace("judge_min_grades: 5", "judge_min_grades: 5\n  judge_kappa: -0.5")
    )
    Path(ts).write_text(text, encoding="utf-8")
    assert (
        cli.main(
            [
                "check",
                ts,
                "--run",
                str(out),
                "--min",
                "judge_supported=0.5",
                "--json",
                str(tmp_path / "c.json"),
            ]
        )
        == 0
    )
    bars = json.loads((tmp_path / "c.json").read_text())["bars"]
    assert [b["metric"] for b in bars] == ["judge_supported"] and bars[0]["value"] == 0.8
    assert cli.main(["check", ts, "--run", str(out), "--min", "judge_supported=0.9"]) == 1  # judged, missed


def test_check_makes_a_judged_run_and_refuses_early_without_grades(tmp_path, model, capsys):
    ts = shop(tmp_path, f"gates:\n  judge_supported: 0.5\njudge: {model.spec()}\n")
    assert cli.main(["check", ts]) == 2
    assert "0 graded case(s)" in capsys.readouterr().err
    assert model.requests == []  # refused before spending anything
    (tmp_path / "b").mkdir()
    ts2 = shop(tmp_path / "b")
    assert cli.main(["check", ts2, "--judge", model.spec(), "--json", str(tmp_path / "c.json")]) == 0
    assert json.loads((tmp_path / "c.json").read_text())["summary"]["judge_calls"] == 5


def test_judge_bar_on_a_run_without_verdicts_says_add_a_judge(tmp_path, capsys):
    ts = shop(tmp_path, "gates:\n  judge_min_grades: 0\n")
    out = tmp_path / "run.jsonl"
    cli.main(["run", ts, "--out", str(out), "--quiet"])
    capsys.readouterr()
    assert cli.main(["check", ts, "--run", str(out), "--min", "judge_correct=0.5"]) == 2
    assert "the run has no judge verdicts" in capsys.readouterr().err


def test_sweep_with_judge_adds_columns(tmp_path, model, capsys):
    ts = shop(tmp_path)
    assert cli.main(["sweep", ts, "--k", "1-2", "--judge", model.spec()]) == 0
    text = capsys.readouterr().out
    assert "judge supported" in text and "judge correct" in text
    assert KEY not in text


def test_bad_judge_spec_exit_2_no_traceback(tmp_path):
    ts = shop(tmp_path)
    r = run_cli("run", ts, "--judge", f"openai:http://user:{KEY}@127.0.0.1:9/v1", "--quiet")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and KEY not in r.stderr + r.stdout
    assert "expected openai:BASE_URL#MODEL" in r.stderr


def test_report_shows_the_judge_kappa_interval_and_corrected_rates(tmp_path, model, capsys):
    ts = shop(tmp_path)
    out = tmp_path / "run.jsonl"
    cli.main(["run", ts, "--judge", model.spec(), "--out", str(out), "--quiet"])
    _grade_all(ts, out)
    html = tmp_path / "r.html"
    assert cli.main(["report", str(out), "-o", str(html)]) == 0
    text = html.read_text(encoding="utf-8")
    assert "The judge against the grades" in text and "1.00 [" in text
    assert "Judge-scored rates, corrected by the grades (prediction-powered)" in text


def test_a_verdict_with_one_grade_is_unknown_in_the_text_the_json_and_the_report(tmp_path, model, capsys):
    """One grade per verdict of the judge: its error under the verdict it gave more than once
    is not measured, so the corrected rate is unknown (JSON null), with the worst-case interval."""
    ts = shop(tmp_path)
    out = tmp_path / "run.jsonl"
    cli.main(["run", ts, "--judge", model.spec(), "--out", str(out), "--quiet"])
    recs = [orjson.loads(x) for x in open(out, "rb")]
    judged = [r for r in recs if r.get("type") == "case" and r.get("judge") and "error" not in r["judge"]]
    first = {}
    for r in judged:
        first.setdefault(r["judge"]["supported"], r)
    assert len(first) == 2 and len(judged) > 2  # both verdicts, one of them given more than once
    for r in first.values():
        append_grade(ts.replace(".yaml", ".grades.jsonl"), make_grade(r, True, None, by="ana"))
    capsys.readouterr()
    jp = tmp_path / "cal.json"
    assert cli.main(["judge", ts, "--run", str(out), "--json", str(jp)]) == 0
    text = capsys.readouterr().out
    cor = json.loads(jp.read_text())["corrected"]["supported"]
    assert cor["estimate"] is None and cor["graded"] == 2
    assert 0.0 <= cor["interval"]["lo"] < cor["interval"]["hi"] <= 1.0
    assert "any rate there" in cor["interval"]["method"]
    lo, hi = cor["interval"]["lo"], cor["interval"]["hi"]
    assert f"judge_supported corrected by the grades: unknown, within [{lo:.3f}, {hi:.3f}]" in text
    html = tmp_path / "r.html"
    assert cli.main(["report", str(out), "-o", str(html)]) == 0
    page = html.read_text(encoding="utf-8")
    assert "<td>judge_supported</td>" in page and "<td class=num>unknown</td>" in page
    assert "any rate there" in page
