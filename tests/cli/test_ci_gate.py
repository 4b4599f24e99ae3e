"""The gate across CI jobs: shards and merge, stale labels first, GitHub annotations,
a markdown that fits a comment, reports on exit 2, SIGTERM like ctrl-c."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from ragtriage import cli
from ragtriage.core.errors import InputError
from ragtriage.core.github import escape_data, escape_property
from ragtriage.core.select import selection, shard_of
from tests.conftest import ROOT, TESTSETS


@pytest.fixture
def ts(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    return tmp_path / "shop-es.yaml"


def lines(path):
    return path.read_bytes().split(b"\n")


def test_four_shards_merged_equal_one_run_byte_for_byte(ts, tmp_path, capsys):
    full = tmp_path / "full.jsonl"
    assert cli.main(["run", str(ts), "--out", str(full), "--quiet"]) == 0
    shards = []
    for i in range(1, 5):
        out = tmp_path / f"shard-{i}.jsonl"
        assert cli.main(["run", str(ts), "--shard", f"{i}/4", "--out", str(out), "--quiet"]) == 0
        assert json.loads(lines(out)[0])["selection"] == {"shard": f"{i}/4"}
        shards.append(str(out))
    merged = tmp_path / "merged.jsonl"
    assert cli.main(["merge", *shards, "-o", str(merged)]) == 0
    assert lines(merged)[1:] == lines(full)[1:]  # every case line and the summary, byte for byte
    # check takes the shards directly, and says the same as on the merged run
    capsys.readouterr()
    a = cli.main(["check", str(ts), *[x for s in shards for x in ("--run", s)]])
    out_a = capsys.readouterr().out
    b = cli.main(["check", str(ts), "--run", str(merged)])
    out_b = capsys.readouterr().out
    assert a == b == 1 and out_a.splitlines()[1:] == out_b.splitlines()


def test_merge_refuses_gaps_overlaps_and_other_runs(ts, tmp_path, capsys):
    for i in (1, 2):
        assert (
            cli.main(["run", str(ts), "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}.jsonl"), "--quiet"])
            == 0
        )
    assert cli.main(["run", str(ts), "--k", "2", "--out", str(tmp_path / "k2.jsonl"), "--quiet"]) == 0
    capsys.readouterr()
    out = tmp_path / "m.jsonl"
    assert cli.main(["merge", str(tmp_path / "s1.jsonl"), "-o", str(out)]) == 2
    assert "are in no shard" in capsys.readouterr().err and not out.exists()
    assert cli.main(["merge", str(tmp_path / "s1.jsonl"), str(tmp_path / "k2.jsonl"), "-o", str(out)]) == 2
    assert "k differs" in capsys.readouterr().err and not out.exists()
    assert cli.main(["merge", str(tmp_path / "s1.jsonl"), str(tmp_path / "s1.jsonl"), "-o", str(out)]) == 2
    assert "given twice" in capsys.readouterr().err
    assert cli.main(["merge", str(tmp_path / "s1.jsonl"), str(tmp_path / "s2.jsonl"), "-o", str(out)]) == 0
    assert cli.main(["merge", str(tmp_path / "s1.jsonl"), str(tmp_path / "s2.jsonl"), "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err


def test_shards_are_stable_and_cover_the_set_once():
    ids = [f"caso-{i}" for i in range(2000)] + ["garantía-1", "rückgabe-1"]
    seen = {}
    for cid in ids:
        n = shard_of(cid, 4)
        assert 1 <= n <= 4 and shard_of(cid, 4) == n
        seen[cid] = n
    sizes = [list(seen.values()).count(i) for i in range(1, 5)]
    assert sum(sizes) == len(ids) and min(sizes) > 400  # spread, and each case in exactly one
    assert shard_of("garantía-1", 7) == shard_of("garantía-1", 7)


def test_ids_tags_and_empty_selections(ts, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    assert cli.main(["run", str(ts), "--ids", "domingo,garantía", "--out", str(out), "--quiet"]) == 0
    got = [json.loads(x) for x in lines(out) if x][1:-1]
    assert [c["id"] for c in got] == ["garantía", "domingo"]  # test-set order
    capsys.readouterr()
    assert cli.main(["run", str(ts), "--ids", "nope", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--ids: not in the test set: nope" in capsys.readouterr().err
    assert cli.main(["check", str(ts), "--tag", "smoke"]) == 2
    assert "no case of the test set has the tag 'smoke'" in capsys.readouterr().err
    assert cli.main(["run", str(ts), "--shard", "5/4"]) == 2
    with pytest.raises(InputError):
        selection(shard="0/4")


def _stale(ts):
    corpus = ts.parent / "shop-es.chunks.jsonl"
    rows = corpus.read_text(encoding="utf-8").splitlines()
    first = json.loads(rows[0])
    first["text"] = "La entrega a una oficina cuesta ahora 4 €."
    rows[0] = json.dumps(first, ensure_ascii=False)
    corpus.write_text("\n".join(rows) + "\n", encoding="utf-8")


SPY = """
import pathlib
def answer(q, k):
    with open(pathlib.Path(__file__).with_name("calls.txt"), "a") as f:
        f.write(q + "\\n")
    return {"answer": "No lo sé."}
