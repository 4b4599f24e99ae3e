"""Outputs never replace people's work (issue 19 #2): every output option of every
command refuses a grades file, a triage sidecar, a recovery file, a test set, a corpus
and a run being triaged (exit 2, the file byte for byte, ``path: what it is``); an
existing run file needs --force or --resume."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from ragtriage.cli import build_parser
from tests.conftest import TESTSETS

#: every option that names a file a command writes (a new one must be added here)
OUTPUT_DESTS = {"json", "junit", "markdown", "out", "output", "html"}

#: (command line with {out}, which output option it exercises)
COMMANDS = [
    (["validate", "{ts}", "--json", "{out}"], ("validate", "--json")),
    (["run", "{ts}", "--quiet", "--out", "{out}"], ("run", "--out")),
    (["run", "{ts}", "--quiet", "--out", "{tmp}/fresh.jsonl", "--json", "{out}"], ("run", "--json")),
    (["check", "{ts}", "--run", "{run}", "--junit", "{out}"], ("check", "--junit")),
    (["check", "{ts}", "--run", "{run}", "--markdown", "{out}"], ("check", "--markdown")),
    (["check", "{ts}", "--run", "{run}", "--json", "{out}"], ("check", "--json")),
    (["check", "{ts}", "--out", "{out}"], ("check", "--out")),
    (["check", "{ts}", "--run", "{run}", "--html", "{out}"], ("check", "--html")),
    (["report", "{run}", "-o", "{out}"], ("report", "--output")),
    (["merge", "{run2}", "--force", "-o", "{out}"], ("merge", "--output")),
    (["corpus", "--from", "llamaindex", "{tmp}/persist", "-o", "{out}"], ("corpus", "--output")),
    (["stale", "{ts}", "--json", "{out}"], ("stale", "--json")),
    (["sweep", "{ts}", "--k", "1-2", "--json", "{out}"], ("sweep", "--json")),
    (["judge", "{ts}", "--run", "{run}", "--json", "{out}"], ("judge", "--json")),
    (["diff", "{run}", "{run2}", "--markdown", "{out}"], ("diff", "--markdown")),
    (["diff", "{run}", "{run2}", "--json", "{out}"], ("diff", "--json")),
    (["export", "{ts}", "--format", "csv", "-o", "{out}"], ("export", "--output")),
    (["import", "{tmp}/in.jsonl", "--format", "jsonl", "-o", "{out}"], ("import", "--output")),
    (["import", "{tmp}/in.jsonl", "--format", "jsonl", "--force", "-o", "{out}"], ("import", "--output")),
]

#: a person's file or another command's input: (file name, words of the message)
TARGETS = {
    "grades": ("shop-es.grades.jsonl", "is a grades file"),
    "grades by content": ("my-grades.jsonl", "is a grades file"),
    "sidecar": ("run.triage.json", "is a triage sidecar"),
    "recovery": (".ragtriage-recovery-shop-es.yaml.json", "is a recovery file"),
    "another test set": ("other.yaml", "is a test set"),
    "another corpus": ("other.chunks.jsonl", "is a chunks file"),
    "a run being triaged": ("run.jsonl", "is a run file being triaged"),
}


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file()
    }


@pytest.fixture
def folder(tmp_path, cli_in):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    shutil.copy(TESTSETS / "shop-de.yaml", tmp_path / "other.yaml")
    shutil.copy(TESTSETS / "shop-de.chunks.jsonl", tmp_path / "other.chunks.jsonl")
    ts = tmp_path / "shop-es.yaml"
    for run in ("run.jsonl", "run2.jsonl"):
        assert cli_in("run", ts, "--quiet", "--out", tmp_path / run).returncode == 0
    (tmp_path / "run.triage.json").write_text(
        '{\n "version": 1,\n "run": "run.jsonl",\n "cases": {"precio-entrega": {"note": "mirar"}}\n}'
    )
    grade = '{"case": "precio-entrega", "answer_sha": "0123456789ab", "supported": true, "correct": true}\n'
    (tmp_path / "shop-es.grades.jsonl").write_text(grade)
    (tmp_path / "my-grades.jsonl").write_text(grade)
    (tmp_path / ".ragtriage-recovery-shop-es.yaml.json").write_text(
        '{"version": 1, "testset": "shop-es.yaml", "base": null, "ops": [{"op": "undo"}]}'
    )
    (tmp_path / "in.jsonl").write_text('{"id": "a", "question": "q", "expected": ["x"]}\n')
    return tmp_path


def _fill(argv, folder: Path, out: Path) -> list[str]:
    paths = {
        "ts": folder / "shop-es.yaml",
        "run": folder / "run.jsonl",
        "run2": folder / "run2.jsonl",
        "tmp": folder,
        "out": out,
    }
    return [a.format(**{k: str(v) for k, v in paths.items()}) for a in argv]


def test_every_output_option_is_in_the_sweep():
    """A command that gains an output option must be added to COMMANDS."""
    parser = build_parser()
    subs = next(a for a in parser._actions if a.dest == "command")
    options = {
        (name, max(a.option_strings, key=len))
        for name, sub in subs.choices.items()
        for a in sub._actions
        if a.dest in OUTPUT_DESTS
    }
    assert options == {which for _argv, which in COMMANDS}


def _pairs():
    for argv, _which in COMMANDS:
        for target in TARGETS:
            # import --force replaces an existing test set (what it is for); never grades,
            # notes, a corpus or a run, which the other targets prove
            if not (argv[0] == "import" and "--force" in argv and target == "another test set"):
                yield pytest.param(argv, target, id=f"{' '.join(argv[:1] + argv[-2:-1])}-{target}")


@pytest.mark.parametrize(("argv", "target"), list(_pairs()))
def test_an_output_over_a_persons_file_is_refused(cli_in, folder, argv, target):
    name, words = TARGETS[target]
    before = _digests(folder)
    r = cli_in(*_fill(argv, folder, folder / name), cwd=folder)
    assert r.returncode == 2, (r.stdout, r.stderr)
    inputs = {"run.jsonl": ("check", "diff", "judge", "report"), "shop-es.grades.jsonl": ("judge",)}
    if (
        argv[0] in inputs.get(name, ())
        and "--run" in argv
        or argv[0] in ("diff", "report")
        and name == "run.jsonl"
    ):
        words = "is also an input"  # said first: it is this command's own input
    if argv[0] == "corpus" and name == "other.chunks.jsonl":
        words = "already exists; not overwritten"  # what corpus -o writes: replaced only with --force
    assert f"{folder / name}: " in r.stderr and words in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    after = _digests(folder)
    assert {k: v for k, v in after.items() if k in before} == before
    assert not (folder / "fresh.jsonl").exists()


def test_run_out_over_an_earlier_run_needs_force_or_resume(cli_in, folder):
    ts, run2 = folder / "shop-es.yaml", folder / "run2.jsonl"
    before = run2.read_bytes()
    r = cli_in("run", ts, "--quiet", "--out", run2)
    assert r.returncode == 2
    assert (
        f"{run2}: --out: already exists; not replaced (--resume continues it, --force replaces it" in r.stderr
    )
    assert run2.read_bytes() == before
    assert cli_in("run", ts, "--quiet", "--out", run2, "--resume").returncode == 0
    run2.write_bytes(b"".join(before.splitlines(keepends=True)[:3]))  # as an interrupted run leaves it
    r = cli_in("run", ts, "--quiet", "--out", run2, "--force")
    assert r.returncode == 0, r.stderr
    assert run2.read_bytes().count(b'"type":"case"') == 8  # replaced by a whole new run


def test_force_does_not_replace_a_run_being_triaged(cli_in, folder):
    ts, run = folder / "shop-es.yaml", folder / "run.jsonl"
    before = run.read_bytes()
    r = cli_in("run", ts, "--quiet", "--out", run, "--force")
    assert r.returncode == 2
    assert "is a run file being triaged" in r.stderr and "would leave those notes" in r.stderr
    assert run.read_bytes() == before
    assert cli_in("run", ts, "--quiet", "--out", run, "--resume").returncode == 0  # continuing is fine


def test_check_out_over_an_earlier_run_needs_force(cli_in, folder):
    ts, run2 = folder / "shop-es.yaml", folder / "run2.jsonl"
    before = run2.read_bytes()
    r = cli_in("check", ts, "--out", run2)
    assert r.returncode == 2 and "already exists; not replaced (--force replaces it" in r.stderr
    assert run2.read_bytes() == before
    assert cli_in("check", ts, "--out", run2, "--force").returncode in (0, 1)


def test_two_reports_of_one_check_to_one_file_are_refused(cli_in, folder):
    ts, run = folder / "shop-es.yaml", folder / "run2.jsonl"
    r = cli_in("check", ts, "--run", run, "--junit", folder / "r.txt", "--markdown", folder / "r.txt")
    assert r.returncode == 2 and "--markdown: is also an input" in r.stderr


def test_reports_still_replace_earlier_reports(cli_in, folder):
    """What a report may replace: an earlier report, an export (regenerable)."""
    ts, run = folder / "shop-es.yaml", folder / "run2.jsonl"
    for out in ("report.xml", "summary.md", "check.json"):
        (folder / out).write_text("old report\n")
    r = cli_in(
        "check", ts, "--run", run, "--junit", folder / "report.xml",
        "--markdown", folder / "summary.md", "--json", folder / "check.json",
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    assert all((folder / o).read_text() != "old report\n" for o in ("report.xml", "summary.md", "check.json"))


@pytest.mark.parametrize("target", list(TARGETS))
def test_the_apps_export_refuses_a_persons_file(folder, target):
    """The app's export dialog decides with the same function as the commands."""
    from ragtriage.core.document import TestSetDocument
    from ragtriage.core.errors import InputError
    from ragtriage.tui.export import export

    name, words = TARGETS[target]
    doc = TestSetDocument.load(folder / "shop-es.yaml")
    before = _digests(folder)
    with pytest.raises(InputError, match=words):
        export(doc, "csv", folder / name)
    assert _digests(folder) == before
