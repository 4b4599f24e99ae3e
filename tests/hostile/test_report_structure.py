"""Report injection (issue 19 #7): no text from a test set, a system or a run file can
change the structure of a report. Proven by parsing what was written: markdown with a
real CommonMark/GFM parser (markdown-it-py), JUnit with ``xml.etree``, CSV with ``csv``.
Each report is made twice, once from hostile text and once from plain text in the same
places; the two must parse to the same structure, and the hostile text must be found in
the parsed text as the text it is."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from ragtriage.core.document import TestSetDocument
from ragtriage.core.escape import csv_cell, csv_uncell, inline, md_code, md_text, visible, xml_text

from .campaign import call

#: text put in every free-text place: questions, topics, notes, answers, must-contain, reasons
HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "cita [<img/src=https://e.vil/x.png>]",
    "`code` and ``more``",
    "a | b | c",
    "one\ntwo",
    "# all checks passed",
    "\n## ✅ all checks passed\n\nok",
    "**bold** _em_ ~~gone~~",
    "[click](https://e.vil) ![i](https://e.vil/i.png)",
    "https://e.vil www.e.vil mail@e.vil",
    "&lt;b&gt; &amp; &#60;",
    "\x1b]0;owned\x07 \x1b]52;c;ZXZpbA==\x07 \x1b]8;;https://e.vil\x1b\\x\x1b]8;;\x1b\\",
    "\x1b[2J\x9b31m\u202eevil\u2066",
    "\x00\x08\x0b\x0c\x1f\x7f\ufffe\uffff",
    "- a list",
    "1. a list",
    "> a quote",
    "$x^2$ @someone #123",
    "trailing \\",
    "|---|---|",
    "<!-- hidden -->",
    "]]> <![CDATA[x]]>",
    "=HYPERLINK(\"https://e.vil\",\"x\")",
    "+1",
    "-2+3",
    "@SUM(A1:A2)",
    "\t=1",
]
#: case ids (no whitespace allowed) with what may break a code span, a cell or XML
IDS = ["a|b", "x`y", "``", "<img/src=x>", "#h", "]]>", "e\x1b[2Jx", "-z", "=1+1", "u\u202ev"]


def _testset(folder: Path, texts: list[str], ids: list[str], name: str = "ts.yaml") -> Path:
    path = folder / name
    doc = TestSetDocument.create(path, corpus="shop-es.chunks.jsonl", language="es")
    answers = []
    for i, t in enumerate(texts):
        cid = ids[i % len(ids)] + f"-{i}"
        doc.add_case(id=cid, question=t, topic=t, notes=t, expected=["entrega-1"], must_contain=[t])
        answers.append({"id": cid, "ranking": ["pago-1"], "answer": t})
    doc.save(record_labels=False)
    (folder / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    return path


def _benign(n: int) -> tuple[list[str], list[str]]:
    """Plain texts that cite (chunks not in the corpus) where the hostile texts do, so both
    reports carry the same notes ("3 case(s) cite a chunk that is not in the corpus", ...):
    what may differ between the two is the text the reader sees, never the structure."""
    from ragtriage.core.grounding import citations

    texts = [f"plain text {i}" + (f" [plain-cite-{i}]" if citations(HOSTILE[i]) else "") for i in range(n)]
    return texts, [f"plain{i}" for i in range(len(IDS))]


_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _shape(md: str) -> list[tuple]:
    """Every token's type, tag and nesting, inline children included, texts left out (the
    text the reader sees is what may differ; the structure may not)."""
    out = []
    for t in _MD.parse(md):
        out.append((t.type, t.tag, t.nesting))
        for c in t.children or ():
            if c.type not in ("text", "code_inline"):
                out.append(("  " + c.type, c.tag, c.nesting))
    return out


def _flat(t: str) -> str:
    return re.sub(r"\r\n|[\r\n]", " ", t)


def _texts(md: str) -> str:
    return "\n".join(
        c.content for t in _MD.parse(md) for c in (t.children or ()) if c.type in ("text", "code_inline")
    )


@pytest.fixture
def folder(tmp_path):
    from tests.conftest import TESTSETS

    (tmp_path / "shop-es.chunks.jsonl").write_bytes((TESTSETS / "shop-es.chunks.jsonl").read_bytes())
    (tmp_path / "hostile").mkdir()
    (tmp_path / "plain").mkdir()
    for d in ("hostile", "plain"):
        (tmp_path / d / "shop-es.chunks.jsonl").write_bytes((TESTSETS / "shop-es.chunks.jsonl").read_bytes())
    return tmp_path


def _check_reports(folder: Path, texts, ids, name="ts.yaml") -> dict[str, str]:
    ts = _testset(folder, texts, ids, name)
    r = call(
        ["check", str(ts), "--run-anyway", "--system", f"results:{folder / 'answers.jsonl'}", "--markdown",
         str(folder / "r.md"), "--junit", str(folder / "r.xml"), "--json", str(folder / "r.json")],
        folder, {},
    )  # fmt: skip
    assert r["code"] == 1 and not r["traceback"], r["err"]
    return {k: (folder / f"r.{k}").read_text(encoding="utf-8") for k in ("md", "xml", "json")}


def test_check_markdown_keeps_its_structure(folder):
    hostile = _check_reports(folder / "hostile", HOSTILE, IDS)["md"]
    plain = _check_reports(folder / "plain", *_benign(len(HOSTILE)))["md"]
    assert _shape(hostile) == _shape(plain)
    shown = _texts(hostile)
    for t in HOSTILE:  # each question is in the report, as its text
        assert inline(_flat(t)).strip() in shown, t
    tokens = [c.type for t in _MD.parse(hostile) for c in [t, *(t.children or ())]]
    assert not {"html_inline", "html_block", "link_open", "image"} & set(tokens)


def test_junit_parses_and_names_every_case_as_it_is(folder):
    xml = _check_reports(folder / "hostile", HOSTILE, IDS, name="t\x1b[31m\x01|.yaml")["xml"]
    root = ET.fromstring(xml)
    cases = [tc for tc in root.iter("testcase") if not tc.get("classname", "").endswith(".gate")]
    assert len(cases) == len(HOSTILE)
    ids = [IDS[i % len(IDS)] + f"-{i}" for i in range(len(HOSTILE))]
    assert [tc.get("name") for tc in cases] == [xml_text(i) for i in ids]
    assert {tc.get("classname") for tc in cases} == {"ragtriage." + xml_text("t\x1b[31m\x01|")}
    bodies = "\n".join(f.text or "" for f in root.iter("failure"))
    for t in HOSTILE:
        assert xml_text(t) in bodies, t  # the answer, shown as it was (what XML cannot hold, visibly)


def _diff_md(folder: Path, reasons: list[str], ids: list[str]) -> str:
    meta = {"type": "meta", "testset": "ts.yaml", "system": "builtin", "k": 3}
    for name, reason_of in (("a", lambda r: "supported-correct"), ("b", lambda r: r)):
        lines = [meta] + [
            {"type": "case", "id": f"{ids[i % len(ids)]}-{i}", "reason": reason_of(r)}
            for i, r in enumerate(reasons)
        ]
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = call(
        ["diff", str(folder / "a.jsonl"), str(folder / "b.jsonl"), "--markdown", str(folder / "d.md")],
        folder,
        {},
    )
    assert r["code"] == 0 and not r["traceback"], r["err"]
    for e in ("\x1b", "\x9b", "\u202e"):
        assert e not in r["out"] + r["err"]
    return (folder / "d.md").read_text(encoding="utf-8")


def test_diff_markdown_keeps_its_structure(folder):
    hostile = _diff_md(folder / "hostile", HOSTILE, IDS)
    plain = _diff_md(folder / "plain", *_benign(len(HOSTILE)))
    assert _shape(hostile) == _shape(plain)
    shown = _texts(hostile)
    for t in HOSTILE:
        assert inline(_flat(t)).strip() in shown, t


def test_csv_export_neutralises_formulas_and_reads_back_exactly(folder):
    texts = [t for t in HOSTILE if "\x00" not in t]  # import refuses a NUL byte in any text file
    ts = _testset(folder, texts, IDS)
    out = folder / "e.csv"
    r = call(["export", str(ts), "--format", "csv", "-o", str(out)], folder, {})
    assert r["code"] == 0 and "written with a leading '" in r["err"]
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert len(rows) == 1 + len(texts) and {len(x) for x in rows} == {len(rows[0])}
    for row in rows[1:]:
        for cell in row:
            assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r"), cell
    back = folder / "back.yaml"
    r = call(["import", str(out), "--format", "csv", "-o", str(back)], folder, {})
    assert r["code"] == 0, r["err"]
    again = TestSetDocument.load(back)
    assert [(c.id, c.question, c.notes) for c in again.cases] == [
        (c.id, c.question, c.notes) for c in TestSetDocument.load(ts).cases
    ]
    raw = folder / "raw.csv"
    assert call(["export", str(ts), "--format", "csv", "--csv-raw", "-o", str(raw)], folder, {})["code"] == 0
    assert any(c.startswith("=HYPERLINK") for row in csv.reader(io.StringIO(raw.read_text())) for c in row)


@pytest.mark.parametrize("text", HOSTILE + IDS)
def test_each_escape_renders_as_its_text(text):
    """The helpers alone, on one parse each: markdown text and code spans are one text
    token (or one code span) saying the text, XML parses, CSV reads back, a terminal gets
    nothing it would obey."""
    para = _MD.parse(md_text(text))
    assert [t.type for t in para] in ([], ["paragraph_open", "inline", "paragraph_close"])
    if para:
        kids = para[1].children
        assert {c.type for c in kids} <= {"text"}, kids
        assert "".join(c.content for c in kids) == inline(_flat(text)).strip()
    cell = _MD.parse(f"| h |\n|---|\n| {md_code(text)} |\n")
    code = [c for t in cell for c in (t.children or ()) if c.type == "code_inline"]
    assert len(code) == 1 and code[0].content.strip() == inline(text).strip()
    el = ET.Element("a", b=xml_text(text))
    el.text = xml_text(text)
    back = ET.fromstring(ET.tostring(el, encoding="unicode"))
    assert back.text == xml_text(text) and back.get("b") == xml_text(text)
    assert csv_uncell(csv_cell(text)) == text
    for e in ("\x1b", "\x9b", "\u202e", "\x07"):
        assert e not in visible(text) and e not in inline(text)
