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
    a = read_run(args.run_a)
    b = read_run(args.run_b)
    d = diff_runs(a, b)
    sys.stdout.write(render_text(d))
    if args.markdown:
        write_report(args.markdown, render_markdown(d))
    if args.json:
        write_report(args.json, orjson.dumps(d.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    if args.fail_on_regression and d.regressed:
        return Exit.FAILED
    return Exit.OK
