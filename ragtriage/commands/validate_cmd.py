"""``ragtriage validate TESTSET``: schema and label check, one located line per problem."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import orjson

from ..cli import Exit
from ..core.corpus import load_corpus
from ..core.document import TestSetDocument
from ..core.errors import Problem
from ..core.grouped import split_unrecorded, unrecorded_message
from .outputs import guard_outputs


def _drafts(doc: TestSetDocument, lines: dict[str, int]) -> list[Problem]:
    return [
        Problem(
            str(doc.path),
            lines[c.id],
            "no expected chunk (a draft: label it, or set unanswerable: true)",
            case=c.id,
            field="expected",
        )
        for c in doc.cases
        if c.unlabelled
    ]


def _missing_chunks(doc: TestSetDocument, lines: dict[str, int], corpus, corpus_path: Path) -> list[Problem]:
    return [
        Problem(
            str(doc.path),
            lines[c.id],
            f"expected chunk {cid!r} is not in {corpus_path.name}",
            case=c.id,
            field="expected",
            severity="warning",
        )
        for c in doc.cases
        for cid in c.expected
        if cid not in corpus
    ]


def _stale_labels(
    doc: TestSetDocument, lines: dict[str, int], corpus_path: Path, warnings: list[Problem]
) -> list[Problem]:
    """A warning per stale label, except an unknown label already warned about."""
    from ..core import staleness

    out = []
    hint = "ragtriage stale"
    if doc.corpus_path is None or corpus_path.resolve() != doc.corpus_path.resolve():  # validate --corpus
        hint += f" {shlex.quote(str(doc.path))} --corpus {shlex.quote(str(corpus_path))}"
    unrecorded, stale = split_unrecorded(staleness.check(doc, corpus_path).stale)
    if unrecorded:  # one warning, however many cases: a new set has one fix for them all
        msg = unrecorded_message(unrecorded, doc.path)
        out.append(Problem(str(doc.path), None, msg, field="labels", severity="warning"))
    for e in stale:
        cid, label, status = _entry_fields(e)
        if status == "unknown" and any(w.case == cid and repr(label) in w.message for w in warnings):
            continue
        out.append(
            Problem(
                str(doc.path),
                lines.get(cid) if cid is not None else None,
                f"label {label!r} is stale in {corpus_path} ({status}; see `{hint}`)",
                case=cid,
                field="expected",
                severity="warning",
            )
        )
    return out


def _count(k: int, word: str) -> str:
    return f"{k} {word}{'s' * (k != 1)}"


def main(args) -> int:
    if args.json:
        from ..core.reports import check_writable

        check_writable(args.json, "--json")  # a located error (exit 2), not a traceback after the work
    doc = TestSetDocument.load(args.testset)
    corpus_path = Path(args.corpus) if args.corpus else doc.corpus_path
    guard_outputs({"--json": args.json}, [doc.path, corpus_path])
    name = str(doc.path)
    lines = doc.case_lines()
    errors = _drafts(doc, lines)
    warnings: list[Problem] = []
    if corpus_path is None:
        print(f"{name}: no corpus named (add `corpus: chunks.jsonl`); chunk ids not checked", file=sys.stderr)
    elif not corpus_path.exists():
        errors.append(Problem(name, None, f"corpus file not found: {corpus_path}", field="corpus"))
    else:
        corpus = load_corpus(corpus_path)  # bad lines raise: exit 2 with their locations
        warnings += _missing_chunks(doc, lines, corpus, corpus_path)
        warnings += _stale_labels(doc, lines, corpus_path, warnings)
    for p in errors + warnings:
        print(str(p), file=sys.stderr)
    n = len(doc.cases)
    unans = sum(c.unanswerable for c in doc.cases)
    print(
        f"{name}: {_count(n, 'case')} ({unans} unanswerable), {_count(len(errors), 'error')}, "
        f"{_count(len(warnings), 'warning')}"
    )
    if args.json:
        from ..core.reports import write_report

        write_report(
            args.json,
            orjson.dumps(
                {"testset": name, "cases": n, "problems": [p.to_dict() for p in errors + warnings]},
                option=orjson.OPT_INDENT_2,
            ).decode(),
        )
    if errors:
        return Exit.BAD_INPUT
    return Exit.FAILED if warnings else Exit.OK


def _entry_fields(e):
    if isinstance(e, dict):
        return e.get("case"), e.get("label"), e.get("status")
    return getattr(e, "case", None), getattr(e, "label", None), getattr(e, "status", None)
