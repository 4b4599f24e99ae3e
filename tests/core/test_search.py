from ragtriage.core.corpus import Chunk, Corpus
from ragtriage.core.search import LexicalIndex, tokenize


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


def test_accented_words_match_themselves():
    idx = LexicalIndex.build(chunks())
    assert idx.search("garantía")[0][0] == "garantía-1"
    assert idx.search("GARANTÍA")[0][0] == "garantía-1"
    assert idx.search("rückgabe")[0][0] == "rückgabe-1"
    assert idx.search("garantia") == []  # accents are part of the word


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
