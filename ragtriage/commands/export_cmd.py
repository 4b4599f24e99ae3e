"""``ragtriage export TESTSET --format F [-o PATH]``: the test set in another tool's format."""

from __future__ import annotations

import sys
from pathlib import Path

from ..cli import Exit
from ..core.document import TestSetDocument
from ..core.errors import InputError, Problem
from ..core.exchange import export_testset, export_trec_run
from ..core.reports import write_report
from ..core.runfile import read_run
from ..core.secrets import data_stream
from .outputs import guard_outputs, testset_inputs


def run_path_for(qrels_path: str) -> Path:
    """Where the TREC run goes beside the qrels: ``x.qrels`` -> ``x.run``, else ``PATH.run``."""
    p = Path(qrels_path)
    return p.with_suffix(".run") if p.suffix == ".qrels" else p.with_name(p.name + ".run")


def _refuse_conflicts(args) -> None:
    k = getattr(args, "k", None)
    if k is not None and not (args.run and args.format == "ragas"):
        raise InputError(Problem("--k", None, "only with --format ragas --run: the cut of each ranking"))
    if k is not None and k < 1:
        raise InputError(Problem("--k", None, "must be 1 or more"))
    if getattr(args, "csv_raw", False) and args.format != "csv":
        raise InputError(Problem("--csv-raw", None, "only with --format csv"))
    if args.run and args.format not in ("trec", "ragas"):
        raise InputError(
            Problem(
                "--run",
                None,
                "only with --format trec (a TREC run file from the run's rankings) "
                "or ragas (samples with what the system retrieved and answered)",
            )
        )
    if getattr(args, "level", "chunk") != "chunk" and args.format != "trec":
        raise InputError(Problem("--level", None, "only with --format trec (document qrels)"))
    if args.run and args.format == "trec" and not args.output:
        raise InputError(
            Problem(
                "--run", None, "needs -o PATH: the qrels go to PATH and the run beside it (PATH with .run)"
            )
        )


def main(args) -> int:
    _refuse_conflicts(args)
    outputs = {"-o": args.output}
    if args.run and args.format == "trec":
        outputs["-o (its .run beside it)"] = str(run_path_for(args.output))
    guard_outputs(outputs, [args.testset, args.run])
    doc = TestSetDocument.load(args.testset)
    guard_outputs(outputs, testset_inputs(doc))
    run = None
    if args.run:
        run = read_run(args.run)
        known = {c.id for c in doc.cases}
        run_cases = [r for r in run.cases if r["id"] in known]
    run_text = None
    if run is not None and args.format == "trec":
        run_text = export_trec_run(
            run_cases, tag=str(run.meta.get("system") or "ragtriage"), level=getattr(args, "level", "chunk")
        )
    by_id = {r["id"]: r for r in run_cases} if run is not None and args.format == "ragas" else None
    k = getattr(args, "k", None)
    if by_id is not None and k is None:
        k = run.meta.get("k") if run is not None else None
    text, notes = export_testset(
        doc,
        args.format,
        run=by_id,
        k=k,
        level=getattr(args, "level", "chunk"),
        csv_raw=getattr(args, "csv_raw", False),
    )
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
        out = data_stream(sys.stdout)  # the export itself: data, written as it is
        out.write(text)
        out.flush()
    return Exit.OK
