"""``ragtriage judge TESTSET --run RUN``: how far the run's judge agrees with the
expert's grades — n, agreement, Cohen's κ and the confusion matrix for
``supported`` and ``correct``, the grounding check's κ beside them, per
language where the test set mixes them (judge.md)."""

from __future__ import annotations

import sys
from typing import Any

import orjson

from ..core.errors import InputError, Problem
from .run_cmd import num, table

QUESTIONS = (
    ("supported", "judge: supported"),
    ("correct", "judge: correct"),
    ("grounding", "grounding check"),
)


def languages(doc) -> dict[str, str]:
    """Case id -> language: a ``lang:xx`` tag, else the test set's language."""
    base = doc.settings.language
    out = {}
    for c in doc.cases:
        tag = next((t[5:] for t in c.tags if t.startswith("lang:") and len(t) > 5), None)
        out[c.id] = tag or base
    return out


def _kappa(a: dict[str, Any]) -> str:
    from ..core.judge import kappa_text

    return "—" if a["kappa"] is None else kappa_text(a)


def _rows(report: dict[str, Any]) -> list[list[str]]:
    rows = []
    for q, label in QUESTIONS:
        a = report[q]
        (yy, yn), (ny, nn) = a["confusion"]
        rows.append([label, str(a["n"]), num(a["agreement"]), _kappa(a), str(yy), str(yn), str(ny), str(nn)])
    return rows


HEADERS = ["", "n", "agreement", "κ [95 %]", "yes/yes", "yes/no", "no/yes", "no/no"]


def corrected_text(corrected: dict[str, Any]) -> list[str]:
    """The judge's rates corrected by the grades (stratified prediction-powered inference);
    ``unknown`` while a verdict of the judge has too few grades, with the worst-case interval."""
    out = []
    for q, est in corrected.items():
        if est is None:
            out.append(f"judge_{q} corrected by the grades: — (needs 2 or more graded answers)")
            continue
        iv = est.interval
        point = "unknown, within" if est.estimate is None else num(est.estimate)
        out.append(
            f"judge_{q} corrected by the grades: {point} [{iv.lo:.3f}, {iv.hi:.3f}] "
            f"(the judge alone says {num(est.judge_rate)}; {est.graded} graded, {est.unlabelled} judged only; {iv.method})"
        )
    return out


def render(report: dict[str, Any], head: str, min_kappa: float, min_grades: int) -> str:
    right = set(range(1, len(HEADERS)))
    out = [head, "", table(HEADERS, _rows(report), right=right)]
    out.append("(yes/no: the judge (or the check) said yes, the grade said no)")
    for lang, rep in (report.get("by_language") or {}).items():
        out += ["", f"language {lang}:", table(HEADERS, _rows(rep), right=right)]
    out.append("")
    from ..core.judge import proven

    for q in ("supported", "correct"):
        a = report[q]
        verdict = "allowed" if proven(a, min_kappa, min_grades) else "refused"
        out.append(
            f"a CI bar on judge_{q}: {verdict} (κ {_kappa(a)} on {a['n']} graded; "
            f"needs the lower bound ≥ {min_kappa:g} on ≥ {min_grades})"
        )
    if report.get("corrected"):
        out += ["", *corrected_text(report["corrected"])]
    return "\n".join(out)


def main(args) -> int:
    from ..core.document import TestSetDocument
    from ..core.gate import check_writable, write_report
    from ..core.judge import calibrate, corrected_rates, grades_path, latest, read_grades, thresholds
    from ..core.runfile import read_run
    from .outputs import guard_outputs

    if args.json:
        check_writable(args.json, "--json")
    doc = TestSetDocument.load(args.testset)
    guard_outputs(
        {"--json": args.json}, [doc.path, doc.corpus_path, args.run, grades_path(doc.path), *args.grades]
    )
    run = read_run(args.run)
    for w in run.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not any("judge" in r for r in run.cases):
        raise InputError(
            Problem(
                str(args.run),
                None,
                "has no judge verdicts: make the run with --judge openai:BASE_URL#MODEL (or judge: in the test set)",
            )
        )
    files = [grades_path(doc.path), *args.grades]
    grades, warnings = read_grades(files)
    if any(w.severity == "error" for w in warnings):  # a grades file that could not be read at all
        raise InputError([w for w in warnings if w.severity == "error"])
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    langs = languages(doc)
    table = latest(grades)
    report = calibrate(run.cases, table, langs)
    report["corrected"] = corrected_rates(run.cases, table)
    min_kappa, min_grades = thresholds(doc.settings.gates, doc.settings)
    head = f"{doc.path} · judge {run.meta.get('judge', '?')} · {len(grades)} grade line(s) in " + ", ".join(
        str(f) for f in files
    )
    print(render(report, head, min_kappa, min_grades))
    if args.json:
        plain = dict(report)
        plain["corrected"] = {q: (None if e is None else e.to_dict()) for q, e in report["corrected"].items()}
        write_report(
            args.json, orjson.dumps(plain, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()
        )
        print(f"report: {args.json}")
    return 0
