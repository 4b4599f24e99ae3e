"""The lines of a run file (formats.md §4) as types: :class:`RunMeta` for the meta
line, :class:`CaseRecord` for a case line.

They are :class:`~typing.TypedDict` s, so at run time a record is the plain dict
orjson reads and writes (no conversion on a 100k-case run) while mypy checks every
key a function reads or writes. Keys a record may lack are optional
(``total=False``): a record read back from an older run, or made for an
unanswerable or unlabelled case, holds only some of them. What :func:`read_run
<ragtriage.core.runfile.read_run>` guarantees is checked there (a case line has a
string ``id`` and ``reason``; a meta line a whole ``k`` of 1 or more).

The summary line (§5) stays a ``dict[str, Any]``: judge.md adds ``judge_*`` keys
to it only when a case has a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from .diagnosis import Reason


class _CaseKeys(TypedDict):
    type: Literal["case"]
    id: str


class Computed(TypedDict, total=False):
    """The computed fields of a case (formats.md §4; ``scoring.COMPUTED_FIELDS``)."""

    rank: int
    hit: bool | None
    precision: float | None
    recall: float | None
    rr: float | None
    doc_rank: int
    doc_hit: bool | None
    doc_precision: float
    doc_recall: float | None
    doc_rr: float | None
    abstained: bool
    supported: bool
    why: str
    correct: bool
    reason: Reason | str
    unknown_ranked: list[str]  # of the first k ranked ids, those not in the corpus (when known)
    unknown_cited: list[str]  # the cited ids not in the corpus (when known)


class CaseRecord(_CaseKeys, Computed, total=False):
    """One ``{"type": "case", ...}`` line: the case's labels, the system's result
    (formats.md §3) and the computed fields (:class:`Computed`), in the order they are
    written."""

    # the case's labels
    topic: str
    question: str
    expected: list[str]
    expect: str
    expected_docs: list[str]
    evidence: list[dict[str, Any]]
    unanswerable: bool
    # the system's result
    ranking: list[str]
    docs: list[str | None]
    doc_ranking: list[str | None]
    scores: list[float]
    prompt_ids: list[str]
    cited: list[str]
    tokens: int
    latency_ms: float
    answer: str | None
    external_supported: bool
    error: str
    extra: dict[str, Any]
    judge: dict[str, Any]


class _MetaKeys(TypedDict):
    type: Literal["meta"]
    k: int


class RunMeta(_MetaKeys, total=False):
    """The ``{"type": "meta", ...}`` first line: what the run was made of."""

    testset: str
    testset_hash: str | None
    system: str
    started: str
    version: str
    cite: str  # the grounding check's cited set when not inline (evaluation.md)
    corpus: str
    judge: str
    resumed: str
    selection: dict[str, Any]  # --shard / --tag / --ids the run covered (absent: every case)
    merged: list[str]  # the shard files `ragtriage merge` joined


#: what a function that only reads a case record takes: a :class:`CaseRecord`, or one
#: held as a plain dict (the app's triage state keeps its records as ``dict``)
RecordLike = Mapping[str, Any]

#: the summary line (formats.md §5) without its ``type``
Summary = dict[str, Any]
