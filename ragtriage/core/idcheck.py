"""Say out loud what a silent zero would hide: ranked and cited ids the corpus does not hold,
and a run in which no answer cites anything (issue 20).

A pipeline whose chunk ids are made anew in every process (LlamaIndex's default node ids
are ``uuid4``; a LangChain ``Document`` has none) ranks ids no chunks file holds: every
hit@k is 0 and every citation points nowhere, for no fault of the retriever. The scoring
records those ids per case (``unknown_ranked``, ``unknown_cited``: formats.md §4); these
functions turn them into one warning with the likely cause and the fix, for ``run`` and
``check``, and say when no ranked id of any case is in the corpus at all (``check`` then
refuses to pass).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LARGE_SHARE = 0.2  # of the ranked ids (first k of every case): more unknown ones is a warning

CAUSE = (
    "likely cause: chunk ids made anew in every process (LlamaIndex's default node ids are "
    "uuid4; LangChain documents have no id), or a corpus from another chunking than the one "
    "the system retrieves from. Fix: give every chunk a stable id, the one of its line in the "
    "chunks file (LlamaIndex: TextNode(id_=...) or Document(doc_id=...) with "
    "SentenceSplitter(id_func=...); LangChain: Document(id=...) or metadata), or point "
    "`corpus:` at the chunks file the system retrieves from"
)


@dataclass(frozen=True)
class IdHealth:
    ranked: int  # ranked ids looked at (the first k of every case that was checked)
    unknown: int  # of those, not in the corpus
    cases: int  # cases with a ranking
    cases_all_unknown: int  # cases none of whose first k ranked ids is in the corpus
    cited_unknown: int  # cases citing a chunk the corpus does not hold
    examples: tuple[str, ...]  # a few unknown ids, as ranked

    @property
    def none_known(self) -> bool:
        """Not one ranked id of any case is in the corpus."""
        return self.cases > 0 and self.cases_all_unknown == self.cases

    @property
    def large(self) -> bool:
        return self.ranked > 0 and self.unknown / self.ranked > LARGE_SHARE


def id_health(records: Iterable[Mapping[str, Any]], k: int) -> IdHealth | None:
    """What the records say of their ids; None when they were scored without a corpus to
    tell (no record carries the fields and none could: see :class:`~.scoring.ChunkText`)."""
    ranked = unknown = cases = all_unknown = cited = 0
    examples: list[str] = []
    for r in records:
        ranking = r.get("ranking")
        if r.get("unknown_cited"):
            cited += 1
        if not ranking:
            continue
        bad = r.get("unknown_ranked")
        n = len(ranking) if len(ranking) <= k else k
        if bad or len(set(ranking[:k])) != n:  # (a ranking holding an id twice counts it once)
            n = len(dict.fromkeys(c for c in ranking[:k] if type(c) is str))
        cases += 1
        ranked += n
        if bad:
            unknown += len(bad)
            all_unknown += len(bad) >= n
            for c in bad:
                if len(examples) < 3 and c not in examples:
                    examples.append(c)
    return IdHealth(ranked, unknown, cases, all_unknown, cited, tuple(examples))


def id_warnings(records: Sequence[Mapping[str, Any]], k: int, corpus: str | None) -> list[str]:
    """The warnings ``run`` and ``check`` print about unknown ids (empty when all is well)."""
    h = id_health(records, k)
    if h is None or not (h.large or h.cited_unknown):
        return []
    where = f" {corpus}" if corpus else ""
    eg = ", ".join(h.examples)
    out = []
    if h.none_known:
        out.append(
            f"no ranked id of any case is in the corpus{where} ({h.unknown} of {h.ranked} ids at k={k}, "
            f"e.g. {eg}): every hit@{k} is 0 because of the ids, not the retriever; {CAUSE}"
        )
    elif h.large:
        out.append(
            f"{h.unknown} of {h.ranked} ranked ids at k={k} ({h.unknown / h.ranked:.0%}) are not in the "
            f"corpus{where} (e.g. {eg}): they count as misses; {CAUSE}"
        )
    if h.cited_unknown and not h.none_known:
        out.append(
            f"{h.cited_unknown} case(s) cite a chunk that is not in the corpus{where}: such a citation "
            "supports nothing (why: source not in corpus)"
        )
    return out


NO_CITATION_SHARE = 0.8  # of the answered cases `no source`: the system does not cite


def citation_warning(records: Sequence[Mapping[str, Any]], cite: str) -> str | None:
    """Once per run: (nearly) no answered case carries a ``[chunk-id]`` citation, so they are
    ``no source`` under ``cite: inline``; name the options for a system that does not cite.
    (A few brackets in answers — a Python list, a footnote — are not citations of a system.)"""
    if cite != "inline":
        return None
    answered = [r for r in records if not r.get("abstained") and not r.get("error") and r.get("answer")]
    n = sum(1 for r in answered if r.get("why") == "no source")
    if not answered or n < NO_CITATION_SHARE * len(answered):
        return None
    return (
        f"{'no' if n == len(answered) else 'almost no'} answer carries a [chunk-id] citation: "
        f"{n} of {len(answered)} answered cases are `no source`. "
        "If the system returns its sources beside the answer instead of citing them, check grounding "
        "against the chunks the generator saw with --cite prompt (or `cite: prompt` in the test set), "
        "or give each result a `cited` list and use --cite field"
    )


def cite_mode(doc: Any, cite: str | None) -> str:
    """The cite mode a check judges grounding with: ``--cite``, else the test set's ``cite:``
    (a run made with another one is rescored)."""
    return str(cite or getattr(doc.settings, "cite", None) or "inline")


def check_notes(
    records: Sequence[Mapping[str, Any]], k: int, corpus: str | None, cite: str, notes: list[str]
) -> str | None:
    """``check``'s notes on unknown ids and on a run that cites nothing; the refusal when no
    ranked id of any case is in the corpus (a gate passed on such ids would be noise)."""
    notes.extend(id_warnings(records, k, corpus))
    cited = citation_warning(records, cite)
    if cited:
        notes.append(cited)
    h = id_health(records, k)
    if h is not None and h.none_known:
        return (
            f"none of the {h.ranked} ranked ids (k={k}) of {h.cases} cases is in the corpus: "
            "the gate is not judged on them (see the note above)"
        )
    return None
