"""Hostile HTTP servers against the ``http:`` and ``openai:`` systems (issue 12,
items 5, 6, 13, 14): every case gets its own answer or an error naming the
cause, the run goes on, never a traceback, never another case's answer."""

from __future__ import annotations

import json
from itertools import count

import orjson
import pytest

from ragtriage import cli
from ragtriage.core.systems import wire

from .server import CLOSE, HostileServer, answer, chat

OK = "ok"  # every case answered, with its own answer
ERR = "error"  # every case an error, the run finished
EITHER = "either"  # each case its own answer or an error


def correct(req) -> dict:
    """The answer that belongs to this request: built from its question."""
    if req.path.endswith("/chat/completions"):
        question = req.json["messages"][1]["content"].rsplit("Question: ", 1)[-1]
        return chat("A:" + question)
    return {"ranking": ["entrega-1"], "answer": "A:" + req.json["question"]}


def _body(req) -> bytes:
    return json.dumps(correct(req), ensure_ascii=False).encode()


def _other(req) -> bytes:
    return answer(chat("A:someone else's question") if "chat" in req.path else {"answer": "A:other"})


def _huge(chunk: bytes, n: int):
    for _ in range(n):
        yield chunk


MEGA = b"x" * (1 << 20)

MODES = {
    "plain keep-alive": (lambda r: [answer(correct(r))], OK),
    "100 Continue before each answer": (lambda r: [b"HTTP/1.1 100 Continue\r\n\r\n", answer(correct(r))], OK),
    "several 1xx with headers": (
        lambda r: [
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n",
            b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n",
            answer(correct(r)),
        ],
        OK,
    ),
    "1xx in its own packet, slowly": (
        lambda r: [b"HTTP/1.1 100 Continue\r\n\r\n", 0.05, answer(correct(r))],
        OK,
    ),
    "a second answer after the first": (lambda r: [answer(correct(r)) + _other(r)], OK),
    "closes idle connections silently": (lambda r: [answer(correct(r)), CLOSE], OK),
    "HTTP/1.0 body until close": (
        lambda r: [b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + _body(r), CLOSE],
        OK,
    ),
    "chunked": (
        lambda r: [
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % len(_body(r))
            + _body(r)
            + b"\r\n0\r\n\r\n"
        ],
        OK,
    ),
    "chunked and Content-Length": (
        lambda r: [
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n"
            % len(_body(r))
            + _body(r)
            + b"\r\n0\r\n\r\n"
        ],
        OK,
    ),
    "429 with Retry-After, then the answer": (
        lambda r: (
            [answer({"e": 1}, "429 Too Many Requests", "Retry-After: 0\r\n")]
            if r.n == 0
            else [answer(correct(r))]
        ),
        OK,
    ),
    "Content-Length too short": (
        lambda r: [
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(_body(r)) - 3) + _body(r) + _other(r)
        ],
        EITHER,
    ),
    "Content-Length too long": (
        lambda r: [
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(_body(r)) + 50) + _body(r),
            3,
            CLOSE,
        ],
        ERR,
    ),
    "closes mid-body": (
        lambda r: [b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(_body(r)) + _body(r)[:9], CLOSE],
        ERR,
    ),
    "conflicting Content-Length": (
        lambda r: [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}", CLOSE],
        ERR,
    ),
    "Content-Length not a number": (
        lambda r: [b"HTTP/1.1 200 OK\r\nContent-Length: \xc2\xb2\r\n\r\n{}"],
        ERR,
    ),
    "101 Switching Protocols": (
        lambda r: [b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", CLOSE],
        ERR,
    ),
    "malformed header line": (
        lambda r: [b"HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 2\r\n\r\n{}"],
        ERR,
    ),
    "not HTTP at all": (lambda r: [b"SSH-2.0-OpenSSH_9.6\r\n\r\n", CLOSE], ERR),
    "status 2000": (lambda r: [b"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\n{}"], ERR),
    "bad chunk size": (
        lambda r: [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"],
        ERR,
    ),
    "chunk longer than declared": (
        lambda r: [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}}}\r\n0\r\n\r\n", CLOSE],
        ERR,
    ),
    "2 MB of headers": (lambda r: [b"HTTP/1.1 200 OK\r\nX: " + b"a" * (2 << 20) + b"\r\n\r\n{}", CLOSE], ERR),
    "slow answer": (lambda r: [3, answer(correct(r))], ERR),
    "redirect": (lambda r: [answer({}, "302 Found", "Location: /elsewhere\r\n")], ERR),
    "204 No Content": (lambda r: [b"HTTP/1.1 204 No Content\r\n\r\n"], ERR),
    "JSON list": (lambda r: [answer([1, 2])], ERR),
    "lone surrogate in JSON": (
        lambda r: [b"HTTP/1.1 200 OK\r\nContent-Length: 28\r\n\r\n" + b'{"answer": "\\ud800 a", "x":1}'],
        ERR,
    ),
    "1e400 in JSON": (
        lambda r: [b"HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n" + b'{"tokens": 1e400}'[:16]],
        ERR,
    ),
    "200 with an error field holding escapes": (
        lambda r: [
            answer({"error": "\x1b[2J\u202e down"}) if "chat" not in r.path else answer({"e": "\x1b[2J"})
        ],
        ERR,
    ),
    "escape sequences in the answer": (
        lambda r: [
            answer({**correct(r), "note": "\x1b[2J\u202e"}) if "chat" not in r.path else answer(correct(r))
        ],
        OK,
    ),
    "declares 200 MB": (
        lambda r: [b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (200 << 20), 3, CLOSE],
        ERR,
    ),
    "streams 40 MB chunked": (
        lambda r: [
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            *_huge(b"%x\r\n" % len(MEGA) + MEGA + b"\r\n", 40),
            b"0\r\n\r\n",
        ],
        ERR,
    ),
    "streams 40 MB until close": (
        lambda r: [b"HTTP/1.0 200 OK\r\n\r\n", *_huge(MEGA, 40), CLOSE],
        ERR,
    ),
}

