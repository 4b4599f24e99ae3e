"""``ragtriage diff RUN_A RUN_B``: which cases were fixed, regressed or changed, and metric deltas."""

from __future__ import annotations

import sys

import orjson

from ..cli import Exit
from ..core.reports import write_report
from ..core.rundiff import diff_runs, render_markdown, render_text
from ..core.runfile import read_run
from .outputs import guard_outputs


def main(args) -> int:
    guard_outputs({"--markdown": args.markdown, "--json": args.json}, [args.run_a, args.run_b])
    from ..core.rerun import rescored_run

    a, note_a = rescored_run(read_run(args.run_a))  # as check judges them: the stored reasons
    b, note_b = rescored_run(read_run(args.run_b))  # are recomputed from each run's own fields
    d = diff_runs(a, b)
    d.notes[:0] = [n for n in (note_a, note_b) if n]
    sys.stdout.write(render_text(d))
    if args.markdown:
        write_report(args.markdown, render_markdown(d))
    if args.json:
        write_report(args.json, orjson.dumps(d.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    if args.fail_on_regression and d.regressed:
        return Exit.FAILED
    return Exit.OK
