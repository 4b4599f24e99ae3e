"""Stale labels on real manuals after real edits: automatic fixes and whether they are right.

The scenarios of ``tests/core/manualkit.py`` (issue 20): Debian's ``dpkg-split(1)`` and
``apt_preferences(5)`` in English, German and Spanish, labelled chunk by chunk against one
chunking, edited as maintainers edit (typos, inserted paragraphs, reordered and deleted
sections, re-flowed paragraphs, numbers changed, spelling, a passage both pages hold broken
in two in its own page) and re-chunked by ten real splitters (langchain-text-splitters,
llama-index-core). The ground truth is exact (every character of an edited page knows where
it was), so each automatic fix is right, wrong, or onto a copy in another document.

    .venv/bin/python benchmarks/bench_stale_manuals.py                 # the full table
    .venv/bin/python benchmarks/bench_stale_manuals.py --lang de --text-only
    .venv/bin/python benchmarks/bench_stale_manuals.py --ragtriage /work/main   # another checkout's code

Columns: labels judged; ``auto``: automatic fixes; ``right``; ``wrong`` (a fix whose chunk
does not hold the labelled text at its place); ``other doc`` (a fix onto a copy in another
document); ``false ok``; ``review``: labels left for a person, of which ``held`` wait for another label's review (the
fix would write new text under an id another case still expects: ``StaleReport.settle``),
and ``top-3``: how many of
those that have a right chunk at all have one among their first three candidates. Not a
timing benchmark: the figures are counts, the same on every machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lang", action="append", help="en, de or es (default: all three)")
    ap.add_argument("--kind", action="append", help="an edit kind (default: all)")
    ap.add_argument("--text-only", action="store_true", help="only labels without doc/start/end")
    ap.add_argument("--spans-only", action="store_true", help="only labels with doc/start/end")
    ap.add_argument("--ragtriage", help="import ragtriage from this checkout (a before figure)")
    ap.add_argument("--show", type=int, default=0, help="list up to N wrong fixes per scenario")
    args = ap.parse_args()
    if args.ragtriage:
        sys.path.insert(0, str(Path(args.ragtriage).resolve()))
    import ragtriage  # (first: the checkout asked for)

    sys.path.insert(0, str(ROOT))  # this checkout's scenarios
    from tests.core import manualkit as mk

    langs = args.lang or list(mk.LANGS)
    kinds = args.kind or list(mk.KINDS)
    modes = [m for m in (True, False) if not (m and args.text_only) and not (not m and args.spans_only)]
    print(f"ragtriage from {Path(ragtriage.__file__).resolve().parent.parent}")
    print(f"{len(langs)} languages x {len(mk.PAIRS)} chunkings (old -> new) x {len(kinds)} edit kinds")
    t0 = time.perf_counter()
    head = f"{'labels':9} {'edit':9} {'labels':>7} {'auto':>6} {'right':>6} {'wrong':>6} {'other doc':>9} {'false ok':>8} {'review':>7} {'held':>5} {'top-3':>13}"
    grand = mk.Score()
    for spans in modes:
        print()
        print(head)
        total = mk.Score()
        for kind in kinds:
            row = mk.Score()
            for lang in langs:
                for old, new in mk.PAIRS:
                    s, _ = mk.run(lang, old, new, kind, spans)
                    row.add(s)
                    if args.show and (s.wrong or s.other_doc or s.false_ok):
                        bad = (s.wrong + s.other_doc)[: args.show]
                        print(f"    {lang} {old} -> {new}: {bad} false ok {s.false_ok[: args.show]}")
            total.add(row)
            print(_line("with spans" if spans else "text only", kind, row))
        print(_line("", "all", total))
        grand.add(total)
    print()
    print(_line("both", "all", grand))
    print(f"({time.perf_counter() - t0:.0f} s)")


def _line(mode: str, kind: str, s) -> str:
    pct = f"{s.top3}/{s.top3_of} {100 * s.top3 / s.top3_of:.1f}%" if s.top3_of else "-"
    return (
        f"{mode:9} {kind:9} {s.labels:7d} {s.auto:6d} {s.right:6d} {len(s.wrong):6d} "
        f"{len(s.other_doc):9d} {len(s.false_ok):8d} {s.review:7d} {getattr(s, 'held', 0):5d} {pct:>13}"
    )


if __name__ == "__main__":
    main()