TIMES_OUT = {"slow answer", "Content-Length too long"}
HTTP_ONLY = {
    "a second answer after the first"
}  # the openai: check below covers it with the id-less chat shape


def _run(tmp_path, testset, system, *extra, quiet=True):
    out = tmp_path / f"run{next(_n)}.jsonl"
    code = cli.main(
        ["run", str(testset), "--system", system, "--out", str(out), *(["--quiet"] if quiet else []), "--retries", "1",
         "--timeout", "1", "--concurrency", "3", "--max-response-mb", "4", *extra]
    )  # fmt: skip
    lines = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    return code, [x for x in lines if x["type"] == "case"]


_n = count()


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch):
    """Retries at once: what is tested is what the retry gets, not the wait before it."""
    monkeypatch.setattr("ragtriage.core.runner.BACKOFF", 0.0)


@pytest.mark.parametrize("kind", ["http", "openai"])
@pytest.mark.parametrize("mode", list(MODES))
def test_hostile_server_mode(mode, kind, tmp_path, testset, capsys):
    respond, expect = MODES[mode]
    with HostileServer(respond) as srv:
        system = srv.url() if kind == "http" else f"openai:{srv.url('/v1')}#m"
        # the modes that time out every case: all eight at once, one 1 s timeout (and its retry) in all
        extra = ("--concurrency", "8") if mode in TIMES_OUT else ()
        code, cases = _run(tmp_path, testset, system, *extra)
    err = capsys.readouterr().err
    every_case_failed = all(c.get("error") for c in cases)  # then exit 1 (issue 22), else 0
    assert code == (1 if every_case_failed else 0) and "Traceback" not in err
    assert len(cases) == 8
    for c in cases:
        if c.get("error"):
            assert c.get("answer") is None
            assert expect != OK, c["error"]
        else:
            assert c["answer"] == "A:" + c["question"], "a case got another case's answer"
            assert expect != ERR, c
    assert not any("\x1b" in c.get("error", "") or "\u202e" in c.get("error", "") for c in cases)
    if mode.startswith(("declares", "streams")):
        size = "of 200.0 MB " if mode.startswith("declares") else ""
        assert all(
            c["error"].endswith(f"answer {size}over the 4 MB limit (--max-response-mb)") for c in cases
        )
    assert wire.max_body() == 4 << 20


def test_interim_answers_do_not_stop_keep_alive_reuse_being_safe(tmp_path, testset):
    """100 Continue before every answer: one connection per answer, never a shifted answer."""
    with HostileServer(MODES["100 Continue before each answer"][0]) as srv:
        code, cases = _run(tmp_path, testset, srv.url(), "--concurrency", "1")
        conns = srv.connections
    assert code == 0 and [c["answer"] for c in cases] == ["A:" + c["question"] for c in cases]
    assert conns == 8  # after an interim answer the connection is not trusted again


def test_plain_keep_alive_reuses_one_connection(tmp_path, testset):
    with HostileServer(MODES["plain keep-alive"][0]) as srv:
        code, cases = _run(tmp_path, testset, srv.url(), "--concurrency", "1")
        conns = srv.connections
    assert code == 0 and conns == 1 and all(c["answer"] == "A:" + c["question"] for c in cases)


@pytest.mark.parametrize("mb", ["1e308", "0.000001"])
def test_extreme_but_valid_size_limits_run(mb, tmp_path, testset, capsys):
    with HostileServer(MODES["plain keep-alive"][0]) as srv:
        code, cases = _run(tmp_path, testset, srv.url(), "--max-response-mb", mb)
    assert code == (0 if mb == "1e308" else 1) and "Traceback" not in capsys.readouterr().err
    if mb == "1e308":
        assert all(c["answer"] == "A:" + c["question"] for c in cases)
    else:
        assert all("over the" in c["error"] for c in cases)


