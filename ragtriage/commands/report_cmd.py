"""``ragtriage report RUN [--baseline RUN] -o report.html``: one self-contained HTML file
(no network, opens from disk): the summary with intervals, reasons, slices, the k
sweep, the comparison with its verdict, the judge's confusion and κ, and every
failing case with its question, answer, ranks and chunks, filterable by reason and tag."""

from __future__ import annotations

import sys

from ..core.errors import InputError, Problem
from ..core.reports import write_report
from .outputs import guard_outputs


def comparison_options(args):
    from ..core.comparison import Options

    if not 0.0 < args.alpha < 1.0:
        raise InputError(Problem("--alpha", None, f"{args.alpha:g}: a level is between 0 and 1, e.g. 0.05"))
    margin = args.margin
    if margin is not None and not 0.0 <= margin < 1.0:
        raise InputError(
            Problem("--margin", None, f"{margin:g}: a margin is a rate between 0 and 1, e.g. 0.02")
        )
    return Options(
        alpha=args.alpha, margin=margin or 0.0, conservative=args.conservative, cluster_by=args.cluster
    )


def metrics_of(specs: list[str], default: tuple[str, ...] = ("pass",)) -> list[str]:
    """``--metric`` values checked: a per-case measure, optionally @k."""
    from ..core.outcomes import COMPARABLE, measure_of

    out = []
    for spec in specs or default:
        try:
            name, _ = measure_of(spec)
        except ValueError as e:
            raise InputError(Problem("--metric", None, str(e))) from None
        if name not in COMPARABLE:
            raise InputError(Problem("--metric", None, f"{spec}: one of {', '.join(COMPARABLE)}"))
        out.append(spec)
    return list(dict.fromkeys(out))


def rescored_baseline(doc, base, note: list[str]):
    """The baseline's records judged against the current test set (no new call)."""
    from ..core.gate import judge

    res = judge(doc, base, [], run_label=str(base.path))
    note += [f"baseline: {n}" for n in res.notes]
    return res.records


def main(args) -> int:
    from ..core import htmlreport
    from ..core.comparison import between_runs
    from ..core.document import TestSetDocument
    from ..core.gate import judge
    from ..core.runfile import read_run, resolve_testset

    guard_outputs({"-o": args.output}, [args.run, args.baseline, args.testset])
    opts = comparison_options(args)
    metrics = metrics_of(args.metric)
    run = read_run(args.run)
    for w in run.warnings:
        print(f"warning: {w}", file=sys.stderr)
    doc = TestSetDocument.load(resolve_testset(run.path, run.meta, args.testset))
    guard_outputs({"-o": args.output}, [doc.path, doc.corpus_path])
    result = judge(doc, run, [], run_label=str(args.run))
    comparison = None
    if args.baseline:
        base = read_run(args.baseline)
        notes: list[str] = []
        base_records = rescored_baseline(doc, base, notes)
        comparison = between_runs(
            base_records, base.meta, result.records, run.meta, doc=doc, metrics=metrics, options=opts
        )
        result.notes += notes
    data = htmlreport.gather(
        doc, result, cluster_by=opts.cluster_by, comparison=comparison, baseline=args.baseline
    )
    write_report(args.output, htmlreport.render(data))
    print(f"report: {args.output}")
    return 0
