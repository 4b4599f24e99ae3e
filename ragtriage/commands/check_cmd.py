"""``ragtriage check TESTSET``: the CI gate. Exit 0 when every bar holds and no label
is stale, 1 when one is missed (or labels are stale, or the run is incomplete), 2 on
bad input."""

from __future__ import annotations

import sys

from ..cli import Exit
from ..core.document import TestSetDocument
from ..core.errors import InputError, Problem
from ..core.gate import collect_bars, judge
from ..core.reports import KINDS, refuse_input_as_output, write_report
from ..core.runfile import read_run
from ..core.schema import JUDGE_THRESHOLDS
from .check_reports import Reports
from .outputs import guard_outputs, guard_run_file, system_file, testset_inputs
from .run_cmd import dry_run_judge


def _stale_entries(doc) -> tuple[list, str | None, str | None]:
    """Stale labels against the test set's corpus; (entries, note when not checked, the
    chunks file checked against)."""
    corpus = doc.corpus_path
    if corpus is None:
        return [], "no corpus in the test set: stale labels not checked", None
    from ..core import staleness
    from ..core.corpus import require_readable

    require_readable(corpus, doc)

    report = staleness.check(doc, corpus)
    return list(report.stale), None, str(corpus)


def _make_run(args, doc, bars, sel):
    from ..core.evaluate import evaluate

    k = args.k or doc.settings.k
    deepest = max([k, *(b.k for b in bars if b.k is not None)])
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
        judge=args.judge,
        judge_key_env=args.judge_key_env,
        new_file=bool(args.out) and not args.force,
        # every bar's k is measured on what is kept, the run file has all; a comparison or the
        # HTML report may look deeper: they keep the records whole
        keep_ranking=None if args.baseline or args.html else deepest,
        selection=sel,
        executor=getattr(args, "executor", "process"),
        ray_address=getattr(args, "ray_address", None),
    )


def _refuse_outputs_on_each_other(outputs: dict) -> None:
    """Two reports to one file: the second would replace the first."""
    given = [(opt, p) for opt, p in outputs.items() if p]
    for i, (opt, p) in enumerate(given):
        refuse_input_as_output(p, opt, *(q for _o, q in given[:i]), may_replace=KINDS)


def _dry_run(args, doc) -> int:
    from ..core.plan import plan

    k = args.k or doc.settings.k
    p = plan(
        doc,
        args.system,
        [k],
        timeout=args.timeout,
        retriever=args.retriever,
        api_key_env=args.api_key_env,
        judge=args.judge,
        judge_key_env=args.judge_key_env,
    )
    where = "external calls" if p["external"] else "local answers"
    print(
        f"dry run: {p['cases']} cases through {p['system']} at k={k}: {p['calls']} {where}, "
        f"about {p['tokens']} prompt tokens (characters / 4); nothing was spent" + dry_run_judge(p)
    )
    return Exit.OK


def _few_grades_first(doc, judge_bars, min_grades: int) -> None:
    """Refuse up front when there are fewer graded answers than the bar needs at all."""
    from ..core.judge import grades_path, latest, read_grades

    grades, problems = read_grades([grades_path(doc.path)])
    if any(p.severity == "error" for p in problems):  # a grades file that could not be read at all
        raise InputError([p for p in problems if p.severity == "error"])
    graded = len({case for case, _ in latest(grades)})
    if graded < min_grades:
        raise InputError(
            [
                Problem(
                    "--min" if b.source == "--min" else str(doc.path),
                    None,
                    f"{b.metric}: refused: {graded} graded case(s) in {grades_path(doc.path).name}; a bar "
                    f"on a judge metric needs the judge's κ on ≥ {min_grades} (grade answers with g in triage)",
                )
                for b in judge_bars
            ]
        )


def _judge_bars(doc, bars) -> tuple[list, float, int]:
    """The bars on a judge metric, and the judge's thresholds (judge.md)."""
    from ..core.judge import JUDGE_METRICS, thresholds

    kappa, n = thresholds(doc.settings.gates, doc.settings)
    return [b for b in bars if b.name in JUDGE_METRICS], kappa, n


