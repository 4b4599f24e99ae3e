"""Compare two run files case by case: what was fixed, what regressed, what changed.

Cases are matched by id. A case is *fixed* when it failed in run A and is good
in run B (``supported-correct`` or ``appropriate-abstention``), *regressed* for
the reverse, and *changed* when it failed in both runs for different reasons.
Metric deltas come from the two summaries. Runs made on different versions of
the test set (the meta lines' content hashes differ) are compared all the same
and the difference is reported, since a changed label can move a reason too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .diagnosis import PASSING, REASONS
from .escape import inline, md_code, md_text
from .schema import SUMMARY_METRICS

if TYPE_CHECKING:
    from .records import CaseRecord, RunMeta
    from .runfile import RunFile

GOOD = PASSING  # supported-correct, appropriate-abstention
NEUTRAL = frozenset({"unlabelled"})  # not scored: neither a failure nor a success
REASON_ORDER = REASONS
DELTA_METRICS = SUMMARY_METRICS + ("tokens",)
_HASH_KEYS = ("testset_hash", "testset_sha", "content_hash", "hash")
MetricDelta = tuple[float | None, float | None, float | None]  # (a, b, delta); None: not in that run


@dataclass(frozen=True)
class CaseChange:
    id: str
    before: str | None  # None: the case is new in run B
    after: str | None  # None: the case is gone from run B
    kind: str  # fixed | regressed | changed | new | removed

    def to_dict(self) -> dict[str, str | None]:
        return {"id": self.id, "from": self.before, "to": self.after, "kind": self.kind}


@dataclass
class RunDiff:
    a: str
    b: str
    meta_a: RunMeta
    meta_b: RunMeta
    changes: list[CaseChange] = field(default_factory=list)
    unchanged: int = 0
    metrics: dict[str, MetricDelta] = field(default_factory=dict)  # name -> (a, b, delta)
    notes: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)  # cases whose question or labels differ between the runs
    reasons: dict[str, tuple[int, int]] = field(default_factory=dict)  # reason -> (cases in A, cases in B)

    def of_kind(self, kind: str) -> list[CaseChange]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def fixed(self) -> list[CaseChange]:
        return self.of_kind("fixed")

    @property
    def regressed(self) -> list[CaseChange]:
        return self.of_kind("regressed")

    @property
    def testset_changed(self) -> bool:
        ha, hb = testset_hash(self.meta_a), testset_hash(self.meta_b)
        return ha is not None and hb is not None and ha != hb

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "testset_changed": self.testset_changed,
            "k": {"a": self.meta_a.get("k"), "b": self.meta_b.get("k")},
            "counts": {kind: len(self.of_kind(kind)) for kind in KINDS} | {"unchanged": self.unchanged},
            "cases": [c.to_dict() for c in self.changes],
            "metrics": {name: {"a": va, "b": vb, "delta": d} for name, (va, vb, d) in self.metrics.items()},
            "reasons": {
                name: {"a": ca, "b": cb, "delta": cb - ca} for name, (ca, cb) in self.reasons.items()
            },
            "edited": list(self.edited),
            "notes": list(self.notes),
        }


KINDS = ("regressed", "fixed", "changed", "new", "removed")


_CASE_KEYS = ("question", "expected", "expect", "unanswerable")


def _label_of(rec: CaseRecord, key: str) -> object:
    v = rec.get(key)
    if key == "expect":
        return v or "any"
    if key == "unanswerable":
        return bool(v)
    if key == "expected":
        return list(rec.get("expected") or ())
    return v


def testset_hash(meta: RunMeta) -> str | None:
    for key in _HASH_KEYS:
        v = meta.get(key)
        if isinstance(v, str) and v:
            return v
    return None


def classify(before: str, after: str) -> str | None:
    """Kind of change between two reasons of one case; None when the reason is the same."""
    if before == after:
        return None
    if before in NEUTRAL or after in NEUTRAL:
        return "changed"
    good_a, good_b = before in GOOD, after in GOOD
    if not good_a and good_b:
        return "fixed"
    if good_a and not good_b:
        return "regressed"
    return "changed"


def _num(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _case_changes(d: RunDiff, a: RunFile, b: RunFile) -> tuple[dict[str, str], dict[str, str]]:
    """Fill ``d.edited``, ``d.changes`` (by kind, file order within one) and ``d.unchanged``;
    returns each run's reason by case id."""
    reasons_a: dict[str, str] = {c["id"]: c["reason"] for c in a.cases}
    reasons_b: dict[str, str] = {c["id"]: c["reason"] for c in b.cases}
    recs_b = {c["id"]: c for c in b.cases}
    for rec_a in a.cases:
        rec_b = recs_b.get(rec_a["id"])
        if rec_b is not None and any(_label_of(rec_a, f) != _label_of(rec_b, f) for f in _CASE_KEYS):
            d.edited.append(rec_a["id"])
    for cid, ra in reasons_a.items():
        if cid not in reasons_b:
            d.changes.append(CaseChange(cid, ra, None, "removed"))
            continue
        kind = classify(ra, reasons_b[cid])
        if kind is None:
            d.unchanged += 1
        else:
            d.changes.append(CaseChange(cid, ra, reasons_b[cid], kind))
    d.changes += [CaseChange(cid, None, rb, "new") for cid, rb in reasons_b.items() if cid not in reasons_a]
    rank = {k: i for i, k in enumerate(KINDS)}
    d.changes.sort(key=lambda c: rank[c.kind])  # stable: file order within a kind
    return reasons_a, reasons_b


