"""Review: `ragtriage run` interrupted at a --k other than the test set's prints a
resume command that works as typed (it must repeat --k: resume refuses another k)."""

import json
import shlex
import threading

import ragtriage.core.evaluate as ev
from ragtriage.cli import main as cli_main
from tests.evalkit import write_testset


def test_interrupted_run_hint_resumes_with_the_same_k(tmp_path, monkeypatch, capsys):
    ts = write_testset(tmp_path / "ts")  # the test set's k is 2
    out = tmp_path / "r.jsonl"
    real = ev.evaluate

    def stop_after_first(*a, **kw):
        cancel = threading.Event()
        inner = kw.get("on_record")

        def on_record(rec):
            cancel.set()
            if inner:
                inner(rec)

        kw.update(cancel=cancel, on_record=on_record)
        return real(*a, **kw)

    monkeypatch.setattr(ev, "evaluate", stop_after_first)
    code = cli_main(["run", str(ts), "--k", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 130, err
    hint = err.split("continue with: ", 1)[1].strip()
    argv = shlex.split(hint)
    assert argv[:2] == ["ragtriage", "run"] and "--resume" in argv
    monkeypatch.setattr(ev, "evaluate", real)
    code = cli_main(argv[1:])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["k"] == 1 and lines[-1]["type"] == "summary" and lines[-1]["k"] == 1
    assert len([x for x in lines if x["type"] == "case"]) == 5


def test_unlabelled_case_row_still_says_why(tmp_path, capsys):
    """The record's `why` is empty for a supported unlabelled case (formats.md §4);
    the table still tells a person what is missing."""
    from tests.evalkit import YAML

    yaml = YAML.replace("    expected: [garantía-1]\n", "")
    ts = write_testset(tmp_path / "ts", yaml)
    out = tmp_path / "r.jsonl"
    assert cli_main(["run", str(ts), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.startswith("garantía "))
    assert "unlabelled" in row and "no expected chunk yet" in row
    rec = next(json.loads(x) for x in out.read_text(encoding="utf-8").splitlines() if '"garantía"' in x)
    assert rec["reason"] == "unlabelled" and (rec["why"] == "") == rec["supported"]


def test_json_report_that_cannot_be_written_is_bad_input_not_a_traceback(cli, tmp_path):
    """A --json PATH under a plain file: exit 2 with the path named, before any work."""
    ts = write_testset(tmp_path / "ts")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    target = blocker / "summary.json"
    for argv in (
        ["validate", ts, "--json", target],
        ["run", ts, "--out", tmp_path / "r.jsonl", "--json", target],
    ):
        r = cli(*argv)
        assert r.returncode == 2, (argv, r.stderr)
        assert "Traceback" not in r.stderr and str(target) in r.stderr and "--json" in r.stderr
    assert not (tmp_path / "r.jsonl").exists()  # refused before running
