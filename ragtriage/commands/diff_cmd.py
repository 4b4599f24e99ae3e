"""``ragtriage diff RUN_A RUN_B``: which cases were fixed, regressed or changed, and metric deltas."""

from __future__ import annotations

import sys

import orjson

from ..core.gate import check_writable, write_report
from ..core.rundiff import diff_runs, load_run, render_markdown, render_text


def main(args) -> int:
    if args.markdown:
        check_writable(args.markdown, "--markdown")
    if args.json:
        check_writable(args.json, "--json")
    a = load_run(args.run_a)
    b = load_run(args.run_b)
    d = diff_runs(a, b)
    sys.stdout.write(render_text(d))
    if args.markdown:
        write_report(args.markdown, render_markdown(d))
    if args.json:
        write_report(args.json, orjson.dumps(d.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    if args.fail_on_regression and d.regressed:
        return 1
    return 0
