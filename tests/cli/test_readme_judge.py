"""The README's judge example runs as written, from the files the repository ships
(docs/examples/judge/), against the stand-in judge it names (``python -m tests.judgekit``):
every command of its console block is run and its output compared with the README's."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from ragtriage import cli
from tests.conftest import ROOT
from tests.judgekit import FakeModel, rule_judge


def _block() -> list[tuple[str, list[str]]]:
    text = (ROOT / "README.md").read_text("utf-8")
    start = text.index("```console\n$ python -m tests.judgekit 8080 &")
    body = text[start + len("```console\n") : text.index("```\n", start + 12)]
    steps: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def _matches(expected: list[str], got: list[str]) -> bool:
    """Equal, or, where the README writes ``...``, equal with lines left out there."""
    if "..." not in expected:
        return expected == got
    at = 0
    for line in expected:
        if line == "...":
            continue
        while at < len(got) and got[at] != line:
            at += 1
        if at == len(got):
            return False
        at += 1
    return True


@pytest.fixture
def example(tmp_path, monkeypatch):
    """The shipped files at the README's relative paths, in a folder of their own."""
    shutil.copytree(ROOT / "docs" / "examples" / "judge", tmp_path / "docs" / "examples" / "judge")
    (tmp_path / "testsets").mkdir()
    shutil.copy(ROOT / "testsets" / "shop-es.chunks.jsonl", tmp_path / "testsets")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_judge_example_runs_as_written(example, capsys, monkeypatch):
    steps = _block()
    assert len(steps) > 8
    with FakeModel(rule_judge) as model:
        port = str(model.port)
        status = 0
        for command, expected in steps:
            command = command.split("     #")[0].strip()  # a comment after the command
            expected = [line.replace("8080", port) for line in expected]
            argv = shlex.split(command.replace("8080", port))
            if argv[0] == "python" or argv[0] == "kill":
                continue  # the stand-in judge: started above
            if argv[0] == "export":
                name, _, value = argv[1].partition("=")
                monkeypatch.setenv(name, value)
                continue
            if argv[0] == "sed":
                got = [Path(argv[-1]).read_text("utf-8").splitlines()[int(argv[2][:-1]) - 1]]
            elif argv[0] == "echo":
                got = [str(status)]
            else:
                assert argv[0] == "ragtriage", command
                status = cli.main(argv[1:])
                out = capsys.readouterr()
                got = (out.out + out.err).rstrip("\n").splitlines()
            assert _matches(expected, got), (
                f"$ {command}\nREADME:\n" + "\n".join(expected) + "\nran:\n" + "\n".join(got)
            )
