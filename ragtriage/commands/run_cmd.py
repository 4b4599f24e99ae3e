"""``ragtriage run TESTSET``: ask every case, write the run file, print the summary
and the per-case table (topic, rank, found, supported, correct, reason, why)."""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Collection
from pathlib import Path

import orjson

from ..cli import Exit
from ..core.errors import InputError, Problem
from ..core.records import CaseRecord, RunMeta, Summary
from ..core.reports import refuse_input_as_output
from .outputs import guard_outputs, guard_run_file, system_file, testset_inputs


def default_out(testset: str) -> Path:
    """``runs/<stem>-<UTC stamp>.jsonl`` (``core.runpaths``: the app's runs go there too)."""
    from ..core.runpaths import default_run_path

    return default_run_path(testset)


def _width(s: str) -> int:
    return sum(
        2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1 for ch in s
    )


def visible(s: str) -> str:
    """``s`` safe for a terminal: control characters (an ESC from a server or a test set
    would drive the terminal) and format characters such as the bidi controls (printed
    raw they reorder what is shown) written as ``\\x1b`` / ``\\u202e``."""
    if s.isprintable():
        return s
    return "".join(
        ch
        if ch.isprintable() or ch in "\t\n"
        else (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        for ch in s
    )


def _cut(s: str, n: int) -> str:
    s = visible(" ".join(str(s).split()))
    if _width(s) <= n:
        return s
    out = ""
    for ch in s:
        if _width(out + ch) > n - 1:
            break
        out += ch
    return out + "…"


def table(
    headers: list[str],
    rows: list[list[str]],
    right: Collection[int] = frozenset(),
    limits: dict | None = None,
) -> str:
    limits = limits or {}
    rows = [[_cut(c, limits.get(i, 10**6)) for i, c in enumerate(r)] for r in rows]
    widths = [max([_width(h)] + [_width(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def fmt(cells):
        out = []
        for i, c in enumerate(cells):
            pad = " " * (widths[i] - _width(c))
            out.append(pad + c if i in right else c + pad)
        return "  ".join(out).rstrip()

    lines = [fmt(headers), fmt(["─" * w for w in widths])]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def num(v, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def yes_no(v) -> str:
    if v is None:
        return "—"
    return "✓ yes" if v else "✗ no"


def _iv(intervals: dict | None, name: str) -> str:
    iv = (intervals or {}).get(name)
    return "" if iv is None else f"[{iv.lo:.3f}, {iv.hi:.3f}]"


def _doc_rows(s: Summary, intervals: dict | None) -> list[list[str]]:
    """The document rates (k counts documents), when a case has document gold."""
    if "doc_hit" not in s:
        return []
    k, n = s["k"], s["with_docs"]
    found = "" if s["doc_hit"] is None else f"{round(s['doc_hit'] * n)}/{n} with document gold"
    return [
        [f"document found (doc_hit@{k})", num(s["doc_hit"]), _iv(intervals, "doc_hit"), found],
        [f"doc_recall@{k}", num(s["doc_recall"]), _iv(intervals, "doc_recall"), ""],
        [f"doc_mrr@{k}", num(s["doc_mrr"]), _iv(intervals, "doc_mrr"), ""],
        [
            f"doc_precision@{k}",
            num(s["doc_precision"]),
            _iv(intervals, "doc_precision"),
            "k counts documents",
        ],
    ]


def summary_text(s: Summary, meta: RunMeta, intervals: dict | None = None) -> str:
    """The summary table; ``intervals`` (metric -> 95 % interval) adds their column."""
    k = s["k"]
    ans = s.get("with_chunks", s["answerable"])
    found = "" if s["hit"] is None else f"  {round(s['hit'] * ans)}/{ans} answerable"
    rows = [
        [f"found (hit@{k})", num(s["hit"]), _iv(intervals, "hit"), found.strip()],
        [f"recall@{k}", num(s["recall"]), _iv(intervals, "recall"), ""],
        [f"mrr@{k}", num(s["mrr"]), _iv(intervals, "mrr"), ""],
        [f"precision@{k}", num(s["precision"]), _iv(intervals, "precision"), ""],
        *_doc_rows(s, intervals),
        ["supported", num(s["supported"]), _iv(intervals, "supported"), "abstentions count as supported"],
        [
            "faithfulness",
            num(s["faithfulness"]),
            _iv(intervals, "faithfulness"),
            f"of {s['answered']} answered",
        ],
        ["correct (accuracy)", num(s["accuracy"]), _iv(intervals, "accuracy"), ""],
        ["coverage", num(s["coverage"]), _iv(intervals, "coverage"), "answered / all"],
        [
            "unknown abstention",
            num(s["unknown_abstention"]),
            _iv(intervals, "unknown_abstention"),
            "unanswerable cases that declined",
        ],
        ["prompt tokens", "—" if s["tokens"] is None else str(s["tokens"]), "", ""],
    ]
    if s.get("with_chunks") == 0:  # a set labelled by documents alone: no chunk rates to show
        rows = rows[4:]
    heads = ["metric", "value", "95 % interval", ""]
    if not intervals:
        rows = [r[:2] + r[3:] for r in rows]
        heads = ["metric", "value", ""]
    head = (
        f"{meta.get('testset')} · {meta.get('system')} · k={k} · {s['n']} cases"
        + (f" · {s['errors']} errors" if s["errors"] else "")
        + (f" · {s['unlabelled']} unlabelled" if s["unlabelled"] else "")
    )
    reasons = " · ".join(f"{r} {c}" for r, c in s["reasons"].items()) or "—"
    return visible(head) + "\n\n" + table(heads, rows, right={1}) + "\n\nreasons: " + reasons


def explain(c: CaseRecord, k: int | None = None) -> str:
    """The `why` shown to people: the grounding reason, else what to look at for the reason."""
    if c.get("why"):
        return c["why"]
    reason = c.get("reason")
    exp = c.get("expected") or []
    if reason == "retrieval-miss" and not exp and "doc_hit" in c:
        from ..core.docrank import doc_miss

        return doc_miss(c, k)
    if reason == "retrieval-miss":
        ranking = c.get("ranking") or []
        missing = [e for e in exp if e not in ranking[: k or 10**9]]
        where = f" (first at rank {c['rank']})" if c.get("rank") else ""
        if not ranking:
            where = " (the system returned no chunk)"
        return (
            f"{', '.join(missing) or ', '.join(exp)} not in the top {k}{where}"
            if k
            else "expected chunk not found"
        )
    if reason == "unlabelled":
        return "no expected chunk yet"
    if reason == "wrong-answer":
        return "answer lacks what the case requires"
    if reason == "unnecessary-abstention":
        return "declined though the chunk was found"
    if reason == "unanswerable-answered":
        return "answered; the documents have no answer"
    return ""


def cases_text(cases: list[CaseRecord], k: int | None = None) -> str:
    rows = []
    for c in cases:
        unans = c.get("unanswerable")
        rank = "—" if unans or not c.get("expected") else (str(c["rank"]) if c["rank"] else "not found")
        found = "—" if c.get("hit") is None else yes_no(c["hit"])
        if not c.get("expected") and "doc_hit" in c:  # document gold alone: the document's rank
            rank = f"doc {c['doc_rank']}" if c.get("doc_rank") else "doc not found"
            found = yes_no(c["doc_hit"])
        rows.append(
            [
                c.get("topic") or c["id"],
                rank,
                found,
                yes_no(c.get("supported")),
                yes_no(c.get("correct")),
                c["reason"],
                explain(c, k),
            ]
        )
    return table(
        ["topic", "rank", "found", "supported", "correct", "reason", "why"], rows, limits={0: 28, 6: 60}
    )


def run_options(args) -> dict:
    from ..core.systems import set_max_response_mb

    set_max_response_mb(getattr(args, "max_response_mb", 16.0))
    return dict(
        concurrency=args.concurrency,
        timeout=args.timeout,
        retries=args.retries,
        retriever=args.retriever,
        api_key_env=args.api_key_env,
        judge=getattr(args, "judge", None),
        judge_key_env=getattr(args, "judge_key_env", "OPENAI_API_KEY"),
        cite=getattr(args, "cite", None),
    )


def judge_text(s: Summary, records: list[CaseRecord]) -> str:
    """The judge's line under the summary (judge.md), or "" without a judge."""
    if "judge_calls" not in s:
        return ""
    from ..core.judge import disagreements

    n = sum(1 for r in records if disagreements(r))
    errors = sum(1 for r in records if "error" in (r.get("judge") or {}))
    return (
        f"judge: supported {num(s['judge_supported'])} · correct {num(s['judge_correct'])} · "
        f"{s['judge_calls']} calls · {s['judge_tokens']} tokens"
        + (f" · {errors} verdict errors" if errors else "")
        + f" · {n} disagree with the deterministic result (triage: judge disagrees)"
    )


def dry_run_judge(p: dict) -> str:
    if "judge" not in p:
        return ""
    if p.get("judge_exact"):
        skipped = [
            f"{p[key]} {what}"
            for key, what in (
                ("judge_abstained", "abstentions"),
                ("judge_cached", "cached verdicts"),
                ("judge_errors", "cases without a result"),
            )
            if p.get(key)
        ]
        return (
            f"\njudge {p['judge']}: {p['judge_calls']} calls"
            + (f" (not asked: {', '.join(skipped)})" if skipped else "")
            + f", about {p['judge_tokens']} tokens"
        )
    return (
        f"\njudge {p['judge']}: at most {p['judge_calls']} calls (fewer when cached or abstained: the "
        f"answers are not known before the run), about {p['judge_tokens']} tokens"
    )


def print_warnings(warnings) -> None:
    for w in warnings:
        text = visible(str(w))
        print(f"warning: {text}" if getattr(w, "severity", "") == "warning" else text, file=sys.stderr)


def leave_allocated(*objects) -> None:
    """Let the process end without freeing ``objects`` one by one.

    A 100k-case run holds millions of small objects (records, answers, chunks);
    freeing them at exit costs about half a second and gives nothing back to a
    process that is ending. They are put in a reference cycle and frozen out of
    the cyclic GC (``gc.freeze``), so neither reference counting nor the final
    collection visits them. ``atexit`` handlers (the test set's reopen cache)
    still run; output is flushed as usual. Only for the process's own command
    line, never for a caller of ``cli.main(argv)``."""
    import gc

    from ..core import grounding

    hold = [*objects, grounding._source_numbers]
    hold.append(hold)
    gc.freeze()


def resume_command(args, out, meta: RunMeta) -> str:
    """The command that continues an interrupted run, as typed: the same system and k
    (resume refuses another k) and retriever, every argument shell-quoted."""
    from ..core.runpaths import resume_command as command

    system = meta.get("system") or args.system if args.system != "builtin" else "builtin"
    k = meta.get("k") or args.k if args.k is not None else None
    extra: list[str] = []
    for option, values in (("--ids", getattr(args, "ids", None)), ("--tag", getattr(args, "tag", None))):
        for v in values or ():
            extra += [option, v]
    if getattr(args, "shard", None):
        extra += ["--shard", args.shard]
    if getattr(args, "executor", "process") != "process":
        extra += ["--executor", args.executor]
    if getattr(args, "ray_address", None):
        extra += ["--ray-address", args.ray_address]
    return command(args.testset, out, system, k, getattr(args, "retriever", None), extra)


def _stopped(args, out, run, n: int) -> int:
    """What a run stopped by ctrl-c or SIGTERM says: what it kept, the command that goes on."""
    from ..core.stop import stopped_by

    how = stopped_by()
    print(
        f"{'stopped (' + how + ')' if how else 'interrupted'}: {len(run.cases)} of {n} cases kept in "
        f"{out} (no summary yet); continue with: {resume_command(args, out, run.meta)}",
        file=sys.stderr,
    )
    return Exit.TERMINATED if how == "SIGTERM" else Exit.INTERRUPTED


def main(args) -> int:
    import gc

    # A short-lived process holding a whole run: a cyclic collection over 100k
    # records would cost a second and free nothing (no cycles are made).
    gc.disable()
    from ..core.evaluate import evaluate, load_testset
    from ..core.select import select, selection

    doc = load_testset(args.testset)
    sel = selection(args.ids, args.tag, args.shard)
    select(doc.cases, sel)  # an unknown id or tag, or an empty shard: exit 2 before anything runs
    if args.dry_run:
        return dry_run(args, doc)
    if args.resume and not args.out:
        raise InputError(Problem("--resume", None, "needs --out RUN.jsonl, the run file to continue"))
    from .run_stats import check_repeat

    check_repeat(args)
    out = Path(args.out) if args.out else default_out(args.testset)
    if args.json:
        jp = Path(args.json)
        if jp.parent and not jp.parent.exists():
            raise InputError(Problem(str(jp), None, "folder does not exist", field="--json"))
    inputs = [*testset_inputs(doc), system_file(args.system)]
    # not writable, one of the inputs, a person's file, an earlier run: say so now, not after the run
    guard_run_file(out, "--out", inputs, force=args.force, resume=args.resume, numbered=not args.out)
    guard_outputs({"--json": args.json}, inputs)
    refuse_input_as_output(args.json, "--json", out)
    progress = True  # a bar on a terminal, a few plain lines otherwise
    held: list = []
    run = evaluate(
        doc,
        args.system,
        args.k,
        out=out,
        resume=args.resume,
        progress=progress,
        retain=held,
        exclusive=not args.out,  # a default name is never shared by two runs started at once
        new_file=bool(args.out) and not args.force,  # nor is a given one, unless --force
        # the table shows the top k, the file has the rest (repeats rewrite the file from the records)
        keep_ranking=None if args.repeat > 1 else args.k or doc.settings.k,
        selection=sel,
        executor=args.executor,
        ray_address=args.ray_address,
        **run_options(args),
    )
    out = run.path or out
    if getattr(args, "exiting", False):
        leave_allocated(run, doc, held)
    print_warnings(run.warnings)
    if run.interrupted:
        return _stopped(args, out, run, len(select(doc.cases, sel)))
    second = None
    if args.repeat > 1:
        from .run_stats import repeat_run

        again = dict(run_options(args), selection=sel, executor=args.executor, ray_address=args.ray_address)
        run, second = repeat_run(args, doc, run, out, evaluate, again)
        if run.interrupted:
            return Exit.INTERRUPTED
    print_run(args, doc, run, second, out)
    failed = failures_text(run.cases)
    if failed:  # even with --quiet: a run that asked nothing successfully must not look fine
        print(failed, file=sys.stderr)
    if args.json:
        from ..core.reports import write_report

        write_report(
            args.json,
            orjson.dumps(run.summary, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode(),
        )  # atomic: never a half-written summary (formats.md §5 exactly: intervals are in check --json)
        print(f"summary: {args.json}")
    if run.cases and all(c.get("reason") == "error" for c in run.cases):
        return Exit.FAILED
    return Exit.OK


def dry_run(args, doc) -> int:
    """``run --dry-run``: what the run would cost, spending nothing."""
    from ..core.plan import plan

    p = plan(doc, args.system, [args.k or doc.settings.k], **run_options(args))
    where = "external calls" if p["external"] else "local answers"
    print(
        f"dry run: {p['cases']} cases through {p['system']} at k={args.k or doc.settings.k}: "
        f"{p['calls']} {where}, about {p['tokens']} prompt tokens (characters / 4); nothing was spent"
        + dry_run_judge(p)
    )
    return Exit.OK


def print_run(args, doc, run, second, out: Path) -> None:
    """The summary with its intervals, repeats, slices, the judge line and the per-case table."""
    from .run_stats import intervals_of, repeats_text, slices_text

    intervals, labels, how = intervals_of(doc, run.cases, args.cluster)
    print(summary_text(run.summary, run.meta, intervals))
    print(f"(95 % intervals: {how})")
    if second is not None:
        print(repeats_text(run, second, labels))
    if args.by:
        text, _ = slices_text(doc, run.cases, args.by, labels)
        print("\n" + text)
    if "judge_calls" in run.summary:
        print(judge_text(run.summary, run.cases))
    if not args.quiet:
        print()
        print(cases_text(run.cases, run.summary["k"]))
    print(f"\nrun file: {out}")


def failures_text(cases: list[CaseRecord]) -> str:
    """How many cases the system failed on and the first failure, or "" when none failed."""
    errors = [c for c in cases if c.get("reason") == "error"]
    if not errors:
        return ""
    first = f"the first, case {errors[0]['id']!r}: {visible(str(errors[0].get('error') or 'no cause given'))}"
    if len(errors) == len(cases):
        return f"every case failed ({len(errors)} of {len(cases)}): {first}"
    return f"{len(errors)} of {len(cases)} cases failed (reason error); {first}"
