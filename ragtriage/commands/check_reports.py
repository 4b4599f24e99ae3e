"""Where ``ragtriage check`` says what it decided: the terminal, ``--junit``,
``--markdown`` (cut to ``--markdown-max-chars``), ``--json`` and, under GitHub Actions,
``::error`` annotations. When the check cannot run (exit 2), the markdown and the
annotations carry the located errors, so the step summary is never empty exactly when
the test set is broken."""

from __future__ import annotations

import os
import sys

import orjson

from ..core.reports import write_report

GITHUB_SUMMARY_MAX = 60_000  # under GitHub's 65,536-character limit for a comment


def github_enabled(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return os.environ.get("GITHUB_ACTIONS") == "true"


def markdown_limit(path: str | None, given: int | None) -> int | None:
    """``--markdown-max-chars``, else 60,000 when the markdown goes to $GITHUB_STEP_SUMMARY."""
    if given is not None:
        return given
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if path and summary and os.path.abspath(summary) == os.path.abspath(path):
        return GITHUB_SUMMARY_MAX
    return None


class Reports:
    def __init__(self, args):
        self.args = args
        self.doc = None
        self.github = github_enabled(getattr(args, "github", None))
        self.max_chars = markdown_limit(args.markdown, getattr(args, "markdown_max_chars", None))

    def write(self, result) -> None:
        from ..core.gate import render_junit, render_markdown, render_text

        args = self.args
        sys.stdout.write(render_text(result))
        if self.github:
            from ..core.github import check_annotations

            text = self.doc.text if self.doc is not None else None
            for line in check_annotations(result, str(args.testset), text):
                print(line)
        if args.junit:
            write_report(args.junit, render_junit(result, testset_path=args.testset))
        if args.markdown:
            write_report(args.markdown, render_markdown(result, self.max_chars))
        if args.json:
            write_report(
                args.json, orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"
            )

    def errors(self, problems) -> None:
        """Why the check could not run, in the markdown and as annotations (exit 2)."""
        from ..core.gate import _code, _md

        if self.github:
            from ..core.github import problem_annotations

            for line in problem_annotations(problems):
                print(line)
        if not self.args.markdown:
            return
        rows = [
            f"## ❌ ragtriage check could not run: {_code(self.args.testset)}",
            "",
            "Bad input: nothing was measured. Each problem names its file and line.",
            "",
            "| where | problem |",
            "|---|---|",
        ]
        for p in problems[:200]:
            where = p.file if p.line is None else f"{p.file}:{p.line}"
            what = ": ".join(x for x in (f"case {p.case!r}" if p.case else "", p.field or "", p.message) if x)
            rows.append(f"| {_code(where)} | {_md(what)} |")
        if len(problems) > 200:
            rows.append(f"| … | {len(problems) - 200} more |")
        try:
            write_report(self.args.markdown, "\n".join(rows) + "\n")
        except Exception:  # the report of a failure must not hide the failure itself
            pass
