"""The span-evidence path of the verdict, decision by decision (issue 20: hand mutants of
``staleness/verdict.py`` survived the whole suite there; ``benchmarks/mutants_verdict.py``
applies them). A chunk over a label's old span counts only when its text there is the
remembered text, on token boundaries, over the whole span (or, for a split, each piece over
its part), and only a single such chunk is fixed automatically.

Spans matter when the text search misses: the chunks below hold the remembered text in
decomposed Unicode (NFD), which the word probe (on raw words) does not see, or are not
consecutive in the file (so their pieces make no run of the text)."""

from __future__ import annotations

import unicodedata

from ragtriage.core import staleness
from ragtriage.core.corpus import Chunk
from ragtriage.core.text import fingerprint

TEXT = "La garantía cubre la devolución en treinta días si el artículo está sin usar."
NFD = unicodedata.normalize("NFD", TEXT)
HEAD = "Intro line. "
DOC = "d.md"


def judge(labels, chunks, expected=None):
    expected = expected or [[x] for x in labels]
    cases = [(f"q{i}", "question?", tuple(ids)) for i, ids in enumerate(expected)]
    report = staleness.check_labels(cases, labels, chunks)
    return {e.label: e for e in report.labels}


def nfd_label(start: int = len(HEAD)) -> dict:
    """A label whose span, in the new (decomposed) page, holds the text."""
    return {"text": TEXT, "doc": DOC, "start": start, "end": start + len(NFD)}


def test_a_chunk_exactly_over_the_span_is_moved_and_one_is_fixed():
    s = len(HEAD)
    got = judge({"a": nfd_label()}, [Chunk("n1", NFD, DOC, s, s + len(NFD))])["a"]
    assert (got.status, got.fix, got.candidates) == ("moved", "auto", [("n1", 1.0)])


def test_two_chunks_exactly_over_the_span_are_for_a_person():
    s = len(HEAD)
    got = judge(
        {"a": nfd_label()}, [Chunk("n1", NFD, DOC, s, s + len(NFD)), Chunk("n2", NFD, DOC, s, s + len(NFD))]
    )["a"]
    assert (got.status, got.fix) == ("moved", "review")


def test_a_chunk_from_the_span_start_running_on_is_merged_not_moved():
    s = len(HEAD)
    text = NFD + " Y nada más."
    got = judge({"a": nfd_label()}, [Chunk("n1", text, DOC, s, s + len(text))])["a"]
    assert (got.status, got.fix, got.candidates[0][0]) == ("merged", "auto", "n1")
    assert got.candidates[0][1] < 1.0


def test_of_several_chunks_over_the_span_the_tightest_comes_first():
    s = len(HEAD)
    tight = HEAD[-3:] + NFD + " Y."
    loose = HEAD + NFD + " Y nada más que decir aquí."
    got = judge(
        {"a": nfd_label()},
        [Chunk("loose", loose, DOC, 0, len(loose)), Chunk("tight", tight, DOC, s - 3, s - 3 + len(tight))],
    )["a"]
    assert got.fix == "review" and [c for c, _ in got.candidates] == ["tight", "loose"]
    assert got.candidates[0][1] > got.candidates[1][1]


def test_a_number_grown_at_the_start_of_the_span_is_not_the_text():
    """Old page ``"xx 5 retries …"``, new page ``"x 25 retries …"``: the offsets still show
    ``5 retries …`` over the span, but ``5`` is now part of ``25``."""
    old = "xx 5 retries are made before the connection is given up for good."
    new = "x 25 retries are made before the connection is given up for good."
    assert len(old) == len(new) and new[3:] == old[3:]
    lab = {"text": old[3:], "doc": DOC, "start": 3, "end": len(old)}
    got = judge({"a": lab}, [Chunk("n1", new, DOC, 0, len(new))])["a"]
    assert got.fix != "auto" and got.status != "ok"


def _halves(text: str, cut: int, start: int = 0, reverse: bool = True) -> list[Chunk]:
    """The text over two chunks, the second first in the file (so no run of consecutive
    chunks holds it: only the spans can say it is split)."""
    a = Chunk("p1", text[:cut], DOC, start, start + cut)
    b = Chunk("p2", text[cut:], DOC, start + cut, start + len(text))
    return [b, Chunk("x", "unrelated words in between", "other.md", 0, 26), a] if reverse else [a, b]


def test_pieces_over_the_span_are_a_split_for_review_with_expect_all():
    cut = TEXT.index("treinta")
    got = judge({"a": {"text": TEXT, "doc": DOC, "start": 0, "end": len(TEXT)}}, _halves(TEXT, cut))["a"]
    assert (got.status, got.fix, got.expect) == ("split", "review", "all")
    assert sorted(c for c, _ in got.candidates) == ["p1", "p2"]


