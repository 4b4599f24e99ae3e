"""The test set's shape (formats.md §1) as pydantic v2 models, with every rule.

Models are frozen: a case is changed through the test-set document
(:mod:`ragtriage.core.document`), never by assignment.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

CASE_FIELDS = (
    "id",
    "topic",
    "question",
    "expected",
    "expected_docs",
    "evidence",
    "expect",
    "must_contain",
    "answer",
    "unanswerable",
    "tags",
    "notes",
)
# the top-level settings of a test set, in file order; every list of them is this one
MAX_K = 10_000  # a cut-off rank beyond any ranking a system returns; bigger is a typo
SETTINGS_KEYS = (
    "version",
    "corpus",
    "language",
    "decline",
    "k",
    "gates",
    "judge",
    "judge_kappa",
    "judge_min_grades",
    "cite",
)
TOP_KEYS = (*SETTINGS_KEYS, "cases", "labels")
LABEL_FIELDS = ("sha", "text", "doc", "start", "end", "when", "corpus")
SUMMARY_METRICS = (
    "hit",
    "recall",
    "precision",
    "mrr",
    "doc_hit",
    "doc_recall",
    "doc_precision",
    "doc_mrr",
    "supported",
    "faithfulness",
    "accuracy",
    "coverage",
    "unknown_abstention",
)
AT_K_METRICS = ("hit", "recall", "precision", "mrr", "doc_hit", "doc_recall", "doc_precision", "doc_mrr")
DOC_METRICS = ("doc_hit", "doc_recall", "doc_precision", "doc_mrr")  # k counts documents (evaluation.md)
JUDGE_METRICS = ("judge_supported", "judge_correct")  # judge.md: a bar on these needs a proven judge
JUDGE_THRESHOLDS = ("judge_kappa", "judge_min_grades")  # in gates: thresholds of the judge, not bars
_WS = re.compile(r"\s")
_GATE = re.compile(r"^([a-z_]+)(?:@([1-9][0-9]*))?$")


def _no_ws_id(v: str, what: str) -> str:
    if not v or not v.strip():
        raise ValueError(f"{what} must not be empty")
    if _WS.search(v):
        raise ValueError(f"{what} {v!r} contains whitespace (use - or _ instead)")
    return v


class Case(BaseModel):
    """One question of the test set."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=False)

    id: str
    question: str
    topic: str | None = None
    expected: tuple[str, ...] = ()
    expected_docs: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    expect: Literal["any", "all"] = "any"
    must_contain: tuple[str, ...] = ()
    answer: str | None = None
    unanswerable: bool = False
    tags: tuple[str, ...] = ()
    notes: str | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return _no_ws_id(v, "id")

    @field_validator("question")
    @classmethod
    def _question(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @field_validator("expected")
    @classmethod
    def _expected(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        seen = set()
        for cid in v:
            _no_ws_id(cid, "chunk id")
            if cid in seen:
                raise ValueError(f"chunk id {cid!r} is listed twice")
            seen.add(cid)
        return v

    @field_validator("expected_docs")
    @classmethod
    def _expected_docs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        seen = set()
        for d in v:
            if not d.strip():
                raise ValueError("a document name must not be empty")
            if d in seen:
                raise ValueError(f"document {d!r} is listed twice")
            seen.add(d)
        return v

    @field_validator("evidence")
    @classmethod
    def _evidence(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        seen = set()
        for q in v:
            key = " ".join(q.split())
            if not key:
                raise ValueError("an empty quote would be found in every chunk")
            if key in seen:
                raise ValueError(f"quote {q!r} is listed twice")
            seen.add(key)
        return v

    @field_validator("must_contain")
    @classmethod
    def _must_contain(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if any(s == "" for s in v):
            raise ValueError("an empty string would match every answer")
        return v

    @model_validator(mode="after")
    def _unanswerable(self) -> Case:
        if self.unanswerable and self.expected:
            raise ValueError(
                "unanswerable: true with expected chunks "
                "(an unanswerable case expects none: empty `expected` or set unanswerable: false)"
            )
        if self.unanswerable and (self.expected_docs or self.evidence):
            what = "expected_docs" if self.expected_docs else "evidence"
            raise ValueError(
                f"unanswerable: true with `{what}` "
                f"(an unanswerable case has no gold: empty `{what}` or set unanswerable: false)"
            )
        return self

    @property
    def unlabelled(self) -> bool:
        """Answerable but no gold yet (a draft): no expected chunk, document or quote."""
        return not self.unanswerable and not self.expected and not self.expected_docs and not self.evidence

    @property
    def answerable(self) -> bool:
        return not self.unanswerable


class Label(BaseModel):
    """What a labelled chunk said when it was labelled (maintained by ragtriage)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    sha: str | None = None
    text: str | None = None
    doc: str | None = None
    start: StrictInt | None = None  # strict: `start: true` is not 1
    end: StrictInt | None = None
    when: str | None = None
    corpus: str | None = None


class Settings(BaseModel):
    """The test set's top-level keys other than cases and labels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: Literal[1] = 1
    corpus: str | None = None
    language: str = "en"
    decline: tuple[str, ...] | None = None
    k: StrictInt = Field(default=3, le=MAX_K)  # strict: `k: true` is not 1
    gates: dict[str, float] = {}
    judge: str | None = None  # openai:BASE_URL#MODEL, as --judge (judge.md)
    judge_kappa: float | None = None
    judge_min_grades: int | None = None
    cite: Literal["inline", "prompt", "field"] = "inline"  # where the cited set comes from (evaluation.md)

    @field_validator("judge_kappa")
    @classmethod
    def _judge_kappa(cls, v: float | None) -> float | None:
        if v is not None and not -1.0 <= v <= 1.0:
            raise ValueError(f"{v} must be between -1 and 1 (a Cohen's kappa)")
        return v

    @field_validator("judge_min_grades")
    @classmethod
    def _judge_min_grades(cls, v: int | None) -> int | None:
        if v is not None and v < 0:
            raise ValueError("must be 0 or more (a count of graded cases)")
        return v

    @field_validator("k")
    @classmethod
    def _k(cls, v: int) -> int:
        if v < 1:
            raise ValueError("must be 1 or more")
        return v

    @field_validator("decline")
    @classmethod
    def _decline(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if v is not None and any(not s.strip() for s in v):
            raise ValueError("a decline phrase must not be empty")
        return v

    @field_validator("gates")
    @classmethod
    def _gates(cls, v: dict[str, float]) -> dict[str, float]:
        for key, bar in v.items():
            if key == "judge_kappa":
                if not -1.0 <= bar <= 1.0:
                    raise ValueError(f"judge_kappa: {bar} must be between -1 and 1 (a Cohen's kappa)")
                continue
            if key == "judge_min_grades":
                if bar < 0 or bar != int(bar):
                    raise ValueError(f"judge_min_grades: {bar} must be a whole number of 0 or more")
                continue
            parse_metric(key)
            if not 0.0 <= bar <= 1.0:
                raise ValueError(f"{key}: bar {bar} must be between 0 and 1")
        return v


def parse_metric(key: str) -> tuple[str, int | None]:
    """``'hit@3'`` -> ``('hit', 3)``; ``'accuracy'`` -> ``('accuracy', None)``."""
    m = _GATE.match(key)
    if not m or m.group(1) not in SUMMARY_METRICS + JUDGE_METRICS:
        import difflib

        base = key.split("@")[0]
        close = difflib.get_close_matches(base, SUMMARY_METRICS + JUDGE_METRICS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else f" (one of: {', '.join(SUMMARY_METRICS)})"
        raise ValueError(f"unknown metric {key!r}{hint}")
    name, k = m.group(1), m.group(2)
    if k is not None and name not in AT_K_METRICS:
        raise ValueError(f"{key!r}: only {', '.join(AT_K_METRICS)} take @k")
    return name, int(k) if k else None