def _reason_counts(d: RunDiff, reasons_a: dict[str, str], reasons_b: dict[str, str]) -> None:
    names = set(reasons_a.values()) | set(reasons_b.values())
    for name in REASON_ORDER + tuple(sorted(names)):
        ca = sum(1 for r in reasons_a.values() if r == name)
        cb = sum(1 for r in reasons_b.values() if r == name)
        if (ca or cb) and name not in d.reasons:
            d.reasons[name] = (ca, cb)


def _metric_deltas(d: RunDiff, a: RunFile, b: RunFile) -> None:
    sa, sb = a.summary or {}, b.summary or {}
    for name in DELTA_METRICS:
        va, vb = _num(sa.get(name)), _num(sb.get(name))
        if va is None and vb is None:
            continue
        delta = None if va is None or vb is None else round(vb - va, 6)
        d.metrics[name] = (va, vb, delta)


def _notes(d: RunDiff, a: RunFile, b: RunFile) -> None:
    for run in (a, b):
        if run.summary is None:
            d.notes.append(f"{run.path}: no summary line (interrupted run?): metric deltas left out")
    if d.testset_changed:
        d.notes.append(
            f"the runs were made on different versions of the test set "
            f"({testset_hash(d.meta_a)} vs {testset_hash(d.meta_b)}): "
            "a reason may have changed because a case or its labels changed"
        )
    if d.edited:
        d.notes.append(
            f"{len(d.edited)} case(s) were edited between the runs (question or labels): "
            + ", ".join(d.edited[:10])
            + (" …" if len(d.edited) > 10 else "")
        )
    ta, tb = a.meta.get("testset"), b.meta.get("testset")
    if ta and tb and ta != tb:
        d.notes.append(f"the runs come from different test sets ({ta} vs {tb})")
    ka, kb = a.meta.get("k"), b.meta.get("k")
    if ka is not None and kb is not None and ka != kb:
        d.notes.append(f"k differs: {ka} in run A, {kb} in run B")


def diff_runs(a: RunFile, b: RunFile) -> RunDiff:
    """``a``/``b``: loaded runs (:class:`ragtriage.core.runfile.RunFile`: ``path``,
    ``meta``, ``cases`` (dicts with ``id`` and ``reason``), ``summary``)."""
    d = RunDiff(str(a.path), str(b.path), a.meta.copy(), b.meta.copy())
    reasons_a, reasons_b = _case_changes(d, a, b)
    _reason_counts(d, reasons_a, reasons_b)
    _metric_deltas(d, a, b)
    _notes(d, a, b)
    return d


# ---------------------------------------------------------------- rendering

_TITLES = {
    "regressed": "Regressed (was good, now failing)",
    "fixed": "Fixed (was failing, now good)",
    "changed": "Changed (another reason)",
    "new": "New cases (only in run B)",
    "removed": "Removed cases (only in run A)",
}
_GLYPH = {"regressed": "✗", "fixed": "✓", "changed": "~", "new": "+", "removed": "-"}


