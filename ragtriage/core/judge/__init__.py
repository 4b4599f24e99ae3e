"""A second model as judge, measured against the expert's grades (judge.md).

| module | what it holds |
|---|---|
| :mod:`.prompts` | the prompt in es, de, nl, en |
| :mod:`.reply` | reading the JSON verdict |
| :mod:`.cache` | verdicts by content hash, one append-only file |
| :mod:`.client` | :class:`Judge`: the calls, retries, tokens |
| :mod:`.grades` | ``<testset stem>.grades.jsonl``: append, read, merge |
| :mod:`.calibration` | agreement, Cohen's κ, the CI-bar refusal |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .calibration import (
    JUDGE_METRICS,
    agreement,
    calibrate,
    corrected_rates,
    kappa_lower,
    kappa_text,
    proven,
    refuse_unproven,
    thresholds,
)
from .client import Judge, judged, parse_spec
from .grades import Grade, append_grade, grades_path, latest, make_grade, read_grades

__all__ = [
    "JUDGE_METRICS",
    "Grade",
    "Judge",
    "agreement",
    "append_grade",
    "calibrate",
    "corrected_rates",
    "disagreements",
    "grades_path",
    "judge_summary",
    "judged",
    "kappa_lower",
    "kappa_text",
    "latest",
    "make_grade",
    "parse_spec",
    "proven",
    "read_grades",
    "refuse_unproven",
    "thresholds",
]


def disagreements(record: Mapping[str, Any]) -> list[str]:
    """Where the judge's verdict contradicts the deterministic result: ``supported``
    (the grounding check) and/or ``correct`` (must-contain / reference)."""
    j = record.get("judge")
    if not isinstance(j, dict) or "error" in j or record.get("error"):
        return []
    out = []
    if isinstance(j.get("supported"), bool) and j["supported"] != bool(record.get("supported")):
        out.append("supported")
    if isinstance(j.get("correct"), bool) and j["correct"] != bool(record.get("correct")):
        out.append("correct")
    return out


def judge_summary(records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``judge_supported``, ``judge_correct`` (ratios over judged cases), ``judge_calls``
    (cases that needed a call) and ``judge_tokens``; None when no record has a verdict."""
    seen = False
    n_sup = sup = n_cor = cor = calls = tokens = 0
    for r in records:
        j = r.get("judge")
        if not isinstance(j, dict):
            continue
        seen = True
        t = j.get("tokens")
        if isinstance(t, int) and not isinstance(t, bool):
            tokens += t
        if "error" in j:
            calls += 1
            continue
        if not j.get("cached"):
            calls += 1
        if isinstance(j.get("supported"), bool):
            n_sup += 1
            sup += j["supported"]
        if isinstance(j.get("correct"), bool):
            n_cor += 1
            cor += j["correct"]
    if not seen:
        return None
    return {
        "judge_supported": sup / n_sup if n_sup else None,
        "judge_correct": cor / n_cor if n_cor else None,
        "judge_calls": calls,
        "judge_tokens": tokens,
    }


def open_judge(
    doc: Any, spec: str | None, *, key_env: str = "OPENAI_API_KEY", **options: Any
) -> Judge | None:
    """The judge named by ``spec`` (else the test set's ``judge:``), or None."""
    where = "--judge"
    if spec is None:
        spec = getattr(doc.settings, "judge", None)
        where = f"{getattr(doc, 'path', 'test set')}: judge"
    if not spec:
        return None
    return Judge(spec, api_key_env=key_env or "OPENAI_API_KEY", where=where, **options)
