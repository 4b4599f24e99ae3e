"""The run record and summary against formats.md §4/§5 and evaluation.md: whole-record
and whole-summary assertions, so a field that drifts from the contract fails here."""

import pytest

from ragtriage.core.grounding import decline_phrases, is_abstention
from ragtriage.core.schema import Case, Settings
from ragtriage.core.scoring import COMPUTED_FIELDS, make_record
from ragtriage.core.summary import summarize
from tests.core.runkit import NL, five


def test_five_case_table_every_summary_value():
    cases, results = five()
    recs = [make_record(c, r, 1, {}.get, NL) for c, r in zip(cases, results)]
    s = summarize(recs, 1)
    want = {
        "k": 1,
        "n": 5,
        "answerable": 3,
        "answered": 3,
        "unlabelled": 0,
        "errors": 0,
        "hit": 2 / 3,
        "recall": 4 / 9,
        "precision": 2 / 3,
        "mrr": 2 / 3,
        "supported": 1 / 5,
        "faithfulness": 1 / 3,
        "accuracy": 2 / 5,
        "coverage": 3 / 5,
        "unknown_abstention": 1 / 2,
        "tokens": None,
        "reasons": {
            "appropriate-abstention": 1,
            "unanswerable-answered": 1,
            "retrieval-miss": 1,
            "wrong-answer": 1,
            "supported-correct": 1,
        },
    }
    assert list(s) == list(want)
    for key, v in want.items():
        assert s[key] == (pytest.approx(v) if isinstance(v, float) else v), key
    # the reasons are listed in diagnosis order
    assert list(s["reasons"]) == [
        "appropriate-abstention",
        "unanswerable-answered",
        "retrieval-miss",
        "wrong-answer",
        "supported-correct",
    ]


def test_five_case_table_per_case_fields():
    cases, results = five()
    recs = {c.id: make_record(c, r, 1, {}.get, NL) for c, r in zip(cases, results)}
    got = {cid: {f: r[f] for f in COMPUTED_FIELDS} for cid, r in recs.items()}
    assert got["q1"] == {
        "rank": 1,
        "hit": True,
        "precision": 1.0,
        "recall": 1.0,
        "rr": 1.0,
        "abstained": False,
        "supported": True,
        "why": "",
        "correct": True,
        "reason": "supported-correct",
    }
    assert got["q2"]["recall"] == pytest.approx(1 / 3) and got["q2"]["hit"] is True
    assert got["q2"]["correct"] is False and got["q2"]["why"] == "judged unsupported"
    assert got["q3"] == {
        "rank": 0,
        "hit": False,
        "precision": 0.0,
        "recall": 0.0,
        "rr": 0.0,
        "abstained": True,
        "supported": False,
        "why": "judged unsupported",
        "correct": False,
        "reason": "retrieval-miss",
    }
    for cid in ("q4", "q5"):  # unanswerable: recall, rr and hit null, not 0
        assert got[cid]["recall"] is None and got[cid]["rr"] is None and got[cid]["hit"] is None
        assert got[cid]["rank"] == 0 and got[cid]["precision"] == 0.0
    assert got["q4"]["correct"] is True and got["q5"]["correct"] is False


def test_why_is_empty_exactly_when_supported_even_for_an_unlabelled_case():
    """formats.md §4: `why` is empty when supported, else the reason text."""
    es = Settings(language="es")
    texts = {"a": "Cuesta 3 €."}.get
    draft = Case(id="d", question="?")  # answerable, no expected chunk: unlabelled
    rec = make_record(draft, {"ranking": ["a"], "answer": "Cuesta 3 €. [a]"}, 1, texts, es)
    assert rec["reason"] == "unlabelled" and rec["supported"] is True
    assert rec["why"] == ""
    bad = make_record(draft, {"ranking": ["a"], "answer": "Cuesta 4 €. [a]"}, 1, texts, es)
    assert bad["reason"] == "unlabelled" and bad["supported"] is False
    assert bad["why"] == "number 4 missing from source"


@pytest.mark.parametrize(
    "phrase,answer",
    [
        ("¿Perdón?", "¿Perdón? No tengo ese dato."),
        ("«sin datos»", "«Sin datos» en los documentos."),
        ("\"I don't know\"", "\"I don't know\" is all I can say."),
    ],
)
def test_decline_phrase_written_with_leading_punctuation_still_matches(phrase, answer):
    """The answer is trimmed of leading punctuation before the comparison; a phrase written
    the same way must be trimmed alike, or it can never match."""
    assert is_abstention(answer, decline_phrases("es", [phrase]))
    assert not is_abstention("Cuesta 3 €.", decline_phrases("es", [phrase]))


def test_formats_section_5_example_shop_at_k3():
    """formats.md §5: the shop at k = 3, ranks 1, 3, 4, 2, 2, 1, 1 for the seven answerable
    questions, one of them answered with a number not in its source, one unanswerable
    question declined -> exactly the summary printed there (rounded to 3 places)."""
    es = Settings(language="es")
    texts = {f"c{i}": f"El dato {i} vale {i + 10} euros." for i in range(7)}
    texts.update({f"x{j}": "Texto sin relación." for j in range(3)})
    cases, recs = [], []
    for i, rank in enumerate((1, 3, 4, 2, 2, 1, 1)):
        ranking = ["x0", "x1", "x2"][: rank - 1] + [f"c{i}"]
        case = Case(id=f"q{i}", question="?", expected=[f"c{i}"], must_contain=[f"{i + 10}"])
        if rank <= 3:
            answer = f"Vale {i + 10} euros. [c{i}]"
        else:  # not found: answered from another chunk, with a number that is not in it
            answer = "Vale 99 euros. [x0]"
        cases.append(case)
        recs.append(
            make_record(case, {"ranking": ranking, "answer": answer, "tokens": 122}, 3, texts.get, es)
        )
    recs.append(
        make_record(
            Case(id="domingo", question="?", unanswerable=True),
            {"ranking": ["x0"], "answer": "No lo sé.", "tokens": 122},
            3,
            texts.get,
            es,
        )
    )
    s = summarize(recs, 3)
    rounded = {key: (round(v, 3) if isinstance(v, float) else v) for key, v in s.items()}
    assert rounded == {
        "k": 3,
        "n": 8,
        "answerable": 7,
        "answered": 7,
        "unlabelled": 0,
        "errors": 0,
        "hit": 0.857,
        "recall": 0.857,
        "precision": 0.286,
        "mrr": 0.619,
        "supported": 0.875,
        "faithfulness": 0.857,
        "accuracy": 0.875,
        "coverage": 0.875,
        "unknown_abstention": 1.0,
        "tokens": 976,
        "reasons": {"appropriate-abstention": 1, "retrieval-miss": 1, "supported-correct": 6},
    }
    assert recs[2]["why"] == "number 99 missing from source" and recs[2]["reason"] == "retrieval-miss"
