"""evaluate(), the systems and the runner, against real HTTP servers on 127.0.0.1."""

import json
import threading

import pytest

import ragtriage
from ragtriage.core.errors import InputError
from ragtriage.core.evaluate import evaluate
from ragtriage.core.options import parse_ks
from ragtriage.core.plan import plan
from ragtriage.core.runfile import read_run
from ragtriage.core.summary import SUMMARY_KEYS
from ragtriage.core.sweep import sweep
from tests.evalkit import Server, write_testset

FAST = dict(backoff=0.01)


@pytest.fixture
def ts(tmp_path):
    return write_testset(tmp_path / "ts")


def reasons(run):
    return {c["id"]: c["reason"] for c in run.cases}


def test_builtin_offline_mix_and_reproducible(ts, tmp_path):
    a = ragtriage.evaluate(str(ts), system="builtin", k=2)
    assert tuple(a.summary) == SUMMARY_KEYS
    assert a.summary["n"] == 5 and a.summary["k"] == 2
    r = reasons(a)
    assert r["precio-oficina"] == "supported-correct"
    assert r["garantía"] == "wrong-answer"  # reference answer says three years, the chunk two
    assert r["domingo"] == "appropriate-abstention"
    assert len(set(r.values())) >= 3
    b = ragtriage.evaluate(ragtriage.load_testset(ts), k=2)
    assert [(c["id"], c["reason"], c["ranking"], c["answer"]) for c in a.cases] == [
        (c["id"], c["reason"], c["ranking"], c["answer"]) for c in b.cases
    ]
    assert a.summary == b.summary
    for c in a.cases:  # the answerer cites what it quotes
        if not c["abstained"]:
            assert c["answer"].endswith("]") and c["why"] == ""


def test_run_file_format_and_read_back(ts, tmp_path):
    out = tmp_path / "runs" / "r.jsonl"
    streamed = []
    run = evaluate(ts, "builtin", 2, out=out, on_record=streamed.append)
    assert sorted(r["id"] for r in streamed) == sorted(c["id"] for c in run.cases)
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "meta" and lines[-1]["type"] == "summary"
    meta = lines[0]
    assert meta["testset"] == str(ts) and meta["system"] == "builtin" and meta["k"] == 2
    assert meta["testset_hash"] and meta["started"].endswith("Z") and meta["version"] == ragtriage.__version__
    cases = lines[1:-1]
    assert len(cases) == 5
    for c in cases:
        for f in (
            "rank",
            "hit",
            "precision",
            "recall",
            "rr",
            "abstained",
            "supported",
            "why",
            "correct",
            "reason",
        ):
            assert f in c
    rf = read_run(out)
    assert (
        rf.complete and rf.summary == run.summary and [c["id"] for c in rf.cases] == [c["id"] for c in cases]
    )


def test_http_ok_and_posts_id_question_k(ts):
    with Server() as srv:
        run = evaluate(ts, srv.url + "/ask", 2, concurrency=4, **FAST)
        bodies = sorted(json.loads(b)["id"] for _, b, _ in srv.requests)
    assert bodies == sorted(["precio-oficina", "plazo-devolución", "dinero", "garantía", "domingo"])
    body = json.loads(srv.requests[0][1])
    assert set(body) == {"id", "question", "k"} and body["k"] == 2
    assert reasons(run)["precio-oficina"] == "supported-correct"
    assert run.summary["errors"] == 0 and all(c["latency_ms"] >= 0 for c in run.cases)


