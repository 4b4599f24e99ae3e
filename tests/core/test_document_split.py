"""The test-set package keeps the old import path and one list of settings keys."""

from __future__ import annotations

from ragtriage.core import document as old_path
from ragtriage.core.schema import SETTINGS_KEYS, TOP_KEYS, Settings
from ragtriage.core.testset import TestSetDocument
from ragtriage.core.testset import document as facade


def test_old_path_is_the_facade_module():
    assert old_path is facade
    assert old_path.TestSetDocument is TestSetDocument


def test_settings_keys_are_the_settings_model_fields():
    assert tuple(Settings.model_fields) == SETTINGS_KEYS
    assert TOP_KEYS == (*SETTINGS_KEYS, "cases", "labels")


def test_every_setting_in_the_file_is_read(tmp_path):
    text = (
        "version: 1\ncorpus: c.jsonl\nlanguage: es\ndecline: [no sé]\nk: 5\ngates: {hit@5: 0.5}\n"
        "judge: openai:http://127.0.0.1:9/v1#m\njudge_kappa: 0.7\njudge_min_grades: 40\ncite: prompt\n"
        "cases:\n  - id: a\n    question: q\n"
    )
    doc = TestSetDocument.from_text(text, tmp_path / "t.yaml")
    got = doc.settings.model_dump()
    assert got == {
        "version": 1,
        "corpus": "c.jsonl",
        "language": "es",
        "decline": ("no sé",),
        "k": 5,
        "gates": {"hit@5": 0.5},
        "judge": "openai:http://127.0.0.1:9/v1#m",
        "judge_kappa": 0.7,
        "judge_min_grades": 40,
        "cite": "prompt",
    }
