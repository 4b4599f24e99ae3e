"""The picker's search index without the app: folding, stemming per language, fallback, browse."""

from __future__ import annotations

import pytest

from ragtriage.tui.picker_index import Analyzer, PickerIndex, fold


def test_fold_drops_accents_and_umlauts_and_expands_sharp_s():
    assert fold("Rückgabe") == "ruckgabe"
    assert fold("GARANTÍA") == "garantia"
    assert fold("Straße") == "strasse"
    assert fold("façade") == "facade"
    assert fold("plain") == "plain"


@pytest.mark.parametrize(
    ("language", "text", "query"),
    [
        ("de", "Deine Bestellung verlässt das Lager am selben Tag.", "wenn ich heute bestelle"),
        ("es", "Enviamos los pedidos en dos días.", "¿cuándo envían mi pedido?"),
        ("nl", "Wij versturen alle bestellingen binnen twee dagen.", "ik bestelde gisteren"),
        ("en", "Refunds are processed within five days.", "refunding my order"),
    ],
)
def test_each_language_stems_the_query_and_the_chunks_alike(language, text, query):
    idx = PickerIndex.build([("hit", text), ("other", "nothing relevant here at all")], language)
    assert [cid for cid, _ in idx.search(query).results] == ["hit"]
    plain = PickerIndex.build([("hit", text), ("other", "nothing relevant here at all")], None)
    unstemmed = plain.search(query)  # without the language: no word matches exactly
    assert unstemmed.results == [] or unstemmed.fuzzy  # (at most the close-word fallback)


def test_stop_words_of_the_language_are_not_search_terms():
    a = Analyzer("de")
    assert a.terms("Wie lange dauert die Lieferung?") == a.terms("lange dauert Lieferung")


def test_fallback_searches_close_words_only_when_nothing_matches():
    idx = PickerIndex.build(
        [("g", "Die Garantie gilt zwei Jahre."), ("l", "Die Lieferung kostet 3 €.")], "de"
    )
    hits = idx.search("Garantei")
    assert [cid for cid, _ in hits.results] == ["g"]
    assert hits.fuzzy == {"garantei": ["garantie"]}
    assert idx.search("Garantie").fuzzy == {}
    assert idx.search("xyzzy").results == []  # nothing close: nothing found
    assert idx.search("zz").fuzzy == {}  # too short to guess


def test_browse_lists_chunks_by_document_in_corpus_order_within_each():
    class C:
        def __init__(self, id, doc):
            self.id, self.text, self.doc = id, "text", doc

    idx = PickerIndex.build([C("b1", "b.md"), C("a1", "a.md"), C("b2", "b.md"), C("a2", "a.md")])
    assert idx.browse(10) == ["a1", "a2", "b1", "b2"]
    assert idx.browse(3) == ["a1", "a2", "b1"]


def test_equal_scores_keep_corpus_order_and_empty_index_finds_nothing():
    idx = PickerIndex.build([(f"c{i}", "Garantie") for i in range(5)], "de")
    assert [cid for cid, _ in idx.search("garantie", 3).results] == ["c0", "c1", "c2"]
    empty = PickerIndex.build([], "de")
    assert empty.search("garantie").results == [] and empty.browse(5) == []
