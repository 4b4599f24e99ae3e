"""The judge against a real HTTP server on 127.0.0.1 playing an OpenAI-compatible model."""

from __future__ import annotations

from types import SimpleNamespace

import orjson
import pytest

from ragtriage.core import secrets
from ragtriage.core.errors import InputError
from ragtriage.core.judge import Judge, disagreements, judge_summary
from ragtriage.core.judge.prompts import build_messages, prompt_language
from ragtriage.core.judge.reply import ReplyError, parse_verdict
from tests.judgekit import FakeModel, Reply, verdict

TEXTS = {"g1": "La garantía es de 2 años.", "e1": "El envío tarda 5 días."}
CASES = {
    "garantía-1": SimpleNamespace(
        id="garantía-1", question="¿Cuánto dura la garantía?", answer="2 años", must_contain=()
    ),
    "envío-1": SimpleNamespace(
        id="envío-1", question="¿Cuánto tarda el envío?", answer=None, must_contain=("5 días",)
    ),
    "libre-1": SimpleNamespace(id="libre-1", question="¿Quién eres?", answer=None, must_contain=()),
}


def _records():
    return [
        {
            "id": "garantía-1",
            "question": CASES["garantía-1"].question,
            "answer": "Dos años [g1].",
            "prompt_ids": ["g1"],
            "supported": True,
            "correct": False,
            "abstained": False,
        },
        {
            "id": "envío-1",
            "question": CASES["envío-1"].question,
            "answer": "Cinco días [e1].",
            "ranking": ["e1", "g1"],
            "supported": True,
            "correct": False,
            "abstained": False,
        },
        {"id": "libre-1", "question": "¿Quién eres?", "answer": "No lo sé.", "abstained": True},
        {"id": "err-1", "question": "x", "answer": None, "error": "boom"},
    ]


def _judge(model, tmp_path, **kw):
    kw.setdefault("backoff", 0.01)
    return Judge(model.spec(), cache_path=tmp_path / "cache.jsonl", **kw)


def _run(j, recs):
    return j.judge_records(recs, CASES, TEXTS.get, "es", 1)


@pytest.fixture(autouse=True)
def _no_secrets():
    secrets.forget_all()
    yield
    secrets.forget_all()


def test_scripted_verdicts_prompt_in_spanish_and_cache(tmp_path):
    script = {
        "garantía-1": verdict(True, True, "dice dos años"),
        "envío-1": verdict(False, True, "sin fuente"),
    }

    def answer(req):
        user = req["body"]["messages"][1]["content"]
        return script["garantía-1" if "garantía" in user else "envío-1"]

    with FakeModel(answer) as m:
        recs = _records()
        j = _judge(m, tmp_path)
        assert _run(j, recs) == 0
        assert len(m.requests) == 2  # abstention and error are not judged
        body = m.requests[0]["body"]
        assert body["model"] == "judge-model" and body["temperature"] == 0
        assert "Responde con un único objeto JSON" in body["messages"][0]["content"]
        users = [r["body"]["messages"][1]["content"] for r in m.requests]
        envio = next(u for u in users if "envío" in u)
        assert "[e1] El envío tarda 5 días." in envio and "[g1]" not in envio  # k=1 of the ranking
        assert "- 5 días" in envio
        tokens = recs[0]["judge"].pop("tokens")
        assert recs[0]["judge"] == {
            "supported": True,
            "correct": True,
            "reason": "dice dos años",
            "cached": False,
        }
        assert (
            tokens
            == sum(len(x["content"]) for x in body["messages"]) // 4 + len(script["garantía-1"].content) // 4
        )
        assert recs[1]["judge"]["supported"] is False
        assert "judge" not in recs[2] and "judge" not in recs[3]
        assert disagreements(recs[0]) == ["correct"]
        assert disagreements(recs[1]) == ["supported", "correct"]
        s = judge_summary(recs)
        assert s is not None
        assert (s["judge_supported"], s["judge_correct"], s["judge_calls"]) == (0.5, 1.0, 2)
        assert s["judge_tokens"] > 0
        # unchanged cases: a second run costs no call
        again = _records()
        _run(_judge(m, tmp_path), again)
        assert len(m.requests) == 2
        assert again[0]["judge"]["cached"] is True and again[0]["judge"]["reason"] == "dice dos años"
        assert judge_summary(again)["judge_calls"] == 0
        # a changed chunk text is asked again, only for that case
        j3 = _judge(m, tmp_path)
        j3.judge_records(_records(), CASES, {**TEXTS, "e1": "El envío tarda 6 días."}.get, "es", 1)
        assert len(m.requests) == 3