def test_http_failures_become_error_cases_and_the_run_completes(ts, tmp_path):
    with Server() as srv:
        for path, cause in (
            ("/fail", "HTTP 500"),
            ("/bad", "malformed JSON"),
            ("/wrongtype", "ranking: must be"),
        ):
            out = tmp_path / f"{path[1:]}.jsonl"
            run = evaluate(ts, srv.url + path, 2, out=out, retries=1, **FAST)
            assert run.summary["errors"] == 5 and run.summary["n"] == 5
            assert all(
                c["reason"] == "error" and cause in c["error"] and c["why"].startswith("error: ")
                for c in run.cases
            )
            assert run.summary["accuracy"] is None  # left out of every ratio
            assert len(read_run(out).cases) == 5
        # 500s and malformed JSON are retried; a wrong field type is not
        assert sum(1 for p, _, _ in srv.requests if p == "/fail") == 10
        assert sum(1 for p, _, _ in srv.requests if p == "/wrongtype") == 5


def test_http_slow_case_times_out_others_finish(ts):
    with Server(latency=0.01) as srv:
        run = evaluate(ts, srv.url + "/slow", 2, timeout=0.5, retries=0, concurrency=5, **FAST)
    r = reasons(run)
    assert r["domingo"] == "error"
    assert "timeout" in next(c for c in run.cases if c["id"] == "domingo")["error"]
    assert r["precio-oficina"] == "supported-correct"
    assert run.summary["errors"] == 1 and run.summary["n"] == 5


def test_retries_with_backoff_recover(ts):
    with Server() as srv:
        run = evaluate(ts, srv.url + "/flaky", 2, retries=2, **FAST)
    assert run.summary["errors"] == 0
    assert len(srv.requests) == 10  # every case failed once, then passed


def test_openai_system_prompt_key_and_errors(ts, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-secret-123")
    out = tmp_path / "o.jsonl"
    with Server() as srv:
        run = evaluate(ts, f"openai:{srv.url}/v1#tiny", 2, out=out, api_key_env="MY_KEY", **FAST)
        path, raw, headers = srv.requests[0]
        req = json.loads(raw)
        bad = evaluate(ts, f"openai:{srv.url}/openai-bad/v1#tiny", 2, retries=0, **FAST)
        fail = evaluate(ts, f"openai:{srv.url}/openai-fail/v1#tiny", 2, retries=1, **FAST)
    assert path == "/v1/chat/completions" and req["model"] == "tiny"
    assert {k.lower(): v for k, v in headers.items()}["authorization"] == "Bearer sk-secret-123"
    system = req["messages"][0]["content"]
    assert "no lo sé" in system and "[" in system
    assert "Question:" in req["messages"][1]["content"]
    text = out.read_text(encoding="utf-8")
    assert "sk-secret" not in text and "MY_KEY" not in text
    assert run.meta["system"] == f"openai:{srv.url}/v1#tiny"
    assert all(c.get("tokens", 0) >= 100 for c in run.cases if c["reason"] != "error")
    assert run.summary["errors"] == 0
    assert bad.summary["errors"] == 5 and "malformed JSON" in bad.cases[0]["error"]
    assert fail.summary["errors"] == 5 and "HTTP 500" in fail.cases[0]["error"]


def test_results_file_missing_unknown_and_bad_lines(ts, tmp_path):
    res = tmp_path / "answers.jsonl"
    res.write_text(
        json.dumps({"id": "precio-oficina", "ranking": ["entrega-1"], "answer": "Cuesta 3 €. [entrega-1]"})
        + "\n"
        + json.dumps({"id": "no-such-case", "ranking": [], "answer": None})
        + "\n"
        + json.dumps({"id": "domingo", "ranking": [], "answer": "No lo sé", "supported": True})
        + "\n",
        encoding="utf-8",
    )
    run = evaluate(ts, f"results:{res}", 2)
    r = reasons(run)
    assert r["precio-oficina"] == "supported-correct" and r["domingo"] == "appropriate-abstention"
    assert (
        r["dinero"] == "error" and "no result" in next(c for c in run.cases if c["id"] == "dinero")["error"]
    )
    assert [w.line for w in run.warnings] == [2] and "not in the test set" in str(run.warnings[0])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "dinero", "ranking": []}\nnot json\n{"ranking": []}\n'
        '{"id": "domingo", "ranking": "x"}\n{"id": "dinero"}\n[1]\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as e:
        evaluate(ts, f"results:{bad}", 2)
    got = [(p.line, p.field) for p in e.value.problems]
    assert got == [(2, None), (3, "id"), (4, "ranking"), (5, "id"), (6, None)]
    assert "duplicate id (first at line 1)" in str(e.value.problems[3])
    with pytest.raises(InputError, match="not found"):
        evaluate(ts, f"results:{tmp_path / 'nope.jsonl'}", 2)


