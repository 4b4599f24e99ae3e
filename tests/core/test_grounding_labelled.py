"""The grounding check on 127 hand-labelled answers in es, de, en and nl, against real chunk
texts (issue 20: ``tests/core/data/grounding-labelled.yaml`` says where each comes from).
Its alarms must be right (precision >= 0.97) and catch the unsupported answers
(recall >= 0.95); ``benchmarks/bench_grounding.py`` prints the figures per language."""

from __future__ import annotations

from collections import Counter

from ragtriage.core.grounding import check_grounding
from tests.core import groundingkit


def test_the_labelled_set_is_large_and_in_four_languages():
    sources, answers = groundingkit.load()
    langs = Counter(sources[a["src"][0]]["lang"] for a in answers)
    assert len(answers) >= 100 and set(langs) == {"es", "de", "en", "nl"}
    assert min(langs.values()) >= 25
    labels = Counter(a["label"] for a in answers)
    assert set(labels) == {"supported", "unsupported"} and min(labels.values()) >= 40
    assert all(set(a["src"]) <= set(sources) for a in answers)


def test_precision_and_recall_of_the_alarms():
    out = groundingkit.score(check_grounding)
    assert out.precision >= 0.97, out.false_alarms
    assert out.recall >= 0.95, out.misses