def test_tokens_from_usage_when_the_server_reports_them(tmp_path):
    reply = verdict(True, True)
    reply.usage = {"prompt_tokens": 100, "completion_tokens": 11, "total_tokens": 111}
    with FakeModel(lambda req: reply) as m:
        recs = _records()
        j = _judge(m, tmp_path)
        _run(j, recs)
        assert recs[0]["judge"]["tokens"] == 111 and j.tokens == 222
        assert judge_summary(recs)["judge_tokens"] == 222


def test_no_reference_means_correct_null(tmp_path):
    with FakeModel(lambda req: verdict(True, True)) as m:
        rec = {"id": "libre-1", "question": "¿Quién eres?", "answer": "Un asistente.", "prompt_ids": []}
        _run(_judge(m, tmp_path), [rec])
        assert rec["judge"]["correct"] is None
        assert '"correct": null' in m.requests[0]["body"]["messages"][0]["content"]


def test_malformed_json_is_retried_once_then_an_error(tmp_path):
    replies = iter([Reply("not json at all"), verdict(True, True)])
    with FakeModel(lambda req: next(replies)) as m:
        rec = _records()[0]
        _run(_judge(m, tmp_path), [rec])
        assert rec["judge"]["supported"] is True and len(m.requests) == 2
    with FakeModel(lambda req: Reply('{"supported": "maybe"')) as m:
        rec = _records()[0]
        _run(_judge(m, tmp_path / "other"), [rec])
        assert len(m.requests) == 2
        assert set(rec["judge"]) == {"error", "tokens"}
        assert "not the asked JSON" in rec["judge"]["error"]
        assert rec["supported"] is True  # the deterministic result stands


def test_fenced_json_is_accepted():
    assert parse_verdict('```json\n{"supported": false, "correct": true, "reason": "r"}\n```', True) == (
        False,
        True,
        "r",
    )
    assert parse_verdict('Sure! {"supported": true, "reason": 3}', False) == (True, None, "")
    for bad in ("", "[true]", '{"supported": 1}', '{"supported": true}'):
        with pytest.raises(ReplyError):
            parse_verdict(bad, True)


def test_refusal_is_an_error_on_the_verdict(tmp_path):
    with FakeModel(lambda req: Reply(None, refusal="I can't help with that.")) as m:
        rec = _records()[0]
        _run(_judge(m, tmp_path), [rec])
        assert "refused: I can't help with that." in rec["judge"]["error"]
        assert len(m.requests) == 2


def test_429_is_retried_then_succeeds_and_retries_run_out(tmp_path):
    replies = iter(
        [
            Reply(status=429, raw=b'{"error": "slow down"}', headers={"Retry-After": "0"}),
            verdict(False, False),
        ]
    )
    with FakeModel(lambda req: next(replies)) as m:
        rec = _records()[0]
        j = _judge(m, tmp_path)
        _run(j, [rec])
        assert rec["judge"]["supported"] is False and j.calls == 2
    with FakeModel(lambda req: Reply(status=429, raw=b'{"error": "slow down"}')) as m:
        rec = _records()[0]
        _run(_judge(m, tmp_path / "b", retries=1), [rec])
        assert "HTTP 429" in rec["judge"]["error"] and "after 2 tries" in rec["judge"]["error"]
        assert len(m.requests) == 2


