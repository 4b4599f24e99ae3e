"""Hostile test-set files (issue 12): anchors and aliases, edits that used to crash,
characters YAML cannot carry, and a reopen cache that must follow the bytes on disk."""

from __future__ import annotations

import shutil

import pytest
import yaml

from ragtriage.core.errors import TestSetError
from ragtriage.core.schema import Case
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


# ---------------------------------------------------------------- 2. edits that used to crash


def three_readers(text: str) -> list:
    """The file as pure-Python PyYAML, libyaml and ruamel read it (all must agree)."""
    from ruamel.yaml import YAML

    got = [yaml.load(text, Loader=yaml.SafeLoader)]
    if hasattr(yaml, "CSafeLoader"):
        got.append(yaml.load(text, Loader=yaml.CSafeLoader))
    got.append(YAML(typ="safe", pure=True).load(text))
    return got


def saved_and_reread(doc: TestSetDocument) -> TestSetDocument:
    doc.save(record_labels=False)
    text = doc.path.read_text(encoding="utf-8")
    for data in three_readers(text):
        assert isinstance(data, dict) and isinstance(data["cases"], list), text
    return TestSetDocument.load(doc.path, use_cache=False)


FLOW = HEAD + "  - {id: a, question: uno, notes: n}   # flow\n  - id: b\n    question: dos\n"


@pytest.mark.parametrize(
    "change",
    [
        {"question": "¿tres?"},
        {"question": "línea 1\nlínea 2"},
        {"tags": ("x", "y")},
        {"notes": None},
        {"id": "a2"},
        {"expected": ("c1",), "answer": "sí"},
    ],
)
def test_edits_to_a_flow_mapping_case_work(tmp_path, change):
    p = tmp_path / "t.yaml"
    p.write_text(FLOW, encoding="utf-8")
    doc = TestSetDocument.load(p)
    want = {**doc.case("a").model_dump(), **change}
    want = {k: (v if v is not None else Case.model_fields[k].default) for k, v in want.items()}
    doc.update_case("a", **change)
    back = saved_and_reread(doc)
    assert back.cases[0].model_dump() == want
    text = p.read_text(encoding="utf-8")
    assert text.endswith("  - id: b\n    question: dos\n")  # the next case untouched
    assert "# flow" in text  # the comment is kept


