"""``ragtriage stale TESTSET [--corpus NEW_CHUNKS] [--fix] [--json PATH]`` (staleness.md).

Prints, per case with a stale label, each affected label with its status, its
candidates and scores, and whether the fix is automatic or needs a person; then
one count line. ``--fix`` applies the automatic fixes through the test-set
document (comments and untouched lines kept) and saves. Exit 0 when no stale
label remains, 1 when some do, 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.grouped import counts as grouped_counts
from ..core.grouped import split_unrecorded, unrecorded_message
from .run_cmd import visible

if TYPE_CHECKING:
    from rich.progress import TaskID

    from ..core.document import TestSetDocument
    from ..core.quote_check import QuoteReport
    from ..core.staleness import StaleEntry, StaleReport

ProgressCallback = Callable[[str, int, int], None]

BIG = 64 << 20  # a corpus this size or larger shows progress


def _progress(path: Path | None) -> tuple[ProgressCallback | None, Callable[[], None]]:
    """A progress callback: a rich bar on a terminal, a few plain lines otherwise; None for
    small corpora. Returns (callback, close)."""
    try:
        size = path.stat().st_size if path is not None else 0
    except OSError:
        size = 0
    if size < BIG:
        return None, lambda: None
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=Console(file=getattr(sys.stderr, "data", sys.stderr)),  # the bar's own escapes
            transient=True,
        )
        bar.start()
        tasks: dict[str, TaskID] = {}

        def cb(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                label = "reading chunks" if phase == "scan" else "finding similar chunks"
                tasks[phase] = bar.add_task(label, total=total)
            bar.update(tasks[phase], completed=done)

        return cb, bar.stop
    next_at: dict[str, float] = {}  # phase -> the share of the file that prints the next line

    def plain(phase: str, done: int, total: int) -> None:
        nxt = next_at.get(phase, 0.1)
        if total and done / total >= nxt:
            what = "read" if phase == "scan" else "similar chunks: read"
            print(
                f"stale: {what} {done / 1e6:.1f} of {total / 1e6:.1f} MB ({done * 100 // total}%)",  # as the bar
                file=sys.stderr,
                flush=True,
            )
            next_at[phase] = (int(done * 10 // total) + 1) / 10

    return plain, lambda: None


def _fmt_cands(e: StaleEntry) -> str:
    if not e.candidates:
        return "no candidate"
    parts = [
        f"{cid} ({score:.2f}, another document: {e.elsewhere[cid]})"
        if cid in e.elsewhere
        else f"{cid} ({score:.2f})"
        for cid, score in e.candidates
    ]
    if e.status in ("split",) or (e.status == "changed" and e.expect == "all"):
        return " + ".join(parts) + ", expect: all"
    return ", ".join(parts)


def _what(e: StaleEntry) -> str:
    if e.fixed:
        return "fixed"
    if e.fix == "auto":
        return "auto"
    return "review"


def _by_case(report: StaleReport, doc: TestSetDocument) -> tuple[dict[str, list[StaleEntry]], list[str]]:
    """The stale entries to list per case, and the lines that say the unrecorded labels at
    once (one fix records them all, however many cases share them)."""
    by_case: dict[str, list[StaleEntry]] = {}
    unrecorded, stale = split_unrecorded(e for e in report.labels if e.stale)
    recorded = [e for e in stale if e.status == "unrecorded"]  # fixed by --fix: one line too
    for e in stale:
        if e.status != "unrecorded":
            by_case.setdefault(e.case, []).append(e)
    lines = []
    if unrecorded:
        lines += ["", unrecorded_message(unrecorded, doc.path)]
    if recorded:
        n_labels, n_cases = grouped_counts(recorded)
        lines += [
            "",
            f"✓ {n_labels:,} label(s) recorded (expected by {n_cases:,} case(s)): unrecorded before",
        ]
    return by_case, lines


def render(
    report: StaleReport,
    doc: TestSetDocument,
    corpus: str,
    fixed: int | None = None,
    edit_corpus: str | None = None,
) -> str:
    """The human-readable report. ``edit_corpus``: the chunks file the review hint must name
    (the one checked against, when the test set's ``corpus:`` names another)."""
    lines: list[str] = []
    n_chunks = f"{report.chunks:,} chunks"
    lines.append(f"{doc.path}: labels against {corpus} ({n_chunks})")
    by_case, grouped = _by_case(report, doc)
    if by_case:
        lines.append("")
    wid = max((len(e.label) for es in by_case.values() for e in es), default=0)
    lines_of = doc.case_lines()
    for case, es in by_case.items():
        case_line = lines_of.get(case)
        where = f"{doc.path}:{case_line}: " if case_line else ""
        lines.append(f"{where}case {case!r}")
        for e in es:
            arrow = "→" if e.candidates else " "
            mark = "✓" if e.fixed else "✗"
            lines.append(f"  {mark} {e.label:<{wid}}  {e.status:<10} {arrow} {_fmt_cands(e)}  [{_what(e)}]")
            if e.note and not e.fixed:
                lines.append(f"    {'':<{wid}}  ({e.note})")
    lines += grouped
    counts = report.counts
    total = sum(counts.values())
    line = f"{total} label{'s' if total != 1 else ''}: " + ", ".join(f"{n} {s}" for s, n in counts.items())
    remaining = report.remaining
    auto = [e for e in report.labels if e.fix == "auto" and not e.fixed]
    review = [e for e in remaining if e.fix != "auto"]
    if not report.stale:
        line += " (no stale label)"
    elif fixed is not None:
        line += f"; {fixed} fixed and saved, {len(review)} need review"
    else:
        line += f"; {len(auto)} fixable automatically (--fix), {len(review)} need review"
    if review:
        hint = f"ragtriage edit {shlex.quote(str(doc.path))}"
        if edit_corpus is not None:
            hint += f" --corpus {shlex.quote(edit_corpus)}"
        line += f" ({hint})"
    unrelated = unrelated_note(report)
    if unrelated:
        lines.append("")
        lines.append(f"note: {unrelated}")
    lines.append("")
    lines.append(line)
    return "\n".join(lines) + "\n"


def unrelated_note(report: StaleReport) -> str | None:
    """When the corpus looks unrelated to the labels — not one labelled id is in it and not
    one remembered text was found — say so, with the likely causes (issue 20): a report of
    "all missing" then means the wrong chunks file, not a re-chunking to review."""
    entries = report.labels
    if len(entries) < 3:
        return None
    gone = [e for e in entries if e.status in ("missing", "unknown")]
    found = [e for e in entries if e.status not in ("missing", "unknown")]
    if found or not gone:
        return None
    return (
        f"none of the {len(entries)} labels' ids is in this corpus and none of their texts was found: "
        "it looks unrelated to the test set (another collection, or chunk ids made anew in every "
        "process, such as LlamaIndex's default uuid4 node ids): check --corpus / `corpus:` before "
        "reviewing the candidates"
    )


def main(args: argparse.Namespace) -> int:
    from ..core import staleness
    from ..core.document import TestSetDocument
    from ..core.errors import CorpusError, Problem

    if args.json:
        from ..core.gate import check_writable

        check_writable(args.json, "--json")  # before reading a big corpus, not after
    doc = TestSetDocument.load(args.testset)
    corpus = Path(args.corpus) if args.corpus else doc.corpus_path
    if args.json:
        from .outputs import guard_outputs

        guard_outputs({"--json": args.json}, [doc.path, doc.corpus_path, args.corpus])
    if corpus is None:
        raise CorpusError(
            Problem(
                str(doc.path),
                None,
                "no chunks file: the test set has no `corpus:` (give the new chunks with --corpus)",
                field="corpus",
            )
        )
    from ..core.corpus import require_readable

    require_readable(corpus, doc if not args.corpus else None)  # unreadable is exit 2, as in validate
    cb, close = _progress(corpus)
    try:
        report = staleness.check(doc, corpus, progress=cb)
        quotes = _check_quotes(doc, corpus, cb)
    finally:
        close()
    fixed = None
    moved_to = None
    if args.fix:
        with doc.batch():
            fixed = report.apply_fixes(doc)
            if (
                args.corpus
                and doc.corpus_path is not None
                and corpus.resolve() != doc.corpus_path.resolve()
                or args.corpus
                and doc.corpus_path is None
            ):
                # the labels now speak of the new chunking: so must the test set
                moved_to = os.path.relpath(corpus.resolve(), doc.path.resolve().parent)
                doc.update_settings(corpus=Path(moved_to).as_posix())
        if fixed or moved_to:
            doc.save()
    # the app opened without --corpus would check against the test set's own corpus: a false
    # all-clear when the labels were judged against another chunks file
    own = doc.corpus_path
    other = args.corpus and (own is None or own.resolve() != corpus.resolve())
    out = render(report, doc, str(args.corpus or corpus), fixed, str(args.corpus) if other else None)
    sys.stdout.write(out + render_quotes(quotes, doc))
    if moved_to:
        print(f"{doc.path}: corpus: now {Path(moved_to).as_posix()} (the chunking the fixed labels point at)")
    if args.json:
        import orjson

        from ..core.gate import write_report

        data = report.to_dict()
        if quotes is not None and quotes.entries:
            q = quotes.to_dict()
            data.update(quotes=q["quotes"], quote_counts=q["counts"], disagreements=q["disagreements"])
        write_report(args.json, orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 1 if report.remaining or (quotes is not None and quotes.unresolved) else 0


def _check_quotes(doc: TestSetDocument, corpus: Path, cb: ProgressCallback | None) -> QuoteReport | None:
    """The test set's quotes against ``corpus`` (None when no case quotes)."""
    if not any(c.evidence for c in doc.cases):
        return None
    from ..core.quote_check import check_quotes

    return check_quotes(doc.cases, corpus, progress=cb)


def render_quotes(quotes: QuoteReport | None, doc: TestSetDocument) -> str:
    """The quotes that no longer resolve (edited or deleted text) or resolve in several
    documents, each with its candidates: a person picks; nothing is guessed."""
    if quotes is None:
        return ""
    lines_of = doc.case_lines()
    out = [""]
    for e in quotes.unresolved:
        r = e.resolution
        line = lines_of.get(e.case)
        where = f"{doc.path}:{line}: " if line else ""
        cands = (
            ", ".join(f"{i} ({sc:.2f}{', ' + d if d else ''})" for i, sc, d in r.candidates) or "no candidate"
        )
        out.append(f"{where}case {e.case!r}: ✗ evidence {visible(repr(r.quote))}")
        out.append(f"  {r.status:<10} → {visible(cands)}  [review]")
    for cid, msg in quotes.disagreements:
        line = lines_of.get(cid)
        out.append(f"{doc.path}:{line}: case {cid!r}: warning: {visible(msg)}" if line else visible(msg))
    counts = ", ".join(f"{n} {s}" for s, n in quotes.counts.items())
    n = len(quotes.entries)
    bad = len(quotes.unresolved)
    tail = (
        "every one resolves"
        if not bad
        else f"{bad} need review (ragtriage edit {shlex.quote(str(doc.path))})"
    )
    out.append(f"{n} quote{'s' if n != 1 else ''}: {counts}; {tail}")
    return "\n".join(out) + "\n"
