"""The similarity pass proposes the same chunks whether the corpus is a chunks file
(``ragtriage stale``, ``validate``, ``check``) or loaded in memory (the app's stale review):
a chunk's words are those of its id and normalised text, however the file spells them."""

from __future__ import annotations

import json
import sys
import unicodedata

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragtriage.core import staleness
from ragtriage.core.corpus import iter_chunks
from ragtriage.core.staleness import halves, similarity
from ragtriage.core.text import normalize_text
from tests.core.stalekit import SPLIT_CASES, splitter_corpus


def _both(cases, labels, path):
    by_file = staleness.check_labels(cases, labels, path).to_dict()
    in_memory = staleness.check_labels(cases, labels, list(iter_chunks(path))).to_dict()
    return by_file, in_memory


@pytest.mark.parametrize("spans", [True, False], ids=["spans", "text-only"])
@pytest.mark.parametrize("old_name, new_name, kind", SPLIT_CASES)
def test_a_file_and_the_same_chunks_in_memory_give_one_report(tmp_path, old_name, new_name, kind, spans):
    """Real re-chunkings of edited pages: every status, candidate and score is the same
    (a chunk's document name was counted as its words from a file: ``datastructures``)."""
    cases, labels, path = splitter_corpus(tmp_path, old_name, new_name, kind, spans)
    by_file, in_memory = _both(cases, labels, path)
    assert by_file == in_memory
    assert any(e["status"] == "missing" and e["candidates"] for e in by_file["labels"])


def _write_json(path, rows, **dumps):
    path.write_text("".join(json.dumps(r, **dumps) + "\n" for r in rows), encoding="utf-8")
    return path


ROWS = [
    {"id": "n0", "text": "Nothing relevant here at all.", "doc": "übersicht.md"},
    {"id": "n1", "text": "ÜBERSICHT der Rückgabe:\tdie STRAẞE und die Straße", "doc": "a.md"},
    {"id": "n2", "text": "Die Übersicht nennt die Rückgabe bei der Filiale.", "doc": "b.md"},
    {"id": "n3", "text": unicodedata.normalize("NFD", "Rückgabe in der Filiale, café"), "doc": "c.md"},
    {"id": "n4", "text": "C:\\neue\\übersicht und ﬁliale", "doc": "d.md"},
    {"id": "n5", "text": "Dosis: 5 µg im ΛΌΓΟΣ und λόγος, 3 \u212bngström", "doc": "e.md"},
]


@pytest.mark.parametrize("few", [True, False], ids=["block-search", "line-split"])
@pytest.mark.parametrize("ascii_only", [True, False], ids=["ensure_ascii", "utf-8"])
@pytest.mark.parametrize(
    "question",
    [
        "Wo steht die Übersicht?",  # upper-case Ü in a line: its bytes do not show "übersicht"
        "Welche Strasse?",  # ẞ and ß fold to "ss"
        "Gilt das in der Filiale?",  # ﬁ folds to "fi"; a decomposed ü elsewhere in the line
        "Rückgabe im Café",  # a decomposed é composes to the query's é
        "5 μg, der Logos λόγος, Ångström",  # micro sign is mu; final sigma; the Angstrom sign
    ],
)
def test_hostile_spellings_are_found_the_same_way_from_a_file(
    tmp_path, monkeypatch, few, ascii_only, question
):
    monkeypatch.setattr(staleness, "FEW_TERMS", 1000 if few else 0)
    path = _write_json(tmp_path / "c.jsonl", ROWS, ensure_ascii=ascii_only)
    cases = [("q", question, ("gone",))]
    by_file, in_memory = _both(cases, {}, path)
    assert by_file == in_memory
    found = [c["id"] for c in by_file["labels"][0]["candidates"]]
    assert found and "n0" not in found  # a document's name is not a chunk's word


