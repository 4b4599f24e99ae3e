"""``ragtriage check TESTSET``: the CI gate. Exit 0 when every bar holds and no label
is stale, 1 when one is missed (or labels are stale, or the run is incomplete), 2 on
bad input."""

from __future__ import annotations

import sys

import orjson

from ..cli import Exit
from ..core.document import TestSetDocument
from ..core.errors import InputError, Problem
from ..core.gate import collect_bars, judge, render_junit, render_markdown, render_text
from ..core.reports import write_report
from ..core.runfile import read_run
from .outputs import guard_outputs, system_file, testset_inputs


def _stale_entries(doc) -> tuple[list, str | None]:
    """Stale labels against the test set's corpus; (entries, note when not checked)."""
    corpus = doc.corpus_path
    if corpus is None:
        return [], "no corpus in the test set: stale labels not checked"
    if not corpus.exists():
        raise InputError(Problem(str(doc.path), None, f"corpus file not found: {corpus}", field="corpus"))
    from ..core import staleness

    report = staleness.check(doc, corpus)
    return list(report.stale), None


def _make_run(args, doc):
    from ..core.evaluate import evaluate

    return evaluate(
        doc,
        system=args.system,
        k=args.k,
        out=args.out,
        concurrency=args.concurrency,
        timeout=args.timeout,
        retries=args.retries,
        retriever=args.retriever,
        api_key_env=args.api_key_env,
        progress=sys.stderr.isatty(),
    )


def _dry_run(args, doc) -> int:
    from ..core.evaluate import plan

    k = args.k or doc.settings.k
    p = plan(
        doc, args.system, [k], timeout=args.timeout, retriever=args.retriever, api_key_env=args.api_key_env
    )
    where = "external calls" if p["external"] else "local answers"
    print(
        f"dry run: {p['cases']} cases through {p['system']} at k={k}: {p['calls']} {where}, "
        f"about {p['tokens']} prompt tokens (characters / 4); nothing was spent"
    )
    return Exit.OK


def _refuse_conflicts(args) -> None:
    """Options that cannot go together, each a located exit 2."""
    if args.run and args.k is not None:
        raise InputError(
            Problem(
                "--k",
                None,
                "the run file fixes k; for a retrieval bar at another k "
                "write it as METRIC@K, e.g. --min hit@5=0.9",
            )
        )
    if args.run and args.out:
        raise InputError(
            Problem("--out", None, "keeps the run the check makes; with --run there is none to keep")
        )
    if args.run and args.system != "builtin":
        raise InputError(Problem("--system", None, "give either --run RUN or --system SPEC, not both"))
    if args.dry_run and args.run:
        raise InputError(Problem("--dry-run", None, "nothing to spend with --run: the run is already made"))


def _print_warnings(warnings) -> None:
    for w in warnings or ():
        print(f"warning: {w}" if getattr(w, "severity", "") == "warning" else str(w), file=sys.stderr)


def _the_run(args, doc):
    """(run, its label for the reports, chunk_text when the stored one may be out of date);
    run None when a run made here was interrupted."""
    if args.run:
        run = read_run(args.run)
        _print_warnings(run.warnings)
        chunk_text = None
        if run.meta.get("testset_hash") != getattr(doc, "content_hash", None):
            from ..core.systems import Context

            chunk_text = Context(doc).chunk_text
        return run, str(args.run), chunk_text
    made = _make_run(args, doc)
    _print_warnings(made.warnings)
    if made.interrupted:
        return None, None, None
    return made, str(args.out) if args.out else None, None


def main(args) -> int:
    outputs = {"--junit": args.junit, "--markdown": args.markdown, "--json": args.json, "--out": args.out}
    guard_outputs(outputs, [args.testset, args.run, system_file(args.system)])
    doc = TestSetDocument.load(args.testset)
    guard_outputs(outputs, testset_inputs(doc))
    bars = collect_bars(doc.settings.gates, args.min)
    _refuse_conflicts(args)
    if args.dry_run:
        return _dry_run(args, doc)
    stale, note = _stale_entries(doc)
    run, label, chunk_text = _the_run(args, doc)
    if run is None:
        print("interrupted: the check was not judged", file=sys.stderr)
        return Exit.INTERRUPTED
    result = judge(doc, run, bars, stale=stale, run_label=label, chunk_text=chunk_text)
    if note:
        result.notes.append(note)
    sys.stdout.write(render_text(result))
    if args.junit:
        write_report(args.junit, render_junit(result, testset_path=args.testset))
    if args.markdown:
        write_report(args.markdown, render_markdown(result))
    if args.json:
        write_report(args.json, orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    return Exit.OK if result.passed else Exit.FAILED