def test_python_system_sync_and_async(ts, tmp_path, monkeypatch):
    mod = tmp_path / "my_rag_mod.py"
    mod.write_text(
        "import asyncio\nfrom dataclasses import dataclass\n"
        "from tests.evalkit import answer_for\n"
        "@dataclass\nclass R:\n    ranking: list\n    answer: str = None\n"
        "def sync(q, k):\n    a = answer_for(q)\n    return R(a['ranking'], a['answer'])\n"
        "async def aio(q, k):\n    await asyncio.sleep(0)\n    if 'garantía' in q: raise RuntimeError('boom')\n"
        "    return answer_for(q)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    a = evaluate(ts, "python:my_rag_mod:sync", 2)
    assert reasons(a)["precio-oficina"] == "supported-correct"
    b = evaluate(ts, "python:my_rag_mod:aio", 2, retries=0, **FAST)
    g = next(c for c in b.cases if c["id"] == "garantía")
    assert g["reason"] == "error" and g["error"] == "RuntimeError: boom"
    with pytest.raises(InputError, match="cannot import"):
        evaluate(ts, "python:no_such_module_xyz:f", 2)
    with pytest.raises(InputError, match="no attribute"):
        evaluate(ts, "python:my_rag_mod:nope", 2)


def test_bad_specs_and_options(ts):
    with pytest.raises(InputError, match="unknown system"):
        evaluate(ts, "ftp://x", 2)
    with pytest.raises(InputError, match="BASE_URL#MODEL"):
        evaluate(ts, "openai:http://x/v1", 2)
    with pytest.raises(InputError):
        evaluate(ts, "builtin", 0)
    with pytest.raises(InputError):
        evaluate(ts, "builtin", 2, concurrency=0)


def test_resume_keeps_finished_cases_and_asks_only_the_rest(ts, tmp_path):
    out = tmp_path / "r.jsonl"
    cancel = threading.Event()
    with Server() as srv:
        seen = []

        def stop_after_two(*_):
            pass

        # interrupt after two finished cases
        import ragtriage.core.evaluate as ev

        real = ev.make_record

        def counting(*a, **kw):
            rec = real(*a, **kw)
            seen.append(rec["id"])
            if len(seen) == 2:
                cancel.set()
            return rec

        ev.make_record = counting
        try:
            first = evaluate(ts, srv.url + "/ask", 2, out=out, concurrency=1, cancel=cancel, **FAST)
        finally:
            ev.make_record = real
        assert first.interrupted and len(first.cases) == 2
        rf = read_run(out)
        assert not rf.complete and len(rf.cases) == 2
        n_before = len(srv.requests)
        again = evaluate(ts, srv.url + "/ask", 2, out=out, resume=True, concurrency=2, **FAST)
        asked = [json.loads(b)["id"] for _, b, _ in srv.requests[n_before:]]
    assert sorted(asked) == sorted(set(c["id"] for c in again.cases) - set(seen))
    assert not again.interrupted and again.summary["n"] == 5
    rf = read_run(out)
    assert rf.complete and sorted(c["id"] for c in rf.cases) == sorted(c["id"] for c in again.cases)
    with pytest.raises(InputError, match="resume with the same options"):
        evaluate(ts, "builtin", 3, out=out, resume=True)


def test_resume_asks_error_cases_again(ts, tmp_path):
    out = tmp_path / "r.jsonl"
    with Server() as srv:
        evaluate(ts, srv.url + "/fail", 2, out=out, retries=0, **FAST)
        spec = srv.url + "/fail"
    # same spec, server now gone: still errors, but they were asked again (not kept)
    again = evaluate(ts, spec, 2, out=out, resume=True, retries=0, timeout=2, **FAST)
    assert again.asked == 5 and again.summary["errors"] == 5


def test_read_run_located_errors_and_cut_line(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(
        '{"type":"meta","k":3}\n{"type":"case","id":"a","reason":"wrong-answer"}\n{"type":"ca',
        encoding="utf-8",
    )
    rf = read_run(p)
    assert not rf.complete and len(rf.cases) == 1 and rf.warnings[0].line == 3
    p.write_text('{"type":"case","id":"a"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="meta line"):
        read_run(p)
    p.write_text(
        '{"type":"meta","k":3}\n{"type":"case","id":"a"}\nnope\n{"type":"case","id":"b","reason":"x"}\n'
        '{"type":"case","id":"b","reason":"x"}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as e:
        read_run(p)
    assert [(x.line, x.field) for x in e.value.problems] == [(2, "reason"), (3, None), (5, "id")]


def test_dry_run_plan_spends_nothing(ts):
    with Server() as srv:
        p = plan(ts, srv.url + "/ask", [2])
        assert srv.requests == []
    assert p["calls"] == 5 and p["tokens"] > 0 and p["external"]
    q = plan(ts, "builtin", [1, 2])
    assert [r["k"] for r in q["rows"]] == [1, 2] and q["rows"][0]["tokens"] < q["rows"][1]["tokens"]


def test_sweep_rows_and_one_ranking(ts):
    res = sweep(ts, "builtin", [1, 2, 3])
    assert [r["k"] for r in res["rows"]] == [1, 2, 3]
    for r in res["rows"]:
        direct = evaluate(ts, "builtin", r["k"]).summary
        assert r["hit"] == direct["hit"] and r["supported"] == direct["supported"]
        assert r["correct"] == direct["accuracy"] and r["tokens"] == direct["tokens"]
    assert res["rows"][0]["tokens"] <= res["rows"][-1]["tokens"]
    t = sweep(ts, "builtin", [2], [0.0, 100.0])
    assert t["rows"][1]["hit"] == 0.0 and t["rows"][1]["tokens"] < t["rows"][0]["tokens"]
    assert parse_ks("1-4", 3) == [1, 2, 3, 4] and parse_ks("5,1,3", 3) == [1, 3, 5]
    with pytest.raises(InputError):
        parse_ks("4-1", 3)


def test_sweep_http_asks_per_k(ts):
    with Server() as srv:
        res = sweep(ts, srv.url + "/ask", [1, 2], backoff=0.01)
        assert len(srv.requests) == 10 and res["calls"] == 10
    # the fake server ranks every answerable case's chunk first and quotes it; garantía's
    # reference answer says three years (the chunk two), domingo is declined
    for row in res["rows"]:
        assert (row["hit"], row["recall"], row["mrr"], row["supported"]) == (1.0, 1.0, 1.0, 1.0)
        assert row["correct"] == pytest.approx(0.8) and row["tokens"] is None
        assert row["reasons"] == {"appropriate-abstention": 1, "wrong-answer": 1, "supported-correct": 3}


def test_sweep_results_file_answers_fixed_retrieval_per_k(ts, tmp_path):
    res = tmp_path / "answers.jsonl"
    res.write_text(
        json.dumps(
            {
                "id": "precio-oficina",
                "ranking": ["entrega-2", "entrega-1"],
                "scores": [0.9, 0.4],
                "answer": "Cuesta 3 €. [entrega-1]",
            }
        )
        + "\n"
        + json.dumps({"id": "domingo", "ranking": ["entrega-2"], "scores": [0.2], "answer": "No lo sé"})
        + "\n",
        encoding="utf-8",
    )
    out = sweep(ts, f"results:{res}", [1, 2], [None, 0.5])
    rows = {(r["k"], r["threshold"]): r for r in out["rows"]}
    assert out["calls"] == 5  # one pass over the file, no call per k
    # precio-oficina is the only scored answerable case (the others have no line: error)
    assert rows[(1, None)]["hit"] == 0.0 and rows[(2, None)]["hit"] == 1.0
    # at k = 1 the cited chunk is outside the prompt: not supported; at k = 2 it is
    assert rows[(1, None)]["supported"] == 0.5 and rows[(2, None)]["supported"] == 1.0
    # a threshold of 0.5 cuts entrega-1 (0.4) away: not found at any k
    assert rows[(2, 0.5)]["hit"] == 0.0


def test_openai_slow_endpoint_times_out_per_case(ts):
    with Server(latency=1.0) as srv:
        run = evaluate(ts, f"openai:{srv.url}/v1#tiny", 2, timeout=0.2, retries=0, concurrency=5, **FAST)
    assert run.summary["errors"] == 5 and run.summary["n"] == 5
    assert all("timeout" in c["error"] for c in run.cases)


def test_python_sync_callable_runs_as_many_calls_in_flight_as_asked(ts, tmp_path, monkeypatch):
    mod = tmp_path / "barrier_rag.py"
    mod.write_text(
        "import threading\nB = threading.Barrier(5, timeout=10)\n"
        "def f(q, k):\n    B.wait()  # passes only when 5 calls are in flight at once\n"
        "    return {'ranking': [], 'answer': None}\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    run = evaluate(ts, "python:barrier_rag:f", 2, concurrency=5, retries=0, timeout=20)
    assert run.summary["errors"] == 0


@pytest.mark.parametrize(
    "options, field",
    [
        (dict(timeout=float("nan")), "--timeout"),
        (dict(timeout=float("inf")), "--timeout"),
        (dict(k=2**63), "--k"),
        (dict(k=99_999_999), "--k"),
    ],
)
def test_unusable_run_options_are_refused_before_any_file(ts, tmp_path, options, field):
    """Issue 12 #13/#14: nan was accepted; k >= 2**63 left a 0-byte run file."""
    out = tmp_path / "run.jsonl"
    with pytest.raises(InputError) as e:
        evaluate(ts, "builtin", out=out, **options)
    assert e.value.problems[0].file == field
    assert not out.exists()


@pytest.mark.parametrize("spec", ["1-100000", "99999999", "1," + "9" * 5000, "1-201"])
def test_sweep_ranges_are_bounded(spec):
    """Issue 12 #12: 1-100000 never finished, 99999999 raised MemoryError, 5,000 digits a traceback."""
    with pytest.raises(InputError) as e:
        parse_ks(spec, 3)
    assert e.value.problems[0].file == "--k"


def test_resume_onto_another_test_sets_run_is_refused(ts, tmp_path):
    """Issue 12 #18: it warned, then replaced the other test set's complete run."""
    other = write_testset(tmp_path / "other", yaml=ts.read_text() + "# another test set\n", name="other.yaml")
    out = tmp_path / "run.jsonl"
    evaluate(other, "builtin", 2, out=out)
    before = out.read_bytes()
    with pytest.raises(InputError, match="another test set"):
        evaluate(ts, "builtin", 2, out=out, resume=True)
    assert out.read_bytes() == before
    ts.write_text(ts.read_text() + "\n# edited\n")  # the same test set, edited: still resumes
    evaluate(ts, "builtin", 2, out=tmp_path / "own.jsonl")
    ts.write_text(ts.read_text() + "# again\n")
    again = evaluate(ts, "builtin", 2, out=tmp_path / "own.jsonl", resume=True)
    assert any("changed since this run started" in str(w) for w in again.warnings)
