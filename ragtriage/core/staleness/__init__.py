"""Stale labels after re-chunking (staleness.md): detect, propose, fix what is safe.

Every chunk id a case expects has a remembered label (``labels`` in the test
set: fingerprint, text, and where known ``doc``/``start``/``end``). This package
judges each (case, label) against a *new* chunks file alone, streaming it, and
says per label:

========== ====================================================== ==========
status     meaning                                                 fix
========== ====================================================== ==========
ok         same id, same normalised text                          none
moved      id gone; the same text is under another id             auto
changed    id exists with other text (a reused id)                auto when one chunk holds
                                                                  the whole remembered text,
                                                                  else review
merged     the remembered text lies inside a larger chunk         auto (one chunk) / review
split      the text is spread over consecutive chunks             review (``expect: all``)
missing    no chunk holds the text; similar chunks ranked         review
unrecorded no remembered text, the id exists                      auto (record it)
unknown    no remembered text, the id is absent; chunks similar   review
           to the case's question ranked
========== ====================================================== ==========

API (used by ``ragtriage stale``, by ``validate`` and by the ``check`` gate)::

    from ragtriage.core import staleness
    report = staleness.check(doc, corpus_path=None, progress=None, cancel=None)
    report.labels        # [StaleEntry(case, label, status, candidates=[(id, score)], fix, expect)]
    report.counts        # {status: n}, zero counts omitted, in STATUSES order
    report.stale         # the entries whose status is not "ok"
    report.remaining     # stale entries not resolved by apply_fixes (all of them before)
    report.to_dict() / report.to_json()   # the --json shape of staleness.md
    report.settle()      # {(case, label): target id} of the safe fixes (already applied to .fix)
    n = report.apply_fixes(doc)           # edits through the document; caller saves

    # the same on plain data (no YAML): cases as (id, question, expected ids)
    report = staleness.check_labels(cases, labels, corpus_path_or_chunks)

The modules, in the order a check runs them:

* :mod:`.evidence` — what is known of one label (:class:`LabelState`) and the text helpers;
* :mod:`.probe` — which chunks of a file concern a label at all (a big file in two
  processes: the second half on another core);
* :mod:`.scanner` — :class:`Scanner`, fed the new corpus one chunk at a time (of a file,
  the chunks the probe marked and their neighbours);
* :mod:`.verdict` — :func:`judge`: the evidence of one label -> a :class:`Verdict`;
* :mod:`.similarity` — a second pass ranking chunks for labels nothing holds;
* :mod:`.model` — :class:`Status`, :class:`Fix`, :class:`StaleEntry`, :class:`StaleReport`
  and its fixes.

``progress(phase, done_bytes, total_bytes)`` is called per 4 MB read (phase is
"scan" or "similar"); ``cancel`` is a ``threading.Event`` checked as often, and
raises :class:`Cancelled`. ``corpus_path`` may also be a loaded
:class:`~ragtriage.core.corpus.Corpus`. A bad chunks file raises
:class:`~ragtriage.core.errors.CorpusError` (located, like every reader); a
duplicated id is an error when a case expects it (checking every id of a
million-chunk corpus would cost a set of a million strings: ``validate`` does).

Text is the evidence; spans only help. Fixes (``fix == "auto"``): ``unrecorded``
(record the label), ``moved``, ``merged`` and ``changed`` when exactly one chunk
holds the whole remembered text (several: the one in the label's document over
its old span, if only one is). A chunk found by span overlap is fixed to only
when its text over the label's span, normalised, is the remembered text; other
chunks over the old span (an edited document: a paragraph added above, a word
changed) are ranked for review with every chunk sharing content with the text.
A text split over chunks with only whitespace dropped between them is
``split``. A short text (under five words) inside bigger chunks gets them as
candidates for review. :meth:`StaleReport.fix_plan` never writes a new text under an id that
another case still expects with its old meaning: such a fix waits for review.
Labels recorded by a fix carry ``sha``, ``text``, ``doc``/``start``/``end``,
``when`` (UTC; ``SOURCE_DATE_EPOCH`` fixes it) and ``corpus`` (content hash).

A ``missing`` text that shares no passage with any chunk gets the chunks of its
own document ranked by its rarest words: the scan notes where each labelled
document lies in the file, and only that byte range is read again. A second
full pass (:mod:`.similarity`) runs only for labels with still no candidate
(``unknown`` ones, and ``missing`` ones without a document): it searches for the
rare words of the question or of the remembered text, bounded top-n per label.

Scores: 1.0 is the remembered text exactly. Text and span candidates score the
character overlap |remembered ∩ chunk| / |remembered ∪ chunk| (a chunk twice
as long as the text it holds scores 0.5); an edited version (``missing``)
scores its word overlap with the remembered text, a same-document chunk the
share of the text's rarest words it has; second-pass candidates score the
idf-weighted share of the query's rare words they contain.

Text is compared after :func:`.evidence.norm` (NFC, whitespace collapsed, nothing else
folded: ``Maßen`` is not ``Massen``, a pure case change is an edit for review): a re-chunking
that moves line breaks is ``ok``. A chunk holds a text only on token boundaries (``is 2.`` is
not in ``is 2.5.``: a number changed at the edge of a passage goes to review), and a label
whose document is known is fixed automatically only within it (a copy in another document is
a candidate in ``StaleEntry.elsewhere``, with a ``note``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compat import StrEnum
from ..corpus import Chunk
from ..errors import CorpusError, Problem
from .evidence import MAX_HOLDERS, MAX_PIECES, TOP_N, LabelState, _push
from .evidence import _split_norm as _split_norm  # imported by the tests
from .model import STATUSES, Cancelled, Fix, StaleEntry, StaleReport, Status
from .scanner import GAP, RARE_WORDS, Meter, Progress, Scanner, document_chunks
from .similarity import FEW_TERMS, WORD, similar
from .verdict import Query, Verdict, judge, prefer

if TYPE_CHECKING:
    from ..document import TestSetDocument

__all__ = [
    "FEW_TERMS",
    "GAP",
    "MAX_HOLDERS",
    "MAX_PIECES",
    "RARE_WORDS",
    "STATUSES",
    "TOP_N",
    "Cancelled",
    "Fix",
    "LabelState",
    "Query",
    "Scanner",
    "StaleEntry",
    "StaleReport",
    "Status",
    "StrEnum",
    "Verdict",
    "Meter",
    "document_chunks",
    "prefer",
    "check",
    "check_labels",
    "judge",
    "similar",
]

CaseRow = tuple[str, str, tuple[str, ...]]  # (case id, question, expected chunk ids)


def _case_rows(cases: Iterable[Any]) -> list[CaseRow]:
    rows: list[CaseRow] = []
    for c in cases:
        if isinstance(c, tuple):
            cid, question, expected = c
        else:
            cid, question, expected = c.id, c.question, c.expected
        rows.append((cid, question, tuple(expected)))
    return rows


def _label_states(rows: Sequence[CaseRow], labels: Mapping[str, Any]) -> dict[str, LabelState]:
    """One state per expected chunk id, in first-use order."""
    states: dict[str, LabelState] = {}
    for _, question, expected in rows:
        for x in expected:
            st = states.get(x)
            if st is None:
                st = states[x] = LabelState(x, labels.get(x))
            st.questions.append(question)
    return states


def _rank_own_document(
    scanner: Scanner, corpus: str | Path | Iterable[Chunk], late: list[LabelState]
) -> None:
    """Nothing holds or shares a passage of these texts: rank the chunks of their own
    document by the share of the text's rarest words they have."""
    docs = {st.doc for st in late if st.doc is not None}
    for doc, rows in document_chunks(corpus, docs, scanner.doc_ranges, scanner.doc_chunks):
        for st in late:
            if st.doc == doc and st.words:
                for seq_, cid_, words in rows:
                    k = len(st.words.intersection(words))
                    if k:
                        _push(st.nearby, (k / len(st.words), -seq_, cid_))


