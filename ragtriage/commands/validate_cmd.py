"""``ragtriage validate TESTSET``: schema and label check, one located line per problem."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import orjson

from ..cli import Exit
from ..core.corpus import load_corpus, require_readable
from ..core.document import TestSetDocument
from ..core.errors import Problem
from ..core.grouped import split_unrecorded, unrecorded_message
from .outputs import guard_outputs
from .run_cmd import visible


def _drafts(doc: TestSetDocument, lines: dict[str, int]) -> list[Problem]:
    return [
        Problem(
            str(doc.path),
            lines[c.id],
            "no gold (a draft: give it `expected` chunks, `expected_docs` or `evidence` quotes, "
            "or set unanswerable: true)",
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


SHOWN = 20  # resolved quotes listed on the terminal (--json lists every one)


def _quotes(
    doc: TestSetDocument, lines: dict[str, int], corpus, corpus_path: Path
) -> tuple[list[Problem], list[str], list[dict]]:
    """(a warning per quote that does not resolve and per disagreement with `expected`, the
    lines that say where the quotes resolve, every quote for --json)."""
    from ..core.quote_check import check_quotes

    report = check_quotes(doc.cases, corpus)
    if not report.entries:
        return [], [], []
    name = str(doc.path)
    warnings = []
    for e in report.unresolved:
        r = e.resolution
        cands = ", ".join(f"{i} ({d})" if d else i for i, _s, d in r.candidates[:5]) or "no candidate"
        warnings.append(
            Problem(
                name,
                lines.get(e.case),
                f"evidence {r.quote!r} is {_STATUS[r.status]} in {corpus_path.name} "
                f"(candidates: {cands}; see `ragtriage stale {shlex.quote(name)}`)",
                case=e.case,
                field="evidence",
                severity="warning",
            )  # fmt: skip
        )
    for cid, msg in report.disagreements:
        warnings.append(Problem(name, lines.get(cid), msg, case=cid, field="evidence", severity="warning"))
    counts = ", ".join(f"{n} {s}" for s, n in report.counts.items())
    out = [f"{name}: {_count(len(report.entries), 'quote')} in `evidence` ({counts})"]
    done = [e for e in report.entries if e.resolution.resolved]
    for e in done[:SHOWN]:
        r = e.resolution
        join = " + " if r.status == "split" else ", "
        where = join.join(f"{c} ({d})" if d else c for c, d in zip(r.chunks, r.docs))
        out.append(
            f"  {e.case}: {_short(r.quote)} → {where}{' (split: expect all)' if r.status == 'split' else ''}"
        )
    if len(done) > SHOWN:
        out.append(f"  … {len(done) - SHOWN} more resolved (--json lists every one)")
    return warnings, out, [e.to_dict() for e in report.entries]


_STATUS = {
    "missing": "found nowhere",
    "ambiguous": "in several documents",
    "elsewhere": "only in documents `expected_docs` does not name",
}


def _short(q: str, n: int = 48) -> str:
    q = " ".join(q.split())
    return repr(q if len(q) <= n else q[: n - 1] + "…")


def _documents(doc: TestSetDocument, lines: dict[str, int], corpus, corpus_path: Path) -> list[Problem]:
    """A warning per expected document no chunk of the corpus names."""
    if not any(c.expected_docs for c in doc.cases):
        return []
    docs = {ch.doc for ch in corpus.values() if isinstance(ch.doc, str)}
    out = []
    for c in doc.cases:
        for d in c.expected_docs:
            if d not in docs:
                hint = " (no chunk of it has a `doc`)" if not docs else ""
                out.append(Problem(str(doc.path), lines.get(c.id), f"expected document {d!r} is not the `doc` of "
                                   f"any chunk in {corpus_path.name}{hint}", case=c.id, field="expected_docs",
                                   severity="warning"))  # fmt: skip
    return out


def _normalisation_twins(doc: TestSetDocument, lines: dict[str, int]) -> list[Problem]:
    """Case ids that differ only by Unicode normalisation (NFC ``café`` and NFD ``café``):
    distinct ids that every message prints identically. A warning on the later one,
    with both written as code points so the difference shows."""
    import unicodedata

    seen: dict[str, str] = {}
    out = []
    for c in doc.cases:
        key = unicodedata.normalize("NFC", c.id)
        first = seen.setdefault(key, c.id)
        if first != c.id:
            out.append(
                Problem(
                    str(doc.path),
                    lines.get(c.id),
                    f"differs from {ascii(first)} (line {lines.get(first)}) only by Unicode normalisation: "
                    f"{ascii(c.id)} and {ascii(first)} print the same but are two ids (rename one, or "
                    "write both the same way, NFC)",
                    case=c.id,
                    field="id",
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
    resolved: list[str] = []
    quotes: list[dict] = []
    warnings: list[Problem] = _normalisation_twins(doc, lines)
    if corpus_path is None:
        print(f"{name}: no corpus named (add `corpus: chunks.jsonl`); chunk ids not checked", file=sys.stderr)
    else:
        require_readable(corpus_path, doc if not args.corpus else None)  # the same words everywhere
        corpus = load_corpus(corpus_path)  # bad lines raise: exit 2 with their locations
        warnings += _missing_chunks(doc, lines, corpus, corpus_path)
        warnings += _stale_labels(doc, lines, corpus_path, warnings)
        warnings += _documents(doc, lines, corpus, corpus_path)
        quote_warnings, resolved, quotes = _quotes(doc, lines, corpus, corpus_path)
        warnings += quote_warnings
    for p in errors + warnings:
        print(str(p), file=sys.stderr)
    for line in resolved:
        print(visible(line))
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
                {
                    "testset": name,
                    "cases": n,
                    "problems": [p.to_dict() for p in errors + warnings],
                    **({"quotes": quotes} if quotes else {}),
                },
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