def _refuse_unproven_judge(doc, run, judge_bars, min_kappa: float, min_grades: int) -> None:
    """Exit 2 unless the judge behind every judge bar agrees with the grades well enough."""
    from ..core.judge import calibrate, grades_path, latest, read_grades, refuse_unproven

    if judge_bars and not any("judge" in r for r in run.cases):
        raise InputError(
            [
                Problem(
                    "--min" if b.source == "--min" else str(doc.path),
                    None,
                    f"{b.metric}: the run has no judge verdicts (run with --judge openai:BASE_URL#MODEL "
                    "or set judge: in the test set)",
                )
                for b in judge_bars
            ]
        )
    grades, warnings = read_grades([grades_path(doc.path)])
    if any(w.severity == "error" for w in warnings):
        raise InputError([w for w in warnings if w.severity == "error"])
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    report = calibrate(run.cases, latest(grades))
    for b in judge_bars:
        refuse_unproven(
            [b.name], report, min_kappa, min_grades, "--min" if b.source == "--min" else str(doc.path)
        )


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
    if args.run and args.run_anyway:
        raise InputError(
            Problem("--run-anyway", None, "runs the system despite stale labels; with --run nothing is run")
        )
    if args.dry_run and args.run:
        raise InputError(Problem("--dry-run", None, "nothing to spend with --run: the run is already made"))


def _refuse_judge_on_a_made_run(args, run) -> None:
    """``--judge`` asks a judge about the answers of the run the check makes (judge.md); a
    given run is already made, so the option would be silently ignored: exit 2 instead."""
    judged = sum(1 for c in run.cases if "judge" in c)
    if judged:
        why = f"{args.run} already holds the judge's verdicts ({judged} cases); the check reads them"
    else:
        why = f"{args.run} holds no judge verdicts; make it with `ragtriage run TESTSET --judge SPEC`"
    raise InputError(Problem("--judge", None, f"judges the run the check makes, not a given --run: {why}"))


def _print_warnings(warnings) -> None:
    for w in warnings or ():
        print(f"warning: {w}" if getattr(w, "severity", "") == "warning" else str(w), file=sys.stderr)


def _given_run(args):
    """The run of ``--run`` (several: the shards of one run, joined)."""
    from ..core.merge import join_runs

    runs = [read_run(p) for p in args.run]
    return join_runs(runs), ", ".join(map(str, args.run))


def _the_run(args, doc, bars, sel):
    """(run, its label for the reports, chunk_text when the stored one may be out of date);
    run None when a run made here was interrupted."""
    if args.run:
        run, label = _given_run(args)
        if args.judge:
            _refuse_judge_on_a_made_run(args, run)
        _print_warnings(run.warnings)
        chunk_text = None
        cite = getattr(args, "cite", None) or doc.settings.cite
        if run.meta.get("testset_hash") != getattr(doc, "content_hash", None) or cite != run.meta.get(
            "cite", "inline"
        ):
            from ..core.systems import Context

            chunk_text = Context(doc).lookup  # (rescored: the corpus says which ids it holds)
        return run, label, chunk_text
    made = _make_run(args, doc, bars, sel)
    _print_warnings(made.warnings)
    from .run_cmd import failures_text

    if failures_text(made.cases):  # the system failed on cases: say how, not only a missed bar
        print(failures_text(made.cases), file=sys.stderr)
    if made.interrupted:
        return None, None, None
    return made, str(made.path or args.out) if args.out else None, None


def _stopped_on_stale(doc, bars, stale, stale_corpus, note):
    """The check's result when stale labels stop it before the system is asked."""
    from ..core.gate import CheckResult

    k = doc.settings.k
    notes = [
        f"{len(stale)} label(s) are stale: the system was not asked and no bar was measured "
        "(fix them with `ragtriage stale TESTSET --fix`, or pass --run-anyway)"
    ]
    if note:
        notes.append(note)
    return CheckResult(
        testset=str(doc.path),
        run=None,
        k=k,
        records=[],
        summary={},
        bars=[],
        stale=list(stale),
        notes=notes,
        case_lines=_lines(doc),
        stale_corpus=stale_corpus,
        not_run=len(bars),
    )


def _lines(doc) -> dict[str, int]:
    try:
        return dict(doc.case_lines())
    except Exception:
        return {}


def _selection(args):
    from ..core.select import selection

    return selection(args.ids, args.tag, args.shard)


