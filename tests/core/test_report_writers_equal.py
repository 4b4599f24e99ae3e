"""The faster report writers give exactly what the plain ones gave: the markdown escapes
(``md_text``, ``md_code``, ``xml_text`` with their fast paths) and the JUnit report
written as text (``core/junit.py``) against the ElementTree tree, ``ET.indent`` and
``ET.tostring`` it replaced. The reference implementations below are the previous code,
kept verbatim; any character they render differently fails."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragtriage.core import escape
from ragtriage.core.diagnosis import PASSING
from ragtriage.core.gate import BarResult, CheckResult, collect_bars, failure_message, render_junit
from ragtriage.core.junit import _case_details, _junit_gate

# ---------------------------------------------------------------- the previous escapes


def ref_md_text(s: object) -> str:
    text = escape.inline(escape._BREAKS.sub(" ", str(s)))
    out = text.translate(escape._MD_TABLE)
    out = escape._AUTOLINK.sub(lambda m: m.group(1) + "\\" + m.group(2), out)
    lead = len(out) - len(out.lstrip(" "))
    m = escape._MD_BLOCK.match(out, lead)
    if m:
        out = out[: m.end() - 1] + "\\" + out[m.end() - 1 :]
    return out


def ref_md_code(s: object) -> str:
    text = escape.inline(s)
    longest = max((len(m) for m in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) or not text else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def ref_xml_text(s: object) -> str:
    text = "" if s is None else str(s)
    return escape._BAD_XML.sub(lambda m: escape._esc(m.group()), text)


# characters the fast paths look at: markdown punctuation, link words in odd cases and
# case-folding letters (ı ſ İ K), line breaks, what XML cannot hold, bidi controls
HOSTILE = st.sampled_from(
    list("\\`*_[]<>&!|~@$#-+=.):;/ \t\n\r\x00\x0b\x1b\x7f\u202e\ufffe\uffff\ud800ıſİKé¿")
    + ["http", "HTTPS", "hTtP", "ftp", "mailto", "XMPP", "www", "wWw", "1.", "12)", "httpſ", "maılto"]
)
TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=4)), max_size=12).map("".join)


@settings(max_examples=600, deadline=None)
@given(TEXT)
def test_the_escapes_write_what_the_plain_ones_wrote(s):
    assert escape.md_text(s) == ref_md_text(s)
    assert escape.md_code(s) == ref_md_code(s)
    assert escape.xml_text(s) == ref_xml_text(s)


def test_the_escapes_on_every_character():
    for lo in range(0, 0x110000, 0x800):
        s = "".join(chr(c) for c in range(lo, lo + 0x800))
        for piece in (s, "http:" + s, s + "www."):
            assert escape.md_text(piece) == ref_md_text(piece)
            assert escape.xml_text(piece) == ref_xml_text(piece)
            assert escape.md_code(piece) == ref_md_code(piece)


# ---------------------------------------------------------------- the previous JUnit writer

_x = ref_xml_text


def ref_render_junit(res: CheckResult, testset_path: str | None = None) -> str:
    name = _x(Path(res.testset).stem)
    root = ET.Element("testsuites", name="ragtriage")
    suite = ET.SubElement(root, "testsuite", name=name)
    props = ET.SubElement(suite, "properties")
    for key in ("system", "k", "testset", "testset_hash", "started", "version"):
        if res.meta.get(key) is not None:
            ET.SubElement(props, "property", name=key, value=_x(res.meta[key]))
    if not len(props):
        suite.remove(props)
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for rec in res.records:
        tc = ET.SubElement(suite, "testcase", classname=f"ragtriage.{name}", name=_x(rec["id"]))
        if testset_path:
            tc.set("file", _x(testset_path))
            line = res.case_lines.get(rec["id"])
            if line:
                tc.set("line", str(line))
        lat = rec.get("latency_ms")
        t = lat / 1000.0 if isinstance(lat, (int, float)) and not isinstance(lat, bool) and lat >= 0 else 0.0
        total_time += t
        tc.set("time", f"{t:.3f}")
        counts["tests"] += 1
        reason = rec.get("reason")
        detail = res.details.get(rec["id"], "")
        if reason in PASSING:
            pass
        elif reason == "unlabelled":
            ET.SubElement(tc, "skipped", message="unlabelled: no expected chunk yet")
            counts["skipped"] += 1
        elif reason == "error":
            el = ET.SubElement(tc, "error", message=_x(failure_message(rec, detail)), type="error")
            el.text = _x(_case_details(rec, res.k, detail))
            counts["errors"] += 1
        else:
            el = ET.SubElement(tc, "failure", message=_x(failure_message(rec, detail)), type=_x(reason))
            el.text = _x(_case_details(rec, res.k, detail))
            counts["failures"] += 1
    for key, v in counts.items():
        suite.set(key, str(v))
    suite.set("time", f"{total_time:.3f}")
    g = _junit_gate(root, res, name)
    for key in counts:
        root.set(key, str(counts[key] + g[key]))
    root.set("time", f"{total_time:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


REASONS = ["supported-correct", "retrieval-miss", "wrong-answer", "error", "unlabelled", None, "odd<&>\x01"]


@st.composite
def results(draw):
    n = draw(st.integers(0, 6))
    records = []
    for i in range(n):
        r = {
            "id": draw(st.sampled_from([f"q{i}", f"q<{i}>&\"'\t", f"c\x1b{i}\n"])),
            "reason": draw(st.sampled_from(REASONS)),
            "question": draw(TEXT),
            "why": draw(st.sampled_from(["", "why & <so>", "retrieval-miss: x\r\ny"])),
            "ranking": draw(st.lists(st.sampled_from(["a", "b&", "c\x00"]), max_size=4)),
            "expected": draw(st.lists(st.sampled_from(["a", "b&"]), max_size=2)),
            "answer": draw(TEXT),
            "unanswerable": draw(st.booleans()),
            "rank": draw(st.sampled_from([None, 0, 2])),
            "error": draw(st.sampled_from([None, "", "timeout\x07"])),
        }
        lat = draw(st.sampled_from([None, 120, 0.5, -1, True, "x", 1e9]))
        if lat is not None:
            r["latency_ms"] = lat
        records.append(r)
    ids = [r["id"] for r in records]
    bars = [BarResult(b, draw(st.sampled_from([None, 0.5, 0.95])), 3) for b in collect_bars({"hit": 0.9}, [])]
    meta_keys = draw(st.lists(st.sampled_from(["system", "k", "testset", "started", "version"]), unique=True))
    return CheckResult(
        testset=draw(st.sampled_from(["t/shop-es.yaml", "a&<b>\x02.yaml"])),
        run=None,
        k=3,
        records=records,
        summary={},
        bars=bars,
        stale=draw(st.sampled_from([[], [{"case": "q1", "label": "a<", "status": "changed"}]])),
        missing=draw(st.sampled_from([[], ["m1", "m&2"]])),
        errors=draw(st.sampled_from([[], ["e1"]])),
        not_run=draw(st.sampled_from([0, 2])),
        case_lines={i: n for n, i in enumerate(ids) if n % 3},
        details={i: draw(st.sampled_from(["", "look & <here>"])) for i in ids},
        meta={key: draw(st.sampled_from(["v", 3, "x&\"<\n\x03"])) for key in meta_keys},
    )


@settings(max_examples=400, deadline=None)
@given(results(), st.sampled_from([None, "", "testsets/shop&es.yaml", "a\x1b.yaml"]))
def test_the_junit_text_is_what_elementtree_wrote(res, path):
    assert render_junit(res, testset_path=path) == ref_render_junit(res, testset_path=path)
