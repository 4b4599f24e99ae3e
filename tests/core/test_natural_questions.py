"""The chunk picker finds what people ask: questions typed the way a support lead types
them (tests/core/data/natural_questions.yaml) find their chunk among the first five of
the one lexical index the picker and the builtin retriever share."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ragtriage.core.corpus import load_corpus
from ragtriage.core.search import LexicalIndex

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = yaml.safe_load((Path(__file__).parent / "data" / "natural_questions.yaml").read_text("utf-8"))


@pytest.fixture(scope="module")
def indexes() -> dict[str, LexicalIndex]:
    return {lang: LexicalIndex.build(load_corpus(ROOT / d["chunks"]), lang) for lang, d in QUESTIONS.items()}


def test_the_set_is_big_enough_and_names_real_chunks(indexes):
    total = 0
    for lang, d in QUESTIONS.items():
        ids = set(indexes[lang].ids)
        for cid, question in d["questions"]:
            assert cid in ids, f"{lang}: {question!r} expects {cid}, not in {d['chunks']}"
        total += len(d["questions"])
    assert total >= 30


@pytest.mark.parametrize("lang", sorted(QUESTIONS))
def test_the_right_chunk_is_in_the_first_five_for_nine_in_ten(indexes, lang):
    idx = indexes[lang]
    questions = QUESTIONS[lang]["questions"]
    missed = [(cid, q) for cid, q in questions if cid not in [c for c, _ in idx.hits(q, 5).results]]
    found = len(questions) - len(missed)
    assert found >= 0.9 * len(questions), f"{lang}: {found}/{len(questions)}; missed {missed}"


def test_the_builtin_retriever_ranks_as_the_picker_finds(indexes):
    """The builtin system retrieves from the same analysed index (core/systems/builtin.py)."""
    from ragtriage.core.document import TestSetDocument
    from ragtriage.core.systems import Context
    from ragtriage.core.systems.builtin import BuiltinSystem

    doc = TestSetDocument.load(ROOT / "testsets" / "shop-de.yaml")
    system = BuiltinSystem(Context(doc))
    for _cid, question in QUESTIONS["de"]["questions"]:
        ranking, _scores = system.retrieve(question, 5)
        assert ranking == [c for c, _ in indexes["de"].search(question, 5)]
