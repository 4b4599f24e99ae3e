"""The CI gate: bars from ``--min`` and the test set's ``gates``, judged on a run.

A bar is ``METRIC=VALUE`` where METRIC is a summary key (formats.md §5),
optionally ``@k`` for the retrieval ones (``hit@5``): those are recomputed from
each case's stored ranking at that k, so a bar at another k costs no new call.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .diagnosis import PASSING, TRIAGE_ORDER
from .errors import InputError, Problem
from .escape import md_code, md_text
from .grouped import counts as grouped_counts
from .grouped import split_unrecorded, unrecorded_message
from .metrics import MAX_K
from .records import CaseRecord, RecordLike, Summary
from .reports import check_writable as check_writable  # their old home: kept importable
from .reports import write_report as write_report
from .schema import AT_K_METRICS, SUMMARY_METRICS, parse_metric

if TYPE_CHECKING:
    from .stats.intervals import Interval


@dataclass(frozen=True)
class Bar:
    """``metric`` (a summary key, or ``name@k``) must be at least ``minimum``."""

    metric: str
    name: str
    k: int | None
    minimum: float
    source: str  # "gates" (the test set) or "--min"


@dataclass
class BarResult:
    bar: Bar
    value: float | None  # None: nothing to measure (its denominator is empty)
    k: int  # the cut-off the value was measured at
    interval: Any = None  # the value's 95 % interval (a stats.Interval), when known
    on: str = "value"  # "lower": the bar holds the interval's lower bound (check --on lower)

    @property
    def judged(self) -> float | None:
        """What is held to the bar: the value, or its interval's lower bound with ``--on lower``."""
        if self.on == "lower":
            return None if self.interval is None or self.value is None else self.interval.lo
        return self.value

    @property
    def passed(self) -> bool:
        v = self.judged
        return v is not None and v + 1e-9 >= self.bar.minimum

    def to_dict(self) -> dict[str, Any]:
        out = {
            "metric": self.bar.metric,
            "value": self.value,
            "min": self.bar.minimum,
            "k": self.k,
            "passed": self.passed,
            "source": self.bar.source,
        }
        if self.interval is not None:
            out["interval"] = self.interval.to_dict()
        if self.on == "lower":
            out["on"] = "lower"
        return out


def parse_min(spec: str) -> tuple[str, float]:
    """``'hit@5=0.8'`` -> ``('hit@5', 0.8)``; ValueError with a message for people."""
    if "=" not in spec:
        raise ValueError(f"{spec!r}: write METRIC=VALUE, e.g. hit@3=0.8")
    key, _, raw = spec.partition("=")
    key = key.strip()
    _, k = parse_metric(key)
    if k is not None and not 1 <= k <= MAX_K:
        raise ValueError(f"{spec!r}: k is a whole number from 1 to {MAX_K:,}")
    try:
        value = float(raw.strip().rstrip("%")) / (100 if raw.strip().endswith("%") else 1)
    except ValueError:
        raise ValueError(f"{spec!r}: {raw.strip()!r} is not a number") from None
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise ValueError(f"{spec!r}: a bar is between 0 and 1 (or a percentage like 80%)")
    return key, value


def collect_bars(gates: Mapping[str, float] | None, mins: Iterable[str] | None) -> list[Bar]:
    """The test set's gates, then every ``--min`` (which replaces a gate on the same metric)."""
    bars: dict[str, Bar] = {}
    for key, v in (gates or {}).items():
        name, k = parse_metric(key)
        bars[key] = Bar(key, name, k, float(v), "gates")
    problems = []
    for spec in mins or ():
        try:
            key, v = parse_min(spec)
        except ValueError as e:
            problems.append(Problem("--min", None, str(e)))
            continue
        name, k = parse_metric(key)
        bars.pop(key, None)
        bars[key] = Bar(key, name, k, v, "--min")
    if problems:
        raise InputError(problems)
    return list(bars.values())