"""


def test_stale_labels_stop_the_check_before_any_call(ts, tmp_path, monkeypatch, capsys):
    _stale(ts)
    (tmp_path / "spy_sys.py").write_text(SPY)
    monkeypatch.chdir(tmp_path)
    md = tmp_path / "r.md"
    code = cli.main(
        [
            "check",
            str(ts),
            "--system",
            "python:spy_sys:answer",
            "--markdown",
            str(md),
            "--junit",
            str(tmp_path / "j.xml"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1 and "STALE" in out and "the system was not asked" in out
    assert not (tmp_path / "calls.txt").exists()  # no call spent
    assert "Stale labels" in md.read_text(encoding="utf-8")
    ET.parse(tmp_path / "j.xml")
    code = cli.main(["check", str(ts), "--system", "python:spy_sys:answer", "--run-anyway"])
    assert code == 1 and len((tmp_path / "calls.txt").read_text(encoding="utf-8").splitlines()) == 8


def test_github_annotations_are_escaped_and_on_under_actions(ts, tmp_path, monkeypatch, capsys):
    run = tmp_path / "run.jsonl"
    assert cli.main(["run", str(ts), "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert cli.main(["check", str(ts), "--run", str(run)]) == 1
    errors = [x for x in capsys.readouterr().out.splitlines() if x.startswith("::error")]
    assert any(
        x.startswith(f"::error file={escape_property(str(ts))},line=")
        and "title=ragtriage retrieval-miss (plazo-entrega)" in x
        for x in errors
    )
    assert any("title=ragtriage bar hit@3::hit@3 = 0.714, below the bar 0.85" in x for x in errors)
    assert len(errors) == 5  # four failing cases and one bar
    assert cli.main(["check", str(ts), "--run", str(run), "--no-github"]) == 1
    assert "::error" not in capsys.readouterr().out
    assert escape_data("50%\r\nok") == "50%25%0D%0Aok"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_markdown_fits_the_step_summary_and_keeps_the_worst(tmp_path, monkeypatch):
    cases = "".join(
        f"  - id: caso-{i}\n    question: pregunta {'larga ' * 40}{i}\n    expected: [c{i}]\n"
        for i in range(600)
    )
    (tmp_path / "big.yaml").write_text(
        f"version: 1\nk: 3\ngates:\n  hit@3: 0.5\ncases:\n{cases}", encoding="utf-8"
    )
    with open(tmp_path / "answers.jsonl", "w", encoding="utf-8") as f:
        for i in range(600):
            f.write(json.dumps({"id": f"caso-{i}", "ranking": ["x"], "answer": "algo"}) + "\n")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code = cli.main(
        [
            "check",
            str(tmp_path / "big.yaml"),
            "--system",
            f"results:{tmp_path / 'answers.jsonl'}",
            "--markdown",
            str(summary),
        ]
    )
    assert code == 1
    text = summary.read_text(encoding="utf-8")
    ours = text.removeprefix("earlier step\n")
    assert len(ours) <= 60_000 < 600 * 200
    assert "| `hit@3` |" in ours and "Failures by reason: 600" in ours and "caso-0`" in ours
    assert "more failing case(s) left out" in ours
    full = tmp_path / "full.md"
    assert (
        cli.main(
            [
                "check",
                str(tmp_path / "big.yaml"),
                "--system",
                f"results:{tmp_path / 'answers.jsonl'}",
                "--markdown",
                str(full),
            ]
        )
        == 1
    )
    assert len(full.read_text(encoding="utf-8")) > 60_000  # no cap unless asked or GitHub's summary
    small = tmp_path / "small.md"
    cli.main(
        [
            "check",
            str(tmp_path / "big.yaml"),
            "--system",
            f"results:{tmp_path / 'answers.jsonl'}",
            "--markdown",
            str(small),
            "--markdown-max-chars",
            "5000",
        ]
    )
    assert len(small.read_text(encoding="utf-8")) <= 5000


def test_markdown_and_annotations_on_exit_2(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ncases:\n  - id: a\n    questoin: typo\n", encoding="utf-8")
    md = tmp_path / "r.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert cli.main(["check", str(bad), "--markdown", str(md)]) == 2
    text = md.read_text(encoding="utf-8")
    assert "could not run" in text and "bad.yaml:4" in text
    assert f"::error file={escape_property(str(bad))},line=4" in capsys.readouterr().out


SLOW = """
import time
def answer(q, k):
    time.sleep(0.05 if "oficina" in q else 30)
    return {"ranking": ["entrega-1"], "answer": "No lo sé.", "latency_ms": 1.0}
"""


@pytest.mark.parametrize("command", ["run", "check"])
def test_sigterm_stops_like_ctrl_c(ts, tmp_path, command):
    (tmp_path / "slow_sys.py").write_text(SLOW)
    out = tmp_path / "run.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen(
        [sys.executable, "-m", "ragtriage", command, str(ts), "--system", "python:slow_sys:answer", "--out", str(out),
         "--concurrency", "1", *(["--run-anyway"] if command == "check" else [])],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 2):
        time.sleep(0.05)  # the first case (the fast one) is in the file
    p.send_signal(signal.SIGTERM)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 143, stderr
    assert "stopped (SIGTERM)" in stderr and "Traceback" not in stderr
    kept = [json.loads(x) for x in out.read_bytes().splitlines()]
    assert kept[0]["type"] == "meta" and kept[1]["id"] == "precio-entrega" and kept[-1]["type"] == "case"
    if command == "run":
        assert "--resume" in stderr
