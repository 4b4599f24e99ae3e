"""The paired comparison as text (the terminal, CI logs) and as markdown (a step
summary, a pull-request comment): the table of measures and the one verdict line.

    verdict: a real regression — pass −3.5 pp [−7.1, −0.1], one-sided p 0.019 < α 0.05
"""

from __future__ import annotations

from .comparison import RunComparison
from .safe_text import inline, md_text
from .stats import INCONCLUSIVE, NO_REGRESSION, REGRESSION, Comparison
from .stats.text import interval_points, p_text, points, rounded


def _rate(c: Comparison, v: float) -> str:
    return "–" if v != v else rounded(v, 3)


def _flips(c: Comparison) -> str:
    return "–" if c.table is None else f"{c.table.worse} ↓ / {c.table.better} ↑"


def _verdict_cell(c: Comparison) -> str:
    if c.verdict == INCONCLUSIVE and c.detectable is not None:
        if c.detectable >= 1.0:
            return "inconclusive (too few cases to detect any change)"
        return f"inconclusive (detects ≥ {points(c.detectable, signed=False)})"
    return c.verdict


def margin_text(rc: RunComparison) -> str:
    return points(rc.options.margin, signed=False)


def rule_name(verdict: str, rc: RunComparison) -> str:
    """The verdict's name as printed: "no regression beyond δ" names its δ."""
    if verdict == NO_REGRESSION:
        return f"no regression beyond δ = {margin_text(rc)}"
    return verdict


def _what(c: Comparison) -> str:
    if c.n == 0:
        return f"{c.metric}: no case to compare"
    return f"{c.metric} {points(c.delta)} {interval_points(c.interval)}"


def verdict_line(rc: RunComparison) -> str:
    """The one line a person reads: the verdict, the evidence, and what follows."""
    g = rc.gate
    cs = g.comparisons
    holm = f" after Holm across {len(cs)} measures" if len(cs) > 1 else ""
    if g.verdict == REGRESSION:
        bad = [c for c in cs if c.verdict == REGRESSION]
        ev = "; ".join(f"{_what(c)}, one-sided p {p_text(c.p_adjusted)}" for c in bad)
        each = "; each" if len(bad) > 1 else ""
        return f"verdict: a real regression — {ev}{each} < α {g.alpha:g}{holm}"
    if g.verdict == NO_REGRESSION:
        ev = "; ".join(_what(c) for c in cs)
        return (
            f"verdict: {rule_name(NO_REGRESSION, rc)} — every lower bound is above −{margin_text(rc)}: {ev}"
        )
    open_ = [c for c in cs if c.verdict == INCONCLUSIVE] or cs
    ev = "; ".join(f"{_what(c)}, p {p_text(c.p_adjusted)}" for c in open_)
    det = [c.detectable for c in open_ if c.detectable is not None]
    if not det:
        tail = ""
    elif max(det) >= 1.0:
        tail = "; this set has too few cases to detect a change of any size"
    else:
        tail = f"; the smallest change this set can detect is {points(max(det), signed=False)} (80 % power)"
    return f"verdict: inconclusive — neither a real regression nor {rule_name(NO_REGRESSION, rc)}: {ev}{tail}"


def _width(s: str) -> int:
    import unicodedata

    return sum(
        2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1 for ch in s
    )


def _table(head: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell (terminal width, not characters)."""
    widths = [max([_width(h)] + [_width(r[i]) for r in rows]) for i, h in enumerate(head)]
    lines = []
    for cells in [head, *rows]:
        lines.append("  ".join(c + " " * (widths[i] - _width(c)) for i, c in enumerate(cells)).rstrip())
    return "\n".join(lines)


HEAD = ["metric", "A", "B", "Δ", "interval", "flips", "test", "p", "verdict"]


def _row(c: Comparison) -> list[str]:
    return [
        c.metric,
        _rate(c, c.a),
        _rate(c, c.b),
        points(c.delta),
        interval_points(c.interval),
        _flips(c),
        c.method,
        p_text(c.p_adjusted),
        _verdict_cell(c),
    ]


def _notes(rc: RunComparison) -> list[str]:
    o = rc.options
    level = rounded((1 - o.alpha) * 100, 0)
    out = [
        f"paired by case id; {rc.clusters_note}; α = {o.alpha:g} (one-sided, Holm across the measures), "
        f"δ = {margin_text(rc)}, {level} % intervals"
        + ("; exact tests (--conservative)" if o.conservative else "")
    ]
    if rc.only_a or rc.only_b:
        parts = []
        if rc.only_a:
            parts.append(f"{len(rc.only_a)} only in A (failures in B): " + ", ".join(rc.only_a[:10]))
        if rc.only_b:
            parts.append(f"{len(rc.only_b)} only in B (failures in A): " + ", ".join(rc.only_b[:10]))
        out.append("unmatched cases: " + "; ".join(parts))
    if rc.same_system:
        floor = (
            ""
            if rc.noise_floor is None
            else f": changes below {points(rc.noise_floor, signed=False)} cannot be told from it"
        )
        out.append(
            "A/A: the same system on the same test set, so every difference here is noise (the noise floor"
            + floor
            + ")"
        )
    return out


def render_text(rc: RunComparison) -> str:
    out = [f"note: {inline(n)}" for n in _notes(rc)]
    out.append(_table(HEAD, [[inline(x) for x in _row(c)] for c in rc.gate.comparisons]))
    moved = [
        s for s in rc.slices if s.comparison.delta != 0 or (s.comparison.table and s.comparison.table.worse)
    ]
    if moved:
        out.append("")
        out.append(
            "by tag, where something moved (exploratory: Benjamini–Hochberg q across tags, not a gate):"
        )
        rows = [
            [inline(s.name), str(s.comparison.n), points(s.comparison.delta), interval_points(s.comparison.interval),
             _flips(s.comparison), p_text(s.q)]
            for s in moved
        ]  # fmt: skip
        out.append(_table(["tag", "n", "Δ", "interval", "flips", "q"], rows))
    out.append(verdict_line(rc))
    return "\n".join(out) + "\n"


def render_markdown(rc: RunComparison) -> str:
    v = rc.gate.verdict
    icon = {REGRESSION: "❌", NO_REGRESSION: "✅"}.get(v, "⚠️")
    out = [f"### {icon} {md_text(verdict_line(rc).removeprefix('verdict: '))}", ""]
    out += [f"> {md_text(n)}" for n in _notes(rc)]
    out += ["", "| " + " | ".join(HEAD) + " |", "|---|---:|---:|---:|---|---|---|---:|---|"]
    for c in rc.gate.comparisons:
        out.append("| " + " | ".join(md_text(x) for x in _row(c)) + " |")
    if rc.slices:
        out += ["", "By tag (exploratory: Benjamini–Hochberg q, not a gate):", ""]
        out += ["| tag | n | Δ | interval | flips | q |", "|---|---:|---:|---|---|---:|"]
        for s in rc.slices:
            c = s.comparison
            cells = [s.name, str(c.n), points(c.delta), interval_points(c.interval), _flips(c), p_text(s.q)]
            out.append("| " + " | ".join(md_text(x) for x in cells) + " |")
    out.append("")
    return "\n".join(out)
