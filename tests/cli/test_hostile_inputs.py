"""Issue 12: careless options and hostile files give a located exit 2, never a traceback
and never a hang (each of these reproduced a traceback or a hang first)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.conftest import TESTSETS


@pytest.fixture
def shop(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    return tmp_path / "shop-es.yaml"


def _fifo(tmp_path):
    p = tmp_path / "fifo"
    os.mkfifo(p)
    return p


@pytest.mark.parametrize(
    "argv, where",
    [
        (["check", "{ts}", "--min", "hit@99999999999999999999=0.5"], "--min"),
        (["check", "{ts}", "--min", "hit@0=0.5"], "--min"),
        (["run", "{ts}", "--out", "{long}"], "File name too long"),
        (["run", "{ts}", "--k", str(2**63)], "--k"),
        (["run", "{ts}", "--timeout", "nan"], "--timeout"),
        (["sweep", "{ts}", "--k", "1-100000"], "--k"),
        (["validate", "{ts}", "--corpus", "/dev/zero"], "not a regular file"),
        (["validate", "{ts}", "--corpus", "{fifo}"], "FIFO"),
        (["diff", "{fifo}", "{fifo}"], "FIFO"),
        (["import", "{big}", "--format", "jsonl", "-o", "{tmp}/new.yaml"], "too long to read"),
        (["sweep", "{ts}", "--k", "1-2", "--threshold", "nan"], "--threshold"),
        (["sweep", "{ts}", "--k", "1-2", "--threshold", "0.2,inf"], "--threshold"),
        (["run", "{ts}", "--concurrency", "100000000"], "--concurrency"),
        (["run", "{ts}", "--retries", "100000000"], "--retries"),
        (["export", "{ts}", "--format", "csv", "-o", ""], "empty path"),
        (["validate", "{ts}", "--json", ""], "empty path"),
    ],
)
def test_located_exit_2(cli_in, shop, tmp_path, argv, where):
    big = tmp_path / "big.jsonl"
    big.write_text('{"id": "a", "question": "q", "notes": ' + "9" * 5000 + "}\n")
    paths = {
        "ts": shop,
        "tmp": tmp_path,
        "long": tmp_path / ("x" * 5000 + ".jsonl"),
        "fifo": _fifo(tmp_path),
        "big": big,
    }
    r = cli_in(*[a.format(**paths) for a in argv])
    assert r.returncode == 2, r.stdout + r.stderr
    assert where in r.stderr
    assert not (tmp_path / "new.yaml").exists()


def test_a_chunk_line_without_end_is_refused_not_read_forever(shop, tmp_path):
    from ragtriage.core.corpus import iter_lines
    from ragtriage.core.errors import CorpusError

    p = tmp_path / "one-line.jsonl"
    p.write_bytes(b'{"id": "a", "text": "ok"}\n' + b"x" * (3 << 20))
    with pytest.raises(CorpusError) as e:
        list(iter_lines(p, max_line=1 << 20))
    assert e.value.problems[0].line == 2


def test_start_true_is_not_a_number_in_a_chunks_file(cli_in, shop, tmp_path):
    corpus = tmp_path / "shop-es.chunks.jsonl"
    corpus.write_text(corpus.read_text().replace('"start": 10,', '"start": true,', 1))
    r = cli_in("validate", shop)
    assert r.returncode == 2 and "start" in r.stderr


def test_unwritable_run_folder_is_a_located_error_in_a_real_process(cli_process, shop, tmp_path):
    """A real process: exit code 2 and no traceback when the run file cannot be made."""
    blocker = tmp_path / "runs"
    blocker.write_text("a file where the folder should be")
    r = cli_process("run", shop, "--out", blocker / "r.jsonl", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "runs" in r.stderr


def test_two_runs_with_the_default_name_never_share_a_file(cli_in, shop, tmp_path, monkeypatch):
    """Issue 12 #9: two runs started in the same second wrote one file."""
    from ragtriage.commands import run_cmd

    monkeypatch.setattr(run_cmd, "default_out", lambda testset: run_cmd.Path("runs") / "same-second.jsonl")
    first = cli_in("run", shop, "--quiet", cwd=tmp_path)
    second = cli_in("run", shop, "--quiet", cwd=tmp_path)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert runs == ["same-second-2.jsonl", "same-second.jsonl"]
    assert "run file: runs/same-second-2.jsonl" in second.stdout
    for name in runs:  # each one complete: meta, every case, summary
        lines = (tmp_path / "runs" / name).read_text().splitlines()
        assert lines[0].startswith('{"type":"meta"') and lines[-1].startswith('{"type":"summary"')


