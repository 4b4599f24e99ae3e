"""``ragtriage validate TESTSET``: schema and label check, one located line per problem."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from ..cli import Exit
from ..core.corpus import load_corpus
from ..core.document import TestSetDocument
from ..core.errors import Problem


def main(args) -> int:
    if args.json:
        from ..core.gate import check_writable

        check_writable(args.json, "--json")  # a located error (exit 2), not a traceback after the work
    doc = TestSetDocument.load(args.testset)
    name = str(doc.path)
    errors: list[Problem] = []
    warnings: list[Problem] = []
    lines = doc.case_lines()
    for c in doc.cases:
        if c.unlabelled:
            errors.append(
                Problem(
                    name,
                    lines[c.id],
                    "no expected chunk (a draft: label it, or set unanswerable: true)",
                    case=c.id,
                    field="expected",
                )
            )
    corpus_path = Path(args.corpus) if args.corpus else doc.corpus_path
    corpus = None
    if corpus_path is None:
        print(f"{name}: no corpus named (add `corpus: chunks.jsonl`); chunk ids not checked", file=sys.stderr)
    elif not corpus_path.exists():
        errors.append(Problem(name, None, f"corpus file not found: {corpus_path}", field="corpus"))
    else:
        corpus = load_corpus(corpus_path)  # bad lines raise: exit 2 with their locations
        for c in doc.cases:
            for cid in c.expected:
                if cid not in corpus:
                    warnings.append(
                        Problem(
                            name,
                            lines[c.id],
                            f"expected chunk {cid!r} is not in {corpus_path.name}",
                            case=c.id,
                            field="expected",
                            severity="warning",
                        )
                    )
    stale_entries = []
    if corpus is not None:
        try:
            from ..core import staleness
        except ImportError:  # pragma: no cover - staleness ships with the package
            staleness = None
        if staleness is not None and hasattr(staleness, "check"):
            report = staleness.check(doc, corpus_path)
            for e in report.stale:
                cid, label, status = _entry_fields(e)
                if status in ("unknown",) and any(
                    w.case == cid and repr(label) in w.message for w in warnings
                ):
                    continue
                stale_entries.append(e)
                warnings.append(
                    Problem(
                        name,
                        lines.get(cid),
                        f"label {label!r} is stale ({status}; see `ragtriage stale`)",
                        case=cid,
                        field="expected",
                        severity="warning",
                    )
                )
    for p in errors + warnings:
        print(str(p), file=sys.stderr)
    n = len(doc.cases)
    unans = sum(c.unanswerable for c in doc.cases)

    def count(k: int, word: str) -> str:
        return f"{k} {word}{'s' * (k != 1)}"

    print(
        f"{name}: {count(n, 'case')} ({unans} unanswerable), {count(len(errors), 'error')}, "
        f"{count(len(warnings), 'warning')}"
    )
    if args.json:
        from ..core.gate import write_report

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
