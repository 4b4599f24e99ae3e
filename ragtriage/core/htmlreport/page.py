"""The report as one self-contained HTML page. Every text that comes from a file or a
system goes through :func:`~ragtriage.core.safe_text.html_text` where it is put in
place; only numbers this module formats are written as they are."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..diagnosis import PASSING, TRIAGE_ORDER
from ..safe_text import html_text as e
from ..safe_text import visible
from ..stats import INCONCLUSIVE, NO_REGRESSION, REGRESSION, Interval
from ..stats.text import interval_points, p_text, points, rounded
from .assets import CSP, CSS, JS
from .data import ReportData
from .svg import interval_bar, sweep_chart

LABELS = {
    "hit": "found (hit@k)",
    "recall": "recall@k",
    "precision": "precision@k",
    "mrr": "mrr@k",
    "doc_hit": "document found (doc_hit@k, k documents)",
    "doc_recall": "doc_recall@k",
    "doc_precision": "doc_precision@k",
    "doc_mrr": "doc_mrr@k",
    "supported": "supported",
    "faithfulness": "faithfulness",
    "accuracy": "correct (accuracy)",
    "coverage": "coverage",
    "unknown_abstention": "unknown abstention",
    "pass": "pass",
}


def _num(v: float | None) -> str:
    return "–" if v is None else rounded(v, 3)


def _iv(iv: Interval | None) -> str:
    return "" if iv is None else f"[{rounded(iv.lo, 3)}, {rounded(iv.hi, 3)}]"


def _denominators(s: Mapping[str, Any]) -> dict[str, int]:
    scored = s.get("n", 0) - s.get("unlabelled", 0) - s.get("errors", 0)
    ans = s.get("answerable", 0)
    return {
        **dict.fromkeys(("hit", "recall", "precision", "mrr"), s.get("with_chunks", ans)),
        **dict.fromkeys(("doc_hit", "doc_recall", "doc_precision", "doc_mrr"), s.get("with_docs", 0)),
        **dict.fromkeys(("supported", "accuracy", "coverage"), scored),
        "faithfulness": s.get("answered", 0),
        "unknown_abstention": scored - ans,
    }


def _header(d: ReportData) -> str:
    r = d.result
    meta = r.meta
    parts = [
        e(r.testset),
        e(meta.get("system") or "?"),
        f"k = {r.k}",
        f"{r.summary.get('n', len(r.records))} cases",
    ]
    if r.run:
        parts.append("run " + e(r.run))
    if d.baseline:
        parts.append("baseline " + e(d.baseline))
    return (
        f"<header><h1>{e(d.title)}</h1><p class=\"meta\">{' · '.join(parts)}</p>"
        f"<p class=\"meta\">made {e(d.generated)} · ragtriage {e(meta.get('version') or '')} · "
        f"intervals: 95 %, {e(d.clusters_note)}</p></header>"
    )


def _verdict_class(v: str) -> str:
    return {REGRESSION: "bad", NO_REGRESSION: "good"}.get(v, "warn")


def _comparison(d: ReportData) -> str:
    from ..comparison_text import _flips, _verdict_cell, verdict_line

    rc = d.comparison
    if rc is None:
        return ""
    out = ['<section id="comparison"><h2>Comparison with the baseline</h2>']
    out.append(f'<p class="verdict {_verdict_class(rc.verdict)}">{e(verdict_line(rc))}</p>')
    out.append(
        "<table><tr><th>measure</th><th class=num>baseline</th><th class=num>this run</th><th class=num>Δ</th>"
        "<th>95 % interval</th><th>flips</th><th>test</th><th class=num>p (Holm)</th><th>verdict</th></tr>"
    )
    for c in rc.gate.comparisons:
        cls = {REGRESSION: "tag-bad", NO_REGRESSION: "tag-good", INCONCLUSIVE: "tag-warn"}[c.verdict]
        out.append(
            f"<tr><td>{e(c.metric)}</td><td class=num>{_num(c.a)}</td><td class=num>{_num(c.b)}</td>"
            f"<td class=num>{e(points(c.delta))}</td><td>{e(interval_points(c.interval))}</td>"
            f"<td>{e(_flips(c))}</td><td>{e(c.method)}</td><td class=num>{e(p_text(c.p_adjusted))}</td>"
            f'<td class="{cls}">{e(_verdict_cell(c))}</td></tr>'
        )
    out.append("</table>")
    for c in rc.gate.comparisons:
        if c.table is None:
            continue
        t = c.table
        out.append(
            f"<h3>{e(c.metric)}: paired table</h3><table><tr><th></th><th>this run passes</th>"
            f"<th>this run fails</th></tr><tr><th>baseline passes</th><td class=num>{t.both}</td>"
            f"<td class=num><span class=tag-bad>{t.worse} ↓</span></td></tr><tr><th>baseline fails</th>"
            f"<td class=num><span class=tag-good>{t.better} ↑</span></td><td class=num>{t.neither}</td></tr></table>"
        )
    notes = [
        f"α = {rc.options.alpha:g} one-sided, δ = {points(rc.options.margin, signed=False)}; {rc.clusters_note}"
    ]
    if rc.only_a:
        notes.append(
            f"{len(rc.only_a)} case(s) only in the baseline (failures here): " + ", ".join(rc.only_a[:20])
        )
    if rc.only_b:
        notes.append(
            f"{len(rc.only_b)} case(s) only in this run (failures in the baseline): "
            + ", ".join(rc.only_b[:20])
        )
    if rc.same_system and rc.noise_floor is not None:
        notes.append(
            f"A/A: the same system on the same test set; noise floor {points(rc.noise_floor, signed=False)}"
        )
    out += [f'<p class="note">{e(n)}</p>' for n in notes]
    if rc.slices:
        out.append("<h3>By tag (exploratory: Benjamini–Hochberg q across tags, not a gate)</h3>")
        out.append(
            "<table><tr><th>tag</th><th class=num>n</th><th class=num>Δ</th><th>interval</th><th>flips</th><th class=num>q</th></tr>"
        )
        for s in rc.slices:
            c = s.comparison
            out.append(
                f"<tr><td>{e(s.name)}</td><td class=num>{c.n}</td><td class=num>{e(points(c.delta))}</td>"
                f"<td>{e(interval_points(c.interval))}</td><td>{e(_flips(c))}</td><td class=num>{e(p_text(s.q))}</td></tr>"
            )
        out.append("</table>")
    out.append("</section>")
    return "".join(out)


def _bars(d: ReportData) -> str:
    r = d.result
    if not r.bars and not r.stale and not r.missing and r.comparison is None:
        return ""
    out = ['<section id="gate"><h2>The gate</h2>']
    word = "passed" if r.passed else "failed"
    why = " (a real regression against the baseline)" if r.regressed else ""
    out.append(f'<p class="verdict {"good" if r.passed else "bad"}">check {word}{why}</p>')
    if r.bars:
        out.append(
            "<table><tr><th>bar</th><th class=num>value</th><th>interval</th><th class=num>minimum</th><th>result</th></tr>"
        )
        for b in r.bars:
            iv = getattr(b, "interval", None)
            res = (
                '<span class="tag-good">✓ pass</span>' if b.passed else '<span class="tag-bad">✗ fail</span>'
            )
            out.append(
                f"<tr><td><code>{e(b.bar.metric)}</code></td><td class=num>{_num(b.value)}</td><td>{_iv(iv)}</td>"
                f"<td class=num>{b.bar.minimum:g}</td><td>{res}</td></tr>"
            )
        out.append("</table>")
    if r.stale:
        from ..gate import _stale_fields

        out.append(f"<p class=tag-bad>✗ {len(r.stale)} stale label(s)</p><ul>")
        for s in map(_stale_fields, r.stale):
            out.append(
                f"<li>case <code>{e(s['case'])}</code>: label <code>{e(s['label'])}</code> is {e(s['status'])}</li>"
            )
        out.append("</ul>")
    if r.missing:
        out.append(
            f"<p class=tag-bad>✗ {len(r.missing)} case(s) without a result: "
            + e(", ".join(r.missing))
            + "</p>"
        )
    out.append("</section>")
    return "".join(out)


def _summary(d: ReportData) -> str:
    s = d.result.summary
    dens = _denominators(s)
    out = ['<section id="summary"><h2>Summary</h2><table><tr><th>measure</th><th class=num>value</th>'
           "<th>95 % interval</th><th></th><th class=num>n</th><th>interval by</th></tr>"]  # fmt: skip
    docs = ("doc_hit", "doc_recall", "doc_mrr", "doc_precision") if "doc_hit" in s else ()
    chunks = ("hit", "recall", "mrr", "precision") if s.get("with_chunks") != 0 else ()
    for m in (
        *chunks,
        *docs,
        "supported",
        "faithfulness",
        "accuracy",
        "coverage",
        "unknown_abstention",
    ):
        v = s.get(m)
        iv = d.intervals.get(m)
        out.append(
            f"<tr><td>{e(LABELS[m].replace('@k', '@' + str(d.result.k)))}</td><td class=num>{_num(v)}</td>"
            f"<td>{_iv(iv)}</td><td>{interval_bar(v, iv)}</td><td class=num>{dens.get(m, '')}</td>"
            f"<td class=muted>{e(iv.method) if iv else ''}</td></tr>"
        )
    out.append("</table>")
    if s.get("tokens") is not None:
        out.append(f'<p class="note">prompt tokens: {int(s["tokens"]):,}</p>')
    out += [f'<p class="note">note: {e(n)}</p>' for n in d.result.notes]
    out.append("</section>")
    return "".join(out)


def _reasons(d: ReportData) -> str:
    counts = d.result.summary.get("reasons") or {}
    if not counts:
        return ""
    top = max(counts.values())
    order = {r: i for i, r in enumerate(TRIAGE_ORDER)}
    out = [
        '<section id="reasons"><h2>Reasons</h2><table><tr><th>reason</th><th class=num>cases</th><th></th></tr>'
    ]
    for name, n in sorted(counts.items(), key=lambda kv: order.get(kv[0], len(order))):
        failing = name not in PASSING and name != "unlabelled"
        label = f'<a href="#cases" data-filter-reason="{e(name)}">{e(name)}</a>' if failing else e(name)
        out.append(
            f'<tr><td>{label}</td><td class=num>{n}</td><td><span class="bar" style="width:{160 * n / top:.0f}px">'
            "</span></td></tr>"
        )
    out.append("</table></section>")
    return "".join(out)


SLICE_HEADS = {"doc_hit": "document found"}  # a column head, where LABELS is a sentence


def _slices(d: ReportData) -> str:
    from ..rates import slice_columns

    out = ['<section id="slices"><h2>Slices</h2>']
    for by, title in (("tag", "By tag"), ("topic", "By topic")):
        rows = d.slices.get(by) or []
        if not rows or all(s.name in ("(no topic)", "(no tag)") for s in rows):
            continue
        cols = slice_columns(rows)
        out.append(f"<h3>{title}</h3><table><tr><th>{by}</th><th class=num>n</th>")
        out += [f"<th>{e(SLICE_HEADS.get(c) or LABELS[c].replace('@k', ''))}</th>" for c in cols]
        out.append("</tr>")
        for s in rows:
            out.append(f"<tr><td>{e(s.name)}</td><td class=num>{s.n}</td>")
            for c in cols:
                v = s.rates.get(c)
                out.append(f"<td>{_num(v)}<br><span class=muted>{_iv(s.intervals.get(c))}</span></td>")
            out.append("</tr>")
        out.append("</table>")
    out.append('<p class="note">A case with several tags is in each of them.</p></section>')
    return "".join(out)


def _sweep(d: ReportData) -> str:
    if not d.sweep_ks or all(v is None for vs in d.sweep.values() for v in vs):
        return ""
    out = ['<section id="sweep"><h2>Retrieval against k</h2>',
           '<p class="note">From the stored rankings (no new call): what a larger or smaller k would find.</p>',
           sweep_chart(d.sweep, d.sweep_ks, d.result.k)]  # fmt: skip
    out.append("<table><tr><th>k</th>" + "".join(f"<th class=num>{e(m)}</th>" for m in d.sweep) + "</tr>")
    for i, k in enumerate(d.sweep_ks):
        out.append(
            f"<tr><td>{k}</td>"
            + "".join(f"<td class=num>{_num(vs[i])}</td>" for vs in d.sweep.values())
            + "</tr>"
        )
    out.append("</table></section>")
    return "".join(out)


def _judge(d: ReportData) -> str:
    j = d.judge
    if not j:
        return ""
    from ..judge import kappa_text

    out = ['<section id="judge"><h2>The judge against the grades</h2>']
    out.append("<table><tr><th></th><th class=num>n</th><th class=num>agreement</th><th>κ [95 %]</th>"
               "<th class=num>yes/yes</th><th class=num>yes/no</th><th class=num>no/yes</th><th class=num>no/no</th></tr>")  # fmt: skip
    for q, label in (
        ("supported", "judge: supported"),
        ("correct", "judge: correct"),
        ("grounding", "grounding check"),
    ):
        a = j[q]
        (yy, yn), (ny, nn) = a["confusion"]
        out.append(
            f"<tr><td>{label}</td><td class=num>{a['n']}</td><td class=num>{_num(a['agreement'])}</td>"
            f"<td>{e(kappa_text(a))}</td><td class=num>{yy}</td><td class=num>{yn}</td><td class=num>{ny}</td>"
            f"<td class=num>{nn}</td></tr>"
        )
    out.append("</table><p class=note>yes/no: the judge (or the check) said yes, the grade said no.</p>")
    corr = j.get("corrected") or {}
    rows = [(q, est) for q, est in corr.items() if est is not None]
    if rows:
        out.append("<h3>Judge-scored rates, corrected by the grades (prediction-powered)</h3><table><tr>"
                   "<th></th><th class=num>judge alone</th><th class=num>corrected</th><th>95 % interval</th>"
                   "<th class=num>graded</th><th class=num>judged only</th></tr>")  # fmt: skip
        for q, est in rows:
            out.append(
                f"<tr><td>judge_{q}</td><td class=num>{_num(est.judge_rate)}</td><td class=num>{_num(est.estimate)}</td>"
                f"<td>{_iv(est.interval)}</td><td class=num>{est.graded}</td><td class=num>{est.unlabelled}</td></tr>"
            )
        out.append("</table>")
    out.append("</section>")
    return "".join(out)


def _ranking(d: ReportData, r: Mapping[str, Any]) -> str:
    expected = set(r.get("expected") or ())
    ranking = list(r.get("ranking") or ())[: d.result.k]
    if not ranking:
        return '<p class="muted">nothing retrieved</p>'
    out = ['<ol class="ranking">']
    for cid in ranking:
        ch = d.chunks.get(cid)
        text = f'<span class="chunk-text">{e(ch.text)}</span>' if ch else ""
        gold = ' class="gold"' if cid in expected else ""
        mark = " ✓ expected" if cid in expected else ""
        out.append(f"<li{gold}><code>{e(cid)}</code>{mark}{text}</li>")
    out.append("</ol>")
    return "".join(out)


def _expected(d: ReportData, r: Mapping[str, Any]) -> str:
    exp = list(r.get("expected") or ())
    if not exp:
        return (
            "<p><b>expected:</b> none (unanswerable: the answer should decline)</p>"
            if r.get("unanswerable")
            else ""
        )
    ranking = list(r.get("ranking") or ())
    items = []
    for cid in exp:
        rank = ranking.index(cid) + 1 if cid in ranking else 0
        where = f"rank {rank}" if rank else "not retrieved"
        ch = d.chunks.get(cid)
        text = f'<span class="chunk-text">{e(ch.text)}</span>' if ch else ""
        items.append(f"<li><code>{e(cid)}</code> — {where}{text}</li>")
    all_ = " (all of them)" if r.get("expect") == "all" else ""
    return f"<p><b>expected{all_}:</b></p><ul>{''.join(items)}</ul>"


def _documents(r: Mapping[str, Any], k: int) -> str:
    """The expected documents and where each came in the document ranking, and the quotes."""
    out = []
    want = list(r.get("expected_docs") or ())
    if want:
        ranked = list(r.get("doc_ranking") or ())
        items = []
        for d in want:
            rank = ranked.index(d) + 1 if d in ranked else 0
            where = (
                f"document rank {rank}" + (f", outside k = {k}" if rank > k else "")
                if rank
                else "not retrieved"
            )
            items.append(f"<li><code>{e(d)}</code> — {where}</li>")
        all_ = " (all of them)" if r.get("expect") == "all" else ""
        out.append(f"<p><b>expected documents{all_}:</b></p><ul>{''.join(items)}</ul>")
    quotes = [q for q in r.get("evidence") or () if isinstance(q, dict)]
    if quotes:
        items = []
        for q in quotes:
            chunks = ", ".join(f"<code>{e(c)}</code>" for c in q.get("chunks") or ()) or "no chunk"
            items.append(f"<li>“{e(str(q.get('quote')))}” — {e(str(q.get('status')))}: {chunks}</li>")
        out.append(f"<p><b>evidence:</b></p><ul>{''.join(items)}</ul>")
    return "".join(out)


def _case(d: ReportData, r: Mapping[str, Any]) -> str:
    cid = r["id"]
    tags = [visible(t) for t in d.tags_of.get(cid, [])]
    tag_attr = e(json.dumps(tags, ensure_ascii=False))
    why = d.result.details.get(cid) or r.get("why") or ""
    answer = r.get("answer")
    pills = "".join(f'<span class="pill">{e(t)}</span>' for t in tags)
    topic = f'<span class="muted">{e(r.get("topic"))}</span>' if r.get("topic") else ""
    judge = ""
    j = r.get("judge")
    if isinstance(j, dict) and "error" not in j:
        judge = (f'<p class="note">judge: supported {e(j.get("supported"))}, correct {e(j.get("correct"))} — '
                 f"{e(j.get('reason') or '')}</p>")  # fmt: skip
    return (
        f'<article class="case" data-reason="{e(r.get("reason"))}" data-tags="{tag_attr}" id="case-{e(cid)}">'
        f'<header><code>{e(cid)}</code><span class="reason">{e(r.get("reason"))}</span>{topic}{pills}</header>'
        f"<p><b>question:</b> {e(r.get('question') or '')}</p>"
        + (f'<p class="note"><b>where to look:</b> {e(why)}</p>' if why else "")
        + (f'<p><b>answer:</b></p><div class="answer">{e(answer)}</div>' if answer is not None else "<p><b>answer:</b> <span class=muted>none (declined)</span></p>")
        + (f'<p class="tag-bad">error: {e(r.get("error"))}</p>' if r.get("error") else "")
        + judge
        + _expected(d, r)
        + _documents(r, d.result.k)
        + f"<p><b>top {d.result.k}:</b></p>"
        + _ranking(d, r)
        + "</article>"
    )  # fmt: skip


def _cases(d: ReportData) -> str:
    failures = d.result.failures()
    out = [f'<section id="cases"><h2>Failing cases ({len(failures)})</h2>']
    if not failures:
        out.append("<p>No failing case.</p></section>")
        return "".join(out)
    reasons = list(dict.fromkeys(str(r.get("reason")) for r in failures))
    tags = sorted({visible(t) for r in failures for t in d.tags_of.get(r["id"], [])})
    out.append(
        '<div class="filters"><label>reason <select id="f-reason"><option value="">every reason</option>'
    )
    out += [f'<option value="{e(x)}">{e(x)}</option>' for x in reasons]
    out.append('</select></label><label>tag <select id="f-tag"><option value="">every tag</option>')
    out += [f'<option value="{e(x)}">{e(x)}</option>' for x in tags]
    out.append('</select></label><label>text <input type="search" id="f-text" placeholder="id, question, answer…">'
               '</label><span id="f-count" class="muted"></span></div>')  # fmt: skip
    out += [_case(d, r) for r in failures]
    out.append("</section>")
    return "".join(out)


def render(d: ReportData) -> str:
    """The whole page."""
    body = "".join(
        [
            _header(d),
            _comparison(d),
            _bars(d),
            _summary(d),
            _reasons(d),
            _slices(d),
            _sweep(d),
            _judge(d),
            _cases(d),
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{e(d.title)} — {e(d.result.testset)}</title><style>{CSS}</style></head>"
        f"<body>{body}<script>{JS}</script></body></html>\n"
    )
