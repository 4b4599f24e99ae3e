"""The grounding check, abstention and numbers: evaluation.md's examples and beyond."""

from decimal import Decimal

import pytest

from ragtriage.core.grounding import (
    check_grounding,
    citations,
    decline_phrases,
    is_abstention,
    normalise_answer,
)
from ragtriage.core.numbers import find_numbers, parse_number

CHUNKS = {
    "devolver-1": "puedes devolver tu compra en 14 días",
    "devolver-2": "te devolvemos el dinero en cinco días",
    "entrega-1": "La entrega a una oficina de mensajería cuesta 5 €.",
    "plazo-1": "El plazo es de 14.",
    "mil-1": "Hay 1.000 unidades.",
}


def g(answer, prompt, lang="es", chunks=CHUNKS):
    return check_grounding(answer, prompt, chunks.get, language=lang)


def test_worked_examples():
    assert g("El dinero vuelve en 14 días. [devolver-1]", ["devolver-1"]) == ""
    assert g("La entrega tarda dos días. [entrega-2]", ["devolver-1"]) == "source outside prompt: entrega-2"
    assert g("El dinero vuelve en 30 días. [devolver-2]", ["devolver-2"]) == "number 30 missing from source"
    assert g("No lo sé.", ["devolver-1"]) == ""
    assert is_abstention("No lo sé.", decline_phrases("es"))


def test_no_source():
    assert g("El dinero vuelve en 14 días.", ["devolver-1"]) == "no source"


def test_number_words_on_both_sides():
    assert g("Vuelve en 5 días. [devolver-2]", ["devolver-2"]) == ""
    assert g("Vuelve en cinco días. [devolver-1]", ["devolver-1"]) == "number cinco missing from source"
    assert g("Tienes catorce días. [devolver-1]", ["devolver-1"]) == ""
    de = {"r": "Die Rückgabe ist fünf Tage möglich."}
    assert g("Fünf Tage. [r]", ["r"], "de", de) == ""
    assert g("5 Tage. [r]", ["r"], "de", de) == ""
    assert g("6 Tage. [r]", ["r"], "de", de) == "number 6 missing from source"
    en = {"r": "Returns are accepted within five days."}
    assert g("You have 5 days [r]", ["r"], "en", en) == ""
    nl = {"r": "Retourneren kan binnen vijf dagen."}
    assert g("Binnen 5 dagen [r]", ["r"], "nl", nl) == ""
    # an article is not the number one
    assert g("Es una oficina [entrega-1]", ["entrega-1"]) == ""


def test_units_compared_when_both_sides_give_one():
    why = g("Tarda 5 días. [entrega-1]", ["entrega-1"])
    assert why.startswith("number 5 missing from source")
    assert "€" in why
    assert g("Cuesta 5 €. [entrega-1]", ["entrega-1"]) == ""
    assert g("Cuesta 5 euros. [entrega-1]", ["entrega-1"]) == ""
    assert g("Son 5. [entrega-1]", ["entrega-1"]) == ""  # no unit in the answer: the value suffices


def test_separators_and_trailing_punctuation():
    assert g("Son 14 días [plazo-1]", ["plazo-1"]) == ""  # "14." in the chunk
    assert g("Hay 1000 unidades [mil-1]", ["mil-1"]) == ""  # 1.000 == 1000 in Spanish
    assert g("Hay 1.000 unidades [mil-1]", ["mil-1"]) == ""
    assert parse_number("1.000", "es") == 1000
    assert parse_number("1,000", "en") == 1000
    assert parse_number("1,5", "de") == Decimal("1.5")
    assert parse_number("1.5", "en") == Decimal("1.5")
    assert parse_number("1.234.567,5", "es") == Decimal("1234567.5")
    assert parse_number("1,000", "es") == 1  # Spanish: decimal comma
    en = {"r": "We have 1,000 units, 14,"}
    assert g("1000 units [r]", ["r"], "en", en) == ""
    assert g("14 [r]", ["r"], "en", en) == ""


def test_numbers_inside_citations_are_ignored_and_multiple_citations():
    chunks = {"paso-2": "sin números", "a": "3 €", "b": "5 días"}
    assert g("Mira el paso [paso-2]", ["paso-2"]) == ""
    assert citations("x [a, b] y [a]") == ["a", "b"]
    assert g("Cuesta 3 € y tarda 5 días [a, b]", ["a", "b"], chunks=chunks) == ""
    assert g("Cuesta 3 € y tarda 5 días [a]", ["a", "b"], chunks=chunks).startswith("number 5")


def test_unknown_cited_chunk_text_means_numbers_cannot_be_found():
    assert g("Son 3 [nuevo]", ["nuevo"]) == "number 3 missing from source"
    assert g("Sin cifras [nuevo]", ["nuevo"]) == ""


def test_abstention_rules():
    es = decline_phrases("es")
    assert is_abstention(None, es) and is_abstention("", es) and is_abstention("   ", es)
    assert is_abstention("  NO LO SÉ, lo siento", es)
    assert is_abstention("¡No lo sé!", es)
    assert not is_abstention("Creo que no lo sé", es)
    assert is_abstention("Ich weiß es nicht.", decline_phrases("de"))
    assert is_abstention("I don’t know.", decline_phrases("en"))
    assert is_abstention("Ik weet het niet", decline_phrases("nl"))
    assert decline_phrases("xx") == ("I don't know",)
    assert decline_phrases("es", ["sin información"]) == ("sin información",)
    assert is_abstention("Sin información disponible", decline_phrases("es", ["sin información"]))
    assert not is_abstention("No lo sé", decline_phrases("es", ["sin información"]))


def test_number_reading():
    ns = find_numbers("Cuesta 5 €, tarda dos días y el 30 % vuelve", "es")
    assert [(n.text, n.value, n.unit) for n in ns] == [("5", 5, "EUR"), ("dos", 2, "day"), ("30", 30, "%")]
    assert [n.value for n in find_numbers("einundzwanzig Tage", "de")] == [21]
    assert [n.value for n in find_numbers("twenty-one days, €3", "en")] == [21, 3]
    assert find_numbers("€3", "en")[0].unit == "EUR"


@pytest.mark.parametrize("a,b", [("Ja.", "ja"), ("  Ja  ", "ja!"), ("Sí [a]", "sí")])
def test_normalised_equality(a, b):
    assert normalise_answer(a) == normalise_answer(b)
