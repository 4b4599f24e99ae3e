"""Stale labels after re-chunking (staleness.md): every status, on plain data and on files."""

from __future__ import annotations

import threading
import unicodedata

import orjson
import pytest

from ragtriage.core import staleness
from ragtriage.core.corpus import Chunk, load_corpus
from ragtriage.core.errors import CorpusError
from ragtriage.core.text import fingerprint, normalize_text

FOX = "The quick brown fox jumps over the lazy dog near the river bank today."
RULE = (
    "Returns are accepted within thirty days of delivery when the item is unused, "
    "in its original packaging, and accompanied by the receipt."
)
LONG = (
    "Uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince "
    "dieciséis diecisiete dieciocho diecinueve veinte veintiuno veintidós veintitrés."
)


def judge(labels, chunks, expected=None, questions=None):
    """One case per label id (or per ``expected`` list) -> {label id: entry}."""
    if expected is None:
        expected = [[x] for x in labels]
    cases = [
        (f"q{i}", (questions or {}).get(i, f"question {i}"), tuple(ids)) for i, ids in enumerate(expected)
    ]
    report = staleness.check_labels(cases, labels, [Chunk(*c) if isinstance(c, tuple) else c for c in chunks])
    return {e.label: e for e in report.labels}, report


def test_same_id_same_text_is_ok():
    got, report = judge({"a": {"text": FOX}}, [("a", FOX), ("b", "other text here")])
    assert got["a"].status == "ok" and got["a"].fix is None and got["a"].candidates == []
    assert report.counts == {"ok": 1} and report.stale == []


def test_only_whitespace_changed_is_ok():
    reflowed = "The quick brown fox\njumps over   the lazy\u00a0dog\n\tnear the river bank today.  "
    got, _ = judge({"a": {"text": FOX}}, [("a", reflowed)])
    assert got["a"].status == "ok"


def test_a_pure_case_change_is_an_edit_for_review_never_ok():
    """Freshness folds nothing but whitespace and NFC (issue 20): ``today`` -> ``TODAY`` is an
    edit a person looks at; the re-cased chunk is the first candidate."""
    recased = "The quick brown fox jumps over the lazy dog near the river bank TODAY."
    got, _ = judge({"a": {"text": FOX}}, [("a", recased)])
    e = got["a"]
    assert (e.status, e.fix) == ("changed", "review")
    assert e.candidates[0][0] == "a"
    moved, _ = judge({"a": {"text": FOX}}, [("x", "unrelated words"), ("b", recased)])
    assert moved["a"].fix == "review" and moved["a"].candidates[0][0] == "b"


@pytest.mark.parametrize(
    "old, new",
    [
        ("Alkohol ist nur in Maßen zu trinken, so steht es in der Hausordnung des Heims.", "Massen"),
        ("Die Straße vor dem Haus wird ab Montag für drei Wochen gesperrt, sagt die Stadt.", "Strasse"),
        ("The eﬃcient way to ship a parcel is to book it online before noon on weekdays.", "efficient"),
    ],
)
def test_casefold_is_not_freshness_sz_and_ligatures_are_letters(old, new):
    """``str.casefold`` maps ``ß`` to ``ss`` and ligatures to letters: "in Maßen" (in
    moderation) edited to "in Massen" (in masses) must not be ``ok``."""
    word = {"Massen": "Maßen", "Strasse": "Straße", "efficient": "eﬃcient"}[new]
    edited = old.replace(word, new)
    assert edited.casefold() == old.casefold()  # what the old rule compared
    got, _ = judge({"a": {"text": old}}, [("a", edited)])
    assert got["a"].status != "ok" and got["a"].fix == "review"


def test_unicode_nfc_nfd_and_unicode_ids():
    text = "La garantía cubre la rückgabe en 30 días si el producto está sin usar."
    nfd = unicodedata.normalize("NFD", text)
    assert nfd != text
    back = "Die Rückgabe ist binnen 30 Tagen möglich, wenn die Ware unbenutzt und vollständig ist."
    got, _ = judge(
        {"garantía-1": {"text": text}, "rückgabe-1": {"text": unicodedata.normalize("NFD", back)}},
        [("garantía-1", nfd), ("rückgabe-2", back)],
    )
    assert got["garantía-1"].status == "ok"
    assert got["rückgabe-1"].status == "moved"
    assert got["rückgabe-1"].candidates[0][0] == "rückgabe-2"


