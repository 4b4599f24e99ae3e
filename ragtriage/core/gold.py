"""What a case is scored against beyond its own ``expected`` ids: the document of each
chunk (for ``expected_docs``) and the resolution of its ``evidence`` quotes.

:class:`Gold` is made once per run (or per rescore of a stored run) and handed to
:func:`ragtriage.core.scoring.make_record`; without one, a stored record's own
``doc_ranking`` and ``evidence`` resolution are used, so a run file rescored where the
corpus is not at hand (``check``, the app) scores as it did when it was made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .docrank import DocOf, corpus_doc_of, doc_ranking
from .quotes import CaseGold, Resolution, norm, resolve_cases


@dataclass
class Gold:
    """``doc_of``: chunk id -> document (the corpus's ``doc``); ``quotes``: case id -> the
    resolution of its quotes against the corpus."""

    doc_of: DocOf | None = None
    quotes: Mapping[str, CaseGold] = field(default_factory=dict)

    @classmethod
    def of(cls, cases: Sequence[Any], corpus: Any) -> Gold:
        """The gold context of ``cases`` against a loaded corpus (None: no corpus)."""
        if corpus is None:
            return cls()
        quotes = resolve_cases(cases, corpus) if any(getattr(c, "evidence", ()) for c in cases) else {}
        return cls(corpus_doc_of(corpus), quotes)

    @classmethod
    def needed(cls, cases: Sequence[Any], corpus: Any) -> Gold | None:
        """:meth:`of` when a case has ``expected_docs`` or ``evidence`` (``corpus``: a loaded
        corpus, or a callable that loads it, called only then); None otherwise."""
        if not any(getattr(c, "expected_docs", ()) or getattr(c, "evidence", ()) for c in cases):
            return None
        return cls.of(cases, corpus() if callable(corpus) else corpus)

    @classmethod
    def of_testset(cls, doc: Any, cases: Sequence[Any] | None = None) -> Gold | None:
        """:meth:`needed` against the test set's own corpus, when it names one that exists
        (a stored run's own documents and resolutions are used otherwise)."""

        def load() -> Any:
            path = getattr(doc, "corpus_path", None)
            if path is None or not path.is_file():
                return None
            from .corpus import load_corpus

            return load_corpus(path)

        return cls.needed(list(doc.cases) if cases is None else cases, load)


def _same_quotes(case: Any, resolutions: Sequence[Resolution]) -> bool:
    return [norm(q) for q in case.evidence] == [norm(r.quote) for r in resolutions]


def quote_gold(case: Any, gold: Gold | None, stored: Mapping[str, Any]) -> CaseGold | None:
    """The resolution of ``case``'s quotes: from ``gold`` when it resolved them, else from a
    stored record's ``evidence`` when the quotes are the same; None when nothing resolved them."""
    if not getattr(case, "evidence", ()):
        return None
    got = gold.quotes.get(case.id) if gold is not None else None
    if got is not None and _same_quotes(case, got.resolutions):
        return got
    kept = stored.get("evidence") if "reason" in stored else None
    if isinstance(kept, list):
        res = [Resolution.from_dict(d) for d in kept if isinstance(d, dict)]
        if all(r is not None for r in res) and _same_quotes(case, res):  # type: ignore[arg-type]
            out = CaseGold(list(res))  # type: ignore[arg-type]
            if out.complete:
                out.ids = tuple(dict.fromkeys(c for r in out.resolutions for c in r.chunks))
                split = any(r.status == "split" for r in out.resolutions)
                out.expect = "all" if split else case.expect
            return out
    return None


def case_doc_ranking(result: Mapping[str, Any], gold: Gold | None) -> list[str | None] | None:
    """The document ranking of a result: from its ``docs`` (the system's), else a stored
    record's ``doc_ranking``, else the corpus's ``doc`` of each ranked chunk; None when no
    document is known at all (no ``docs``, no corpus)."""
    ranking = result.get("ranking") or []
    docs = result.get("docs")
    if isinstance(docs, list):
        return doc_ranking(ranking, None, docs)
    if "reason" in result:
        kept = result.get("doc_ranking")
        if isinstance(kept, list):
            return [d if isinstance(d, str) and d else None for d in kept]
    doc_of = gold.doc_of if gold is not None else None
    if doc_of is None:
        return None
    return doc_ranking(ranking, doc_of)