def test_answer_for_another_case_id_is_an_error(tmp_path, testset):
    with HostileServer(
        lambda r: [answer({"id": "someone-else", "answer": "A:" + r.json["question"]})]
    ) as srv:
        code, cases = _run(tmp_path, testset, srv.url())
    assert code == 1 and all("answered for case 'someone-else'" in c["error"] for c in cases)


def test_429_retry_after_is_waited_for_and_bounded(monkeypatch):
    from ragtriage.core.runner import RETRY_AFTER_MAX, retry_delay
    from ragtriage.core.systems import CaseError

    assert retry_delay(CaseError("x", retry=True, retry_after=2.0), 0, 0.5) == 2.0
    assert retry_delay(CaseError("x", retry=True, retry_after=10**9), 0, 0.5) == RETRY_AFTER_MAX
    assert retry_delay(CaseError("x", retry=True, retry_after=float("nan")), 0, 0.5) == 0.5
    assert retry_delay(CaseError("x", retry=True), 2, 0.5) == 2.0
    assert wire.parse_retry_after("7") == 7.0
    assert wire.parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert wire.parse_retry_after("soon") is None
    assert wire.parse_retry_after("9" * 5000) == 999999999999.0


def test_retry_after_reaches_the_error_a_judge_sees(testset):
    """The client exposes Retry-After: a 429 becomes a CaseError carrying it."""
    import asyncio

    from ragtriage.core.systems import CaseError
    from ragtriage.core.systems.http import parse_answer, request_json

    async def go(url):
        pool = wire.HttpPool(url)
        r = await request_json(pool, url, b"{}")
        await pool.aclose()
        return r

    with HostileServer(lambda r: [answer({"e": 1}, "429 Too Many Requests", "Retry-After: 12\r\n")]) as srv:
        r = asyncio.run(go(srv.url()))
    assert r.status == 429 and r.retry_after == 12.0
    with pytest.raises(CaseError) as e:
        parse_answer(r.status, r.body, "judge", r.retry_after)
    assert e.value.retry and e.value.retry_after == 12.0


@pytest.mark.parametrize(
    "system, message",
    [
        ("http://", "has no host"),
        ("http://[::1", "not a valid URL"),
        ("http://127.0.0.1:70000/ask", "not a valid URL (Port out of range"),
        ("http://127.0.0.1:0/ask", "port 0"),
        ("http://127.0.0.1/a b", "contains a space"),
        ("http://127.0.0.1/a\r\nX-Injected: 1", "a control character"),
        ("openai:http://[::1#m", "not a valid URL"),
        ("openai:http://#m", "has no host"),
    ],
)
def test_bad_url_is_exit_2_with_a_clear_message(system, message, tmp_path, testset, capsys):
    out = tmp_path / "r.jsonl"
    code = cli.main(["run", str(testset), "--system", system, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    "option, value", [("--timeout", "nan"), ("--timeout", "inf"), ("--timeout", "-1"), ("--max-response-mb", "nan"),
                      ("--max-response-mb", "0")]
)  # fmt: skip
@pytest.mark.parametrize("command", ["run", "check", "sweep"])
def test_bad_timeout_or_size_option_is_exit_2(command, option, value, tmp_path, testset, capsys):
    with HostileServer(lambda r: [answer(correct(r))]) as srv:
        code = cli.main([command, str(testset), "--system", srv.url(), option, value])
    err = capsys.readouterr().err
    assert code == 2 and option in err and "Traceback" not in err


def test_terminal_escapes_in_a_server_error_are_shown_escaped(tmp_path, testset, capsys):
    """Item 16, the server's side: an error body with ESC sequences and a bidi override is
    recorded and printed as visible escapes, never sent raw to the terminal."""
    body = "\x1b]0;pwned\x07 \x1b[2J \u202eevil".encode()
    with HostileServer(
        lambda r: [b"HTTP/1.1 400 Bad\r\nContent-Length: %d\r\n\r\n" % len(body) + body]
    ) as srv:
        code, cases = _run(tmp_path, testset, srv.url(), quiet=False)
    out = capsys.readouterr()
    assert "answered HTTP 400: \\x1b]0" in out.out  # the table shows the cause, escaped
    assert code == 1  # every case failed (issue 22); the first cause on stderr, escaped too
    assert "every case failed" in out.err and "\x1b" not in out.err and "\u202e" not in out.err
    assert all(
        c["error"].endswith("answered HTTP 400: \\x1b]0;pwned\\x07 \\x1b[2J \\u202eevil") for c in cases
    )
    assert "\x1b" not in out.out + out.err and "\u202e" not in out.out + out.err
