"""evaluate() with a judge: verdicts in the run file, summary keys, cache, settings, dry run."""

from __future__ import annotations

import orjson
import pytest

from ragtriage.core.document import TestSetDocument
from ragtriage.core.errors import InputError
from ragtriage.core.evaluate import evaluate
from ragtriage.core.plan import plan
from ragtriage.core.runfile import read_run
from ragtriage.core.summary import SUMMARY_KEYS
from tests.evalkit import YAML, write_testset
from tests.judgekit import FakeModel, Reply, verdict

JUDGE_KEYS = ("judge_supported", "judge_correct", "judge_calls", "judge_tokens")


def _script(req):
    user = req["body"]["messages"][1]["content"]
    if "garantía" in user:
        return Reply("I am not able to answer in JSON.")  # twice: an error on that verdict
    return verdict("oficina" not in user, True, "sigue de las fuentes")


@pytest.fixture
def ts(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGTRIAGE_CACHE_DIR", str(tmp_path / "cache"))
    return write_testset(tmp_path / "ts")


def test_run_file_gains_judge_objects_and_summary_keys(ts, tmp_path):
    out = tmp_path / "run.jsonl"
    with FakeModel(_script) as m:
        run = evaluate(str(ts), "builtin", 2, out=out, judge=m.spec(), backoff=0.01)
        answered = [c for c in run.cases if not c["abstained"]]
        assert len(m.requests) == len(answered) + 1  # one retry for the malformed reply
        stored = read_run(out)
        assert stored.meta["judge"] == m.spec()
        by_id = stored.by_id()
        assert by_id["garantía"]["judge"]["error"].startswith("the judge's reply was not the asked JSON")
        assert by_id["garantía"]["reason"] == run.cases[3]["reason"]  # the deterministic result stands
        assert by_id["precio-oficina"]["judge"]["supported"] is False
        assert "judge" not in by_id["domingo"]  # abstained: not asked
        s = stored.summary
        assert tuple(s)[: len(SUMMARY_KEYS)] == SUMMARY_KEYS and tuple(s)[len(SUMMARY_KEYS) :] == JUDGE_KEYS
        judged_ok = [c for c in answered if c["id"] != "garantía"]
        assert s["judge_supported"] == pytest.approx(
            sum(c["id"] != "precio-oficina" for c in judged_ok) / len(judged_ok)
        )
        assert s["judge_calls"] == len(answered) and s["judge_tokens"] > 0
        assert s == run.summary
        # unchanged: the second run costs only the call that failed
        before = len(m.requests)
        again = evaluate(str(ts), "builtin", 2, out=out, judge=m.spec(), backoff=0.01)
        assert len(m.requests) == before + 2
        assert again.summary["judge_calls"] == 1
        assert again.summary["judge_supported"] == s["judge_supported"]


def test_judge_from_settings_and_a_bad_spec(ts, tmp_path):
    with FakeModel(lambda req: verdict(True, True)) as m:
        ts.write_text(
            YAML.replace("k: 2\n", f"k: 2\njudge: {m.spec()}\njudge_kappa: 0.7\n"), encoding="utf-8"
        )
        doc = TestSetDocument.load(ts)
        assert doc.settings.judge == m.spec() and doc.settings.judge_kappa == 0.7
        run = evaluate(doc, "builtin", 2)
        assert run.summary["judge_supported"] == 1.0 and run.meta["judge"] == m.spec()
    with pytest.raises(InputError) as e:
        evaluate(doc, "builtin", 2, judge="openai:nowhere")
    assert str(e.value.problems[0]).startswith("--judge: 'openai:nowhere': expected openai:BASE_URL#MODEL")


def test_settings_validate_judge_thresholds(tmp_path):
    from ragtriage.core.document import TestSetError

    ts = write_testset(tmp_path / "a", YAML.replace("k: 2\n", "k: 2\ngates:\n  judge_kappa: 1.5\n"))
    with pytest.raises(TestSetError) as e:
        TestSetDocument.load(ts)
    assert "judge_kappa" in str(e.value.problems[0]) and ":7:" in str(e.value.problems[0])
    ts = write_testset(
        tmp_path / "b",
        YAML.replace(
            "k: 2\n", "k: 2\ngates:\n  judge_kappa: -0.2\n  judge_min_grades: 5\n  judge_supported: 0.9\n"
        ),
    )
    assert TestSetDocument.load(ts).settings.gates["judge_min_grades"] == 5


def test_dry_run_counts_judge_calls_and_tokens(ts, tmp_path):
    """Issue 20: the answers of a local system are known without spending, so the dry run
    counts exactly the calls the run makes (abstentions and cached verdicts are not asked)."""
    with FakeModel(lambda req: verdict(True, True)) as m:
        p = plan(str(ts), "builtin", [2], judge=m.spec())
        assert p["judge"] == m.spec() and p["judge_exact"]
        assert p["judge_tokens"] > p["tokens"]
        assert m.requests == []  # nothing was spent
        run = evaluate(str(ts), "builtin", 2, judge=m.spec(), out=tmp_path / "r.jsonl")
        assert p["judge_calls"] == run.summary["judge_calls"] == len(m.requests)
        assert p["judge_abstained"] == sum(1 for r in run.cases if r["abstained"])
        again = plan(str(ts), "builtin", [2], judge=m.spec())  # every verdict is cached now
        assert again["judge_calls"] == 0 and again["judge_cached"] == p["judge_calls"]
    assert "judge" not in plan(str(ts), "builtin", [2])


def test_no_judge_leaves_the_summary_as_it_was(ts, tmp_path):
    run = evaluate(str(ts), "builtin", 2, out=tmp_path / "r.jsonl")
    assert tuple(run.summary) == SUMMARY_KEYS
    assert all("judge" not in orjson.loads(x) for x in (tmp_path / "r.jsonl").read_bytes().splitlines())
