"""Hand mutants of ``ragtriage/core/staleness/verdict.py``: does the stale suite kill them?

Each mutant changes one decision of the verdict (most in the span-evidence path: a chunk over
the label's old span, whose text there must be the remembered text on token boundaries), in
a copy of the checkout, and runs the stale tests against it; a mutant the tests do not fail
on *survived* (a decision no test holds). Prints every mutant with killed/survived, and the
count. Not a timing benchmark.

    .venv/bin/python benchmarks/mutants_verdict.py            # every mutant (a few minutes)
    .venv/bin/python benchmarks/mutants_verdict.py --list
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = "ragtriage/core/staleness/verdict.py"
TESTS = [  # the quick ones first: -x stops at the first failure
    "tests/core/test_stale_span_evidence.py",
    "tests/core/test_staleness.py",
    "tests/core/test_stale_text_evidence.py",
    "tests/core/test_stale_real_splitters.py",
    "tests/core/test_stale_manuals.py",
    "tests/core/test_stale_probe.py",
    "tests/core/test_stale_similarity.py",
    "tests/cli/test_stale.py",
]

# (name, old text, new text): each old text occurs once in verdict.py
MUTANTS = [
    ("same_text: no start boundary", "(a == 0 and not cuts(c.text, i)) or ", ""),
    ("same_text: no end boundary", " or (b == span and not cuts(c.text, i + b - a))", ""),
    (
        "same_text: whole span if either end",
        "    if a == 0 and b == span:\n        return st.same_as(over)",
        "    if a == 0 or b == span:\n        return st.same_as(over)",
    ),
    ("same_text: whole span always same", "        return st.same_as(over)", "        return True"),
    (
        "same_text: part without length check",
        "st.raw is not None and len(st.raw) == span and norm(over)",
        "st.raw is not None and norm(over)",
    ),
    ("same_text: part always same", "and norm(over) == norm(st.raw[a:b])", "or True"),
    (
        "span_text: whole span = its start",
        "same = [c for c, a, b in st.spans if a == 0 and b == span and",
        "same = [c for c, a, b in st.spans if a == 0 and",
    ),
    (
        "span_text: exact by start only",
        "exact = [c for c in same if c.start == st.start and c.end == st.end]",
        "exact = [c for c in same if c.start == st.start]",
    ),
    (
        "span_text: several exact auto",
        "return Verdict(_status(st, Status.MOVED), tuple((c.id, 1.0) for c in exact), _auto_if_one(exact))",
        "return Verdict(_status(st, Status.MOVED), tuple((c.id, 1.0) for c in exact), Fix.AUTO)",
    ),
    (
        "span_text: moved is merged",
        "return Verdict(_status(st, Status.MOVED), tuple((c.id, 1.0) for c in exact), _auto_if_one(exact))",
        "return Verdict(_status(st, Status.MERGED), tuple((c.id, 1.0) for c in exact), _auto_if_one(exact))",
    ),
    (
        "span_text: best last",
        "scored = sorted(((c, _jaccard(span, c.end - c.start, span)) for c in same), key=lambda p: -p[1])",
        "scored = sorted(((c, _jaccard(span, c.end - c.start, span)) for c in same), key=lambda p: p[1])",
    ),
    (
        "own_over_span: any part",
        "return any(c.id == st.own.id and a == 0 and b == span and _same_text(st, c, a, b) for c, a, b in st.spans)",
        "return any(c.id == st.own.id and a == 0 and _same_text(st, c, a, b) for c, a, b in st.spans)",
    ),
    (
        "own_over_span: any chunk",
        "return any(c.id == st.own.id and a == 0 and b == span and _same_text(st, c, a, b) for c, a, b in st.spans)",
        "return any(a == 0 and b == span and _same_text(st, c, a, b) for c, a, b in st.spans)",
    ),
    (
        "own_over_span: text not checked",
        "return any(c.id == st.own.id and a == 0 and b == span and _same_text(st, c, a, b) for c, a, b in st.spans)",
        "return any(c.id == st.own.id and a == 0 and b == span for c, a, b in st.spans)",
    ),
    (
        "span_pieces: text not checked",
        "ok = [(c, a, b) for c, a, b in st.spans if _same_text(st, c, a, b)]",
        "ok = list(st.spans)",
    ),
    (
        "span_pieces: coverage not checked",
        "if not ok or not _covers_span(span, [(a, b) for _, a, b in ok], st.raw):",
        "if not ok:",
    ),
    (
        "span_pieces: fixed automatically",
        'return Verdict(_status(st, Status.SPLIT), cands, Fix.REVIEW, "all")\n\n\ndef _by_pieces',
        'return Verdict(_status(st, Status.SPLIT), cands, Fix.AUTO, "all")\n\n\ndef _by_pieces',
    ),
    (
        "span_pieces: no expect all",
        'return Verdict(_status(st, Status.SPLIT), cands, Fix.REVIEW, "all")\n\n\ndef _by_pieces',
        'return Verdict(_status(st, Status.SPLIT), cands, Fix.REVIEW)\n\n\ndef _by_pieces',
    ),
    ("by_text: short own always auto", "if not st.short or _own_over_span(st):", "if True:"),
    (
        "by_text: own holds as substring",
        "and holds_words(st.own_norm, t)\n    ):",
        "and t in st.own_norm\n    ):",
    ),
    ("by_text: own in another document", "        and not _away(st, own)\n", ""),
    (
        "prefer: any document",
        "same = [c for c in chunks if c.doc == st.doc] or [c for c in chunks if not isinstance(c.doc, str)]",
        "same = [c for c in chunks if c.doc == st.doc] or chunks",
    ),
    (
        "prefer: span not preferred",
        "        if over:\n            return over",
        "        if over:\n            return same",
    ),
    (
        "judge: copies only when nothing",
        "if away and (v is None or v.fix != Fix.AUTO):",
        "if away and v is None:",
    ),
    # ("copies: keep the fix" is no mutant: that branch only sees review verdicts)
    (
        "copies: after what is local",
        "return Verdict(status, rest[:2] + copies + rest[2:], Fix.REVIEW, elsewhere=named)",
        "return Verdict(status, copies + rest, Fix.REVIEW, elsewhere=named)",
    ),
    (
        "missing: spans not ranked",
        "    for c, _, _ in st.spans:\n        add(c.id, _dice(t, norm(c.text)))\n",
        "",
    ),
    (
        "missing: fingerprint spans not shown",
        "        biggest = sorted(st.spans, key=lambda p: -(p[2] - p[1]))[:TOP_N]",
        "        biggest = []",
    ),
    (
        "judge: ok by fingerprint only",
        "if own is not None and st.same_as(own.text, st.own_norm):",
        "if own is not None and st.fp is not None:",
    ),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--root", default=str(ROOT), help="the checkout to mutate (a copy is made)")
    args = ap.parse_args()
    root = Path(args.root)
    source = (root / TARGET).read_text(encoding="utf-8")
    for name, old, _ in MUTANTS:
        if source.count(old) != 1:
            sys.exit(f"mutant {name!r}: its text occurs {source.count(old)} times in {TARGET}")
    if args.list:
        for name, _, _ in MUTANTS:
            print(name)
        return
    tests = [t for t in TESTS if (root / t).exists()]
    survived = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "checkout"
        shutil.copytree(
            root, copy, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info")
        )
        for name, old, new in MUTANTS:
            (copy / TARGET).write_text(source.replace(old, new), encoding="utf-8")
            r = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-x",
                    "-p",
                    "no:cacheprovider",
                    "-p",
                    "no:randomly",
                    *tests,
                ],
                cwd=copy,
                capture_output=True,
                text=True,
            )
            killed = r.returncode != 0
            print(f"{'killed  ' if killed else 'SURVIVED'}  {name}", flush=True)
            if not killed:
                survived.append(name)
    print(f"\n{len(MUTANTS) - len(survived)} of {len(MUTANTS)} mutants killed, {len(survived)} survived")


if __name__ == "__main__":
    main()
