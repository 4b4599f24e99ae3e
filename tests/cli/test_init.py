"""``ragtriage init``: a new test set from a chunks file, and the grouped warnings a new
set's unrecorded labels give (one line with the counts and the fix, not one per case)."""

from __future__ import annotations

import shutil

import pytest

import ragtriage
from ragtriage.commands.init_cmd import create_new
from tests.conftest import ROOT, TESTSETS


@pytest.fixture
def shop(tmp_path):
    shutil.copy(TESTSETS / "shop-es.chunks.jsonl", tmp_path / "shop.chunks.jsonl")
    return tmp_path


def test_init_writes_a_skeleton_that_validate_accepts(cli, shop):
    res = cli("init", "faq.yaml", "--corpus", "shop.chunks.jsonl", cwd=shop)
    assert res.returncode == 0, res.stderr
    assert "faq.yaml: a new test set over shop.chunks.jsonl (11 chunks), k 3" in res.stdout
    assert "language: es, guessed from the chunks' text" in res.stderr
    text = (shop / "faq.yaml").read_text(encoding="utf-8")
    assert "\nversion: 1\ncorpus: shop.chunks.jsonl   # chunks file, relative to this file\n" in text
    assert "\nlanguage: es   #" in text and "\nk: 3   #" in text and text.endswith("\ncases: []\n")
    assert "#     expected: [entrega-1]" in text  # the example names a real chunk of the corpus
    assert "#   ragtriage edit faq.yaml" in text
    ok = cli("validate", "faq.yaml", cwd=shop)
    assert ok.returncode == 0 and "faq.yaml: 0 cases (0 unanswerable), 0 errors, 0 warnings" in ok.stdout
    # the first case a person adds keeps every comment of the skeleton
    ts = ragtriage.load_testset(shop / "faq.yaml")
    ts.add_case(id="precio", question="¿Cuánto cuesta la entrega?", expected=["entrega-1"])
    ts.save()
    after = (shop / "faq.yaml").read_text(encoding="utf-8")
    head = text.removesuffix("cases: []\n")
    assert after.startswith(head + "cases:\n  - id: precio\n")
    assert cli("validate", "faq.yaml", cwd=shop).returncode == 0


@pytest.mark.parametrize(
    "chunks,language",
    [
        (TESTSETS / "shop-de.chunks.jsonl", "de"),
        (TESTSETS / "pydocs" / "pydocs-paragraphs.chunks.jsonl", "en"),
    ],
)
def test_language_is_guessed_from_the_chunks(cli, tmp_path, chunks, language):
    res = cli("init", tmp_path / "t.yaml", "--corpus", chunks)
    assert res.returncode == 0, res.stderr
    assert f"language: {language}, guessed from the chunks' text" in res.stderr
    assert f"\nlanguage: {language}   #" in (tmp_path / "t.yaml").read_text(encoding="utf-8")


def test_corpus_is_relative_to_the_new_file(cli, shop):
    res = cli("init", "sets/es/tienda.yaml", "--corpus", "shop.chunks.jsonl", "--k", "5", cwd=shop)
    assert res.returncode == 0, res.stderr
    text = (shop / "sets" / "es" / "tienda.yaml").read_text(encoding="utf-8")
    assert "\ncorpus: ../../shop.chunks.jsonl   #" in text and "\nk: 5   #" in text
    ts = ragtriage.load_testset(shop / "sets" / "es" / "tienda.yaml")
    assert ts.corpus_path.resolve() == (shop / "shop.chunks.jsonl").resolve()


def test_given_language_and_one_ragtriage_does_not_know(cli, shop):
    res = cli("init", "t.yaml", "--corpus", "shop.chunks.jsonl", "--language", "fr", cwd=shop)
    assert res.returncode == 0
    assert "language: fr (from --language); ragtriage knows no decline phrases for 'fr'" in res.stderr
    assert "add `decline: [...]`" in res.stderr
    bad = cli("init", "u.yaml", "--corpus", "shop.chunks.jsonl", "--language", "español", cwd=shop)
    assert bad.returncode == 2 and "--language: 'español': give a language code" in bad.stderr
    assert not (shop / "u.yaml").exists()


