"""The test-set document: byte-for-byte saves, edits, errors, cache."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ragtriage.core import document as docmod
from ragtriage.core.document import TestSetDocument
from ragtriage.core.errors import ConflictError, TestSetError
from tests.conftest import GOLDEN
from tests.core.golden_ops import OPS

SRC = GOLDEN / "commented.yaml"


@pytest.fixture
def copy(tmp_path):
    def make(src: Path = SRC, name: str = "set.yaml", transform=None) -> Path:
        data = src.read_bytes()
        if transform:
            data = transform(data)
        p = tmp_path / name
        p.write_bytes(data)
        return p

    return make


def test_load_reads_every_part():
    d = TestSetDocument.load(SRC)
    assert [c.id for c in d.cases] == ["precio-entrega", "tiempo-entrega", "devolver", "domingo"]
    assert d.case("tiempo-entrega").notes == "Customers ask this\nevery single day.\n"
    assert d.case("devolver").expect == "all"
    assert d.case("devolver").tags == ("devoluciones", "garantía")
    assert d.case("domingo").unanswerable
    assert d.settings.k == 3 and d.settings.language == "es" and d.settings.gates == {"hit@3": 0.85}
    assert d.labels["entrega-1"].sha == "5b1f0c2a9e4d"
    assert d.corpus_path == SRC.parent / "shop.chunks.jsonl"
    assert d.text == SRC.read_text(encoding="utf-8")
    assert d.case_line("devolver") == 29
    assert not d.dirty


@pytest.mark.parametrize("name", sorted(OPS))
def test_golden_edit(name, copy):
    p = copy()
    d = TestSetDocument.load(p)
    OPS[name](d)
    assert d.dirty
    assert d.save(record_labels=False) is True  # labels: see test_labels_recorded_from_the_corpus
    expected = (GOLDEN / f"commented.{name}.yaml").read_bytes()
    assert p.read_bytes() == expected
    again = TestSetDocument.load(p, use_cache=False)  # what we wrote reads back
    assert [c.model_dump() for c in again.cases] == [c.model_dump() for c in d.cases]


@pytest.mark.parametrize("name", ["edit-question", "delete-middle", "add-case", "reorder"])
def test_golden_edit_crlf(name, copy):
    crlf = lambda b: b.replace(b"\n", b"\r\n")  # noqa: E731
    p = copy(transform=crlf)
    d = TestSetDocument.load(p)
    OPS[name](d)
    d.save(record_labels=False)
    assert p.read_bytes() == crlf((GOLDEN / f"commented.{name}.yaml").read_bytes())


def test_bom_and_missing_final_newline_survive(copy):
    p = copy(transform=lambda b: b"\xef\xbb\xbf" + b.rstrip(b"\n"))
    d = TestSetDocument.load(p)
    d.update_case("domingo", topic="domingo")
    d.save()
    out = p.read_bytes()
    assert out.startswith(b"\xef\xbb\xbf# Shop assistant")
    assert out.endswith(b"    text: La entrega a una oficina cuesta 3 \xe2\x82\xac.")
    assert b"    topic: domingo\n" in out


def test_no_write_when_nothing_changed(copy):
    p = copy()
    os.utime(p, ns=(1_000_000_000, 1_000_000_000))
    d = TestSetDocument.load(p)
    assert d.save() is False
    d.update_case("domingo", notes="x")
    d.undo()
    assert not d.dirty
    assert d.save() is False
    assert p.stat().st_mtime_ns == 1_000_000_000


def test_refuses_to_overwrite_a_file_changed_on_disk(copy):
    p = copy()
    d = TestSetDocument.load(p)
    d.update_case("domingo", notes="mine")
    p.write_text(p.read_text(encoding="utf-8") + "# someone else's edit\n", encoding="utf-8")
    with pytest.raises(ConflictError, match="changed on disk"):
        d.save()
    assert p.read_text(encoding="utf-8").endswith("# someone else's edit\n")
    d.save(force=True)
    assert "notes: mine" in p.read_text(encoding="utf-8")


def test_save_is_atomic_and_leaves_no_temp_files(copy, tmp_path, monkeypatch):
    p = copy()
    before = p.read_bytes()
    d = TestSetDocument.load(p)
    d.update_case("domingo", notes="x")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr("ragtriage.core.files.os.replace", boom)
    with pytest.raises(OSError):
        d.save()
    assert p.read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["set.yaml"]


def test_undo_redo(copy):
    d = TestSetDocument.load(copy())
    original = d.text
    d.remove_case("devolver")
    d.update_case("domingo", question="¿y los festivos?")
    assert [c.id for c in d.cases] == ["precio-entrega", "tiempo-entrega", "domingo"]
    assert d.undo() and d.case("domingo").question == "¿abren los domingos?"
    assert d.undo() and d.text == original and "devolver" in d
    assert not d.undo()
    assert d.redo() and "devolver" not in d
    assert d.redo() and d.case("domingo").question == "¿y los festivos?"
    assert not d.redo()


def test_remove_every_case_then_add(copy):
    p = copy()
    d = TestSetDocument.load(p)
    for c in list(d.cases):
        d.remove_case(c.id)
    assert "cases: []\n" in d.text
    TestSetDocument.from_text(d.text)  # still a valid test set
    d.add_case(id="nuevo", question="¿algo?", expected=["entrega-1"])
    assert "cases:\n  - id: nuevo\n    question: ¿algo?\n    expected: [entrega-1]\n" in d.text
    d.save(record_labels=False)
    assert [c.id for c in TestSetDocument.load(p).cases] == ["nuevo"]


def test_values_that_need_quotes_read_back_exactly(copy):
    d = TestSetDocument.load(copy())
    tricky = [
        "yes",
        "no",
        "123",
        "0123",
        "1:20",
        "null",
        "~",
        "- dash",
        "a: b",
        "x #y",
        "2026-01-01",
        "'quoted'",
        '"dq"',
        "  padded ",
        "tab\there",
        "é€ü",
        "[flow]",
        "line1\nline2",
    ]
    for i, q in enumerate(tricky):
        d.update_case("domingo", question=q, tags=[q, "plain"])
        again = TestSetDocument.from_text(d.text)
        assert again.case("domingo").question == q, (i, q)
        assert again.case("domingo").tags == (q, "plain")


def test_unknown_field_in_edit_suggests(copy):
    d = TestSetDocument.load(copy())
    with pytest.raises(TestSetError, match="did you mean 'expected'"):
        d.update_case("domingo", expeced=["a"])
    with pytest.raises(TestSetError, match="unanswerable"):
        d.update_case("domingo", expected=["a"])
    with pytest.raises(TestSetError, match="already used"):
        d.update_case("domingo", id="devolver")
    assert d.validate_case("domingo", question="  ")[0].field == "question"
    assert not d.dirty


def test_labels_recorded_from_the_corpus(tmp_path):
    (tmp_path / "c.jsonl").write_text(
        '{"id": "garantía-1", "text": "La garantía dura 2 años.", "doc": "garantia.md", "start": 0, "end": 24}\n'
        '{"id": "pago-1", "text": "Aceptamos pago contra reembolso."}\n',
        encoding="utf-8",
    )
    p = tmp_path / "t.yaml"
    p.write_text(
        "version: 1\ncorpus: c.jsonl\ncases:\n  - id: g\n    question: ¿garantía?\n"
        "    expected: [garantía-1]\n",
        encoding="utf-8",
    )
    d = TestSetDocument.load(p)
    assert d.record_labels(now="2026-11-30T00:00:00Z") == ["garantía-1"]
    lab = d.labels["garantía-1"]
    assert (lab.text, lab.doc, lab.start, lab.end, lab.when) == (
        "La garantía dura 2 años.",
        "garantia.md",
        0,
        24,
        "2026-11-30T00:00:00Z",
    )
    assert len(lab.sha) == 12 and len(lab.corpus) == 12
    assert d.text.endswith(
        "\nlabels:   # maintained by ragtriage: what each labelled chunk said when labelled\n"
        f"  garantía-1:\n    sha: {lab.sha}\n    text: La garantía dura 2 años.\n    doc: garantia.md\n"
        f"    start: 0\n    end: 24\n    when: \"2026-11-30T00:00:00Z\"\n    corpus: {yaml_scalar(lab.corpus)}\n"
    )
    # expecting another chunk and saving records its label; dropping one prunes it
    d.update_case("g", expected=["pago-1"])
    d.save()
    again = TestSetDocument.load(p)
    assert (
        set(again.labels) == {"pago-1"} and again.labels["pago-1"].text == "Aceptamos pago contra reembolso."
    )


def yaml_scalar(s):
    from ragtriage.core.yamltext import render_scalar

    return render_scalar(s)


def test_reopen_uses_the_cache(copy, monkeypatch):
    p = copy()
    first = TestSetDocument.load(p)
    monkeypatch.setattr(
        docmod.yt, "compose", lambda text: (_ for _ in ()).throw(AssertionError("parsed again"))
    )
    again = TestSetDocument.load(p)
    assert [c.model_dump() for c in again.cases] == [c.model_dump() for c in first.cases]
    assert again.text == first.text
    again.update_case("domingo", notes="x") if False else None  # editing needs compose; not here
    p.write_text(p.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="parsed again"):
        TestSetDocument.load(p)  # content changed: the cache does not answer


def test_create_new_test_set(tmp_path):
    p = tmp_path / "new.yaml"
    d = TestSetDocument.create(
        p, corpus="c.jsonl", language="de", k=5, comment="Imported from ragas.\nCheck me."
    )
    d.add_case(
        id="rückgabe", question="Wie lange habe ich Zeit?", expected=["rückgabe-1"], must_contain=["14 Tage"]
    )
    assert d.save(record_labels=False)
    assert p.read_text(encoding="utf-8") == (
        "# Imported from ragas.\n# Check me.\nversion: 1\n"
        "corpus: c.jsonl   # chunks file, relative to this file\nlanguage: de\nk: 5\ncases:\n"
        "  - id: rückgabe\n    question: Wie lange habe ich Zeit?\n    expected: [rückgabe-1]\n"
        "    must_contain: [14 Tage]\n"
    )


# ---------------------------------------------------------------- bad input


def problems_of(text: str, tmp_path) -> list[str]:
    p = tmp_path / "bad.yaml"
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    with pytest.raises(TestSetError) as e:
        TestSetDocument.load(p, use_cache=False)
    return [str(x).replace(str(p), "F") for x in e.value.problems]


GOOD_HEAD = "version: 1\ncases:\n"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("", ["F:1: empty test set: expected `version: 1` and a `cases:` list"]),
        ("# only a comment\n", ["F:1: empty test set: expected `version: 1` and a `cases:` list"]),
        (GOOD_HEAD + "  - id: a\n    question: [unclosed\n", None),
        (GOOD_HEAD + "  - id: a\n\t question: q\n", ["tab in indentation"]),
        (
            GOOD_HEAD + "  - id: a\n    question: q\n    unanswerable: yes\n",
            ["F:5: case 'a': unanswerable: must be true or false (found 'yes')"],
        ),
        (
            GOOD_HEAD + "  - id: a\n    question: q\n    expected: entrega-1\n",
            ["F:5: case 'a': expected: must be a list: write [entrega-1]"],
        ),
        (
            GOOD_HEAD + "  - id: a\n    question: q\n    expeced: [x]\n",
            ["F:5: case 'a': expeced: unknown key (did you mean 'expected'?)"],
        ),
        (
            GOOD_HEAD
            + "  - id: a\n    question: q\n    expected: [x]\n  - id: a\n    question: r\n    expected: [y]\n",
            ["F:6: case 'a': id: duplicate id (first at line 3)"],
        ),
        (
            GOOD_HEAD + "  - id: a\n    question: q\n    expected: [x]\n    unanswerable: true\n",
            ["case 'a': unanswerable: unanswerable: true with expected chunks"],
        ),
        (
            GOOD_HEAD + "  - id: a\n    question: !!python/object/apply:os.system [echo hi]\n",
            ["F:4: tag !!python/object/apply:os.system is not allowed (a test set holds plain data only)"],
        ),
        (
            GOOD_HEAD + "  - id: two words\n    question: q\n    expected: [x]\n",
            ["F:3: case 'two words': id: id 'two words' contains whitespace"],
        ),
        (GOOD_HEAD + "  - id: a\n", ["F:3: case 'a': question: is required"]),
        ("version: 2\ncases: []\n", ["F:1: version: must be one of: 1"]),
        ("verison: 1\ncases: []\n", ["F:1: verison: unknown key (did you mean 'version'?)"]),
        ("version: 1\n", ["F: cases: no `cases:` list"]),
        ("- a\n- b\n", ["F:1: a test set is a mapping"]),
        (b"version: 1\x00\x01\x02", ["F:1: not a text file (NUL byte)"]),
        (b"version: 1\ncases:\n  - id: \xff\xfe\n", ["F:3: not valid UTF-8 text"]),
        ("version: 1\ncases: []\n---\nversion: 1\n", ["more than one YAML document"]),
    ],
)
def test_bad_input_is_located(text, expected, tmp_path):
    got = problems_of(text, tmp_path)
    if expected is None:
        assert got and got[0].startswith("F:4: not valid YAML") or got[0].startswith("F:5: not valid YAML"), (
            got
        )
        return
    joined = "\n".join(got)
    for want in expected:
        assert want in joined, joined


def test_all_problems_at_once(tmp_path):
    got = problems_of(
        GOOD_HEAD + "  - id: a\n    question: q\n    expeced: [x]\n"
        "  - id: b\n    question: ''\n    unanswerable: maybe\n",
        tmp_path,
    )
    assert len(got) == 3, got


def test_too_big_file_is_refused_without_reading_it_all(tmp_path, monkeypatch):
    monkeypatch.setattr(docmod, "MAX_BYTES", 1000)
    p = tmp_path / "big.yaml"
    p.write_text("version: 1\ncases:\n" + "#" * 2000 + "\n", encoding="utf-8")
    with pytest.raises(TestSetError, match="limited to"):
        TestSetDocument.load(p)


def test_yaml_12_reading(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(
        "version: 1\nk: 5\ncases:\n  - id: 123\n    question: no\n    topic: 0123\n"
        "    must_contain: [1:20, yes]\n    unanswerable: true\n",
        encoding="utf-8",
    )
    c = TestSetDocument.load(p).case("123")
    assert (c.id, c.question, c.topic, c.must_contain) == ("123", "no", "0123", ("1:20", "yes"))


def test_demo_sets_load(tmp_path):
    for p in sorted(Path(__file__).resolve().parents[2].joinpath("testsets").glob("*.yaml")):
        d = TestSetDocument.load(p)
        assert d.cases
        shutil.copy(p, tmp_path / p.name)
        d2 = TestSetDocument.load(tmp_path / p.name)
        assert d2.save() is False


def test_big_sets_defer_the_cache_write(copy, monkeypatch, tmp_path):
    monkeypatch.setattr(docmod, "BIG", 1)
    p = copy()
    d = TestSetDocument.load(p)
    assert not list(docmod.cache_dir().glob("ts-*.bin"))  # not on the way to the first screen
    d.flush_cache()
    assert len(list(docmod.cache_dir().glob("ts-*.bin"))) == 1
    d.update_case("domingo", notes="x")
    d.save()
    assert len(list(docmod.cache_dir().glob("ts-*.bin"))) == 1  # the save did not write it either
    d.flush_cache()
    monkeypatch.setattr(
        docmod.yt, "compose", lambda text: (_ for _ in ()).throw(AssertionError("parsed again"))
    )
    assert TestSetDocument.load(p).case("domingo").notes == "x"


def test_batch_is_one_undo_step(copy):
    d = TestSetDocument.load(copy())
    original = d.text
    with d.batch():
        for i in range(50):
            d.add_case(id=f"nuevo-{i}", question=f"¿pregunta {i}?", expected=["entrega-1"])
        d.remove_case("domingo")
    assert len(d.cases) == 53 and d.dirty
    assert d.undo() and d.text == original and not d.dirty
    assert d.redo() and len(d.cases) == 53


def test_content_hash_follows_the_text_through_edits_undo_and_save(copy):
    import hashlib

    def expect(d):
        return hashlib.blake2b(d.text.encode("utf-8"), digest_size=6).hexdigest()

    for use_cache in (False, True, True):  # parsed, then written to and read from the reopen cache
        d = TestSetDocument.load(
            copy(transform=lambda b: b.replace(b"\n", b"\r\n")) if use_cache else copy(), use_cache=use_cache
        )
        d.flush_cache()
        h0 = d.content_hash
        assert h0 == expect(d)
        d.update_case("domingo", notes="x")
        assert d.content_hash == expect(d) != h0
        d.undo()
        assert d.content_hash == h0
        d.redo()
        d.save()
        assert d.content_hash == expect(d) != h0


def test_case_lines_agree_with_case_line(copy):
    d = TestSetDocument.load(copy())
    d.add_case(id="x", question="q", unanswerable=True)
    assert d.case_lines() == {c.id: d.case_line(c.id) for c in d.cases}


def test_update_settings_keeps_comments_and_undoes(copy):
    p = copy()
    d = TestSetDocument.load(p)
    original = d.text
    d.update_settings(corpus="nuevo.chunks.jsonl", k=5)
    assert "corpus: nuevo.chunks.jsonl   # chunks file, relative to this file\n" in d.text
    assert "\nk: 5\n" in d.text
    assert d.settings.k == 5 and d.corpus_path.name == "nuevo.chunks.jsonl"
    d.save(record_labels=False)
    again = TestSetDocument.load(p, use_cache=False)
    assert again.settings.corpus == "nuevo.chunks.jsonl" and again.settings.k == 5
    assert len(again.text.splitlines()) == len(original.splitlines())
    d.undo()
    assert d.text == original and d.settings.k == 3
    with pytest.raises(TestSetError):
        d.update_settings(k=0)
    d2 = TestSetDocument.from_text("version: 1\ncases:\n  - id: a\n    question: q\n    unanswerable: true\n")
    d2.update_settings(corpus="c.jsonl")
    assert d2.text.startswith("version: 1\ncorpus: c.jsonl\ncases:\n")


def test_edits_that_cancel_out_are_not_dirty(copy):
    d = TestSetDocument.load(copy())
    d.add_case(id="tmp", question="q", unanswerable=True)
    assert d.dirty
    d.remove_case("tmp")
    assert not d.dirty


def test_cases_from_the_reopen_cache_are_the_models_model_construct_makes(copy):
    from ragtriage.core.schema import Case

    p = copy()
    parsed = TestSetDocument.load(p)
    cached = TestSetDocument.load(p)  # small set: the cache was written by the first load
    assert cached.cases == parsed.cases
    for item in cached._cases.items:
        c, ref = item.model, Case.model_construct(**item.data)
        assert list(c.__dict__.items()) == list(ref.__dict__.items())
        assert c.model_fields_set == ref.model_fields_set and repr(c) == repr(ref)
        assert c.__pydantic_extra__ is None and c.__pydantic_private__ is None
    make = docmod._trusted_maker(Case)
    odd = {
        "id": "x",
        "question": "q",
        "bogus": 1,
    }  # not what validation lets through: model_construct decides
    assert make(odd).__dict__ == Case.model_construct(**odd).__dict__
