"""``ragtriage report``: one self-contained HTML file whose structure no input can change
(parsed here with the standard HTML parser; the browser tests open the same files)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from ragtriage.core.safe_text import visible
from tests.conftest import TESTSETS
from tests.report.reportkit import HOSTILE, hostile_set


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(path: Path) -> Tree:
    t = Tree()
    t.feed(path.read_text(encoding="utf-8"))
    return t


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory):
    from ragtriage import cli

    d = tmp_path_factory.mktemp("hostile")
    ts, res = hostile_set(d)
    run = d / "run.jsonl"
    assert cli.main(["run", str(ts), "--system", f"results:{res}", "--out", str(run), "--quiet"]) == 0
    base = d / "base.jsonl"
    res_b = d / "base.results.jsonl"
    res_b.write_text(res.read_text(encoding="utf-8").replace("cuesta 9 €", "cuesta 3 €"), encoding="utf-8")
    assert cli.main(["run", str(ts), "--system", f"results:{res_b}", "--out", str(base), "--quiet"]) == 0
    out = d / "report.html"
    assert cli.main(["report", str(run), "--baseline", str(base), "-o", str(out)]) == 0
    return out


def test_no_input_adds_an_element_an_attribute_or_a_script(hostile_report):
    t = parse(hostile_report)
    names = [tag for tag, _ in t.tags]
    assert names.count("script") == 1 and names.count("style") == 1
    assert "img" not in names and "textarea" not in names
    assert names.count("svg") == 1  # the sweep chart, drawn from numbers
    assert not [a for _, attrs in t.tags for a in attrs if a.startswith("on")]


def test_every_hostile_string_is_shown_as_text(hostile_report):
    text = "".join(parse(hostile_report).text)
    for h in HOSTILE:
        assert visible(h) in text or visible(h).replace(" ", "_") in text, h
    assert "\x1b" not in text and "\u202e" not in text  # shown as \x1b and \u202e, never obeyed


def test_the_page_needs_nothing_from_outside(hostile_report):
    html = hostile_report.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    t = parse(hostile_report)
    for tag, attrs in t.tags:
        for key in ("src", "href"):
            v = attrs.get(key)
            assert v is None or v.startswith("#"), (tag, attrs)


def test_every_failing_case_with_its_question_answer_and_chunks(hostile_report):
    t = parse(hostile_report)
    cases = [a for tag, a in t.tags if tag == "article"]
    assert len(cases) == 4 and {c["data-reason"] for c in cases} == {"wrong-answer", "retrieval-miss"}
    text = "".join(t.text)
    assert "cuesta 9 €" in text and "¿Cuánto cuesta?" in text and "rank 1" in text
    assert "Comparison with the baseline" in text and "verdict: " in text


def test_demo_report_holds_every_section(tmp_path):
    from ragtriage import cli

    run = tmp_path / "run.jsonl"
    assert cli.main(["run", str(TESTSETS / "shop-es.yaml"), "--out", str(run), "--quiet"]) == 0
    out = tmp_path / "r.html"
    assert cli.main(["report", str(run), "-o", str(out)]) == 0
    text = "".join(parse(out).text)
    for heading in (
        "Summary",
        "Reasons",
        "Slices",
        "By tag",
        "By topic",
        "Retrieval against k",
        "Failing cases",
    ):
        assert heading in text, heading
    assert "found (hit@3)0.714[0.359, 0.918]" in text  # the Wilson interval of 5 in 7 beside the rate


def test_report_refuses_to_write_over_its_run(tmp_path, capsys):
    from ragtriage import cli

    run = tmp_path / "run.jsonl"
    assert cli.main(["run", str(TESTSETS / "shop-es.yaml"), "--out", str(run), "--quiet"]) == 0
    before = run.read_bytes()
    assert cli.main(["report", str(run), "-o", str(run)]) == 2
    assert "is also an input" in capsys.readouterr().err and run.read_bytes() == before