def test_init_never_overwrites(cli, shop):
    (shop / "mine.yaml").write_text("# my own notes\nversion: 1\ncases: []\n", encoding="utf-8")
    before = (shop / "mine.yaml").read_bytes()
    res = cli("init", "mine.yaml", "--corpus", "shop.chunks.jsonl", cwd=shop)
    assert res.returncode == 2
    assert "mine.yaml: already exists (a file); not overwritten" in res.stderr
    assert "ragtriage edit mine.yaml" in res.stderr
    assert (shop / "mine.yaml").read_bytes() == before
    # and the moment between the check and the write: the name taken meanwhile wins
    with pytest.raises(FileExistsError):
        create_new(shop / "mine.yaml", "version: 1\ncases: []\n")
    assert (shop / "mine.yaml").read_bytes() == before
    assert sorted(p.name for p in shop.iterdir()) == ["mine.yaml", "shop.chunks.jsonl"]  # no temp file left


def test_init_bad_input_is_located_and_writes_nothing(cli, shop):
    cases = [
        (("t.txt", "--corpus", "shop.chunks.jsonl"), "t.txt: a test set is YAML: name it .yaml"),
        (("t.yaml", "--corpus", "nope.jsonl"), "nope.jsonl: --corpus: chunks file not found"),
        (("shop.chunks.jsonl/t.yaml", "--corpus", "shop.chunks.jsonl"), "shop.chunks.jsonl is not a folder"),
        (("t.yaml", "--corpus", "shop.chunks.jsonl", "--k", "0"), "k must be a whole number of 1 or more"),
        (("t.yaml", "--corpus", "bad.jsonl"), "bad.jsonl:2: not valid JSON"),
        (("t.yaml", "--corpus", "empty.jsonl"), "empty.jsonl: --corpus: holds no chunk"),
    ]
    (shop / "bad.jsonl").write_text('{"id": "a", "text": "x"}\n{oops\n', encoding="utf-8")
    (shop / "empty.jsonl").write_text("", encoding="utf-8")
    for args, message in cases:
        res = cli("init", *args, cwd=shop)
        assert res.returncode == 2, args
        assert message in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr
    assert not (shop / "t.yaml").exists() and not (shop / "t.txt").exists()


def test_init_help_has_examples(cli):
    res = cli("init", "--help")
    assert res.returncode == 0 and "ragtriage init testsets/mine.yaml --corpus" in res.stdout


def _many_cases(path, chunks, n=2000):
    lines = ["version: 1", "corpus: shop.chunks.jsonl", "language: es", "cases:"]
    for i in range(n):
        lines += [
            f"  - id: q{i}",
            f"    question: pregunta número {i}",
            f"    expected: [{chunks[i % len(chunks)]}]",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_unrecorded_labels_are_one_warning_with_the_fix(cli, shop):
    """2,000 cases over 9 labels nobody recorded: validate, check and stale each say it once,
    with the counts and the one step that records them; after it, nothing is left."""
    labels = list(ragtriage.load_corpus(shop / "shop.chunks.jsonl"))[:9]
    _many_cases(shop / "big.yaml", labels)
    fix = "record them all with `ragtriage stale big.yaml --fix`, or save the test set in the app (ctrl+s)"
    want = f"{len(labels)} labels not recorded yet (expected by "

    res = cli("validate", "big.yaml", cwd=shop)
    problems = [line for line in res.stderr.splitlines() if "not recorded" in line or "stale" in line]
    assert len(problems) == 1 and want in problems[0] and fix in problems[0], res.stderr
    assert "9 labels not recorded yet (expected by 2,000 cases)" in problems[0]

    chk = cli("check", "big.yaml", cwd=shop)
    stale_lines = [line for line in chk.stdout.splitlines() if line.startswith("✗ STALE")]
    assert chk.returncode == 1 and len(stale_lines) == 1 and fix in stale_lines[0]
    assert f"check FAILED: {len(labels)} unrecorded label(s)" in chk.stdout

    st = cli("stale", "big.yaml", cwd=shop)
    assert st.stdout.count("not recorded yet") == 1 and "case 'q" not in st.stdout
    assert len(st.stdout.splitlines()) < 10

    fixed = cli("stale", "big.yaml", "--fix", cwd=shop)
    assert fixed.returncode == 0 and len(fixed.stdout.splitlines()) < 10
    assert f"✓ {len(labels)} label(s) recorded" in fixed.stdout
    assert cli("validate", "big.yaml", cwd=shop).returncode == 0
    assert cli("check", "big.yaml", cwd=shop).returncode == 0


def test_readme_starts_from_a_chunks_file():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Your own documents", 1)[1].split("\n## ", 1)[0]
    assert "ragtriage init" in section and "--corpus" in section and "ragtriage edit" in section
