"""The Python API of formats.md §6, used exactly as the example there, and the
grounding rules of evaluation.md in every language it names (es, de, en, nl)."""

import pydantic
import pytest

import ragtriage
from ragtriage.core.grounding import check_grounding
from ragtriage.core.scoring import COMPUTED_FIELDS
from ragtriage.core.summary import SUMMARY_KEYS
from tests.evalkit import write_testset


def test_api_of_section_6(tmp_path):
    path = write_testset(tmp_path / "ts")
    ts = ragtriage.load_testset(str(path))
    assert [c.id for c in ts.cases] == ["precio-oficina", "plazo-devolución", "dinero", "garantía", "domingo"]
    assert ts.case("domingo").unanswerable is True
    with pytest.raises(pydantic.ValidationError):  # read-only pydantic models
        ts.cases[0].question = "x"
    before = path.stat().st_mtime_ns, path.read_bytes()
    ts.save()  # unchanged: no write
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before
    ts.update_case("domingo", notes="asked every week")
    ts.add_case(id="horario", question="a qué hora abren", unanswerable=True)
    assert ts.case("horario").unanswerable
    ts.remove_case("horario")
    with pytest.raises(KeyError):
        ts.case("horario")
    ts.save()
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# small test set written by the tests\n")  # comment kept
    assert "notes: asked every week" in text and "horario" not in text
    again = ragtriage.load_testset(path)
    assert again.case("domingo").notes == "asked every week"

    corpus = ragtriage.load_corpus(tmp_path / "ts" / "shop.chunks.jsonl")
    assert corpus["garantía-1"].text.startswith("La garantía dura dos años")

    run = ragtriage.evaluate(again, system="builtin", k=3)
    assert list(run.summary) == list(SUMMARY_KEYS) and run.summary["k"] == 3 and run.summary["n"] == 5
    assert [c["id"] for c in run.cases] == [c.id for c in again.cases]
    for c in run.cases:
        assert set(COMPUTED_FIELDS) <= set(c)


def test_testset_error_problems_are_located(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ncases:\n  - id: a\n    question: q\n    expeced: [x]\n", encoding="utf-8")
    with pytest.raises(ragtriage.TestSetError) as e:
        ragtriage.load_testset(bad)
    p = e.value.problems[0]
    assert (p.file, p.line, p.case, p.field) == (str(bad), 5, "a", "expeced")
    assert "did you mean 'expected'" in p.message


def g(answer, src, lang):
    return check_grounding(answer, ["c"], {"c": src}.get, language=lang)


@pytest.mark.parametrize(
    "lang,src,same,other",
    [
        ("es", "Te devolvemos el dinero en cinco días.", "En 5 días. [c]", "En 30 días. [c]"),
        ("de", "Wir erstatten das Geld in fünf Tagen.", "In 5 Tagen. [c]", "In 30 Tagen. [c]"),
        ("en", "We refund the money in five days.", "In 5 days. [c]", "In 30 days. [c]"),
        ("nl", "We betalen het geld terug binnen vijf dagen.", "Binnen 5 dagen. [c]", "Binnen 30 dagen. [c]"),
    ],
)
def test_number_words_each_language(lang, src, same, other):
    assert g(same, src, lang) == ""
    assert g(other, src, lang) == "number 30 missing from source"
    # and the other way round: the word in the answer, the digits in the chunk
    word = {"es": "cinco", "de": "fünf", "en": "five", "nl": "vijf"}[lang]
    assert g(f"{word} [c]", src.replace(word, "5"), lang) == ""
    assert g(f"{word} [c]", src.replace(word, "6"), lang) == f"number {word} missing from source"


@pytest.mark.parametrize(
    "lang,thousand,not_thousand",
    [
        ("es", "1.000", "1,000"),
        ("de", "1.000", "1,000"),
        ("nl", "1.000", "1,000"),
        ("en", "1,000", "1.000"),
    ],
)
def test_separators_each_language(lang, thousand, not_thousand):
    src = f"Hay {thousand} unidades."
    assert g("1000 [c]", src, lang) == ""
    assert g(f"{thousand} [c]", "Hay 1000 unidades.", lang) == ""
    # in this language the other spelling is one (a decimal), not a thousand
    assert g(f"{not_thousand} [c]", src, lang) == f"number {not_thousand} missing from source"


@pytest.mark.parametrize(
    "lang,src,answer,ok",
    [
        ("es", "Cuesta 5 €.", "Tarda 5 días. [c]", "Cuesta 5 euros. [c]"),
        ("de", "Es kostet 5 €.", "Es dauert 5 Tage. [c]", "Es kostet 5 Euro. [c]"),
        ("en", "It costs $5.", "It takes 5 days. [c]", "It costs 5 dollars. [c]"),
        ("nl", "Het kost 5 €.", "Het duurt 5 dagen. [c]", "Het kost 5 euro. [c]"),
    ],
)
def test_units_each_language(lang, src, answer, ok):
    assert g(answer, src, lang).startswith("number 5 missing from source")
    assert g(ok, src, lang) == ""


def test_a_negative_number_is_not_its_positive():
    """Numbers are read as numbers: -5 and 5 differ; a range or an id is not a sign."""
    assert g("Baja a -5 grados. [c]", "La temperatura baja a -5 grados.", "es") == ""
    assert g("Baja a −5 grados. [c]", "La temperatura baja a -5 grados.", "es") == ""  # U+2212
    assert (
        g("Baja a 5 grados. [c]", "La temperatura baja a -5 grados.", "es") == "number 5 missing from source"
    )
    assert (
        g("Baja a -5 grados. [c]", "La temperatura sube a 5 grados.", "es") == "number -5 missing from source"
    )
    assert g("Tarda 5 días. [c]", "Tarda entre 3-5 días.", "es") == ""
    assert g("Ver el paso 1. [c]", "Ver garantía-1 y el paso 1.", "es") == ""


def test_a_citation_in_another_unicode_form_is_the_same_chunk():
    import unicodedata

    nfd = unicodedata.normalize("NFD", "garantía-1")
    nfc = unicodedata.normalize("NFC", "garantía-1")
    texts = {nfd: "La garantía dura dos años."}
    for prompt, cited in ((nfd, nfc), (nfc, nfd)):
        t = {prompt: texts[nfd]}
        assert check_grounding(f"Dura dos años. [{cited}]", [prompt], t.get, language="es") == ""
        assert (
            check_grounding(f"Dura 3 años. [{cited}]", [prompt], t.get, language="es")
            == "number 3 missing from source"
        )
    assert (
        check_grounding("Dura dos años. [garantía-2]", [nfd], texts.get, language="es")
        == "source outside prompt: garantía-2"
    )
