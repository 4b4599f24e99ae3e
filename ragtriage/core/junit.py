"""The JUnit XML report of ``check`` (``--junit``): a suite of one testcase per case
(failure message = ``REASON: WHY``) and a suite of the gate's own checks (bars, stale
labels, completeness).

The case suite is written as text, line by line, in exactly the characters that
ElementTree's tree, ``ET.indent`` and serializer gave (the escaping is ElementTree's
own): building 20,000 elements, indenting and walking them was most of a 50k-case
report's time. The gate's few testcases are still an ElementTree tree.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

from .diagnosis import PASSING
from .escape import xml_text
from .records import CaseRecord

if TYPE_CHECKING:
    from .gate import CheckResult

_x = xml_text  # what XML 1.0 cannot hold, written visibly (core/escape.py)
_attr = ET._escape_attrib  # type: ignore[attr-defined]
_cdata = ET._escape_cdata  # type: ignore[attr-defined]


def _case_details(rec: CaseRecord, k: int, detail: str = "") -> str:
    lines = [f"question: {rec.get('question', '')}"]
    if detail and detail != rec.get("why"):
        lines.insert(0, detail)
    if rec.get("expected"):
        lines.append(
            f"expected: {', '.join(rec['expected'])}" + (" (all)" if rec.get("expect") == "all" else "")
        )
    elif rec.get("unanswerable"):
        lines.append("expected: none (unanswerable: the answer should decline)")
    ranking = rec.get("ranking") or []
    lines.append(f"top {k}: {', '.join(ranking[:k]) or '(nothing retrieved)'}")
    if rec.get("rank"):
        lines.append(f"rank of the first expected chunk: {rec['rank']}")
    lines.append(f"answer: {rec.get('answer')}")
    if rec.get("why"):
        lines.append(f"why: {rec['why']}")
    if rec.get("error"):
        lines.append(f"error: {rec['error']}")
    return "\n".join(lines)


def render_junit(res: CheckResult, testset_path: str | None = None) -> str:
    """JUnit XML: a suite of one testcase per case (failure message = reason + why)
    and a suite of the gate's own checks (bars, stale labels, completeness)."""
    name = _x(Path(res.testset).stem)
    rows: list[str] = []  # the case suite's children, each at its indentation, no newline
    props = [
        f'      <property name="{key}" value="{_attr(_x(res.meta[key]))}" />'
        for key in ("system", "k", "testset", "testset_hash", "started", "version")
        if res.meta.get(key) is not None
    ]
    if props:
        rows += ["    <properties>", *props, "    </properties>"]
    counts = {"tests": len(res.records), "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    where = f' file="{_attr(_x(testset_path))}"' if testset_path else ""
    head = f'    <testcase classname="{_attr(f"ragtriage.{name}")}" name="'
    lines, details, k, add = res.case_lines, res.details, res.k, rows.append
    for rec in res.records:
        rid = rec["id"]
        line = lines.get(rid) if testset_path else None
        lat = rec.get("latency_ms")
        if isinstance(lat, (int, float)) and not isinstance(lat, bool) and lat >= 0:
            total_time += lat / 1000.0
            at = f"{lat / 1000.0:.3f}"
        else:
            at = "0.000"
        at_line = f' line="{_attr(str(line))}"' if line else ""
        tc = f'{head}{_attr(_x(rid))}"{where}{at_line} time="{at}"'
        reason = rec.get("reason")
        if reason in PASSING:
            add(tc + " />")
            continue
        if reason == "unlabelled":
            child = '<skipped message="unlabelled: no expected chunk yet" />'
            counts["skipped"] += 1
        else:
            detail = details.get(rid, "")
            tag, kind = ("error", "error") if reason == "error" else ("failure", _x(reason))
            text = _x(_case_details(rec, k, detail))
            body = f">{_cdata(text)}</{tag}>" if text else " />"
            child = f'<{tag} message="{_attr(_x(failure_message(rec, detail)))}" type="{_attr(kind)}"{body}'
            counts["errors" if reason == "error" else "failures"] += 1
        add(f"{tc}>\n      {child}\n    </testcase>")
    tally = "".join(f' {key}="{v}"' for key, v in counts.items()) + f' time="{total_time:.3f}"'
    suite = f'  <testsuite name="{_attr(name)}"{tally}'
    holder = ET.Element("testsuites")  # the gate suite, indented as the second child of the root
    g = _junit_gate(holder, res, name)
    ET.indent(holder)
    total = "".join(f' {key}="{counts[key] + g[key]}"' for key in counts) + f' time="{total_time:.3f}"'
    head_lines = ['<?xml version="1.0" encoding="UTF-8"?>', f'<testsuites name="ragtriage"{total}>']
    rest = "  " + _serialize(holder[0]) + "</testsuites>\n"
    if not rows:
        return "\n".join([*head_lines, suite + " />", rest])
    return "\n".join([*head_lines, suite + ">", *rows, "  </testsuite>", rest])  # one join: 20 MB at 50k


def _junit_gate(root: ET.Element, res: CheckResult, name: str) -> dict[str, int]:
    """The gate's own suite: one testcase per bar, stale labels, completeness; its counts."""
    gate = ET.SubElement(root, "testsuite", name=f"{name}.gate")
    g = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for b in res.bars:
        tc = ET.SubElement(
            gate, "testcase", classname=f"ragtriage.{name}.gate", name=_x(b.bar.metric), time="0"
        )
        g["tests"] += 1
        if not b.passed:
            msg = (
                f"{b.bar.metric} = {_fmt(b.value)} < {b.bar.minimum:g}"
                if b.value is not None
                else f"{b.bar.metric}: nothing to measure (bar {b.bar.minimum:g})"
            )
            ET.SubElement(tc, "failure", message=_x(msg), type="bar").text = _x(
                f"bar from {b.bar.source}; measured at k = {b.k}"
            )
            g["failures"] += 1
    tc = ET.SubElement(
        gate, "testcase", classname=f"ragtriage.{name}.gate", name="labels are fresh", time="0"
    )
    g["tests"] += 1
    if res.stale:
        lines = [
            f"case {s['case']}: label {s['label']} is {s['status']}" for s in map(_stale_fields, res.stale)
        ]
        ET.SubElement(
            tc, "failure", message=_x(f"{len(res.stale)} stale label(s); run `ragtriage stale`"), type="stale"
        ).text = _x("\n".join(lines))
        g["failures"] += 1
    if res.comparison is not None:
        from .comparison_text import verdict_line

        tc = ET.SubElement(
            gate, "testcase", classname=f"ragtriage.{name}.gate", name="no real regression", time="0"
        )
        g["tests"] += 1
        if res.regressed:
            said = verdict_line(res.comparison)
            ET.SubElement(tc, "failure", message=_x(said), type="regression").text = _x(said)
            g["failures"] += 1
    if res.missing:
        tc = ET.SubElement(
            gate, "testcase", classname=f"ragtriage.{name}.gate", name="run is complete", time="0"
        )
        g["tests"] += 1
        ET.SubElement(
            tc, "failure", message=_x(f"{len(res.missing)} case(s) without a result"), type="incomplete"
        ).text = _x(", ".join(res.missing))
        g["failures"] += 1
    if res.errors or res.not_run:
        tc = ET.SubElement(
            gate, "testcase", classname=f"ragtriage.{name}.gate", name="every case measured", time="0"
        )
        g["tests"] += 1
        msg = (
            f"{len(res.errors)} case(s) ended in an error"
            if res.errors
            else f"{res.not_run} bar(s) not measured: stale labels stopped the check"
        )
        ET.SubElement(tc, "failure", message=_x(msg), type="not-measured").text = _x(", ".join(res.errors))
        g["failures"] += 1
    for key, v in g.items():
        gate.set(key, str(v))
    gate.set("time", "0")
    return g


def _serialize(root: ET.Element) -> str:
    """``ET.tostring(root, encoding="unicode")``, the same characters, three times faster
    (its serializer dispatches on every node's kind and namespace: half of a 50k-case
    JUnit report's time); the escaping is ElementTree's own."""
    esc_attr = ET._escape_attrib  # type: ignore[attr-defined]
    esc_text = ET._escape_cdata  # type: ignore[attr-defined]
    out: list[str] = []
    add = out.append

    def walk(el: ET.Element) -> None:
        tag = el.tag
        add("<" + tag)
        for k, v in el.attrib.items():
            add(f' {k}="{esc_attr(v)}"')
        if el.text or len(el):
            add(">")
            if el.text:
                add(esc_text(el.text))
            for child in el:
                walk(child)
            add(f"</{tag}>")
        else:
            add(" />")
        if el.tail:
            add(esc_text(el.tail))

    walk(root)
    return "".join(out)


from .gate import _fmt, _stale_fields, failure_message  # noqa: E402  (gate imports this module last)