def test_flow_mapping_case_can_be_removed_and_duplicated(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(FLOW, encoding="utf-8")
    doc = TestSetDocument.load(p)
    doc.duplicate_case("a", "a-copia")
    back = saved_and_reread(doc)
    assert [c.id for c in back.cases] == ["a", "a-copia", "b"]
    back.remove_case("a")
    again = saved_and_reread(back)
    assert [c.id for c in again.cases] == ["a-copia", "b"]


@pytest.mark.parametrize("style", ["x", "'x'", '"x"'])
def test_a_value_with_a_trailing_comment_can_become_multi_line(tmp_path, style):
    p = tmp_path / "t.yaml"
    p.write_text(HEAD + f"  - id: a\n    question: q\n    notes: {style}   # por qué\n    tags: [t]\n")
    doc = TestSetDocument.load(p)
    doc.update_case("a", notes="primera\nsegunda\n\ncuarta")
    back = saved_and_reread(doc)
    assert back.case("a").notes == "primera\nsegunda\n\ncuarta"
    assert back.case("a").tags == ("t",)
    assert "# por qué" in p.read_text(encoding="utf-8")


ODD = [
    "\x85",
    "\x7f",
    "\x80",
    "\x9f",
    "\x81\x8d",
    "\ufffe",
    "\uffff",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\x1b[31m",
]


@pytest.mark.parametrize("ch", ODD, ids=[f"U+{ord(c[0]):04X}" for c in ODD])
def test_values_with_odd_characters_are_written_so_every_reader_reads_them(tmp_path, ch):
    p = tmp_path / "t.yaml"
    p.write_text(HEAD + "  - id: a\n    question: q\n    notes: n\n", encoding="utf-8")
    doc = TestSetDocument.load(p)
    value = f"precio{ch}final"
    doc.update_case("a", question=value, notes=value + "\nsegunda", tags=(value, "b"))
    doc.add_case(id="nuevo", question=value, must_contain=(value,))
    doc.set_label("c1", {"sha": "s", "text": value + "\n" + value, "doc": value})
    back = saved_and_reread(doc)
    assert back.case("a").question == value
    assert back.case("a").notes == value + "\nsegunda"
    assert back.case("a").tags == (value, "b")
    assert back.case("nuevo").must_contain == (value,)
    assert back.labels["c1"].text == value + "\n" + value
    for data in three_readers(p.read_text(encoding="utf-8")):
        assert data["cases"][0]["question"] == value
        assert data["labels"]["c1"]["text"] == value + "\n" + value


@pytest.mark.parametrize("bad", ["\ud800", "a\udfffb"])
def test_a_lone_surrogate_is_refused_clearly_and_changes_nothing(tmp_path, bad):
    p = tmp_path / "t.yaml"
    p.write_text(HEAD + "  - id: a\n    question: q\n", encoding="utf-8")
    doc = TestSetDocument.load(p)
    before = doc.text
    with pytest.raises(TestSetError, match="surrogate"):
        doc.update_case("a", question=bad)
    with pytest.raises(TestSetError, match="surrogate"):
        doc.add_case(id="b", question="q", tags=(bad,))
    with pytest.raises(TestSetError, match="surrogate"):
        doc.set_label("c1", {"sha": "s", "text": bad})
    assert doc.validate_case("a", notes=bad)
    assert doc.text == before and not doc.dirty


def test_a_chunk_text_with_a_lone_surrogate_is_not_silently_left_unrecorded(tmp_path):
    from ragtriage.core.corpus import Chunk

    p = tmp_path / "t.yaml"
    p.write_text(HEAD + "  - id: a\n    question: q\n", encoding="utf-8")
    doc = TestSetDocument.load(p)
    doc.update_case("a", expected=("c1", "c2"))
    corpus = {"c1": Chunk("c1", "bien"), "c2": Chunk("c2", "mal\ud800")}
    with pytest.raises(TestSetError, match="c2.*surrogate"):
        doc.save(corpus=corpus)
    assert "c2" not in TestSetDocument.load(p, use_cache=False).labels  # nothing half-written
    corpus["c2"] = Chunk("c2", "bien también\x85")
    assert doc.save(corpus=corpus)
    back = TestSetDocument.load(p, use_cache=False)
    assert back.labels["c2"].text == "bien también\x85"
    assert back.labels["c1"].text == "bien"


# ---------------------------------------------------------------- saving: what is on disk


def _edited(p):
    doc = TestSetDocument.load(p)
    doc.update_case("a", question="nueva")
    return doc


def test_a_same_size_change_with_its_mtime_restored_is_detected(tmp_path):
    import os

    from ragtriage.core.errors import ConflictError

    p = tmp_path / "t.yaml"
    p.write_text(HEAD + "  - id: a\n    question: uno\n", encoding="utf-8")
    st = os.stat(p)
    doc = _edited(p)
    p.write_text(HEAD + "  - id: a\n    question: dos\n", encoding="utf-8")  # same size
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # as rsync -a / cp -p leave it
    assert doc.changed_on_disk()
    with pytest.raises(ConflictError):
        doc.save()
    assert "dos" in p.read_text(encoding="utf-8")


def test_a_read_only_test_set_is_not_replaced(tmp_path):
    import os

    p = tmp_path / "t.yaml"
    p.write_text(HEAD + "  - id: a\n    question: uno\n", encoding="utf-8")
    os.chmod(p, 0o444)
    doc = _edited(p)
    with pytest.raises(TestSetError, match="read-only"):
        doc.save()
    assert "uno" in p.read_text(encoding="utf-8") and os.stat(p).st_mode & 0o777 == 0o444
    assert doc.save(allow_read_only=True)  # the explicit override
    assert "nueva" in p.read_text(encoding="utf-8")


def test_saving_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "c.jsonl").write_text('{"id": "c1", "text": "uno"}\n', encoding="utf-8")
    target = real / "t.yaml"
    target.write_text("version: 1\ncorpus: c.jsonl\ncases:\n  - id: a\n    question: uno\n", encoding="utf-8")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    doc = TestSetDocument.load(link)
    assert doc.corpus_path is not None and doc.corpus_path.resolve() == (real / "c.jsonl").resolve()
    doc.update_case("a", question="nueva", expected=("c1",))
    assert doc.save()
    assert link.is_symlink()
    back = TestSetDocument.load(target, use_cache=False)
    assert back.case("a").question == "nueva"
    assert back.labels["c1"].text == "uno"  # the corpus was found beside the real file


def test_the_reopen_cache_keeps_one_entry_per_test_set_and_stale_temp_files_go(tmp_path):
    import os
    import time

    p = tmp_path / "t.yaml"
    p.write_text(HEAD + "  - id: a\n    question: uno\n", encoding="utf-8")
    old_tmp = tmp_path / ".t.yaml.abc123.tmp"  # left by a killed save
    old_tmp.write_bytes(b"half")
    hour_ago = time.time() - 7200
    os.utime(old_tmp, (hour_ago, hour_ago))
    fresh_tmp = tmp_path / ".t.yaml.def456.tmp"  # another process writing right now
    fresh_tmp.write_bytes(b"busy")
    doc = TestSetDocument.load(p)
    for i in range(5):
        doc.update_case("a", question=f"versión {i}")
        doc.save()
    assert len(list(cache_dir().glob("ts-*.bin"))) == 1
    assert not old_tmp.exists() and fresh_tmp.exists()
    assert TestSetDocument.load(p).case("a").question == "versión 4"


# ---------------------------------------------------------------- numbers a test set cannot mean


@pytest.mark.parametrize(
    "text,line,fragment",
    [
        ("version: 1\nk: " + "1" * 5000 + "\ncases:\n  - id: a\n    question: q\n", 2, "digits"),
        (HEAD + "  - id: a\n    question: q\nlabels:\n  c:\n    start: " + "9" * 4301 + "\n", 7, "digits"),
        (HEAD + "  - id: a\n    question: q\n    unanswerable: " + "1" * 4400 + "\n", 5, "digits"),
        ("version: 1\nk: true\ncases:\n  - id: a\n    question: q\n", 2, "whole number"),
        (HEAD + "  - id: a\n    question: q\nlabels:\n  c:\n    start: true\n", 6, "whole number"),
        ("version: 1\nk: 99999999999999999999999\ncases:\n  - id: a\n    question: q\n", 2, "at most"),
    ],
    ids=[
        "k-5000-digits",
        "label-start-4301-digits",
        "unanswerable-4400-digits",
        "k-true",
        "start-true",
        "k-huge",
    ],
)
def test_numbers_a_test_set_cannot_mean_are_located_problems(tmp_path, text, line, fragment):
    got = load_problems(tmp_path, text)
    assert any(g.startswith(f"F:{line}: ") and fragment in g for g in got), got


def test_a_multi_line_flow_case_with_comments_inside_is_refused_not_stripped(tmp_path):
    p = tmp_path / "t.yaml"
    text = HEAD + "  - {id: a,   # el id\n     question: uno}\n"
    p.write_text(text, encoding="utf-8")
    doc = TestSetDocument.load(p)
    with pytest.raises(TestSetError, match="comment"):
        doc.update_case("a", question="dos")
    assert doc.text == text and not doc.dirty
