"""The report's pictures, drawn as inline SVG from numbers only (no data text goes in):
the k sweep curve and the small interval bars beside each rate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..stats import Interval

COLOURS = {"hit": "#0b5cad", "recall": "#1a7f37", "mrr": "#b35900", "precision": "#8250df"}
DASH = {"hit": "", "recall": "6 3", "mrr": "2 3", "precision": "8 3 2 3"}


def interval_bar(value: float | None, iv: Interval | None) -> str:
    """A 0–1 track with the interval as a band and the value as a tick."""
    if value is None or iv is None:
        return ""
    lo, hi = max(0.0, iv.lo), min(1.0, iv.hi)
    return (
        f'<span class="iv" role="img" aria-label="{value:.3f}, interval {lo:.3f} to {hi:.3f}">'
        f'<span class="band" style="left:{lo * 100:.2f}%;width:{max(hi - lo, 0.004) * 100:.2f}%"></span>'
        f'<span class="dot" style="left:calc({value * 100:.2f}% - 1px)"></span></span>'
    )


def sweep_chart(curves: Mapping[str, Sequence[float | None]], ks: Sequence[int], run_k: int) -> str:
    """Lines of each measure against k (1..K), the run's k marked; ``curves[m][i]`` is at ``ks[i]``."""
    if not ks:
        return ""
    w, h, left, right, top, bottom = 640, 280, 46, 120, 14, 34
    pw, ph = w - left - right, h - top - bottom
    kmax = max(ks)
    kmin = min(ks)

    def x(k: int) -> float:
        return left + (pw * (k - kmin) / (kmax - kmin) if kmax > kmin else pw / 2)

    def y(v: float) -> float:
        return top + ph * (1 - v)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        'role="img" aria-label="retrieval measures against k">'
    ]
    for i in range(6):
        v = i / 5
        out.append(f'<line class="grid" x1="{left}" x2="{left + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>')
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    step = max(1, round(len(ks) / 10))
    for k in ks[::step]:
        out.append(f'<text x="{x(k):.1f}" y="{top + ph + 16}" text-anchor="middle">{k}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{h - 4}" text-anchor="middle">k</text>')
    out.append(f'<line class="axis" x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}"/>')
    out.append(f'<line class="axis" x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}"/>')
    if kmin <= run_k <= kmax:
        out.append(
            f'<line class="k-mark" x1="{x(run_k):.1f}" x2="{x(run_k):.1f}" y1="{top}" y2="{top + ph}"/>'
        )
        out.append(f'<text x="{x(run_k) + 4:.1f}" y="{top + 10}">run k = {run_k}</text>')
    for row, (name, values) in enumerate(curves.items()):
        pts = [(x(k), y(v)) for k, v in zip(ks, values) if v is not None]
        if not pts:
            continue
        colour = COLOURS.get(name, "#555")
        dash = f' stroke-dasharray="{DASH[name]}"' if DASH.get(name) else ""
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{path}"/>')
        out += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{colour}"/>' for px, py in pts]
        ly = top + 12 + 18 * row
        out.append(f'<line x1="{left + pw + 14}" x2="{left + pw + 38}" y1="{ly - 4}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"{dash}/>')  # fmt: skip
        out.append(f'<text x="{left + pw + 44}" y="{ly}">{name}@k</text>')
    out.append("</svg>")
    return "".join(out)
