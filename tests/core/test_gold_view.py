"""The Textual-free pieces the app shows and edits document gold and quotes with."""

from __future__ import annotations

from ragtriage.core.gold import Gold
from ragtriage.core.gold_view import detail_lines, sentence_at, with_doc, with_quote
from ragtriage.core.schema import Case, Settings
from ragtriage.core.scoring import make_record
from tests.core.test_quotes import CORPUS, SPLIT

SLIDE = "## Hotel\n\nFür eine Übernachtung zahlen wir bis zu 120 Euro. Die Version 2.5 gilt ab sofort!\n- Bitte buche früh"


def test_the_sentence_under_the_cursor():
    at = SLIDE.index("120")
    assert sentence_at(SLIDE, at) == "Für eine Übernachtung zahlen wir bis zu 120 Euro."
    assert sentence_at(SLIDE, SLIDE.index("2.5")) == "Die Version 2.5 gilt ab sofort!"  # not cut at 2.
    assert sentence_at(SLIDE, 1) == "Hotel"  # a heading is a line of its own
    assert sentence_at(SLIDE, len(SLIDE) + 5) == "Bitte buche früh"  # a bullet, clamped
    assert sentence_at("", 3) == ""


def test_toggling_a_quote_and_a_document():
    c = Case(id="q", question="q", evidence=["Das  Geld ist da."], expected_docs=["a.md"])
    assert with_quote(c, "Neu hier.") == ("Das  Geld ist da.", "Neu hier.")
    assert with_quote(c, "Das Geld ist da.") == ()  # the same quote, spaced otherwise: removed
    assert with_doc(c, "b.md") == ("a.md", "b.md") and with_doc(c, "a.md") == ()


def test_detail_lines_show_document_ranks_and_resolved_quotes():
    case = Case(id="q", question="q", expected_docs=["rueck.md", "faq.md"], expect="all",
                evidence=[SPLIT, "Die Rückgabe ist 40 Tage lang möglich."])  # fmt: skip
    rec = make_record(case, {"ranking": ["v-1", "x", "r-2", "f-1"], "answer": None}, 2, {}.get,
                      Settings(language="de"), gold=Gold.of([case], CORPUS))  # fmt: skip
    assert detail_lines(case, rec, 2) == [
        "expected documents (all of them)",
        "  rueck.md  at document rank 3, outside k = 2",
        "  faq.md  at document rank 4, outside k = 2",
        "evidence",
        f"  “{SPLIT}”",
        "    → r-2 (rueck.md) + r-3 (rueck.md) (split over chunks: expect all)",
        "  “Die Rückgabe ist 40 Tage lang möglich.”",
        "    ✗ found nowhere in the corpus (edited or deleted?)",
    ]
    assert detail_lines(case, None, 2)[1] == "  rueck.md"
    assert detail_lines(Case(id="x", question="q", expected=["a"]), rec, 2) == []


def test_every_sentence_of_the_demo_slides_resolves_back_to_its_chunk():
    """What the picker's Q writes (a sentence as :func:`sentences` cuts it) is found again by
    the resolver in the chunk it was taken from, for every sentence of every slide."""
    from pathlib import Path

    from ragtriage.core.corpus import load_corpus
    from ragtriage.core.gold_view import sentences
    from ragtriage.core.quotes import find_quotes, norm

    corpus = load_corpus(Path(__file__).resolve().parents[2] / "testsets/folien-de/folien-de.chunks.jsonl")
    taken = [(c.id, s) for c in corpus.values() for _a, _b, s in sentences(c.text)]
    assert len(taken) > 2 * len(corpus)  # slides have several sentences each
    found = find_quotes([s for _cid, s in taken], corpus)
    for cid, s in taken:
        assert cid in [h for h, _doc in found[norm(s)].holders], (cid, s)


def test_sentences_cut_as_sentence_at_does():
    from ragtriage.core.gold_view import sentences

    got = sentences(SLIDE)
    assert [s for _a, _b, s in got] == [
        "Hotel",
        "Für eine Übernachtung zahlen wir bis zu 120 Euro.",
        "Die Version 2.5 gilt ab sofort!",
        "Bitte buche früh",
    ]
    assert all(sentence_at(SLIDE, a + (b - a) // 2) == s for a, b, s in got)
    assert sentences("") == [] and sentences(" \n ") == []


def test_the_closest_sentence_of_a_candidate():
    from ragtriage.core.gold_view import closest_sentence

    assert closest_sentence(SLIDE, "Für eine Nacht zahlen wir bis zu 130 Euro.") == (
        "Für eine Übernachtung zahlen wir bis zu 120 Euro."
    )
    assert closest_sentence("", "x") == ""
