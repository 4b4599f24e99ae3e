"""Hostile test-set files (issue 12): anchors and aliases, edits that used to crash,
characters YAML cannot carry, and a reopen cache that must follow the bytes on disk."""

from __future__ import annotations

import shutil

import pytest
import yaml

from ragtriage.core.errors import TestSetError
from ragtriage.core.testset import TestSetDocument, cache_dir

HEAD = "version: 1\ncases:\n"


def load_problems(tmp_path, text: str) -> list[str]:
    p = tmp_path / "t.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(TestSetError) as e:
        TestSetDocument.load(p)
    return [str(x).replace(str(p), "F") for x in e.value.problems]


# ---------------------------------------------------------------- 1. anchors and aliases


@pytest.mark.parametrize(
    "text,line",
    [
        (HEAD + "  - id: a\n    question: &q ¿abierto?\n  - id: b\n    question: *q\n", 4),
        (
            HEAD + "  - id: a\n    question: q\n    tags: &t [x]\n  - id: b\n    question: q\n    tags: *t\n",
            5,
        ),
        (HEAD + "  - &c\n    id: a\n    question: q\n", 3),
        ("version: 1\nlanguage: &l es\ncases:\n  - id: a\n    question: *l\n", 2),
        (HEAD + "  - id: a\n    question: q\n    notes: *nada\n", 5),  # undefined alias
    ],
)
def test_anchors_and_aliases_are_refused_with_their_line(tmp_path, text, line):
    got = load_problems(tmp_path, text)
    assert len(got) == 1, got
    assert got[0].startswith(f"F:{line}: "), got
    assert "anchor" in got[0] or "alias" in got[0], got


@pytest.mark.parametrize(
    "value",
    ["a & b", "precio * 2", "a&b", "x*y", "'&quoted'", '"*quoted"', "qué & cómo"],
)
def test_ampersand_and_star_inside_values_are_plain_text(tmp_path, value):
    p = tmp_path / "t.yaml"
    p.write_text(HEAD + f"  - id: a\n    question: {value}\n    tags: [{value}]\n", encoding="utf-8")
    doc = TestSetDocument.load(p)
    want = yaml.safe_load(p.read_text(encoding="utf-8"))["cases"][0]["question"]
    assert doc.case("a").question == want


def test_validate_refuses_an_alias_with_exit_2_and_a_located_message(tmp_path, cli):
    p = tmp_path / "t.yaml"
    p.write_text(HEAD + "  - id: a\n    question: &q uno\n  - id: b\n    question: *q\n", encoding="utf-8")
    r = cli("validate", p)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert "t.yaml:4:" in r.stdout + r.stderr


# ---------------------------------------------------------------- 1. the reopen cache follows the bytes


def test_cache_of_other_bytes_is_never_served(tmp_path):
    a = tmp_path / "a.yaml"
    b = tmp_path / "b.yaml"
    a.write_text(HEAD + "  - id: a\n    question: uno\n", encoding="utf-8")
    b.write_text(HEAD + "  - id: a\n    question: dos\n", encoding="utf-8")
    TestSetDocument.load(a)
    (entry,) = cache_dir().glob("ts-*.bin")
    # plant a's pieces under the key b's bytes hash to (a stale, foreign or forged entry)
    import hashlib

    key = hashlib.blake2b(b.read_bytes(), digest_size=16).hexdigest()
    shutil.copy(entry, cache_dir() / f"ts-{key}.bin")
    doc = TestSetDocument.load(b)
    assert doc.case("a").question == "dos"
    assert doc.text == b.read_text(encoding="utf-8")


def test_after_a_save_a_reopen_reads_what_the_file_says(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(HEAD + "  - id: a\n    question: uno   # primera\n", encoding="utf-8")
    doc = TestSetDocument.load(p)
    doc.update_case("a", question="¿dos?")
    doc.save()
    again = TestSetDocument.load(p)
    fresh = TestSetDocument.load(p, use_cache=False)
    assert again.text == fresh.text == p.read_text(encoding="utf-8")
    assert again.cases == fresh.cases
