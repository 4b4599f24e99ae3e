"""``ragtriage diff RUN_A RUN_B``: which cases were fixed, regressed or changed, and metric deltas."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from ..cli import Exit
from ..core.reports import write_report
from ..core.rundiff import diff_runs, render_markdown, render_text
from ..core.runfile import read_run
from .outputs import guard_outputs


def _testset(args, b, opened):
    """The test set behind run B (for its tags and its corpus's documents), or None when
    it cannot be found and was not named (the comparison then says it is unclustered);
    the one the rescoring read when it is in ``opened``."""
    from ..core.document import TestSetDocument
    from ..core.errors import InputError
    from ..core.runfile import resolve_testset

    try:
        path = resolve_testset(b.path, b.meta, args.testset)
    except InputError:
        if args.testset:
            raise
        return None
    got = opened.get(Path(path).resolve())
    return got[0] if got is not None else TestSetDocument.load(path)


def _comparison(args, a, b, opened):
    from ..core.comparison import between_runs
    from .report_cmd import comparison_options, metrics_of

    opts = comparison_options(args)
    return between_runs(
        a.cases,
        a.meta,
        b.cases,
        b.meta,
        doc=_testset(args, b, opened),
        metrics=metrics_of(args.metric),
        options=opts,
    )


def main(args) -> int:
    import gc

    # two whole runs held and rescored: the cyclic GC frees nothing here and its passes over
    # every record grew faster than the cases (bench_check: 2.10x run at 10k, 3.19x at 50k)
    was = gc.isenabled()
    gc.disable()
    try:
        return _diff(args)
    finally:
        if was:
            gc.enable()


def _diff(args) -> int:
    from ..core.comparison_text import render_markdown as comparison_markdown
    from ..core.comparison_text import render_text as comparison_text
    from ..core.stats import REGRESSION

    guard_outputs({"--markdown": args.markdown, "--json": args.json}, [args.run_a, args.run_b])
    from ..core.rerun import rescored_run

    opened: dict = {}  # the test set (and its corpus) read once when both runs name it
    a, note_a = rescored_run(read_run(args.run_a), opened)  # as check judges them: the stored
    b, note_b = rescored_run(read_run(args.run_b), opened)  # reasons are recomputed from each run's fields
    d = diff_runs(a, b)
    d.notes[:0] = [n for n in (note_a, note_b) if n]
    rc = _comparison(args, a, b, opened)
    sys.stdout.write(render_text(d))
    sys.stdout.write("\n" + comparison_text(rc))
    if args.markdown:
        write_report(args.markdown, render_markdown(d) + "\n" + comparison_markdown(rc))
    if args.json:
        out = d.to_dict() | {"comparison": rc.to_dict()}
        write_report(args.json, orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    if getattr(args, "exiting", False):  # the process ends now: both runs need not be freed one by one
        from .run_cmd import leave_allocated

        leave_allocated(a, b, d, rc, opened)
    if args.fail_on_regression:
        failed = bool(d.regressed) if args.any_flip else rc.verdict == REGRESSION
        return Exit.FAILED if failed else Exit.OK
    return Exit.OK
