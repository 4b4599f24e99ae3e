"""Where a ``python:`` system runs: a worker process (the CLI's default), this process,
or Ray. A system that ends its process is that case's error and the gate fails; the run
file does not depend on the executor; answers get the ``http:`` size limit."""

from __future__ import annotations

import sys

import orjson
import pytest

from ragtriage import cli
from ragtriage.core.evaluate import evaluate
from tests.conftest import run_cli

MODULE = '''
import os

def fine(q, k):
    return {"ranking": ["entrega-1", "pago-1"], "answer": "Cuesta 3 € [entrega-1]", "latency_ms": 1.0}

def noisy(q, k):
    print("the system talks on stdout")
    return fine(q, k)

def kills(q, k):
    if "domingo" in q:
        os._exit(0)
    return fine(q, k)

def kills_all(q, k):
    os._exit(0)

def huge(q, k):
    return {"answer": "x" * (80 << 20)}

def deep(q, k):
    return {"ranking": [f"chunk-{i:07d}" for i in range(2_000_000)], "answer": "x"}

async def afine(q, k):
    return fine(q, k)
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    name = f"exec_sys_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def cases(path):
    return [orjson.loads(x) for x in path.read_bytes().splitlines()][1:-1]


def test_a_system_that_exits_is_that_cases_error_and_the_gate_fails(module, tmp_path, testset):
    out = tmp_path / "run.jsonl"
    r = run_cli("run", testset, "--system", f"python:{module}:kills", "--out", out, "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    got = {c["id"]: c for c in cases(out)}
    assert (
        got["domingo"]["reason"] == "error" and "worker process exited with code 0" in got["domingo"]["error"]
    )
    assert all(c["reason"] != "error" for cid, c in got.items() if cid != "domingo")  # the others answered
    r = run_cli(
        "check",
        testset,
        "--system",
        f"python:{module}:kills",
        "--run-anyway",
        "--min",
        "supported=0",
        cwd=tmp_path,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "NOT MEASURED  1 case(s)" in r.stdout and "domingo" in r.stdout


def test_a_system_that_always_exits_never_passes_the_gate(module, tmp_path, testset):
    r = run_cli(
        "check",
        testset,
        "--system",
        f"python:{module}:kills_all",
        "--run-anyway",
        "--retries",
        "0",
        cwd=tmp_path,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "NOT MEASURED  8 case(s)" in r.stdout


def test_the_run_file_does_not_depend_on_the_executor(module, tmp_path, testset, capsys):
    files = {}
    for executor, attr in (("process", "noisy"), ("thread", "fine"), ("process", "afine")):
        out = tmp_path / f"{executor}-{attr}.jsonl"
        code = cli.main(
            [
                "run",
                str(testset),
                "--system",
                f"python:{module}:fine",
                "--executor",
                executor,
                "--out",
                str(out),
                "--quiet",
            ]
        )
        assert code == 0
        files[(executor, attr)] = out.read_bytes().split(b"\n", 1)[1]
    assert len(set(files.values())) == 1
    r = run_cli(
        "run",
        testset,
        "--system",
        f"python:{module}:noisy",
        "--out",
        tmp_path / "n.jsonl",
        "--quiet",
        cwd=tmp_path,
    )
    assert r.returncode == 0 and "the system talks" not in r.stdout  # the worker's prints go to stderr


@pytest.mark.parametrize("executor", ["process", "thread"])
def test_answers_over_the_size_limit_are_errors(module, tmp_path, testset, executor):
    """An 80 MB answer and a 2M-id ranking get the http: limit (16 MB by default)."""
    for attr in ("huge", "deep"):
        out = tmp_path / f"{attr}-{executor}.jsonl"
        code = cli.main(
            ["run", str(testset), "--system", f"python:{module}:{attr}", "--executor", executor, "--out", str(out),
             "--quiet", "--retries", "0", "--timeout", "120", "--ids", "domingo"]
        )  # fmt: skip
        assert code == 1  # every case of the run failed
        (c,) = cases(out)
        assert c["reason"] == "error" and "over the 16 MB answer limit" in c["error"], c["error"][:200]


def test_an_unimportable_system_is_exit_2_before_any_output(module, tmp_path, testset, capsys):
    out = tmp_path / "run.jsonl"
    code = cli.main(["run", str(testset), "--system", "python:no_such_module:f", "--out", str(out)])
    assert code == 2 and not out.exists()
    assert "cannot import 'no_such_module'" in capsys.readouterr().err


def test_ray_runs_the_system_and_reads_what_ray_data_writes(module, tmp_path, testset):
    """One local Ray started by the test (two CPUs) for both: --executor ray gives the
    run file a local run gives, an actor that dies is that case's error; and a Ray Data
    job's write_json folder is a results: source."""
    ray = pytest.importorskip("ray")  # the [ray] extra; the dev extras install it
    pytest.importorskip("ray.data")

    local = tmp_path / "local.jsonl"
    evaluate(str(testset), f"python:{module}:fine", 3, out=local, executor="process")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        far = tmp_path / "ray.jsonl"
        run = evaluate(str(testset), f"python:{module}:fine", 3, out=far, executor="ray", concurrency=4)
        assert run.summary["errors"] == 0
        assert far.read_bytes().split(b"\n", 1)[1] == local.read_bytes().split(b"\n", 1)[1]
        killed = evaluate(str(testset), f"python:{module}:kills", 3, executor="ray", retries=1, backoff=0.01)
        errs = {c["id"] for c in killed.cases if c["reason"] == "error"}
        assert "domingo" in errs and len(errs) < len(killed.cases)

        doc_cases = [("precio-entrega", "oficina"), ("devolucion", "devolver"), ("reembolso", "dinero")]
        ds = ray.data.from_items([{"id": cid, "question": q} for cid, q in doc_cases], override_num_blocks=3)

        chunks = {"oficina": "entrega-1", "devolver": "devolver-1", "dinero": "devolver-2"}

        def answer(row):  # what a batch inference job does: one answer per case, with its id
            cid = chunks[row["question"]]  # (no import from the tests: Ray's workers run it)
            return {
                "id": row["id"],
                "ranking": [cid, "pago-1"],
                "scores": [2.0, 0.5],
                "answer": f"Sí [{cid}]",
            }

        ds.map(answer).write_json(str(tmp_path / "answers"))  # a folder of *.json parts (JSON lines)
    finally:
        ray.shutdown()
    parts = sorted(p.name for p in (tmp_path / "answers").iterdir())
    assert len(parts) >= 2 and all(p.endswith(".json") for p in parts)
    got = evaluate(str(testset), f"results:{tmp_path / 'answers'}", 3, ids=[c for c, _ in doc_cases])
    assert got.summary["n"] == 3 and got.summary["errors"] == 0


def test_the_core_path_never_imports_ray(module, tmp_path, testset):
    code = (
        "import sys; from ragtriage import cli\n"
        f"cli.main(['run', {str(testset)!r}, '--system', 'python:{module}:fine', '--out', 'r.jsonl', '--quiet'])\n"
        f"cli.main(['check', {str(testset)!r}, '--run', 'r.jsonl'])\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    import subprocess

    from tests.conftest import ROOT

    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert r.returncode == 0, r.stderr