def measure(bars: list[Bar], records: list[CaseRecord], summary: Summary, run_k: int) -> list[BarResult]:
    """Value of every bar: summary metrics at the run's k; ``name@k`` retrieval metrics
    recomputed from the stored rankings at that k (no new call)."""
    from .metrics import retrieval_means, stored_positions

    cache: dict[int, dict[str, Any]] = {}
    positions = None
    out = []
    for bar in bars:
        if bar.k is not None and bar.name.startswith("doc_"):
            from .docrank import doc_retrieval_at

            v = doc_retrieval_at(records, bar.k).get(bar.name)
            k = bar.k
        elif bar.k is not None and bar.name in AT_K_METRICS:
            if positions is None:  # first positions of the expected chunks, once for every k
                positions = stored_positions(records)
            if bar.k not in cache:
                cache[bar.k] = retrieval_means(positions, bar.k)
            v = cache[bar.k].get(bar.name)
            k = bar.k
        else:
            v = summary.get(bar.name)
            k = run_k
        if isinstance(v, float) and math.isnan(v):
            v = None
        out.append(BarResult(bar, v, k))
    return out


@dataclass(kw_only=True)
class CheckResult:
    """Everything the gate decided, for the text, JSON, JUnit and markdown reports
    (twelve fields: made by keyword only)."""

    testset: str
    run: str | None
    k: int
    records: list[CaseRecord]
    summary: Summary
    bars: list[BarResult]
    stale: list[Any] = field(default_factory=list)  # stale entries (case, label, status)
    missing: list[str] = field(default_factory=list)  # test-set cases with no result in the run
    notes: list[str] = field(default_factory=list)
    case_lines: dict[str, int] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)  # id -> where to look, for failing cases
    meta: dict[str, Any] = field(default_factory=dict)  # the run's meta line (system, k, test-set hash, …)
    stale_corpus: str | None = None  # the chunks file the labels were checked against
    errors: list[str] = field(default_factory=list)  # cases the system gave no answer for (reason error)
    not_run: int = 0  # bars left unmeasured: stale labels stopped the check before the system was asked
    intervals: dict[str, Any] = field(default_factory=dict)  # summary rate -> its 95 % interval
    slices: dict[str, list[Any]] = field(default_factory=dict)  # "tag" / "topic" -> rates.Slice list
    comparison: Any = None  # the paired comparison with --baseline (comparison.RunComparison)
    unknown_ids: str | None = None  # set when no ranked id of any case is in the corpus: no pass

    @property
    def failed_bars(self) -> list[BarResult]:
        return [b for b in self.bars if not b.passed]

    @property
    def regressed(self) -> bool:
        """A real regression against the baseline (evaluation.md, "Comparing two runs")."""
        from .stats import REGRESSION

        return self.comparison is not None and self.comparison.verdict == REGRESSION

    @property
    def passed(self) -> bool:
        """Every bar held, no label stale, no real regression against the baseline, and every
        case of the test set (or of the selected shard) measured: a check never passes on
        fewer (cli.md)."""
        return (
            not self.failed_bars
            and not self.stale
            and not self.missing
            and not self.errors
            and not self.not_run
            and not self.regressed
            and not self.unknown_ids
        )

    def failures(self) -> list[CaseRecord]:
        """Failing cases (reason not passing and scored), in triage order."""
        order = {r: i for i, r in enumerate(TRIAGE_ORDER)}
        bad = [r for r in self.records if r.get("reason") not in PASSING and r.get("reason") != "unlabelled"]
        return sorted(bad, key=lambda r: order.get(r.get("reason") or "", len(order)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "testset": self.testset,
            "run": self.run,
            "k": self.k,
            "passed": self.passed,
            "bars": [b.to_dict() for b in self.bars],
            "stale": [_stale_fields(e) for e in self.stale],
            "stale_corpus": self.stale_corpus,
            "missing": list(self.missing),
            "errors": list(self.errors),
            "summary": self.summary,
            "intervals": {m: iv.to_dict() for m, iv in self.intervals.items()},
            "slices": {by: [x.to_dict() for x in got] for by, got in self.slices.items()},
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
            "failures": [
                {"id": r["id"], "reason": r.get("reason"), "why": r.get("why") or ""} for r in self.failures()
            ],
            "notes": list(self.notes),
        }


def _stale_fields(e: object) -> dict[str, Any]:
    if isinstance(e, dict):
        return {"case": e.get("case"), "label": e.get("label"), "status": e.get("status")}
    return {
        "case": getattr(e, "case", None),
        "label": getattr(e, "label", None),
        "status": getattr(e, "status", None),
    }


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def _iv(iv: Interval | None) -> str:
    """`` [0.359, 1.000]`` after a value, or nothing."""
    return "" if iv is None else f" [{iv.lo:.3f}, {iv.hi:.3f}]"


def failure_message(rec: RecordLike, detail: str = "") -> str:
    """``REASON: WHY`` — what a CI annotation shows for a failing case; without a grounding
    ``why``, where to look (``detail``, :func:`explain`)."""
    reason = rec.get("reason") or "?"
    why = rec.get("why") or detail or ""
    if not why:
        return reason
    return why if why.startswith(f"{reason}:") else f"{reason}: {why}"


def explain(rec: RecordLike, case: Any, k: int) -> str:
    """Where to look, in a few words, for a failing case (the grounding ``why`` when there is one)."""
    reason = rec.get("reason")
    why = rec.get("why") or ""
    expected = ", ".join(rec.get("expected") or (case.expected if case is not None else ()))
    rank = rec.get("rank") or 0
    if reason == "retrieval-miss" and not rec.get("expected") and "doc_hit" in rec:
        from .docrank import doc_miss

        return doc_miss(rec, k)
    if reason == "retrieval-miss":
        where = f"rank {rank}" if rank else "not retrieved"
        return f"{expected} not in the top {k} ({where})"
    if reason == "unnecessary-abstention":
        several = "," in expected
        return f"declined although {expected} {'were' if several else 'was'} found" + (
            f" ({'first ' if several else ''}at rank {rank})" if rank else ""
        )
    if reason == "unanswerable-answered":
        return "answered a question the documents do not answer (it should decline)"
    if reason == "wrong-answer" and case is not None:
        answer = rec.get("answer") or ""
        if case.answer is not None:
            return f"answer differs from the reference {case.answer!r}"
        missing = [m for m in case.must_contain if m not in answer]
        if missing:
            return "answer lacks " + ", ".join(repr(m) for m in missing)
    return why


# ---------------------------------------------------------------- text


def render_text(res: CheckResult) -> str:
    out = []
    for note in res.notes:
        out.append(f"note: {note}")
    if res.bars:
        w = max(len(b.bar.metric) for b in res.bars)
        for b in res.bars:
            mark = "✓ pass" if b.passed else "✗ FAIL"
            value = _fmt(b.value) if b.value is not None else "– (nothing to measure)"
            held = " on the lower bound" if b.on == "lower" else ""
            out.append(
                f"{mark}  {b.bar.metric:<{w}}  {value:>6}{_iv(b.interval)}  "
                f"(bar {b.bar.minimum:g}{held}, from {b.bar.source})"
            )
    else:
        out.append("no bars: set `gates:` in the test set or pass --min METRIC=VALUE")
    against = f" in {res.stale_corpus}" if res.stale_corpus else ""
    unrecorded, stale = split_unrecorded(res.stale)
    if unrecorded:
        out.append(f"✗ STALE  {unrecorded_message(unrecorded, res.testset)}")
    for e in stale:
        s = _stale_fields(e)
        out.append(
            f"✗ STALE  case {s['case']!r}: label {s['label']!r} is {s['status']}{against} (see `ragtriage stale`)"
        )
    if res.unknown_ids:
        out.append(f"✗ UNKNOWN IDS  {res.unknown_ids}")
    if res.missing:
        out.append(
            f"✗ INCOMPLETE  {len(res.missing)} case(s) of the test set have no result in the run: "
            + ", ".join(res.missing[:10])
            + (" …" if len(res.missing) > 10 else "")
        )
    if res.errors:
        out.append(
            f"✗ NOT MEASURED  {len(res.errors)} case(s) ended in an error (the system gave no answer): "
            + ", ".join(res.errors[:10])
            + (" …" if len(res.errors) > 10 else "")
        )
    reasons = res.summary.get("reasons") or {}
    if reasons:
        out.append("reasons: " + ", ".join(f"{k} {v}" for k, v in reasons.items()))
    if res.comparison is not None:
        from .comparison_text import render_text as comparison_text

        out.append(comparison_text(res.comparison).rstrip("\n"))
    verdict = "passed" if res.passed else "FAILED"
    parts = _why_failed(res, stale, unrecorded)
    out.append(f"check {verdict}" + (": " + "; ".join(parts) if parts else f" ({len(res.bars)} bars held)"))
    return "\n".join(out) + "\n"


def _why_failed(res: CheckResult, stale: list[Any], unrecorded: list[Any]) -> list[str]:
    """Each reason the check failed, in a few words, for its last line."""
    checks = (
        (res.regressed, "a real regression against the baseline"),
        (res.failed_bars, f"{len(res.failed_bars)} of {len(res.bars)} bars missed"),
        (stale, f"{len(stale)} stale label(s)"),
        (unrecorded, f"{grouped_counts(unrecorded)[0] if unrecorded else 0} unrecorded label(s)"),
        (res.missing, f"{len(res.missing)} case(s) without a result"),
        (res.errors, f"{len(res.errors)} case(s) not measured (error)"),
        (res.not_run, f"{res.not_run} bar(s) not measured"),
        (res.unknown_ids, "no ranked id is in the corpus"),
    )
    return [text for failed, text in checks if failed]


# ---------------------------------------------------------------- markdown


_md = md_text  # markdown text and code spans: core/escape.py (no input changes the report's structure)
_code = md_code


_MD_METRICS = SUMMARY_METRICS  # the summary's metrics, in the summary's order


def _md_head(res: CheckResult) -> list[str]:
    icon = "✅" if res.passed else "❌"
    word = "passed" if res.passed else "failed"
    out = [f"## {icon} ragtriage check {word}: {_code(res.testset)}", ""]
    n = res.summary.get("n", len(res.records))
    out.append(f"{n} cases at k = {res.k}" + (f", run {_code(res.run)}" if res.run else "") + ".")
    out.append("")
    out += [f"> {_md(note)}" for note in res.notes]
    if res.notes:
        out.append("")
    return out


def _md_numbers(res: CheckResult) -> list[str]:
    out = []
    if res.bars:
        with_iv = any(b.interval is not None for b in res.bars)
        if with_iv:
            out += ["| bar | value | 95 % interval | minimum | result |", "|---|---:|---|---:|---|"]
        else:
            out += ["| bar | value | minimum | result |", "|---|---:|---:|---|"]
        for b in res.bars:
            result = "✅ pass" if b.passed else "❌ fail"
            held = " (lower bound)" if b.on == "lower" else ""
            iv = f" {_iv(b.interval).strip()} |" if with_iv else ""
            out.append(
                f"| {_code(b.bar.metric)} | {_fmt(b.value)} |{iv} {b.bar.minimum:g}{held} | {result} |"
            )
        out.append("")
    if res.intervals:
        out += ["| metric | value | 95 % interval |", "|---|---:|---|"]
        out += [
            f"| {name} | {_fmt(res.summary.get(name))} | {_iv(res.intervals.get(name)).strip()} |"
            for name in _MD_METRICS
            if name in res.summary
        ]
    else:
        out += ["| metric | value |", "|---|---:|"]
        out += [f"| {name} | {_fmt(res.summary.get(name))} |" for name in _MD_METRICS if name in res.summary]
    out.append("")
    for by, got in res.slices.items():
        out += [f"| {by} | n | pass | 95 % interval |", "|---|---:|---:|---|"]
        for x in got:
            iv = x.intervals.get("pass")
            out.append(f"| {_md(x.name)} | {x.n} | {_fmt(x.rates.get('pass'))} | {_iv(iv).strip()} |")
        out.append("")
    if res.comparison is not None:
        from .comparison_text import render_markdown as comparison_markdown

        out.append(comparison_markdown(res.comparison))
    return out


def _md_stale_and_missing(res: CheckResult) -> list[str]:
    out = []
    if res.stale:
        against = f" (against {_code(res.stale_corpus)})" if res.stale_corpus else ""
        out += [
            f"### ❌ Stale labels: {len(res.stale)}{against}",
            "",
            "| case | label | status |",
            "|---|---|---|",
        ]
        unrecorded, stale = split_unrecorded(res.stale)
        for e in stale:
            s = _stale_fields(e)
            out.append(f"| {_code(s['case'])} | {_code(s['label'])} | {_md(s['status'])} |")
        if unrecorded:
            n_labels, n_cases = grouped_counts(unrecorded)
            out.append(f"| {n_cases} case(s) | {n_labels} label(s) | unrecorded |")
        out += ["", "Run `ragtriage stale TESTSET --fix` and review the rest in `ragtriage edit`.", ""]
    if res.missing:
        out += [
            f"### ❌ Cases without a result: {len(res.missing)}",
            "",
            ", ".join(_code(m) for m in res.missing),
            "",
        ]
    if res.errors:
        out += [
            f"### ❌ Cases not measured (the system gave no answer): {len(res.errors)}",
            "",
            ", ".join(_code(m) for m in res.errors),
            "",
        ]
    return out


def _md_failures(res: CheckResult, budget: int | None = None, limit: int | None = None) -> list[str]:
    """The failing cases by reason, worst first; with ``budget`` (characters) as many as fit,
    and a line saying how many were left out to stay under ``limit``."""
    failures = res.failures()
    if not failures:
        return ["No failing case.", ""]
    out = [f"### Failures by reason: {len(failures)}", ""]
    current = None
    counts: dict[str, int] = {}
    for x in failures:
        counts[x.get("reason") or ""] = counts.get(x.get("reason") or "", 0) + 1
    used = sum(len(line) + 1 for line in out)
    for shown, r in enumerate(failures):
        rows = []
        if r.get("reason") != current:
            if current is not None:
                rows.append("")
            rows += [
                f"#### {_md(r.get('reason'))} ({counts[r.get('reason') or '']})",
                "",
                "| case | question | where to look |",
                "|---|---|---|",
            ]
        why = res.details.get(r["id"]) or r.get("why") or ""
        rows.append(f"| {_code(r['id'])} | {_md(r.get('question') or '')} | {_md(why)} |")
        cost = sum(len(line) + 1 for line in rows)
        if budget is not None and used + cost > budget:
            out += [
                "",
                f"… and {len(failures) - shown} more failing case(s) left out to keep this report under "
                f"{limit or budget:,} characters (the JUnit report and the run file have them all).",
            ]
            break
        out += rows
        used += cost
        current = r.get("reason")
    out.append("")
    return out


_MD_RESERVE = 400  # room kept for the line that says how many cases were left out


def render_markdown(res: CheckResult, max_chars: int | None = None) -> str:
    """The report as markdown; with ``max_chars`` the failing cases are cut (worst kept
    first) so the whole stays under it (GitHub refuses a comment over 65,536)."""
    top = _md_head(res) + _md_numbers(res) + _md_stale_and_missing(res)
    if max_chars is None:
        return "\n".join(top + _md_failures(res))
    budget = max(0, max_chars - _MD_RESERVE - sum(len(line) + 1 for line in top))
    return "\n".join(top + _md_failures(res, budget, max_chars))


# ---------------------------------------------------------------- judging a run
# (in .judging, which needs the types above; imported here so `gate.judge` stays the API)

from .judging import _case_lines, _depth_note, _judged_records  # noqa: E402, F401
from .judging import judge as judge  # noqa: E402
from .junit import _serialize as _serialize  # noqa: E402  (the JUnit report: core/junit.py)
from .junit import render_junit as render_junit  # noqa: E402
