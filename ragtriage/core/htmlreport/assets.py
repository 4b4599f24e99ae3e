"""The report's own style sheet and script: inline, so the file opens from disk with
no network (the page's Content-Security-Policy forbids every fetch). The script only
reads the page; no data is ever put inside it."""

from __future__ import annotations

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)

CSS = """
:root { --fg: #1b1f24; --muted: #5b6570; --bg: #ffffff; --panel: #f5f7f9; --line: #d7dde3;
  --bad: #b42318; --good: #1a7f37; --warn: #9a6700; --accent: #0b5cad; --band: #cfe0f5; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9aa7b4; --bg: #0d1117; --panel: #161b22; --line: #30363d;
    --bad: #ff7b72; --good: #56d364; --warn: #e3b341; --accent: #79c0ff; --band: #1f3a5f; }
}
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; max-width: 1180px; padding: 24px; }
h1 { font-size: 1.5em; margin: 0 0 4px; } h2 { font-size: 1.2em; margin: 28px 0 8px;
  border-bottom: 1px solid var(--line); padding-bottom: 4px; } h3 { font-size: 1.02em; margin: 16px 0 6px; }
.meta, .note, .muted { color: var(--muted); } .note { font-size: .92em; margin: 4px 0; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
table { border-collapse: collapse; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
td { white-space: nowrap; } td.wrap { white-space: normal; }
th { font-weight: 600; background: var(--panel); } td.num, th.num { text-align: right; }
.verdict { font-size: 1.08em; padding: 10px 14px; border-radius: 6px; border: 1px solid var(--line);
  background: var(--panel); margin: 8px 0; }
.verdict.bad { border-color: var(--bad); } .verdict.good { border-color: var(--good); }
.verdict.warn { border-color: var(--warn); }
.tag-bad { color: var(--bad); font-weight: 600; } .tag-good { color: var(--good); font-weight: 600; }
.tag-warn { color: var(--warn); font-weight: 600; }
.iv { display: inline-block; position: relative; width: 160px; height: 12px; vertical-align: middle;
  background: var(--panel); border: 1px solid var(--line); border-radius: 3px; }
.iv .band { position: absolute; top: 2px; bottom: 2px; background: var(--band); }
.iv .dot { position: absolute; top: 0; bottom: 0; width: 2px; background: var(--accent); }
.bar { display: inline-block; height: 10px; background: var(--accent); vertical-align: middle; }
.filters { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; background: var(--panel);
  padding: 10px 12px; border-radius: 6px; position: sticky; top: 0; z-index: 1; }
.filters label { display: flex; gap: 6px; align-items: center; }
select, input[type=search] { font: inherit; padding: 3px 6px; color: var(--fg); background: var(--bg);
  border: 1px solid var(--line); border-radius: 4px; }
article.case { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; margin: 10px 0; }
article.case header { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; }
.reason { font-weight: 600; color: var(--bad); } .pill { border: 1px solid var(--line); border-radius: 10px;
  padding: 0 7px; font-size: .85em; color: var(--muted); }
.answer, .chunk-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.answer { background: var(--panel); padding: 6px 10px; border-radius: 4px; margin: 4px 0; }
ol.ranking { margin: 4px 0; padding-left: 28px; } ol.ranking li { margin: 3px 0; }
ol.ranking li.gold { font-weight: 600; } ol.ranking li.gold::marker { color: var(--good); }
.chunk-text { font-weight: normal; color: var(--muted); display: block; }
[hidden] { display: none !important; }
svg text { fill: var(--fg); font: 12px system-ui, sans-serif; } svg .axis { stroke: var(--muted); }
svg .grid { stroke: var(--line); } svg .k-mark { stroke: var(--warn); stroke-dasharray: 4 3; }
"""

JS = """
(function () {
  "use strict";
  var cases = Array.prototype.slice.call(document.querySelectorAll("article.case"));
  var reason = document.getElementById("f-reason");
  var tag = document.getElementById("f-tag");
  var text = document.getElementById("f-text");
  var count = document.getElementById("f-count");
  if (!reason || !tag || !text || !count) { return; }
  function apply() {
    var rv = reason.value, tv = tag.value, qv = text.value.trim().toLowerCase(), shown = 0;
    cases.forEach(function (el) {
      var tags = JSON.parse(el.getAttribute("data-tags") || "[]");
      var ok = (!rv || el.getAttribute("data-reason") === rv) && (!tv || tags.indexOf(tv) >= 0) &&
        (!qv || el.textContent.toLowerCase().indexOf(qv) >= 0);
      el.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + cases.length + " failing cases shown";
  }
  reason.addEventListener("change", apply);
  tag.addEventListener("change", apply);
  text.addEventListener("input", apply);
  Array.prototype.forEach.call(document.querySelectorAll("[data-filter-reason]"), function (a) {
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      reason.value = a.getAttribute("data-filter-reason");
      tag.value = "";
      apply();
      document.getElementById("cases").scrollIntoView();
    });
  });
  apply();
})();
"""