def test_moved_to_another_id_is_auto():
    got, _ = judge({"a": {"text": FOX}}, [("x", "unrelated words only"), ("a-7", FOX)])
    e = got["a"]
    assert (e.status, e.fix, e.candidates) == ("moved", "auto", [("a-7", 1.0)])


def test_reused_id_with_text_elsewhere_is_changed_and_auto():
    """The dangerous case: the id still exists but names other text now."""
    got, _ = judge({"a": {"text": FOX}}, [("a", RULE), ("b", FOX)])
    e = got["a"]
    assert (e.status, e.fix, e.candidates) == ("changed", "auto", [("b", 1.0)])


def test_reused_id_with_text_nowhere_needs_review():
    got, _ = judge({"a": {"text": FOX}}, [("a", RULE), ("b", "nothing to see")])
    e = got["a"]
    assert e.status == "changed" and e.fix == "review"
    assert all(cid != "a" or score < 1 for cid, score in e.candidates)


def test_reused_id_whose_text_is_inside_a_bigger_chunk_is_changed_auto():
    big = "Intro sentence. " + FOX + " Closing sentence."
    got, _ = judge({"a": {"text": FOX}}, [("a", RULE), ("z", big)])
    e = got["a"]
    assert (e.status, e.fix) == ("changed", "auto") and e.candidates[0][0] == "z"


def test_merged_into_a_larger_chunk():
    big = RULE + "\n\n" + FOX + "\n\nMore text after it."
    got, _ = judge({"a": {"text": FOX}}, [("m1", big), ("m2", "an unrelated chunk")])
    e = got["a"]
    assert (e.status, e.fix) == ("merged", "auto")
    assert e.candidates[0][0] == "m1" and 0 < e.candidates[0][1] < 1  # overlap share, not identity


def test_merged_in_place_keeps_the_id():
    got, _ = judge({"a": {"text": FOX}}, [("a", FOX + " And a new sentence at the end.")])
    assert (got["a"].status, got["a"].fix, got["a"].candidates[0][0]) == ("merged", "auto", "a")


def test_two_holders_need_review():
    got, _ = judge({"a": {"text": FOX}}, [("m1", "Before. " + FOX), ("m2", FOX + " After.")])
    e = got["a"]
    assert e.status == "merged" and e.fix == "review" and {c for c, _ in e.candidates} == {"m1", "m2"}


def test_split_over_two_consecutive_chunks():
    head, tail = RULE[:60], RULE[60:]
    got, _ = judge(
        {"r": {"text": RULE}},
        [("p0", "Earlier paragraph. " + head), ("p1", tail + " Next paragraph."), ("p2", "unrelated")],
    )
    e = got["r"]
    assert (e.status, e.fix, e.expect) == ("split", "review", "all")
    assert [c for c, _ in e.candidates] == ["p0", "p1"]


def test_split_with_a_tiny_head_piece_and_reflowed_lines():
    """The first piece holds only two characters of the text: found as the neighbour."""
    got, _ = judge(
        {"r": {"text": RULE}}, [("p0", "Earlier text. Re"), ("p1", RULE[2:].replace(" ", "\n", 3))]
    )
    e = got["r"]
    assert e.status == "split" and [c for c, _ in e.candidates] == ["p0", "p1"]


def test_split_over_three_chunks_with_a_short_middle():
    a, b, c = LONG[:50], LONG[50:70], LONG[70:]
    got, _ = judge({"n": {"text": LONG}}, [("c0", "Antes. " + a), ("c1", b), ("c2", c + " Después.")])
    e = got["n"]
    assert e.status == "split" and [x for x, _ in e.candidates] == ["c0", "c1", "c2"]


