"""The grounding check on the hand-labelled answers: precision and recall of its alarms.

``tests/core/data/grounding-labelled.yaml``: 127 answers in es, de, en and nl, written
against real chunk texts (Debian manual pages, the shop test sets, the Python docs, Debian
changelogs) and labelled by hand ``supported`` / ``unsupported`` on their numbers. An alarm
is the check saying "unsupported". Prints precision and recall per language and overall,
the false alarms and the misses; with ``--ragtriage PATH`` the same for another checkout
(the figure before a change):

    .venv/bin/python benchmarks/bench_grounding.py
    .venv/bin/python benchmarks/bench_grounding.py --ragtriage /work/main

Not a timing benchmark: the figures are counts, the same on every machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ragtriage", help="import ragtriage from this checkout (a before figure)")
    ap.add_argument("--quiet", action="store_true", help="only the table")
    args = ap.parse_args()
    if args.ragtriage:
        sys.path.insert(0, str(Path(args.ragtriage).resolve()))
    import ragtriage
    from ragtriage.core.grounding import check_grounding

    sys.path.insert(0, str(ROOT))
    from tests.core import groundingkit

    print(f"ragtriage from {Path(ragtriage.__file__).resolve().parent.parent}")
    print(
        f"{'language':9} {'answers':>7} {'alarms':>6} {'right':>5} {'false':>5} {'missed':>6} {'precision':>9} {'recall':>6}"
    )
    for lang in ("es", "de", "en", "nl", None):
        o = groundingkit.score(check_grounding, lang)
        n = o.tp + o.fp + o.fn + o.tn
        print(
            f"{lang or 'all':9} {n:7d} {o.tp + o.fp:6d} {o.tp:5d} {o.fp:5d} {o.fn:6d} {o.precision:9.3f} {o.recall:6.3f}"
        )
    if not args.quiet:
        o = groundingkit.score(check_grounding)
        for lang, answer, why in o.false_alarms:
            print(f"  false alarm ({lang}): {answer}  -> {why}")
        for lang, answer in o.misses:
            print(f"  missed ({lang}): {answer}")


if __name__ == "__main__":
    main()