def test_pieces_that_leave_part_of_the_span_uncovered_are_no_split():
    cut = TEXT.index("treinta")
    chunks = [c for c in _halves(TEXT, cut) if c.id != "p2"]  # the second half is gone
    got = judge({"a": {"text": TEXT, "doc": DOC, "start": 0, "end": len(TEXT)}}, chunks)["a"]
    assert got.status != "split" and got.expect is None


def test_a_piece_whose_text_there_was_edited_makes_no_split():
    cut = TEXT.index("treinta")
    edited = TEXT[:cut] + TEXT[cut:].replace("treinta", "quince!")  # same length, other words
    assert len(edited) == len(TEXT)
    got = judge({"a": {"text": TEXT, "doc": DOC, "start": 0, "end": len(TEXT)}}, _halves(edited, cut))["a"]
    assert got.status != "split" and got.fix == "review"


def test_a_label_whose_text_is_longer_than_its_span_gets_no_split_from_it():
    """The remembered text runs past the span (a label recorded by hand): the pieces over the
    span cannot say where its tail went, so no split is proposed from them."""
    cut = TEXT.index("treinta")
    lab = {"text": TEXT + " Y solo con el ticket de compra.", "doc": DOC, "start": 0, "end": len(TEXT)}
    got = judge({"a": lab}, _halves(TEXT, cut))["a"]
    assert got.status != "split"


def _short_setup(over_span: str) -> tuple[dict, list[Chunk]]:
    """A short label (``Sí, siempre.``) whose old span was [30, 42); its own id now holds it
    elsewhere and ``over_span`` says what lies over the old span."""
    short = "Sí, siempre."
    lab = {"text": short, "doc": DOC, "start": 30, "end": 30 + len(short)}
    if over_span == "own-part":  # the own chunk covers only the start of the old span
        own_text = short + " " + "x" * 16 + " " + short[:-1]
        return lab, [Chunk("a", own_text, DOC, 0, len(own_text))]
    own_text = short + " y otras palabras aquí."
    other = "Y entonces: " + short + " Fin."
    return lab, [
        Chunk("a", own_text, DOC, 100, 100 + len(own_text)),
        Chunk("b", other, DOC, 30 - 12, 30 - 12 + len(other)),
    ]


def test_a_short_text_in_its_own_id_is_fixed_only_when_that_id_covers_the_old_span():
    lab, chunks = _short_setup("own-part")
    assert chunks[0].text[30:41] == lab["text"][:11]  # the own id over the span's start only
    got = judge({"a": lab}, chunks)["a"]
    assert got.fix == "review"
    lab, chunks = _short_setup("another")  # another chunk covers the span: not the own id
    got = judge({"a": lab}, chunks)["a"]
    assert got.fix == "review"


def test_its_own_id_in_another_document_is_never_fixed_to():
    lab = {"text": TEXT, "doc": DOC, "start": 0, "end": len(TEXT)}
    got = judge({"a": lab}, [Chunk("a", TEXT + " Más texto.", "other.md", 0, len(TEXT) + 11)])["a"]
    assert got.fix == "review" and got.elsewhere == {"a": "other.md"}


def test_a_copy_elsewhere_comes_after_what_the_own_document_offers():
    """The text was edited in its own page (the edited chunk shares words with it) and is still
    whole in another page: the own page's candidate first, the copy named as another's."""
    edited = TEXT.replace("treinta días", "dos semanas")
    lab = {"text": TEXT, "doc": DOC, "start": 0, "end": len(TEXT)}
    got = judge(
        {"a": lab}, [Chunk("e1", edited, DOC, 0, len(edited)), Chunk("c1", TEXT, "other.md", 0, len(TEXT))]
    )["a"]
    assert got.fix == "review" and got.status in ("moved", "changed")
    assert got.candidates[0][0] == "e1" and "c1" in got.elsewhere


def test_an_edited_text_gets_the_chunk_over_its_old_span_scored_by_word_overlap():
    """Rewritten there beyond any shared passage: the chunk over the old span is shown, scored
    by its word overlap with the remembered text (2|A∩B| / (|A| + |B|), staleness/__init__)."""
    from collections import Counter

    rewritten = "Puedes devolver el artículo usado dentro de un mes, en días hábiles."
    lab = {"text": TEXT, "doc": DOC, "start": 0, "end": len(TEXT)}
    got = judge({"a": lab}, [Chunk("r1", rewritten, DOC, 0, len(rewritten))])["a"]
    a, b = Counter(TEXT.split()), Counter(rewritten.split())
    dice = round(2 * sum((a & b).values()) / (sum(a.values()) + sum(b.values())), 3)
    assert got.fix == "review" and got.candidates == [("r1", dice)]


def test_a_fingerprint_only_label_shows_the_chunks_over_its_span():
    lab = {"sha": fingerprint(TEXT), "doc": DOC, "start": 0, "end": len(TEXT)}
    got = judge({"a": lab}, [Chunk("r1", "Otra cosa distinta por completo aquí.", DOC, 0, 38)])["a"]
    assert got.fix == "review" and [c for c, _ in got.candidates] == ["r1"]
