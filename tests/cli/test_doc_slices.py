"""Slices of a run with document gold (issue 24): every slice carries doc_hit@k with its
interval in `run --by`, the HTML report and the app's summary panel; a run without
document gold has no doc_hit column, and one without chunk gold no hit column."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from html import escape

from ragtriage.core.diagnosis import NOT_SCORED
from ragtriage.core.rates import slice_columns, slices
from ragtriage.core.stats.text import rounded
from ragtriage.core.summary_panel import summary_panel
from tests.conftest import TESTSETS

FOLIEN = TESTSETS / "folien-de" / "folien-de.yaml"  # document gold only, one topic per case


def _records(path):
    return [x for x in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if x["type"] == "case"]


def _doc_hit_by_topic(records):
    got = defaultdict(list)
    for r in records:
        if "doc_hit" in r and r.get("reason") not in NOT_SCORED:
            got[r.get("topic") or "(no topic)"].append(float(r["doc_hit"]))
    return {t: sum(v) / len(v) for t, v in got.items()}


def test_run_by_topic_shows_doc_hit_per_slice_and_no_empty_chunk_columns(cli, tmp_path):
    out = tmp_path / "f.jsonl"
    r = cli("run", FOLIEN, "--out", out, "--by", "topic")
    assert r.returncode == 0, r.stderr
    head = next(line for line in r.stdout.splitlines() if line.startswith("topic "))
    assert head.split() == ["topic", "n", "pass", "supported", "accuracy", "doc_hit"]  # no chunk gold
    records = _records(out)
    want = _doc_hit_by_topic(records)
    assert len(want) > 5
    rows = {}
    for line in r.stdout.split(head, 1)[1].splitlines()[2:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) < 6:
            break
        rows[cells[0]] = cells
    for topic, rate in want.items():
        assert rows[topic][-1].startswith(f"{rate:.3f} ["), (topic, rows[topic])


def test_slices_have_doc_hit_only_where_cases_have_document_gold(cli, tmp_path):
    out = tmp_path / "f.jsonl"
    cli("run", FOLIEN, "--out", out)
    records = _records(out)
    got = {s.name: s for s in slices(records, "topic")}
    for topic, rate in _doc_hit_by_topic(records).items():
        assert got[topic].rates["doc_hit"] == rate and "doc_hit" in got[topic].intervals
    assert "hit" not in slice_columns(list(got.values()))
    shop = tmp_path / "s.jsonl"
    cli("run", TESTSETS / "shop-es.yaml", "--out", shop)
    chunk_only = slices(_records(shop), "topic")
    assert "doc_hit" not in slice_columns(chunk_only) and "hit" in slice_columns(chunk_only)


def test_the_html_report_and_the_app_panel_show_doc_hit_per_topic(cli, tmp_path):
    out, html = tmp_path / "f.jsonl", tmp_path / "r.html"
    cli("run", FOLIEN, "--out", out)
    assert cli("report", out, "-o", html).returncode == 0
    page = html.read_text(encoding="utf-8")
    section = page.split('<section id="slices">', 1)[1].split("</section>", 1)[0]
    by_topic = section.split("<h3>By topic</h3>", 1)[1]
    assert "<th>document found</th>" in by_topic and "<th>found (hit)</th>" not in by_topic
    records = _records(out)
    for topic, rate in _doc_hit_by_topic(records).items():  # the last cell of its row
        row = by_topic.split(f"<tr><td>{escape(topic)}</td>", 1)[1].split("</tr>", 1)[0]
        assert row.rsplit("<td>", 1)[1].startswith(rounded(rate, 3) + "<br>"), (topic, row)
    panel = summary_panel(records, 3, {"with_chunks": 0})
    text = "\n".join(panel.slice_lines(max_slices=100))
    for topic, rate in _doc_hit_by_topic(records).items():
        block = re.split(r"\n  (?=\S)", text.split(f"\n  {topic}  n ", 1)[1], maxsplit=1)[0]
        assert f"doc_hit@3 {rate:.3f} [" in block, (topic, block)
