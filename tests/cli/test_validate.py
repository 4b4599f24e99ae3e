"""`ragtriage validate` and the CLI's promises: located errors, exit codes, no tracebacks."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import TESTSETS

HEAD = "version: 1\ncorpus: c.jsonl\ncases:\n"
CORPUS = '{"id": "a", "text": "uno"}\n{"id": "b", "text": "dos"}\n'


def write(tmp_path, text, corpus=CORPUS):
    p = tmp_path / "t.yaml"
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    if corpus is not None:
        (tmp_path / "c.jsonl").write_text(corpus, encoding="utf-8")
    return p


@pytest.mark.parametrize("name", ["shop-es.yaml", "shop-de.yaml"])
def test_demo_sets_are_valid(cli, name):
    r = cli("validate", TESTSETS / name)
    assert r.returncode == 0, r.stderr
    assert "8 cases (1 unanswerable), 0 errors, 0 warnings" in r.stdout


@pytest.mark.parametrize(
    "text,corpus,fragment",
    [
        (HEAD + "  - id: x\n    question: [oops\n", CORPUS, "t.yaml:5: not valid YAML"),
        (HEAD + "  - id: x\n\t  question: q\n", CORPUS, "tab in indentation"),
        (
            HEAD + "  - id: x\n    question: q\n    expected: a\n",
            CORPUS,
            "t.yaml:6: case 'x': expected: must be a list",
        ),
        (HEAD + "  - id: x\n    question: q\n    expeced: [a]\n", CORPUS, "did you mean 'expected'?"),
        (
            HEAD
            + "  - id: x\n    question: q\n    expected: [a]\n  - id: x\n    question: r\n    expected: [b]\n",
            CORPUS,
            "t.yaml:7: case 'x': id: duplicate id (first at line 4)",
        ),
        (
            HEAD + "  - id: x\n    question: q\n    expected: [a]\n    unanswerable: true\n",
            CORPUS,
            "case 'x': unanswerable: unanswerable: true with expected chunks",
        ),
        ("", CORPUS, "t.yaml:1: empty test set"),
        (HEAD + "  - id: x\n    question: q\n    expected: [a]\n", None, "c.jsonl: chunks file not found"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", CORPUS, "t.yaml:3: not a text file (NUL byte)"),
        (
            HEAD + "  - id: x\n    question: !!python/object/apply:os.system [touch pwned]\n",
            CORPUS,
            "tag !!python/object/apply:os.system is not allowed",
        ),
        (HEAD + "  - id: x\n    question: q\n", CORPUS, "case 'x': expected: no gold (a draft"),
        (
            HEAD + "  - id: x\n    question: q\n    expected: [a]\n",
            '{"id": "a", "text": "x"}\n{"id": "a"\n',
            "c.jsonl:2: not valid JSON",
        ),
    ],
)
def test_bad_input_exit_2_located_no_traceback(cli, tmp_path, text, corpus, fragment):
    p = write(tmp_path, text, corpus)
    before = p.read_bytes()
    r = cli("validate", p, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert fragment in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert p.read_bytes() == before  # nothing written
    assert not (tmp_path / "pwned").exists()


def test_fifty_megabyte_file_is_refused(cli, tmp_path):
    p = tmp_path / "huge.yaml"
    with open(p, "wb") as f:
        f.write(b"version: 1\ncases:\n")
        f.write((b"  # " + b"x" * 1020 + b"\n") * 50 * 1024)
    r = cli("validate", p)
    assert r.returncode == 2
    assert "huge.yaml: file is 52 MB; test sets are limited to 40 MiB" in r.stderr
    assert "Traceback" not in r.stderr


def test_missing_file(cli, tmp_path):
    r = cli("validate", tmp_path / "nope.yaml")
    assert r.returncode == 2 and "nope.yaml: file not found" in r.stderr


def test_id_missing_from_corpus_is_a_warning_exit_1(cli, tmp_path):
    p = write(tmp_path, HEAD + "  - id: x\n    question: q\n    expected: [zzz]\n")
    r = cli("validate", p)
    assert r.returncode == 1
    assert "t.yaml:4: case 'x': expected: expected chunk 'zzz' is not in c.jsonl" in r.stderr


def test_json_output(cli, tmp_path):
    import json

    p = write(tmp_path, HEAD + "  - id: x\n    question: q\n")
    out = tmp_path / "problems.json"
    r = cli("validate", p, "--json", out)
    assert r.returncode == 2
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["problems"][0]["case"] == "x" and data["problems"][0]["line"] == 4


def test_help_has_examples_and_version(cli):
    r = cli("--help")
    assert r.returncode == 0 and "examples:" in r.stdout
    for cmd in ("edit", "triage", "validate", "run", "check", "stale", "sweep", "diff", "export", "import"):
        h = cli(cmd, "--help")
        assert h.returncode == 0 and "examples:" in h.stdout and f"ragtriage {cmd}" in h.stdout, cmd
    v = cli("--version")
    assert v.returncode == 0 and v.stdout.startswith("ragtriage ")


def test_usage_error_is_exit_2(cli):
    r = cli("validate")
    assert r.returncode == 2 and "error:" in r.stderr


def test_copied_demo_validates_from_elsewhere(cli, tmp_path):
    for f in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / f, tmp_path / f)
    r = cli("validate", "shop-es.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_validate_summary_uses_singular_for_one(cli, tmp_path):
    # "1 cases ..., 1 warnings" read as a typo in the one line every user sees
    p = write(tmp_path, HEAD + "  - id: x\n    question: hola\n    expected: [zz]\n")
    r = cli("validate", p)
    assert r.returncode == 1, r.stderr
    assert "t.yaml: 1 case (0 unanswerable), 0 errors, 1 warning\n" in r.stdout
    assert "'zz'" in r.stderr
