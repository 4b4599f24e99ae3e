"""What the HTML report tests share: a test set, chunks and answers full of hostile text,
and the headless Chromium (Debian's ``chromium`` driven by Playwright) they run in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

#: strings that would change the page if written raw: a script, a closed textarea with an
#: onerror, a quote that ends an attribute, an SVG onload, a closed style, a comment, an
#: entity, a terminal escape (OSC title) and a bidi override
HOSTILE = [
    "<script>window.__pwned=1</script>",
    '</textarea><img src=x onerror="window.__pwned=2">',
    '" onerror="window.__pwned=3" x="',
    "'><svg onload=window.__pwned=4>",
    "</style><script>window.__pwned=5</script>",
    "<!-- &amp; ]]>",
    "\x1b]0;owned\x07 \x9b2J",
    "\u202eevil\u202c",
]

INSTALL = "apt-get install -y chromium && pip install playwright"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


def q(s: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are YAML's)."""
    return json.dumps(s)


def hostile_set(dir: Path, name: str = 'hostile-<i>"x.yaml') -> tuple[Path, Path]:
    """(test set, results file): four failing cases and a passing one, every text hostile."""
    dir.mkdir(parents=True, exist_ok=True)
    chunks = [
        {"id": "ok-1", "text": "El envío cuesta 3 €.", "doc": "envíos.md"},
        {"id": "c<img/src=x/onerror=window.__pwned=6>", "text": HOSTILE[0] + " 3 €", "doc": HOSTILE[4]},
        {"id": "garantía-1", "text": HOSTILE[1] + HOSTILE[6], "doc": "garantía.md"},
        {"id": "rückgabe-1", "text": HOSTILE[2] + HOSTILE[7], "doc": "garantía.md"},
    ]
    (dir / "h.chunks.jsonl").write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks), encoding="utf-8"
    )
    cases = []
    for i, h in enumerate(HOSTILE[:4]):
        cases.append(
            f"  - id: {q('case-' + str(i) + h.replace(' ', '_'))}\n"
            f"    topic: {q(HOSTILE[(i + 1) % len(HOSTILE)])}\n"
            f"    question: {q('¿Cuánto cuesta? ' + h + HOSTILE[7])}\n"
            f"    expected: [{q(chunks[1 + i % 3]['id'])}]\n"
            f"    must_contain: [\"3 €\"]\n"
            f"    tags: [{q(h)}, {q(HOSTILE[6])}, 'común']\n"
        )
    cases.append("  - id: fine\n    question: ¿Cuánto cuesta el envío?\n    expected: [ok-1]\n"
                 "    must_contain: [\"3 €\"]\n    tags: ['común']\n")  # fmt: skip
    ts = dir / name
    ts.write_text(
        "version: 1\ncorpus: h.chunks.jsonl\nlanguage: es\nk: 2\ncases:\n" + "".join(cases), encoding="utf-8"
    )
    results = []
    for i, h in enumerate(HOSTILE[:4]):
        results.append(
            {
                "id": "case-" + str(i) + h.replace(" ", "_"),
                "ranking": ["garantía-1", "rückgabe-1", chunks[1]["id"]],
                "answer": f"{HOSTILE[(i + 2) % len(HOSTILE)]} {HOSTILE[6]} cuesta 9 € [garantía-1]",
            }
        )
    results.append({"id": "fine", "ranking": ["ok-1"], "answer": "El envío cuesta 3 €. [ok-1]"})
    res = dir / "h.results.jsonl"
    res.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results), encoding="utf-8")
    return ts, res


def screenshot(html: Path, png: Path, width: int = 1200, height: int = 900, full_page: bool = True) -> None:
    """A PNG of ``html`` as Debian's chromium draws it (Playwright, the flags above)."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise SystemExit(f"no chromium: {INSTALL}")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=FLAGS)
        page = b.new_page(viewport={"width": width, "height": height})
        page.goto(html.resolve().as_uri())
        page.screenshot(path=str(png), full_page=full_page)
        b.close()


def main(argv: list[str]) -> int:
    """``python -m tests.report.reportkit docs/screenshots/report.png``: the README's picture —
    the pydocs set run at k = 3 (the baseline) and at k = 1, reported and drawn."""
    import os

    from ragtriage import cli

    out = Path(argv[0] if argv else "docs/screenshots/report.png").resolve()
    os.chdir(Path(__file__).resolve().parents[2])  # paths in the page as a user types them
    ts = "testsets/pydocs/pydocs.yaml"
    d = Path("runs/report-demo")  # ignored by git, as every run
    shutil.rmtree(d, ignore_errors=True)  # this script's own folder: made anew each time
    for k in (3, 1):
        assert cli.main(["run", ts, "--k", str(k), "--out", str(d / f"k{k}.jsonl"), "--quiet"]) == 0
    html = d / "report.html"
    assert cli.main(["report", str(d / "k1.jsonl"), "--baseline", str(d / "k3.jsonl"), "-o", str(html)]) == 0
    screenshot(html, out, width=1100, height=1400, full_page=False)
    print(f"screenshot: {out}")
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