def _word_df(states: Iterable[LabelState]) -> dict[str, int]:
    """In how many remembered texts each word occurs (a sample of the corpus's rarity)."""
    df: dict[str, int] = {}
    for st in states:
        for w in set(WORD.findall(st.t or "")):
            df[w] = df.get(w, 0) + 1
    return df


def check_labels(
    cases: Iterable[Any],
    labels: Mapping[str, Any],
    corpus: str | Path | Iterable[Chunk],
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    top_n: int = TOP_N,
) -> StaleReport:
    """Judge every expected chunk of ``cases`` (``(id, question, expected ids)`` tuples or
    objects with those attributes) against ``corpus`` (a chunks file path, streamed, or an
    iterable of :class:`Chunk` that can be iterated twice), using ``labels`` (chunk id ->
    Label or dict). Raises :class:`CorpusError` for a bad chunks file."""
    rows = _case_rows(cases)
    states = _label_states(rows, labels)
    order = list(states.values())
    file = isinstance(corpus, (str, Path))
    scanner = Scanner(order, str(corpus) if file else None, in_memory=not file)
    scanner.scan(corpus, progress, cancel)

    report = StaleReport([], scanner.corpus_name, None, scanner.seq + 1)
    verdict = {st.id: judge(st, report._found) for st in order}
    late = [
        st for st in order if verdict[st.id].query == Query.TEXT and st.words and st.doc in scanner.doc_labels
    ]
    if late:
        _rank_own_document(scanner, corpus, late)
        for st in late:
            verdict[st.id] = judge(st, report._found)

    need: list[tuple[StaleEntry, str]] = []  # (entry, query text) for a second pass
    for case, question, expected in rows:
        for x in expected:
            v = verdict[x]
            e = StaleEntry(case, x, v.status, list(v.candidates), v.fix, v.expect)
            if v.elsewhere:
                e.elsewhere = dict(v.elsewhere)
                docs = ", ".join(sorted(set(e.elsewhere.values())))
                e.note = f"the text is also in another document ({docs}): never fixed there automatically"
            report.labels.append(e)
            if v.query == Query.QUESTION:
                need.append((e, question))
            elif v.query == Query.TEXT:
                need.append((e, states[x].t or ""))
    if need:
        similar(
            need,
            corpus,
            top_n,
            _word_df(scanner.textual),
            scanner.seq + 1,
            progress,
            cancel,
            few_terms=FEW_TERMS,
        )
    report.settle()  # which fixes are safe together (see settle), so the report says so
    return report


def check(
    doc: TestSetDocument,
    corpus_path: str | Path | Mapping[str, Chunk] | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    top_n: int = TOP_N,
) -> StaleReport:
    """Judge the labels of a :class:`~ragtriage.core.document.TestSetDocument` against
    ``corpus_path`` (a chunks file, streamed; or a loaded :class:`~ragtriage.core.corpus.Corpus`;
    default: the test set's own corpus). Raises :class:`CorpusError` (an ``InputError``)
    when there is no usable chunks file."""
    if isinstance(corpus_path, Mapping):  # an already loaded Corpus (id -> Chunk)
        report = check_labels(
            doc.cases, doc.labels, list(corpus_path.values()), progress=progress, cancel=cancel, top_n=top_n
        )
        report.corpus = getattr(corpus_path, "path", None)
        report.corpus_hash = getattr(corpus_path, "content_hash", None)
        return report
    path = Path(corpus_path) if corpus_path is not None else doc.corpus_path
    if path is None:
        raise CorpusError(
            Problem(
                str(doc.path),
                None,
                "no chunks file: the test set has no `corpus:` (give one with --corpus)",
                field="corpus",
            )
        )
    return check_labels(doc.cases, doc.labels, path, progress=progress, cancel=cancel, top_n=top_n)
