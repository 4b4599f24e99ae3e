"""The ``python:`` system contract as a user meets it (formats.md §3): what the callable
receives, a wrong signature refused before the run, a run where every case failed,
import errors that say where ragtriage looks, and ``--retriever`` naming itself."""

from __future__ import annotations

import sys

import orjson
import pytest

from tests.conftest import TESTSETS

MODULE = '''
import asyncio

def one_arg(question):
    return {"answer": "x"}

def keyword_k(question, *, k):
    return {"answer": "x"}

def no_args():
    return {"answer": "x"}

def default_k(question, k=None):
    return {"ranking": ["entrega-1"], "answer": "La entrega cuesta 3 € [entrega-1]"}

def star(*args):
    return {"ranking": ["entrega-1"], "answer": "x"}

async def coro(question, k):
    await asyncio.sleep(0)
    return {"ranking": ["entrega-1"][:k], "answer": "x"}

class Callable:
    def __call__(self, question, k):
        return {"ranking": ["entrega-1"], "answer": "x"}

instance = Callable()

def gen(question, k):
    yield {"answer": "x"}

async def agen(question, k):
    yield {"answer": "x"}

def fails(question, k):
    raise RuntimeError("the index is not loaded")

def fails_some(question, k):
    if "domingo" in question.lower() or "tarjeta" in question.lower():
        raise RuntimeError("no luck with " + question[:10])
    return {"ranking": ["entrega-1"], "answer": "x"}

not_callable = 42
'''


@pytest.fixture
def mod(tmp_path, monkeypatch):
    name = f"contract_sys_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    yield name
    sys.modules.pop(name, None)


def _run(cli, tmp_path, spec, *more):
    out = tmp_path / "run.jsonl"
    return cli(
        "run", TESTSETS / "shop-es.yaml", "--system", spec, "--out", out, "--quiet", *more, cwd=tmp_path
    ), out


@pytest.mark.parametrize(
    "attr, message",
    [
        (
            "one_arg",
            "one_arg(question) cannot be called as one_arg(question, k): ragtriage calls it with two "
            "positional arguments",
        ),
        ("keyword_k", "keyword_k(question, *, k) cannot be called as keyword_k(question, k)"),
        ("no_args", "no_args() cannot be called as no_args(question, k)"),
        ("gen", "gen is a generator function: return the result (a dict), do not yield it"),
        ("agen", "agen is an async generator function: return the result (a dict), do not yield it"),
        ("not_callable", "'not_callable' is not callable (it is an int)"),
    ],
)
def test_a_wrong_signature_is_refused_before_the_run(cli, mod, tmp_path, attr, message):
    res, out = _run(cli, tmp_path, f"python:{mod}:{attr}")
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stderr
    assert f"--system: python:{mod}:{attr}:" in res.stderr
    assert "Traceback" not in res.stderr and not out.exists()  # refused before the run: no run file


@pytest.mark.parametrize("attr", ["default_k", "star", "coro", "instance"])
def test_callables_that_fit_the_contract_run(cli, mod, tmp_path, attr):
    res, out = _run(cli, tmp_path, f"python:{mod}:{attr}")
    assert res.returncode == 0, res.stderr
    cases = [orjson.loads(x) for x in out.read_bytes().splitlines()][1:-1]
    assert len(cases) == 8 and not any("error" in c for c in cases)


def test_every_case_failed_exits_1_and_prints_the_first_error_even_quiet(cli, mod, tmp_path):
    res, out = _run(cli, tmp_path, f"python:{mod}:fails", "--retries", "0")
    assert res.returncode == 1
    assert (
        "every case failed (8 of 8): the first, case 'precio-entrega': RuntimeError: the index is not loaded"
        in (res.stderr)
    )
    assert out.exists()  # the run file keeps the errors, for triage


def test_some_cases_failed_says_how_many_and_the_first(cli, mod, tmp_path):
    res, _ = _run(cli, tmp_path, f"python:{mod}:fails_some", "--retries", "0")
    assert res.returncode == 0
    assert (
        "2 of 8 cases failed (reason error); the first, case 'tarjeta-rechazada': RuntimeError: no luck"
        in (res.stderr)
    )


def test_an_import_error_says_where_ragtriage_looks(cli, tmp_path):
    res, _ = _run(cli, tmp_path, "python:nowhere_to_be_found:answer")
    assert res.returncode == 2
    assert (
        "cannot import 'nowhere_to_be_found': ModuleNotFoundError: No module named 'nowhere_to_be_found'"
        in (res.stderr)
    )
    assert f"MODULE is imported from the current directory ({tmp_path}) and PYTHONPATH" in res.stderr
    assert "nowhere_to_be_found.py" in res.stderr


def test_an_error_inside_the_module_is_shown_as_it_is(cli, tmp_path, monkeypatch):
    (tmp_path / "broken_mod_xyz.py").write_text("import not_installed_pkg_xyz\n", encoding="utf-8")
    res, _ = _run(cli, tmp_path, "python:broken_mod_xyz:answer")
    sys.modules.pop("broken_mod_xyz", None)
    assert res.returncode == 2
    assert "cannot import 'broken_mod_xyz': ModuleNotFoundError: No module named 'not_installed_pkg_xyz'" in (
        res.stderr
    )
    assert "current directory" not in res.stderr  # the module was found: its own import failed


def test_a_bad_retriever_is_blamed_on_retriever(cli, tmp_path):
    res, _ = _run(cli, tmp_path, "openai:http://127.0.0.1:9/v1#m", "--retriever", "bogus")
    assert res.returncode == 2
    assert res.stderr.startswith("--retriever: unknown system 'bogus'")
    res, _ = _run(cli, tmp_path, "builtin", "--retriever", "builtin")
    assert res.returncode == 2 and "--retriever: only openai: systems use a retriever" in res.stderr


def test_run_help_says_what_a_python_callable_receives(cli):
    text = " ".join(cli("run", "--help").stdout.split())
    assert "python:MODULE:ATTR calls ATTR(question, k) for every case: question a str, k the cut-off" in text
    assert "both positional; sync or async" in text and "refused before the run" in text
    assert "current directory and PYTHONPATH" in text and "none is needed for a local server" in text
    assert "--retriever SPEC" in text and "the retrieval of an openai: system" in text