def _compare_with_baseline(args, doc, run, result) -> None:
    """``--baseline RUN``: the paired comparison of the gated measures (Holm across them),
    the baseline judged against the current test set like the run (no new call)."""
    from ..core.comparison import between_runs
    from ..core.outcomes import COMPARABLE
    from .report_cmd import comparison_options, metrics_of, rescored_baseline

    opts = comparison_options(args)
    gated = [b.bar.metric for b in result.bars if b.bar.name in COMPARABLE]
    metrics = metrics_of(args.metric, tuple(dict.fromkeys(gated)) or ("pass",))
    base = read_run(args.baseline)
    _print_warnings(base.warnings)
    records = rescored_baseline(doc, base, result.notes)
    result.comparison = between_runs(
        records, base.meta, result.records, run.meta, doc=doc, metrics=metrics, options=opts
    )


def _write_html(args, doc, result) -> None:
    from ..core import htmlreport

    data = htmlreport.gather(
        doc, result, cluster_by=args.cluster, comparison=result.comparison, baseline=args.baseline
    )
    write_report(args.html, htmlreport.render(data))


def main(args) -> int:
    import gc

    from ..core.systems import set_max_response_mb

    # A short-lived process that reads a whole run (and maybe makes one): the cyclic GC
    # would visit every record again and again while they are read and free nothing
    # (PERFORMANCE-NOTES: 3.56 s against 1.59 s for a 100k run file).
    gc.disable()
    set_max_response_mb(args.max_response_mb)
    outputs = {
        "--junit": args.junit,
        "--markdown": args.markdown,
        "--json": args.json,
        "--html": args.html,
    }  # --out is a run file: guard_run_file below (--force replaces an earlier run)
    inputs = [args.testset, *args.run, args.baseline, system_file(args.system)]
    guard_outputs(outputs, inputs)
    report = Reports(args)
    try:
        return _check(args, report, outputs, inputs)
    except InputError as e:
        report.errors(e.problems)  # the step summary says why the check could not run
        raise


def _check(args, report, outputs, inputs) -> int:
    from ..core.select import select

    doc = TestSetDocument.load(args.testset)
    report.doc = doc
    guard_outputs(outputs, testset_inputs(doc))
    if args.out:
        guard_run_file(args.out, "--out", [*inputs, *testset_inputs(doc)], force=args.force, can_resume=False)
    _refuse_outputs_on_each_other({**outputs, "--out": args.out})
    bars = collect_bars(
        {key: v for key, v in doc.settings.gates.items() if key not in JUDGE_THRESHOLDS}, args.min
    )
    judge_bars, min_kappa, min_grades = _judge_bars(doc, bars)
    _refuse_conflicts(args)
    sel = _selection(args)
    select(doc.cases, sel)  # an unknown id or tag, or an empty shard: exit 2 before anything runs
    if args.dry_run:
        return _dry_run(args, doc)
    if judge_bars and not args.run:
        _few_grades_first(doc, judge_bars, min_grades)  # before spending on a run the bar cannot use
    stale, note, stale_corpus = _stale_entries(doc)
    if stale and not args.run and not args.run_anyway:
        result = _stopped_on_stale(doc, bars, stale, stale_corpus, note)
        report.write(result)
        return Exit.FAILED
    run, label, chunk_text = _the_run(args, doc, bars, sel)
    if run is None:
        from ..core.stop import stopped_by

        how = stopped_by()
        where = (
            f"; the finished cases are in {args.out} (continue with ragtriage run … --out {args.out} --resume)"
            if args.out
            else ""
        )
        print(
            f"{'stopped (' + how + ')' if how else 'interrupted'}: the check was not judged{where}",
            file=sys.stderr,
        )
        return Exit.TERMINATED if how == "SIGTERM" else Exit.INTERRUPTED
    if judge_bars:
        _refuse_unproven_judge(doc, run, judge_bars, min_kappa, min_grades)
    result = judge(
        doc,
        run,
        bars,
        stale=stale,
        run_label=label,
        chunk_text=chunk_text,
        stale_corpus=stale_corpus,
        cases=None if sel.everything else select(doc.cases, sel),
        cite=getattr(args, "cite", None),
    )
    if note:
        result.notes.append(note)
    from ..core import gate_intervals

    gate_intervals.attach(result, doc, cluster_by=args.cluster, on=args.on)
    if args.baseline:
        _compare_with_baseline(args, doc, run, result)
    report.write(result)
    if args.html:
        _write_html(args, doc, result)
    if getattr(args, "exiting", False):  # the process ends now: its records need not be freed one by one
        from .run_cmd import leave_allocated

        leave_allocated(doc, run, result)
    return Exit.OK if result.passed else Exit.FAILED