def test_retry_after_of_a_429_is_the_wait_before_the_next_call(tmp_path, monkeypatch):
    import asyncio

    from ragtriage.core.judge import client

    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(delay, *a, **kw):
        waits.append(delay)
        return await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", recording_sleep)  # (the module client imports)
    replies = iter(
        [
            Reply(status=429, raw=b'{"error": "slow down"}', headers={"Retry-After": "7"}),
            Reply(status=429, raw=b'{"error": "slow down"}', headers={"Retry-After": "3600"}),
            verdict(True, True),
        ]
    )
    with FakeModel(lambda req: next(replies)) as m:
        rec = _records()[0]
        _run(_judge(m, tmp_path, retries=2), [rec])
    assert rec["judge"]["supported"] is True
    assert waits[:2] == [7.0, client.MAX_WAIT]  # as the server asked, then bounded


def test_slow_reply_times_out(tmp_path):
    with FakeModel(lambda req: Reply(verdict(True, True).content, delay=0.5)) as m:
        rec = _records()[0]
        _run(_judge(m, tmp_path, timeout=0.05, retries=0), [rec])
        assert "timeout" in rec["judge"]["error"]


def test_key_echoed_back_is_never_recorded(tmp_path, monkeypatch):
    key = "sk-test-SECRET-4242"
    monkeypatch.setenv("JUDGE_KEY", key)

    def echo(req):
        auth = req["headers"].get("authorization", "")
        if req["n"] == 0:
            return Reply(status=401, raw=f'{{"error": "bad key {auth}"}}'.encode())
        return Reply(
            orjson.dumps({"supported": True, "correct": True, "reason": f"your key is {auth}"}).decode()
        )

    with FakeModel(echo) as m:
        recs = _records()[:2]
        j = Judge(
            m.spec(), api_key_env="JUDGE_KEY", cache_path=tmp_path / "c.jsonl", retries=0, concurrency=1
        )
        _run(j, recs)
        assert m.requests[0]["headers"]["authorization"] == f"Bearer {key}"
        out = orjson.dumps(recs).decode() + (tmp_path / "c.jsonl").read_text()
        assert key not in out
        assert "***" in recs[0]["judge"]["error"] and "***" in recs[1]["judge"]["reason"]


def test_bad_spec_is_a_located_error():
    with pytest.raises(InputError) as e:
        Judge("openai:http://x/v1", cache_path=None)
    assert "expected openai:BASE_URL#MODEL" in str(e.value.problems[0])
    with pytest.raises(InputError):
        Judge("http://x/v1#m", cache_path=None)


def test_prompt_languages():
    assert (
        prompt_language("de-AT") == "de" and prompt_language("pl") == "en" and prompt_language(None) == "en"
    )
    for lang, word in (("de", "Quellen"), ("nl", "Bronnen"), ("en", "Sources"), ("es", "Fuentes")):
        msgs = build_messages(lang, "q", "a", [("c1", "t")], ("reference", "r"))
        assert msgs[1]["content"].startswith(f"{word}:\n\n[c1] t")


def test_dry_run_estimate_counts_only_uncached(tmp_path):
    with FakeModel(lambda req: verdict(True, True)) as m:
        j = _judge(m, tmp_path)
        asks = j.plan(_records(), CASES, TEXTS.get, "es", 1)
        calls, tokens = j.estimate(asks)
        assert calls == 2 and tokens > 2 * 40
        _run(j, _records())
        j2 = _judge(m, tmp_path)
        assert j2.estimate(j2.plan(_records(), CASES, TEXTS.get, "es", 1)) == (0, 0)


def test_a_400_is_not_retried_and_an_odd_body_is_an_error(tmp_path):
    with FakeModel(lambda req: Reply(status=400, raw=b'{"error": "bad model"}')) as m:
        rec = _records()[0]
        _run(_judge(m, tmp_path), [rec])
        assert len(m.requests) == 1 and "HTTP 400" in rec["judge"]["error"]
    with FakeModel(lambda req: Reply(raw=b'{"choices": "none"}')) as m:
        rec = _records()[0]
        _run(_judge(m, tmp_path / "b", retries=1), [rec])
        assert len(m.requests) == 2 and "without choices[0].message" in rec["judge"]["error"]
