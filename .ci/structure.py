"""The structure limits CI holds: no function in ragtriage/ above cyclomatic
complexity 25 (radon's count), no module above 700 lines.

Last round these limits were met and then slipped in later commits, because
nothing checked them. ``.ci/run`` runs this script; it exits 1 naming every
offender. ``ALLOWED`` lists the offenders that are known and being split now:
an entry that no longer offends is itself an error, so the list only shrinks.

    python .ci/structure.py            # check
    python .ci/structure.py --report   # also print the worst ten functions
"""

from __future__ import annotations

import sys
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class

MAX_CC = 25
MAX_LINES = 700
ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ragtriage"

# "path:qualified.name" for functions, "path" for modules; each says who splits it.
ALLOWED: set[str] = {
    "ragtriage/tui/screens/stale.py:StaleScreen._show",  # CC 28
    "ragtriage/tui/app.py",  # 772 lines: the RunSession redesign moves the run side out
}


def offenders() -> tuple[list[tuple[str, str]], list[tuple[int, str]]]:
    """(key, message) of every function and module over a limit, and (cc, key) of all."""
    found: list[tuple[str, str]] = []
    every: list[tuple[int, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_LINES:
            found.append((rel, f"{rel}: {lines} lines (limit {MAX_LINES})"))
        for b in cc_visit(text):  # functions and methods (a class's own figure is a sum)
            if isinstance(b, Class):
                continue
            name = f"{b.classname}.{b.name}" if b.classname else b.name
            key = f"{rel}:{name}"
            every.append((b.complexity, key))
            if b.complexity > MAX_CC:
                found.append(
                    (key, f"{rel}:{b.lineno}: {name}: cyclomatic complexity {b.complexity} (limit {MAX_CC})")
                )
    return found, every


def main(argv: list[str]) -> int:
    found, every = offenders()
    bad = [msg for key, msg in found if key not in ALLOWED]
    known = {key for key, _ in found}
    stale = sorted(ALLOWED - known)
    for msg in bad:
        print(msg)
    for key in stale:
        print(f"{key}: listed in .ci/structure.py ALLOWED but within the limits now: remove the entry")
    for key, msg in found:
        if key in ALLOWED:
            print(f"(known, being split) {msg}")
    if "--report" in argv:
        for cc, key in sorted(every, reverse=True)[:10]:
            print(f"  CC {cc:3d}  {key}")
    if bad or stale:
        return 1
    print(
        f"structure: no function above CC {MAX_CC}, no module above {MAX_LINES} lines ({len(ALLOWED)} known offenders)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