def test_no_character_above_u_2ffff_normalises_to_ascii():
    """The block search looks for the characters that normalise to ASCII among U+0080 to
    U+2FFFF (found once, when first needed): none above is missed."""
    for cp in range(0x30000, sys.maxunicode + 1):
        assert not any(x.isascii() and x.isalnum() for x in normalize_text(chr(cp))), hex(cp)
    to_ascii = similarity._to_ascii()
    for c in "ßſ\u212a\ufb01\u0130":  # ss, s, k (the Kelvin sign), fi, i + dot
        assert to_ascii.search(c)
    for c in "µςéÉ\u212b":  # mu, sigma, e acute, A ring (the Angstrom sign): not ASCII
        assert not to_ascii.search(c)


def test_a_document_name_shared_by_every_chunk_is_not_a_word_of_them(tmp_path):
    rows = [{"id": f"c{i}", "text": f"paragraph {i} about gardens", "doc": "refunds.md"} for i in range(20)]
    rows.append({"id": "r", "text": "Refunds are paid within ten days.", "doc": "policy.md"})
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    by_file, in_memory = _both([("q", "How are refunds paid?", ("gone",))], {}, path)
    assert by_file == in_memory
    assert [c["id"] for c in by_file["labels"][0]["candidates"]] == ["r"]


ALPHABET = (
    "abcdefgh xyz ÄäÜüÉéÍíçÇ ßẞſ\u0301\u0308 ςσΣ µμ \u212a\u212b\u2126 ﬁ İı \u037e \u00a0\u3000"
    " \n\t \\ \" ' ; , . - _ /0123456789"
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.text(ALPHABET, min_size=1, max_size=40), min_size=1, max_size=6),
    question=st.text(ALPHABET, min_size=3, max_size=40),
    ascii_only=st.booleans(),
)
def test_any_spelling_gives_the_file_the_candidates_of_memory(
    tmp_path, monkeypatch, texts, question, ascii_only
):
    """Words in any case and composition, escapes, characters that normalise to ASCII or to
    punctuation: both ways of reading a file propose what the chunks in memory do."""
    rows = [{"id": f"c{i}", "text": t, "doc": "doc.md"} for i, t in enumerate(texts) if t.strip()]
    path = _write_json(tmp_path / "c.jsonl", rows, ensure_ascii=ascii_only)
    cases = [("q", question, ("gone",))]
    got = []
    for few in (1000, 0):
        monkeypatch.setattr(staleness, "FEW_TERMS", few)
        got.append(_both(cases, {}, path))
    (block, memory), (split, memory_again) = got
    assert block == split == memory == memory_again


@pytest.mark.parametrize("few", [True, False], ids=["block-search", "line-split"])
def test_the_second_pass_in_two_halves_proposes_what_one_read_does(tmp_path, monkeypatch, few):
    """A helper process reads the second half (numbering its lines from the cut): the best
    lines of both halves, and the word counts, merge into what one read finds."""
    monkeypatch.setattr(staleness, "FEW_TERMS", 1000 if few else 0)
    rows = [
        {
            "id": f"c{i}",
            "text": f"Rückgabe {i}: die Filiale nimmt Ware zurück, quittung {i % 7}",
            "doc": "r.md",
        }
        for i in range(400)
    ]
    rows += ROWS
    path = _write_json(tmp_path / "c.jsonl", rows, ensure_ascii=False)
    cases = [
        ("q1", "Wo ist die Filiale mit Quittung?", ("gone1",)),
        ("q2", "Rückgabe in der Übersicht", ("gone2",)),
    ]
    if few:
        cases = cases[:1]  # a few ASCII words: the block search
    one = staleness.check_labels(cases, {}, path).to_dict()
    monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(halves, "_cores", lambda: 2)
    results = []
    wait = halves._Helper.wait

    def spy(self, advance):
        ok, got = wait(self, advance)
        results.append(ok)
        return ok, got

    monkeypatch.setattr(halves._Helper, "wait", spy)
    two = staleness.check_labels(cases, {}, path).to_dict()
    assert results == [True, True]  # the scan's probe and the second pass each had a helper
    assert two == one == _both(cases, {}, path)[1]
    assert all(len(e["candidates"]) == 3 for e in one["labels"])
