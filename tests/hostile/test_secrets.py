"""Item 4: a key or a URL password never reaches a file or a stream, even when the
server echoes it back in its error bodies and answers."""

from __future__ import annotations

import base64

import pytest

from tests.conftest import run_cli

from .server import HostileServer, answer, chat

KEY = "sk-canary-7f3a9c1e5d2b"
PASSWORD = "pw-canary-41d9e0"


def _echo(req):
    """Odd cases: an error body quoting every header; the others: an answer quoting them."""
    quoted = f"auth={req.headers.get('authorization')} basic={req.basic}"
    if req.path.endswith("/chat/completions"):
        if "devol" in req.body.decode(errors="replace"):
            return [answer({"error": {"message": f"invalid key {quoted}"}}, "401 Unauthorized")]
        return [answer(chat(f"Vale. {quoted}"))]
    if len(req.json.get("id", "")) % 2:
        return [answer({"detail": f"bad credentials {quoted}"}, "500 Internal Server Error")]
    return [answer({"ranking": ["entrega-1"], "answer": f"ok {quoted}"})]


def _leaks(tmp_path, procs) -> list[str]:
    canaries = [KEY, PASSWORD, base64.b64encode(f"alice:{PASSWORD}".encode()).decode()]
    found = []
    for p in tmp_path.rglob("*"):
        if p.is_file():
            text = p.read_bytes().decode("utf-8", "replace")
            found += [f"{p.name}: {c}" for c in canaries if c in text]
    for proc in procs:
        for stream in (proc.stdout, proc.stderr):
            found += [f"stream: {c}" for c in canaries if c in stream]
    return found


def test_no_secret_in_any_output_of_http_system_with_userinfo(tmp_path, testset):
    with HostileServer(_echo) as srv:
        url = srv.url(userinfo=f"alice:{PASSWORD}")
        summary = tmp_path / "step-summary.md"
        env = {"GITHUB_STEP_SUMMARY": str(summary)}
        run = run_cli(
            "run", testset, "--system", url, "--retries", "0",
            "--out", tmp_path / "run.jsonl", "--json", tmp_path / "summary.json", env=env,
        )  # fmt: skip
        check = run_cli(
            "check", testset, "--system", url, "--retries", "0", "--out", tmp_path / "check.jsonl",
            "--junit", tmp_path / "junit.xml", "--markdown", summary, "--json", tmp_path / "check.json",
            env=env,
        )  # fmt: skip
        bad_url = run_cli(
            "run", testset, "--out", tmp_path / "bad.jsonl", "--system", f"http://alice:{PASSWORD}@127.0.0.1:99999/x"
        )  # fmt: skip
        sent = {r.basic for r in srv.requests}
    assert run.returncode == 0, run.stderr
    assert check.returncode in (0, 1), check.stderr
    assert bad_url.returncode == 2 and "Traceback" not in bad_url.stderr
    assert sent == {f"alice:{PASSWORD}"}  # the userinfo went as Basic auth
    text = (tmp_path / "run.jsonl").read_text()
    assert "bad credentials" in text and "***" in text  # the echo was recorded, blanked
    assert "127.0.0.1" in text  # the recorded system is the URL without its userinfo
    assert _leaks(tmp_path, [run, check, bad_url]) == []


def test_no_key_in_any_output_of_openai_system(tmp_path, testset):
    with HostileServer(_echo) as srv:
        system = f"openai:{srv.url('/v1')}#m"
        env = {"RT_KEY": KEY, "GITHUB_STEP_SUMMARY": str(tmp_path / "step.md")}
        run = run_cli(
            "run", testset, "--system", system, "--api-key-env", "RT_KEY", "--retries", "0",
            "--out", tmp_path / "run.jsonl", "--json", tmp_path / "summary.json", env=env,
        )  # fmt: skip
        check = run_cli(
            "check", testset, "--system", system, "--api-key-env", "RT_KEY", "--retries", "0",
            "--junit", tmp_path / "junit.xml", "--markdown", tmp_path / "step.md",
            "--json", tmp_path / "check.json", env=env,
        )  # fmt: skip
        sent = {r.headers.get("authorization") for r in srv.requests}
    assert run.returncode == 0, run.stderr
    assert check.returncode in (0, 1), check.stderr
    assert sent == {f"Bearer {KEY}"}
    assert "invalid key auth=Bearer ***" in (tmp_path / "run.jsonl").read_text()
    assert _leaks(tmp_path, [run, check]) == []