def test_pieces_that_are_not_consecutive_are_not_a_split():
    head, tail = RULE[:60], RULE[60:]
    got, _ = judge(
        {"r": {"text": RULE}},
        [("p0", "x. " + head), ("gap", "something else entirely"), ("p1", tail + " y.")],
    )
    assert got["r"].status == "missing"


def test_missing_proposes_the_edited_version():
    edited = RULE.replace("thirty", "fourteen").replace("receipt", "invoice")
    got, _ = judge(
        {"r": {"text": RULE}}, [("n1", "Shipping costs three euros to any office."), ("n2", edited)]
    )
    e = got["r"]
    assert (e.status, e.fix) == ("missing", "review")
    assert e.candidates and e.candidates[0][0] == "n2" and 0 < e.candidates[0][1] <= 1


def test_missing_with_nothing_similar_looks_further(tmp_path):
    """No rare trigram left anywhere: a second pass ranks chunks by the text's rare words."""
    p = tmp_path / "c.jsonl"
    rows = [
        {"id": "n1", "text": "Shipping costs three euros."},
        {"id": "n2", "text": "Returns: unused items in original packaging, with receipt, thirty days."},
    ]
    p.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    report = staleness.check_labels([("q", "returns?", ("r",))], {"r": {"text": RULE}}, p)
    e = report.labels[0]
    assert e.status == "missing" and e.candidates[0][0] == "n2"


def test_unrecorded_label_is_recorded_automatically():
    got, report = judge({}, [("a", FOX)], expected=[["a"]])
    e = got["a"]
    assert (e.status, e.fix) == ("unrecorded", "auto")
    _, record = report.fix_plan()
    assert record["a"]["text"] == FOX and record["a"]["sha"] == fingerprint(FOX)


def test_unknown_label_gets_candidates_from_the_question():
    got, _ = judge(
        {"gone": None},
        [("c1", FOX), ("c2", RULE)],
        expected=[["gone"]],
        questions={0: "How many days do I have for returns with the receipt?"},
    )
    e = got["gone"]
    assert (e.status, e.fix) == ("unknown", "review")
    assert e.candidates[0][0] == "c2"


def test_old_test_set_with_only_fingerprints():
    """Labels written before texts were kept: judged by fingerprint alone."""
    sha = fingerprint(FOX)
    got, _ = judge({"a": {"sha": sha}}, [("a", FOX)])
    assert got["a"].status == "ok"
    got, _ = judge({"b": {"sha": sha}}, [("b", RULE), ("z", FOX)])
    assert (got["b"].status, got["b"].fix, got["b"].candidates) == ("changed", "auto", [("z", 1.0)])
    got, _ = judge({"c": {"sha": sha}}, [("y", FOX), ("z", FOX)])
    assert (got["c"].status, got["c"].fix) == ("moved", "review")  # two chunks hold it: a person picks
    got, _ = judge({"d": {"sha": sha}}, [("d", RULE)], questions={0: "returns receipt"})
    assert (got["d"].status, got["d"].fix) == ("changed", "review")


def test_spans_propose_but_never_fix_when_the_text_there_differs():
    """Same document, new chunker strips markup: the text no longer matches, spans still
    point at the right chunks, but only the text is evidence (staleness.md): the chunks over
    the old span are ranked for review, never fixed automatically, never ``ok``."""
    lab = {"text": "**Bold** claim about " + FOX, "doc": "d.md", "start": 100, "end": 190}
    chunks = [
        Chunk("n1", "Bold claim about the quick brown fox", "d.md", 90, 150),
        Chunk("n2", "jumps over the lazy dog near the river bank today.", "d.md", 150, 200),
        Chunk("n3", "other document", "e.md", 100, 190),
    ]
    got, _ = judge({"a": lab}, chunks)
    assert (got["a"].status, got["a"].fix) == ("missing", "review")
    assert {c for c, _ in got["a"].candidates[:2]} == {"n1", "n2"}
    got, _ = judge({"a": lab}, [Chunk("n9", "Bold claim about ... (whole section)", "d.md", 0, 400)])
    assert (got["a"].status, got["a"].fix, got["a"].candidates[0][0]) == ("missing", "review", "n9")
    got, _ = judge({"a": lab}, [Chunk("a", "Bold claim about the fox", "d.md", 100, 190)])
    assert (got["a"].status, got["a"].fix, got["a"].candidates[0][0]) == ("changed", "review", "a")
    got, _ = judge({"a": lab}, [Chunk("a", "Something else", "d.md", 400, 500)])
    assert got["a"].status == "changed"


