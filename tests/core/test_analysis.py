"""The lexical analysis the picker and the builtin retriever share (core/analysis.py)."""

from __future__ import annotations

from ragtriage.core.analysis import Analyzer, lexicon, not_retrieved, parse_lexicon


def test_common_words_are_not_search_terms():
    a = Analyzer("de")
    assert a.query("Wie lange dauert die Lieferung?").terms == a.query("lange dauert Lieferung").terms


def test_a_german_separable_verb_reads_as_its_infinitive():
    a = Analyzer("de")
    text = a.stem_words(a.words("Schreib an hallo@laden.de oder ruf uns an unter 030 000 000."))
    assert a.stem_words(["anrufen"])[0] in text
    # and a participle as its verb: "angerufen" and "zurückgeschickt"
    assert a.stem_words(["anrufen"])[0] in a.stem_words(a.words("Ich habe angerufen"))
    assert a.stem_words(["zurückschicken"])[0] in a.stem_words(a.words("Ich habe es zurückgeschickt"))


def test_a_spanish_verb_with_pronouns_attached_reads_as_the_verb():
    a = Analyzer("es")
    assert a.stem_words(["llamar"])[0] in a.stem_words(a.words("llámanos al 910 000 000"))
    assert a.stem_words(["devolver"])[0] in a.stem_words(a.words("puedes devolverlo"))
    assert a.stem_words(["llamar"]) == a.stem_words(["llamo"])  # Snowball keeps "llamar" whole


def test_compounds_add_their_parts_known_from_the_corpus_or_the_lexicon():
    a = Analyzer("de")
    a.learn(["kosten", "sendung", "nummer", "karte", "daten"])
    assert a.parts("versandkosten") == ["versand", "kosten"]  # "versand" from the lexicon's parts
    assert a.parts("sendungsnummer") == ["sendung", "nummer"]  # the linking s
    assert a.parts("kreditkartennummer") == ["kredit", "karten", "nummer"]
    assert a.parts("zurückschicken") == []  # a separable verb is not a compound
    assert a.parts("bestellung") == []
    assert Analyzer("es").parts("devolución") == []  # Spanish does not compound


def test_synonyms_and_colloquial_words_widen_the_question_at_a_lower_weight():
    a = Analyzer("de")
    q = a.query("Muss ich das Porto selbst zahlen?")
    assert "porto" in q.terms
    assert set(a.stem_words(["kosten", "rücksendung"])) <= set(q.extra)
    es = Analyzer("es").query("¿Cuándo me devolvéis la pasta?")
    assert Analyzer("es").stem_words(["dinero"])[0] in es.extra
    # a phrase matches only as a phrase
    assert a.stem_words(["lehnt"])[0] in a.query("Die Karte geht nicht durch").extra
    assert a.stem_words(["lehnt"])[0] not in a.query("Die Karte geht durch").extra


def test_the_lexicon_files_parse_and_an_unknown_language_has_none():
    de = lexicon("de")
    assert "an" in de.separable and "kosten" in de.parts and de.synonyms
    assert lexicon("es").synonyms and not lexicon("es").separable
    assert lexicon("xx").synonyms == ()
    lex = parse_lexicon("[synonyms]\n# a comment\nKohle = geld  # money\nbad line\n[parts]\nHaus Tür\n")
    assert lex.synonyms == ((("kohle",), ("geld",)),) and lex.parts == {"haus", "tur"}


def test_why_a_chunk_was_not_retrieved_is_said_in_words():
    assert not_retrieved(10) == "not retrieved: not among the 10 chunks the system returned"
    assert "no chunk sharing a word with the question" in not_retrieved(0, "builtin")
    assert not_retrieved(0, "http://x/ask") == "not retrieved: the system returned no chunk for this question"
    assert "depth" not in not_retrieved(0, "builtin") + not_retrieved(3)
