"""`ragtriage run` and `ragtriage sweep` as a user types them (subprocess)."""

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import ragtriage.core.evaluate as ev
from ragtriage.cli import main as cli_main
from ragtriage.core.summary import SUMMARY_KEYS
from tests.conftest import ROOT, TESTSETS
from tests.evalkit import Server, write_testset

SHOP_ES = TESTSETS / "shop-es.yaml"


def case_lines(path):
    return [
        json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if '"type":"case"' in x
    ]


def test_run_demo_offline_mix_of_reasons_reproducible(cli, tmp_path):
    a = cli("run", SHOP_ES, "--out", tmp_path / "a.jsonl", "--json", tmp_path / "s.json")
    b = cli("run", SHOP_ES, "--out", tmp_path / "b.jsonl")
    assert a.returncode == 0, a.stderr
    assert "Traceback" not in a.stderr
    for col in ("topic", "rank", "found", "supported", "correct", "reason", "why"):
        assert col in a.stdout
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert tuple(summary) == SUMMARY_KEYS
    assert summary["n"] == len(case_lines(tmp_path / "a.jsonl"))
    reasons = summary["reasons"]
    assert "supported-correct" in reasons and len(reasons) >= 3  # a mix, not all passing
    assert a.stdout.split("run file:")[0] == b.stdout.split("run file:")[0]

    def strip(rs):
        return [(r["id"], r["reason"], r["ranking"], r["answer"]) for r in rs]

    assert strip(case_lines(tmp_path / "a.jsonl")) == strip(case_lines(tmp_path / "b.jsonl"))