def _fmt(v: float | None, name: str = "") -> str:
    if v is None:
        return "–"
    if name == "tokens" or isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10000 else str(v)
    return f"{v:.3f}"


def _fmt_delta(d: float | None, name: str) -> str:
    if d is None:
        return "–"
    if d == 0:
        return "0"
    sign = "+" if d > 0 else "−"
    if name == "tokens":
        return f"{sign}{abs(d):g}"
    return f"{sign}{abs(d):.3f}"


def _fmt_count(n: int) -> str:
    return f"+{n}" if n > 0 else ("−" + str(-n) if n < 0 else "0")


def headline(d: RunDiff) -> str:
    c = {kind: len(d.of_kind(kind)) for kind in KINDS}
    return (
        f"{c['regressed']} regressed, {c['fixed']} fixed, {c['changed']} changed, "
        f"{c['new']} new, {c['removed']} removed, {d.unchanged} unchanged"
    )


def render_text(d: RunDiff) -> str:
    """The diff for a terminal: ids, reasons and paths from the run files written as
    :func:`~ragtriage.core.escape.inline` (no escape sequence, no forged line)."""
    out = [f"A: {inline(d.a)}", f"B: {inline(d.b)}", ""]
    for note in d.notes:
        out.append(f"note: {inline(note)}")
    if d.notes:
        out.append("")
    for kind in KINDS:
        items = d.of_kind(kind)
        if not items:
            continue
        out.append(f"{_TITLES[kind]}: {len(items)}")
        w = max(len(inline(c.id)) for c in items)
        for c in items:
            before, after = inline(c.before or "–"), inline(c.after or "–")
            out.append(f"  {_GLYPH[kind]} {inline(c.id):<{w}}  {before} → {after}")
        out.append("")
    if not d.changes:
        out.append("No case changed its reason.")
        out.append("")
    if d.reasons:
        out.append(f"{'reason':<24} {'A':>4} {'B':>4} {'Δ':>4}")
        for name, (ca, cb) in d.reasons.items():
            out.append(f"{inline(name):<24} {ca:>4} {cb:>4} {_fmt_count(cb - ca):>4}")
        out.append("")
    if d.metrics:
        out.append(f"{'metric':<20} {'A':>8} {'B':>8} {'Δ':>8}")
        for name, (va, vb, delta) in d.metrics.items():
            out.append(f"{name:<20} {_fmt(va, name):>8} {_fmt(vb, name):>8} {_fmt_delta(delta, name):>8}")
        out.append("")
    out.append(headline(d))
    return "\n".join(out) + "\n"


def render_markdown(d: RunDiff) -> str:
    """The diff as markdown (a pull-request comment): every text from a run file rendered
    by core/escape.py, so a reason or an id cannot add a heading, a link or HTML."""
    out = ["## ragtriage diff", "", f"{md_code(d.a)} → {md_code(d.b)}", "", f"**{headline(d)}**", ""]
    for note in d.notes:
        out.append(f"> {md_text(note)}")
    if d.notes:
        out.append("")
    for kind in KINDS:
        items = d.of_kind(kind)
        if not items:
            continue
        out += [
            f"### {_GLYPH[kind]} {_TITLES[kind]}: {len(items)}",
            "",
            "| case | run A | run B |",
            "|---|---|---|",
        ]
        for c in items:
            out.append(f"| {md_code(c.id)} | {md_text(c.before or '–')} | {md_text(c.after or '–')} |")
        out.append("")
    if not d.changes:
        out += ["No case changed its reason.", ""]
    if d.reasons:
        out += ["### Reasons", "", "| reason | A | B | Δ |", "|---|---:|---:|---:|"]
        for name, (ca, cb) in d.reasons.items():
            out.append(f"| {md_text(name)} | {ca} | {cb} | {_fmt_count(cb - ca)} |")
        out.append("")
    if d.metrics:
        out += ["### Metrics", "", "| metric | A | B | Δ |", "|---|---:|---:|---:|"]
        for name, (va, vb, delta) in d.metrics.items():
            out.append(f"| {name} | {_fmt(va, name)} | {_fmt(vb, name)} | {_fmt_delta(delta, name)} |")
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- reading