def test_redact_covers_the_forms_a_secret_travels_in(capsys):
    from ragtriage.core import secrets

    secrets.forget_all()
    try:
        secrets.register_url("http://bob:p%40ss-9Zq@host/ask")
        token = base64.b64encode(b"bob:p@ss-9Zq").decode()
        assert secrets.redact(f"a p@ss-9Zq b p%40ss-9Zq c {token}") == "a *** b *** c ***"
        assert secrets.redact_bytes(b'{"e":"p@ss-9Zq"}') == b'{"e":"***"}'
        assert secrets.strip_userinfo("http://bob:p%40ss-9Zq@host/ask") == "http://host/ask"
        secrets.register("abc")  # too short to be a key: ordinary words stay
        assert secrets.redact("abc") == "abc"
        with secrets.redacting_streams():
            print("echo p@ss-9Zq")
            import sys

            print("to stderr", token, file=sys.stderr)
        out = capsys.readouterr()
        assert out.out == "echo ***\n" and out.err == "to stderr ***\n"
    finally:
        secrets.forget_all()


def _echo_judge(req):
    """The system (model m) and the judge (model j) both quote the Authorization header
    back, stripped as servers do: in answers, verdict reasons and error bodies."""
    import json

    quoted = f"auth={req.headers.get('authorization')}"
    if req.json.get("model") == "j":
        verdict = {"supported": True, "correct": True, "reason": f"fine {quoted}"}
        return [answer(chat(json.dumps(verdict)))]
    if "devol" in req.body.decode(errors="replace"):
        return [answer({"error": {"message": f"invalid key {quoted}"}}, "401 Unauthorized")]
    return [answer(chat(f"Vale. {quoted}"))]


@pytest.mark.parametrize("pad", ["\n", " ", "\t", "\r\n"], ids=repr)
def test_a_key_with_whitespace_around_it_is_stripped_and_never_recorded(tmp_path, testset, pad):
    """Issue 19 #8: `$OPENAI_API_KEY` from a CI secret store or a .env file often ends in a
    newline. It was sent as it was; the server echoed the stripped form, which redact did
    not know, into the run file, JUnit, markdown, --json and the judge cache."""
    import os
    from pathlib import Path

    cache = Path(os.environ["RAGTRIAGE_CACHE_DIR"])
    with HostileServer(_echo_judge) as srv:
        system = f"openai:{srv.url('/v1')}#m"
        judge = f"openai:{srv.url('/v1')}#j"
        env = {"RT_KEY": KEY + pad, "GITHUB_STEP_SUMMARY": str(tmp_path / "step.md")}
        common = ["--system", system, "--api-key-env", "RT_KEY", "--judge", judge, "--judge-key-env", "RT_KEY",
                  "--retries", "0"]  # fmt: skip
        run = run_cli(
            "run", testset, *common, "--out", tmp_path / "run.jsonl", "--json", tmp_path / "s.json", env=env
        )
        check = run_cli(
            "check", testset, *common, "--junit", tmp_path / "junit.xml", "--markdown", tmp_path / "step.md",
            "--json", tmp_path / "check.json", "--out", tmp_path / "check.jsonl", env=env,
        )  # fmt: skip
        cal = run_cli(
            "judge", testset, "--run", tmp_path / "run.jsonl", "--json", tmp_path / "cal.json", env=env
        )
        diff = run_cli(
            "diff", tmp_path / "run.jsonl", tmp_path / "check.jsonl", "--markdown", tmp_path / "d.md"
        )
        sent = {r.headers.get("authorization") for r in srv.requests}
    assert run.returncode == 0, run.stderr
    assert check.returncode in (0, 1), check.stderr
    assert sent == {f"Bearer {KEY}"}  # stripped before it was sent
    leaks = _leaks(tmp_path, [run, check, cal, diff])
    leaks += [f"cache {p.name}" for p in cache.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaks == []
    assert run.stderr.count("the key had whitespace around it") == 1  # warned once, not per use
    assert "fine auth=Bearer ***" in (tmp_path / "run.jsonl").read_text()  # the echo was recorded, blanked
    assert any(cache.rglob("judge*.jsonl"))
