"""``ragtriage export TESTSET --format F [-o PATH]``: the test set in another tool's format."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.document import TestSetDocument
from ..core.errors import InputError, Problem
from ..core.exchange import export_testset, export_trec_run
from ..core.gate import check_writable, write_report


def run_path_for(qrels_path: str) -> Path:
    """Where the TREC run goes beside the qrels: ``x.qrels`` -> ``x.run``, else ``PATH.run``."""
    p = Path(qrels_path)
    return p.with_suffix(".run") if p.suffix == ".qrels" else p.with_name(p.name + ".run")


def main(args) -> int:
    if args.output:
        check_writable(args.output, "-o")
    if args.run and args.format != "trec":
        raise InputError(
            Problem("--run", None, "only with --format trec (a TREC run file from the run's rankings)")
        )
    if args.run and not args.output:
        raise InputError(
            Problem(
                "--run", None, "needs -o PATH: the qrels go to PATH and the run beside it (PATH with .run)"
            )
        )
    doc = TestSetDocument.load(args.testset)
    run_text = None
    if args.run:
        from ..core.rundiff import load_run

        run = load_run(args.run)
        known = {c.id for c in doc.cases}
        run_text = export_trec_run(
            [r for r in run.cases if r["id"] in known], tag=str(run.meta.get("system") or "ragtriage")
        )
    text, notes = export_testset(doc, args.format)
    for n in notes:
        print(f"note: {n}", file=sys.stderr)
    if args.output:
        write_report(args.output, text)
        msg = f"wrote {len(doc.cases)} case(s) to {args.output} ({args.format})"
        if run_text is not None:
            rp = run_path_for(args.output)
            write_report(rp, run_text)
            msg += f" and the run's rankings to {rp}"
        print(msg, file=sys.stderr)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0