def test_default_out_path_and_quiet(cli, tmp_path):
    ts = write_testset(tmp_path / "ts")
    r = cli("run", ts, "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    runs = list((tmp_path / "runs").glob("shop-*.jsonl"))
    assert len(runs) == 1 and runs[0].name.endswith("Z.jsonl")
    assert "reason" not in r.stdout.split("reasons:")[1]  # no per-case table
    assert f"run file: runs{os.sep}{runs[0].name}" in r.stdout


def test_http_failures_are_error_cases_exit_1_when_all_failed(cli, tmp_path):
    ts = write_testset(tmp_path / "ts")
    with Server() as srv:
        r = cli("run", ts, "--system", srv.url + "/fail", "--retries", "0", "--out", tmp_path / "r.jsonl")
    assert r.returncode == 1, r.stderr  # every case failed (issue 22): the first error on stderr
    assert "every case failed (5 of 5): the first, case " in r.stderr
    assert "HTTP 500" in r.stdout and "error" in r.stdout
    recs = case_lines(tmp_path / "r.jsonl")
    assert len(recs) == 5 and all(c["reason"] == "error" for c in recs)


def test_bad_results_file_exit_2_located_nothing_written(cli, tmp_path):
    ts = write_testset(tmp_path / "ts")
    bad = tmp_path / "answers.jsonl"
    bad.write_text('{"id": "dinero", "ranking": []}\n{"id": "domingo", "ranking": 3}\n', encoding="utf-8")
    out = tmp_path / "r.jsonl"
    r = cli("run", ts, "--system", f"results:{bad}", "--out", out)
    assert r.returncode == 2
    assert f"{bad}:2: case 'domingo': ranking: must be a list of chunk ids" in r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


def test_results_unknown_ids_warn_and_missing_cases_are_errors(cli, tmp_path):
    ts = write_testset(tmp_path / "ts")
    res = tmp_path / "answers.jsonl"
    res.write_text(
        '{"id": "dinero", "ranking": ["devolver-2"], "answer": "En cinco días [devolver-2]"}\n'
        '{"id": "ghost", "ranking": []}\n',
        encoding="utf-8",
    )
    r = cli(
        "run", ts, "--system", f"results:{res}", "--out", tmp_path / "r.jsonl", "--json", tmp_path / "s.json"
    )
    assert r.returncode == 0, r.stderr
    assert f"{res}:2: case 'ghost'" in r.stderr and "not in the test set" in r.stderr
    s = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert s["errors"] == 4 and s["reasons"]["supported-correct"] == 1


def test_dry_run_spends_nothing(cli, tmp_path):
    ts = write_testset(tmp_path / "ts")
    with Server() as srv:
        r = cli("run", ts, "--system", srv.url + "/ask", "--dry-run", cwd=tmp_path)
        assert srv.requests == []
    assert r.returncode == 0 and "5 external calls" in r.stdout and "prompt tokens" in r.stdout
    assert not (tmp_path / "runs").exists()


def test_usage_errors_exit_2(cli, tmp_path):
    ts = write_testset(tmp_path / "ts")
    r = cli("run", ts, "--resume")
    assert r.returncode == 2 and "--resume" in r.stderr
    r = cli("run", ts, "--system", "nonsense", "--out", tmp_path / "x.jsonl")
    assert r.returncode == 2 and "unknown system" in r.stderr and not (tmp_path / "x.jsonl").exists()
    r = cli("run", tmp_path / "missing.yaml")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_ctrl_c_keeps_finished_cases_then_resume(tmp_path):
    ts = write_testset(tmp_path / "ts")
    out = tmp_path / "r.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with Server(hold_after=2) as srv:  # the third case is in flight when ctrl+c comes
        cmd = [
            sys.executable,
            "-m",
            "ragtriage",
            "run",
            str(ts),
            "--system",
            srv.url + "/ask",
            "--concurrency",
            "1",
            "--out",
            str(out),
        ]
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if out.exists() and len(case_lines(out)) >= 2:
                break
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 130, err
        assert "--resume" in err and "Traceback" not in err
        kept = case_lines(out)
        assert len(kept) == 2
        assert '"type":"summary"' not in out.read_text(encoding="utf-8")
        n = len(srv.requests)
        srv.release()
        r = subprocess.run(cmd + ["--resume"], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        asked = {json.loads(b)["id"] for _, b, _ in srv.requests[n:]}
    done = case_lines(out)
    assert len(done) == 5 and not asked & {c["id"] for c in kept}
    assert '"type":"summary"' in out.read_text(encoding="utf-8").splitlines()[-1]


def test_sweep_rows(cli, tmp_path):
    ts = write_testset(tmp_path / "ts")
    r = cli("sweep", ts, "--json", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["rows"]
    assert [x["k"] for x in rows] == [1, 2]  # default: 1 .. the test set's k
    for col in ("hit", "supported", "correct", "prompt tokens"):
        assert col in r.stdout
    r = cli("sweep", ts, "--k", "3", "--threshold", "0,1.5", "--json", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    assert "threshold" in r.stdout
    rows = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["rows"]
    assert [(x["k"], x["threshold"]) for x in rows] == [(k, t) for k in (1, 2, 3) for t in (0.0, 1.5)]
    r = cli("sweep", ts, "--dry-run")
    assert r.returncode == 0 and "nothing was spent" in r.stdout


def test_sweep_k_range(cli, tmp_path):
    ts = write_testset(tmp_path / "ts")
    r = cli("sweep", ts, "--k", "1-4", "--json", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["rows"]
    assert [x["k"] for x in rows] == [1, 2, 3, 4]


def test_triage_finds_the_test_set_moved_next_to_the_run(cli, tmp_path):
    """`run` writes the test set's absolute path; a run copied elsewhere together with its
    test set (a CI artifact) was refused with 'pass --testset' though the file sat beside it."""
    import shutil

    from ragtriage.core.evaluate import evaluate
    from ragtriage.core.runfile import read_meta, resolve_testset
    from tests.conftest import TESTSETS

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, a / name)
    evaluate(a / "shop-es.yaml", "builtin", out=a / "run.jsonl")
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl", "run.jsonl"):
        shutil.move(a / name, b / name)
    run = b / "run.jsonl"
    assert read_meta(run)["testset"] == str(a / "shop-es.yaml")
    assert resolve_testset(run, read_meta(run)) == b / "shop-es.yaml"
    r = cli("triage", run)  # no terminal in tests: it gets past the test set, then asks for a TTY
    assert r.returncode == 2
    assert "not found" not in r.stderr and "needs a terminal" in r.stderr


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
