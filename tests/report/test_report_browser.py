"""The HTML report in a real headless Chromium (Debian's, driven by Playwright): it
renders, the filters work, nothing is fetched, no script error, and no hostile text acts."""

from __future__ import annotations

import pytest

from tests.conftest import TESTSETS
from tests.report.reportkit import HOSTILE, hostile_set


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from ragtriage import cli

    d = tmp_path_factory.mktemp("browser")
    ts, res = hostile_set(d)
    run = d / "run.jsonl"
    assert cli.main(["run", str(ts), "--system", f"results:{res}", "--out", str(run), "--quiet"]) == 0
    hostile = d / "hostile.html"
    assert cli.main(["report", str(run), "-o", str(hostile)]) == 0
    demo_run = d / "demo.jsonl"
    assert cli.main(["run", str(TESTSETS / "shop-es.yaml"), "--out", str(demo_run), "--quiet"]) == 0
    k1 = d / "demo-k1.jsonl"
    assert cli.main(["run", str(TESTSETS / "shop-es.yaml"), "--k", "1", "--out", str(k1), "--quiet"]) == 0
    demo = d / "demo.html"
    assert cli.main(["report", str(demo_run), "--baseline", str(k1), "-o", str(demo)]) == 0
    return {"hostile": hostile, "demo": demo}


def _clean(p):
    assert p.errors == []
    assert [c for c in p.console if c[0] in ("error", "warning")] == []
    assert p.requests == [p.url]  # the page itself, and nothing else


def test_demo_report_renders_with_no_error_and_no_request(open_page, reports):
    p = open_page(reports["demo"])
    _clean(p)
    page = p.page
    assert page.title().startswith("ragtriage report")
    assert page.locator("#comparison .verdict").inner_text().startswith("verdict: ")
    assert page.locator("#sweep svg polyline").count() == 4
    assert page.locator("#f-count").inner_text() == "4 of 4 failing cases shown"
    box = page.locator("#summary table").bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100


def test_filters_by_reason_tag_and_text(open_page, reports):
    p = open_page(reports["demo"])
    page = p.page
    page.select_option("#f-reason", "retrieval-miss")
    assert sorted(p.shown()) == ["plazo-entrega", "reembolso"]
    assert page.locator("#f-count").inner_text() == "2 of 4 failing cases shown"
    page.select_option("#f-reason", "")
    page.select_option("#f-tag", "pagos")
    assert p.shown() == ["tarjeta-rechazada"]
    page.select_option("#f-tag", "")
    page.fill("#f-text", "garantía")
    assert p.shown() == ["garantía"]
    page.fill("#f-text", "")
    page.click('#reasons a[data-filter-reason="wrong-answer"]')
    assert page.locator("#f-reason").input_value() == "wrong-answer"
    assert len(p.shown()) == 1
    _clean(p)


def test_hostile_text_never_acts(open_page, reports):
    p = open_page(reports["hostile"])
    page = p.page
    _clean(p)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("script").count() == 1
    assert page.locator("[onerror], [onload], img, textarea").count() == 0
    body = page.locator("body").inner_text()
    assert "<script>window.__pwned=1</script>" in body
    assert "\\x1b]0;owned\\x07" in body and "\\u202eevil\\u202c" in body


def test_a_hostile_tag_filters_exactly_its_cases(open_page, reports):
    p = open_page(reports["hostile"])
    page = p.page
    options = page.eval_on_selector_all("#f-tag option", "els => els.map(e => e.value)")
    tag = HOSTILE[1]
    assert tag in options
    page.select_option("#f-tag", tag)
    shown = p.shown()
    assert len(shown) == 1 and shown[0].startswith("case-1</textarea>")
    page.select_option("#f-tag", "común")
    assert len(p.shown()) == 4
    _clean(p)


def test_a_screenshot_of_the_report(open_page, reports, tmp_path):
    p = open_page(reports["demo"])
    shot = tmp_path / "report.png"
    p.page.set_viewport_size({"width": 1200, "height": 900})
    p.page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