def test_spans_fix_automatically_when_the_text_over_them_is_the_remembered_text():
    """The word search probes chunks as written; decomposed (NFD) text escapes it. The chunk
    over the old span holds the remembered text there (normalised): that is evidence. An
    upper-cased text there is not the remembered text (case is not folded)."""
    head = "Intro line. "
    text = "La garantía cubre la devolución en treinta días si el artículo está sin usar."
    lab = {"text": text, "doc": "d.md", "start": len(head), "end": len(head) + len(text)}
    nfd = unicodedata.normalize("NFD", text)
    assert len(nfd) != len(text)
    chunk = head + unicodedata.normalize("NFD", text) + " Tail."
    lab_nfd = dict(lab, end=len(head) + len(nfd))
    got, _ = judge({"a": lab_nfd}, [Chunk("n1", chunk, "d.md", 0, len(chunk))])
    assert (got["a"].status, got["a"].fix, got["a"].candidates[0][0]) == ("merged", "auto", "n1")
    wrong = head + unicodedata.normalize("NFD", text.replace("treinta", "quince")) + " Tail."
    got, _ = judge({"a": lab_nfd}, [Chunk("n1", wrong, "d.md", 0, len(wrong))])
    assert got["a"].fix == "review"
    shouted = head + text.upper() + " Tail."
    got, _ = judge({"a": lab}, [Chunk("n1", shouted, "d.md", 0, len(shouted))])
    assert got["a"].status != "ok" and got["a"].fix == "review"


def test_text_evidence_beats_shifted_spans():
    """The paragraph moved inside an edited document: its text decides, not its old offsets."""
    lab = {"text": FOX, "doc": "d.md", "start": 0, "end": len(FOX)}
    got, _ = judge(
        {"a": lab},
        [Chunk("a", "New intro paragraph here", "d.md", 0, 24), Chunk("b", FOX, "d.md", 26, 26 + len(FOX))],
    )
    assert (got["a"].status, got["a"].fix, got["a"].candidates) == ("changed", "auto", [("b", 1.0)])


def test_short_texts_are_matched_by_fingerprint():
    got, _ = judge(
        {"y": {"text": "Yes."}, "n": {"text": "No, never"}}, [("y2", "Yes."), ("n", "No,\u00a0 never")]
    )
    assert (got["y"].status, got["y"].candidates) == ("moved", [("y2", 1.0)])
    assert got["n"].status == "ok"


def test_fix_plan_rewrites_expected_and_dedupes():
    big = FOX + " " + RULE
    got, report = judge({"a": {"text": FOX}, "b": {"text": RULE}}, [("m", big)], expected=[["a", "b"]])
    assert got["a"].status == got["b"].status == "merged"
    new_expected, record = report.fix_plan()
    assert new_expected == {"q0": ["m"]} and set(record) == {"m"}


def test_json_shape_is_exactly_the_spec():
    _, report = judge({"a": {"text": FOX}, "b": {"text": RULE}}, [("a", FOX), ("z", "Before. " + RULE)])
    data = orjson.loads(report.to_json())
    assert set(data) == {"labels", "counts"}
    assert data["counts"] == {"ok": 1, "merged": 1}
    for e in data["labels"]:
        assert set(e) == {"case", "label", "status", "candidates", "fix"}
        assert e["status"] in staleness.STATUSES and e["fix"] in ("auto", "review", None)
        for c in e["candidates"]:
            assert set(c) == {"id", "score"} and 0 <= c["score"] <= 1
    assert data["labels"][1] == {
        "case": "q1",
        "label": "b",
        "status": "merged",
        "candidates": [{"id": "z", "score": data["labels"][1]["candidates"][0]["score"]}],
        "fix": "auto",
    }