def test_terminal_escapes_from_a_server_are_shown_not_obeyed(cli_in, shop, tmp_path):
    """Issue 12 #16: an ESC or a bidi control in an answer or an id printed raw in `run` tables."""
    results = tmp_path / "results.jsonl"
    import json

    from ragtriage.core.document import TestSetDocument

    ids = [c.id for c in TestSetDocument.load(shop).cases]
    results.write_text(
        "".join(
            json.dumps({"id": cid, "ranking": ["x\x1b[2J"], "answer": "ok \u202e [x\x1b]"}) + "\n"
            for cid in ids
        )
    )
    r = cli_in("run", shop, "--system", f"results:{results}", "--out", tmp_path / "r.jsonl")
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout + r.stderr and "\u202e" not in r.stdout + r.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "{ts}", "--json", "a\x00b"],
        ["validate", "a\x00b.yaml"],
        ["run", "{ts}", "--out", "a\x00b"],
        ["export", "{ts}", "--format", "csv", "-o", "a\x00b"],
        ["sweep", "{ts}", "--k", "1-2", "--json", "a\x00b"],
    ],
)
def test_a_nul_in_a_path_is_refused(cli_in, shop, argv):
    r = cli_in(*[a.format(ts=shop) for a in argv])
    assert r.returncode == 2 and "NUL" in r.stderr


@pytest.mark.parametrize(
    "fmt, content",
    [
        ("jsonl", '{"id": "a", "question": "q\\ud800", "expected": ["x"]}\n'),
        ("deepeval", '[{"input": "q\\udc00 x"}]'),
        ("jsonl", '{"id": "a", "question": "q", "expected": ["x"], "labels": {"x": {"text": "\\ud83d"}}}\n'),
    ],
)
def test_a_lone_surrogate_in_an_import_is_located(cli_in, tmp_path, fmt, content):
    src = tmp_path / f"in.{fmt}"
    src.write_text(content)
    r = cli_in("import", src, "--format", fmt, "-o", tmp_path / "new.yaml")
    assert r.returncode == 2 and "surrogate" in r.stderr, r.stderr
    assert not (tmp_path / "new.yaml").exists()


_M = '{"type": "meta", "testset": "shop-es.yaml", "system": "builtin", "k": 3}'
_C = '{"type": "case", "id": "devolucion", "reason": "retrieval-miss"'
BAD_RUNS = {
    "empty": "",
    "blank lines": "\n\n\n",
    "not json": "hello\n",
    "json array": "[1, 2]\n",
    "no meta first": _C + "}\n",
    "meta k zero": _M.replace('"k": 3', '"k": 0') + "\n",
    "meta k true": _M.replace('"k": 3', '"k": true') + "\n",
    "meta k huge": _M.replace('"k": 3', '"k": ' + "9" * 30) + "\n",
    "meta k string": _M.replace('"k": 3', '"k": "3"') + "\n",
    "meta testset number": _M.replace('"shop-es.yaml"', "5") + "\n",
    "meta system list": _M.replace('"builtin"', "[1]") + "\n",
    "two metas": _M + "\n" + _M + "\n",
    "case without id": _M + '\n{"type": "case", "reason": "x"}\n',
    "case id number": _M + '\n{"type": "case", "id": 5, "reason": "x"}\n',
    "case without reason": _M + '\n{"type": "case", "id": "a"}\n',
    "case reason number": _M + '\n{"type": "case", "id": "a", "reason": 1}\n',
    "ranking string": _M + "\n" + _C + ', "ranking": "a"}\n',
    "ranking mixed": _M + "\n" + _C + ', "ranking": [1, null, {}]}\n',
    "expected number": _M + "\n" + _C + ', "expected": 5}\n',
    "reasons numbers": _M + "\n" + _C + ', "reasons": [1]}\n',
    "tokens huge": _M + "\n" + _C + ', "tokens": 1e30}\n',
    "tokens negative": _M + "\n" + _C + ', "tokens": -1}\n',
    "answer object": _M + "\n" + _C + ', "answer": {}}\n',
    "duplicate case": _M + "\n" + _C + "}\n" + _C + "}\n",
    "unknown type": _M + '\n{"type": "weird"}\n',
    "deep nesting": _M + "\n" + _C + ', "x": ' + "[" * 2000 + "]" * 2000 + "}\n",
    "nul bytes": "\x00" * 100,
    "not utf-8": "\xff\xfe".encode("latin-1").decode("latin-1") + "\n",
}


@pytest.mark.parametrize("name", sorted(BAD_RUNS))
@pytest.mark.parametrize(
    "command",
    [
        ["check", "{ts}", "--run", "{run}"],
        ["diff", "{run}", "{run}"],
        ["export", "{ts}", "--format", "trec", "--run", "{run}", "-o", "{tmp}/q.qrels"],
        ["export", "{ts}", "--format", "ragas", "--run", "{run}"],
    ],
    ids=["check", "diff", "export-trec", "export-ragas"],
)
def test_bad_run_files_are_located_exit_2(cli_in, shop, tmp_path, name, command):
    """Issue 12: bad run files through every command that reads one (a traceback escaping
    cli.main fails the test, as it would print one)."""
    run = tmp_path / "bad.jsonl"
    run.write_bytes(BAD_RUNS[name].encode("utf-8", "surrogateescape"))
    r = cli_in(*[a.format(ts=shop, run=run, tmp=tmp_path) for a in command])
    assert r.returncode == 2, r.stdout + r.stderr
    assert str(run) in r.stderr
