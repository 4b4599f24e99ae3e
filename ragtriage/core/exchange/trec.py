"""``trec``: qrels (``qid 0 docid rel``, or BEIR's 3-column TSV) for the test set, and a
TREC run file (``qid Q0 docid rank score tag``) for a run's rankings."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import Problem
from ..schema import Case
from .common import Imported, TextMatcher, dropped, validate

DUPLICATE_PREFIX = "ragtriage:duplicate:"
QUESTION_PLACEHOLDER = "(question missing: TREC qrels carry none; write it here)"


_SPACE = re.compile(r"\s+")
_ESCAPE = re.compile(r"[\s%]")  # what an id cannot hold as a TREC column, and the escape itself
_UNESCAPE = re.compile(r"(?:%[0-9A-F]{2})+")


def trec_id(text: object) -> str:
    """An id as one TREC column, escaped reversibly: whitespace inside it would split the
    line into more columns (trec_eval and ir_measures refuse those), so each whitespace
    character, and ``%`` itself, is written as ``%XX`` (its UTF-8 bytes): ``a b`` -> ``a%20b``,
    never the id of another chunk (``a_b`` stays ``a_b``; a real ``a%20b`` is ``a%2520b``).
    :func:`untrec_id` reads it back. Ids without either character are written as they are."""
    s = text if isinstance(text, str) else str(text)
    if not _ESCAPE.search(s):
        return s
    return _ESCAPE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), s)


def untrec_id(column: str) -> str:
    """The id :func:`trec_id` wrote as ``column``."""
    if "%" not in column:
        return column
    return _UNESCAPE.sub(
        lambda m: bytes.fromhex(m.group().replace("%", "")).decode("utf-8", "replace"), column
    )


def export_qrels(cases: Sequence[Case], level: str = "chunk") -> tuple[str, list[str]]:
    """Qrels from the expected chunks, or with ``level="doc"`` from the expected documents
    (``expected_docs``; a document name may hold whitespace: escaped as :func:`trec_id` says)."""
    lines = []
    doc = level == "doc"
    for c in cases:  # (escaped as the run is, so a qrel and its ranked id stay equal)
        for cid in c.expected_docs if doc else c.expected:
            lines.append(f"{trec_id(c.id)} 0 {trec_id(cid)} 1")
    checks = {
        "unanswerable cases": lambda c: c.unanswerable,
        "unlabelled cases": lambda c: c.unlabelled,
        "questions": lambda c: True,
    }
    if doc:
        checks["cases without expected_docs (chunk or quote gold only)"] = lambda c: (
            not c.unanswerable and not c.expected_docs
        )
    else:
        checks["expected_docs (use --level doc for document qrels)"] = lambda c: c.expected_docs
        checks["evidence quotes (resolved by ragtriage, not by trec_eval)"] = lambda c: (
            c.evidence and not c.expected
        )
    return "".join(line + "\n" for line in lines), dropped("TREC qrels", cases, checks)


NO_DOC_PREFIX = "ragtriage:no-doc:"


def export_trec_run(
    run_cases: Iterable[Mapping[str, Any]], tag: str = "ragtriage", level: str = "chunk"
) -> str:
    """A TREC run file (``qid Q0 docid rank score tag``) from a run's case records.

    trec_eval re-sorts by score; the scores written are the rank reversed
    (depth, depth-1, …, 1), so its order is the order ragtriage scored. A chunk
    repeated in a ranking counts once, at its first position, and the later slot
    keeps its place: it is written as a never-relevant placeholder id. A ranked id
    with whitespace (a system may return one; no test set holds one) or ``%`` is escaped
    reversibly (:func:`trec_id`: ``a b`` -> ``a%20b``): it is never written as the id of
    another chunk, so trec_eval ranks what ragtriage ranked."""
    tag = re.sub(r"\s+", "_", tag) or "ragtriage"
    lines = []
    for rec in run_cases:
        qid = trec_id(rec.get("id"))
        ranking = rec.get("ranking") or []
        if level == "doc":  # the document ranking ragtriage scored; a chunk without doc: a place
            ranking = [d if isinstance(d, str) else f"{NO_DOC_PREFIX}{i + 1}"
                       for i, d in enumerate(rec.get("doc_ranking") or [])]  # fmt: skip
        if not _plain(ranking):
            ranking = [trec_id(d) for d in ranking]
        seen = set()
        depth = len(ranking)
        for i, docid in enumerate(ranking):
            if docid in seen:
                docid = f"{DUPLICATE_PREFIX}{i + 1}"
            seen.add(docid)
            lines.append(f"{qid} Q0 {docid} {i + 1} {depth - i} {tag}")
    return "".join(line + "\n" for line in lines)


def _plain(ranking: Sequence[object]) -> bool:
    """Every id a string without whitespace or ``%`` (one regex scan over the whole ranking)."""
    try:
        return not _ESCAPE.search("".join(ranking))  # type: ignore[arg-type]  # TypeError: not all str
    except TypeError:
        return False


def _grade(text: str) -> float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def import_trec_docs(text: str, name: str, problems: list[Problem], matcher: TextMatcher) -> Imported:
    """Document qrels (``--level doc``): each relevant docid is an expected document."""
    return import_trec(text, name, problems, matcher, level="doc")


def import_trec(
    text: str, name: str, problems: list[Problem], matcher: TextMatcher, level: str = "chunk"
) -> Imported:
    res = Imported()
    rel: dict[str, list[str]] = {}  # in file order
    first_line: dict[str, int] = {}
    zero = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) == 3:  # BEIR-style TSV: query-id corpus-id score (with a header)
            if lineno == 1 or parts[2].lower() == "score":
                continue
            qid, docid, grade = parts
        elif len(parts) == 4:
            qid, _iteration, docid, grade = parts
        else:
            problems.append(
                Problem(
                    name,
                    lineno,
                    f"expected 4 columns `qid 0 docid relevance` (or 3: qid docid relevance), got {len(parts)}",
                )
            )
            continue
        g = _grade(grade)
        if g is None:
            problems.append(Problem(name, lineno, f"relevance {grade!r} is not a number", field="relevance"))
            continue
        if qid not in rel:
            rel[qid] = []
            first_line[qid] = lineno
        if g <= 0:
            zero += 1
        else:
            if level == "doc":  # a document name may hold whitespace: export escaped it
                docid = untrec_id(docid)
            if docid not in rel[qid]:
                rel[qid].append(docid)
    unans = 0
    for qid, expected in rel.items():
        gold = "expected_docs" if level == "doc" else "expected"
        fields: dict[str, Any] = {"id": qid, "question": QUESTION_PLACEHOLDER, gold: expected}
        if not expected:
            fields["unanswerable"] = True  # judged, and nothing relevant
            unans += 1
        case = validate(fields, name, first_line[qid], problems)
        if case is not None:
            res.cases.append(case)
    if res.cases:
        res.notes.append(
            f"questions: TREC qrels carry none; {len(res.cases)} case(s) got a placeholder question to fill in"
        )
    if zero:
        res.notes.append(f"{zero} judgement(s) with relevance 0: not expected chunks")
    if unans:
        res.notes.append(f"{unans} query id(s) with only non-relevant judgements: imported as unanswerable")
    return res
