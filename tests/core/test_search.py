import pytest

from ragtriage.core.corpus import Chunk, Corpus
from ragtriage.core.search import LexicalIndex, fold, tokenize


def chunks():
    return [
        Chunk("garantía-1", "La garantía dura dos años."),
        Chunk("rückgabe-1", "Die Rückgabe ist 30 Tage möglich."),
        Chunk("envío-1", "El envío a una oficina cuesta 3 €."),
        Chunk("envío-2", "El envío a domicilio cuesta 5 €."),
        Chunk("vacío", ""),
    ]


def test_tokenize_keeps_accents_and_folds_case():
    assert tokenize("Garantía RÜCKGABE, größe") == ["garantía", "rückgabe", "größe"]


def test_accents_and_case_do_not_matter():
    idx = LexicalIndex.build(chunks())
    assert idx.search("garantía")[0][0] == "garantía-1"
    assert idx.search("GARANTÍA")[0][0] == "garantía-1"
    assert idx.search("garantia")[0][0] == "garantía-1"  # folded, as a person types it
    assert idx.search("Ruckgabe")[0][0] == "rückgabe-1"


def test_best_first_and_positive_scores_only():
    idx = LexicalIndex.build(chunks())
    res = idx.search("envío oficina", n=10)
    assert [cid for cid, _ in res] == ["envío-1", "envío-2"]
    assert res[0][1] > res[1][1] > 0
    assert idx.search("nada que ver") == []


def test_ties_keep_corpus_order_and_n_cuts():
    cs = [Chunk(f"c{i}", "mismo texto") for i in range(20)]
    idx = LexicalIndex.build(cs)
    res = idx.search("texto", n=5)
    assert [cid for cid, _ in res] == ["c0", "c1", "c2", "c3", "c4"]
    assert len({s for _, s in res}) == 1
    rev = LexicalIndex.build(list(reversed(cs)))
    assert [cid for cid, _ in rev.search("texto", n=3)] == ["c19", "c18", "c17"]


def test_build_from_corpus_and_stopwords():
    corpus = Corpus.from_chunks(chunks())
    idx = LexicalIndex.build(corpus, language="es")
    assert len(idx) == 5
    # "el" and "a" are Spanish stop words: only content words decide
    assert idx.search("el a") == []
    assert idx.search("domicilio")[0][0] == "envío-2"


def test_empty_index_and_query():
    assert LexicalIndex.build([]).search("x") == []
    assert LexicalIndex.build(chunks()).search("") == []
    assert LexicalIndex.build(chunks()).search("garantía", n=0) == []


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
    idx = LexicalIndex.build([("hit", text), ("other", "nothing relevant here at all")], language)
    assert [cid for cid, _ in idx.hits(query).results] == ["hit"]
    plain = LexicalIndex.build([("hit", text), ("other", "nothing relevant here at all")], None)
    unstemmed = plain.hits(query)  # without the language: no word matches exactly
    assert unstemmed.results == [] or unstemmed.fuzzy  # (at most the close-word fallback)


def test_fallback_searches_close_words_only_when_nothing_matches():
    idx = LexicalIndex.build(
        [("g", "Die Garantie gilt zwei Jahre."), ("l", "Die Lieferung kostet 3 €.")], "de"
    )
    hits = idx.hits("Garantei")
    assert [cid for cid, _ in hits.results] == ["g"]
    assert hits.fuzzy == {"garantei": ["garantie"]}
    assert idx.hits("Garantie").fuzzy == {}
    assert idx.hits("xyzzy").results == []  # nothing close: nothing found
    assert idx.hits("zz").fuzzy == {}  # too short to guess
    assert idx.search("Garantei") == []  # a run never guesses: the builtin retriever finds nothing


def test_browse_lists_chunks_by_document_in_corpus_order_within_each():
    cs = [
        Chunk("b1", "text", "b.md"),
        Chunk("a1", "text", "a.md"),
        Chunk("b2", "text", "b.md"),
        Chunk("a2", "text", "a.md"),
    ]
    idx = LexicalIndex.build(cs)
    assert idx.browse(10) == ["a1", "a2", "b1", "b2"]
    assert idx.browse(3) == ["a1", "a2", "b1"]
    assert LexicalIndex.build([], "de").browse(5) == []