@pytest.mark.parametrize(
    "text",
    [
        "a\u00a0b",
        "a\u2028b\u2029c",
        "x\x1cy\x1dz\x1e\x1f",
        "tab\tnew\nline\r\n",
        "\u3000wide\u3000space ",
        "Stra\u00dfe \u0130stanbul \u212b",
        "e\u0301 combining",
        "\u0085next",
        "  ",
        "",
    ],
)
def test_word_split_is_the_freshness_rule_and_the_fold_is_normalize_text(text):
    """Labels compare NFC text with whitespace collapsed, nothing folded; the similarity
    ranking's words fold case as :func:`normalize_text` does."""
    from ragtriage.core.staleness.evidence import _split_fold, norm

    assert " ".join(staleness._split_norm(text)) == norm(text)
    assert norm(text) == " ".join(unicodedata.normalize("NFC", text).split())
    assert " ".join(_split_fold(text)) == normalize_text(text)


def _write(path, rows):
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_streams_a_file_and_reports_progress(tmp_path):
    p = _write(
        tmp_path / "c.jsonl",
        [{"id": f"c{i}", "text": f"chunk number {i} " * 5} for i in range(200)] + [{"id": "a9", "text": FOX}],
    )
    seen = []
    report = staleness.check_labels(
        [("q", "fox", ("a",))],
        {"a": {"text": FOX}},
        p,
        progress=lambda phase, done, total: seen.append((phase, done, total)),
    )
    assert report.labels[0].status == "moved" and report.chunks == 201
    assert seen and seen[-1][1] == seen[-1][2] == p.stat().st_size
    assert report.corpus_hash == load_corpus(p).content_hash


def test_cancel_stops_the_scan(tmp_path):
    p = _write(tmp_path / "c.jsonl", [{"id": "c", "text": FOX}])
    ev = threading.Event()
    ev.set()
    with pytest.raises(staleness.Cancelled):
        staleness.check_labels([("q", "fox", ("a",))], {"a": {"text": FOX}}, p, cancel=ev)


def test_bad_corpus_line_is_a_located_error(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "txt": "oops"}\n', encoding="utf-8")
    with pytest.raises(CorpusError) as exc:
        staleness.check_labels([("q", "x", ("a",))], {"a": {"text": "fine"}}, p)
    assert "c.jsonl:2" in str(exc.value) and "text" in str(exc.value)


def test_duplicate_expected_id_in_corpus_is_an_error(tmp_path):
    p = _write(tmp_path / "c.jsonl", [{"id": "a", "text": FOX}, {"id": "a", "text": RULE}])
    with pytest.raises(CorpusError) as exc:
        staleness.check_labels([("q", "x", ("a",))], {"a": {"text": FOX}}, p)
    assert "duplicate id 'a'" in str(exc.value) and "c.jsonl:2" in str(exc.value)


def test_missing_corpus_file_is_an_error(tmp_path):
    with pytest.raises(CorpusError):
        staleness.check_labels([("q", "x", ("a",))], {"a": {"text": FOX}}, tmp_path / "nope.jsonl")


def test_loaded_corpus_mapping_is_accepted(tmp_path):
    from ragtriage.core.document import TestSetDocument

    _write(tmp_path / "c.jsonl", [{"id": "b", "text": FOX}])
    ts = tmp_path / "t.yaml"
    ts.write_text(
        "version: 1\ncorpus: c.jsonl\ncases:\n  - id: q\n    question: fox\n    expected: [a]\n"
        f"labels:\n  a:\n    text: {FOX}\n",
        encoding="utf-8",
    )
    doc = TestSetDocument.load(ts, use_cache=False)
    by_path = staleness.check(doc)
    by_map = staleness.check(doc, load_corpus(tmp_path / "c.jsonl"))
    assert [e.to_dict() for e in by_path.labels] == [e.to_dict() for e in by_map.labels]
    assert by_path.labels[0].status == "moved"


@pytest.mark.parametrize("few", [True, False])
def test_similarity_pass_block_search_and_line_split_agree(tmp_path, monkeypatch, few):
    """Both ways of the second pass find the same chunks (whole words only, escapes, Unicode)."""
    monkeypatch.setattr(staleness, "FEW_TERMS", 1000 if few else 0)
    rows = [
        {"id": "n0", "text": "Nothing relevant here at all."},
        {"id": "n1", "text": "Das Rückgaberecht gilt\n30 Tage mit Kassenbon."},
        {"id": "n2", "text": "kassenbons and rückgaberechte are longer words"},
        {"id": "n3", "text": "Rückgaberecht"},
    ]
    p = tmp_path / "c.jsonl"
    p.write_bytes(b"\n".join(orjson.dumps(r) for r in rows))  # no final newline
    report = staleness.check_labels(
        [("q", "Wie lange gilt das Rückgaberecht mit Kassenbon?", ("gone",))], {}, p
    )
    e = report.labels[0]
    assert e.status == "unknown"
    assert [c for c, _ in e.candidates] == ["n1", "n3"]
    assert e.candidates[0][1] > e.candidates[1][1] > 0


def test_a_repeated_paragraph_is_resolved_by_document_and_span():
    text = "If the data being deserialized is not a valid JSON document, a JSONDecodeError will be raised."
    lab = {"text": text, "doc": "json.txt", "start": 9293, "end": 9387}
    chunks = [
        Chunk("w1", "Before. " + text, "json.txt", 7000, 7400),
        Chunk("w2", text + " After.", "json.txt", 9200, 9500),
        Chunk("w3", text + " elsewhere", "other.txt", 9200, 9500),
    ]
    got, _ = judge({"j": lab}, chunks)
    assert (got["j"].status, got["j"].fix, [c for c, _ in got["j"].candidates]) == ("merged", "auto", ["w2"])
    got, _ = judge({"j": {"text": text}}, chunks)  # no span remembered: a person chooses
    assert got["j"].fix == "review" and len(got["j"].candidates) == 3


def test_a_fix_never_overwrites_a_label_still_needed_under_its_old_meaning():
    """a moved to the id b, but b is itself a stale label another case still expects."""
    got, report = judge(
        {"a": {"text": FOX}, "b": {"text": RULE}},
        [("b", FOX), ("n", "nothing like it")],
        expected=[["a"], ["b"]],
    )
    assert got["a"].status == "moved" and got["b"].status == "changed"
    new_expected, record = report.fix_plan()
    assert new_expected == {} and record == {}
    assert got["a"].fix == "review"


def test_missing_without_a_shared_passage_proposes_chunks_of_its_document():
    lab = {"text": RULE, "doc": "shop.md"}
    rewritten = "Items can be sent back for a refund during a month if unused and with the receipt."
    got, _ = judge(
        {"r": lab},
        [
            Chunk("n1", "Shipping costs three euros.", "shop.md"),
            Chunk("n2", rewritten, "shop.md"),
            Chunk("n3", rewritten, "other.md"),
        ],
    )
    e = got["r"]
    assert e.status == "missing" and [c for c, _ in e.candidates] == ["n2"]  # not the other document's
    assert all(0 < s < 1 for _, s in e.candidates)


def test_same_document_candidates_from_a_file_read_again_only_where_the_document_is(tmp_path):
    rewritten = "Items can be sent back for a refund during a month if unused and with the receipt."
    rows = [
        {"id": f"f{i}", "text": f"filler text number {i} about shipping", "doc": "other.md"}
        for i in range(50)
    ]
    rows += [
        {"id": "n1", "text": "Shipping costs three euros to the office.", "doc": "shop.md"},
        {"id": "n2", "text": rewritten, "doc": "shop.md"},
        {"id": "n3", "text": rewritten, "doc": "other.md"},
    ]
    p = _write(tmp_path / "c.jsonl", rows)
    report = staleness.check_labels([("q", "returns?", ("r",))], {"r": {"text": RULE, "doc": "shop.md"}}, p)
    e = report.labels[0]
    assert e.status == "missing" and [c for c, _ in e.candidates] == ["n2"]
