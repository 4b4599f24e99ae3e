"""What ``run`` prints beside its summary: a 95 % interval on every rate (``--cluster``),
the slices (``--by tag|topic``) and, with ``--repeat N``, the flaky cases and the noise
floor between two repeats of the same system (an A/A comparison)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any, cast

from ..core.errors import InputError, Problem
from .run_cmd import num, table


def intervals_of(doc, records, cluster_by: str):
    from ..core import clusters as clus
    from ..core.rates import summary_intervals

    labels, how = clus.resolve(records, cluster_by, doc.corpus_path)
    return summary_intervals(records, labels), labels, how


def slices_text(doc, records, by: str, labels) -> tuple[str, list]:
    from ..core.rates import slice_columns, slices

    tags_of = {c.id: list(c.tags) for c in doc.cases}
    got = slices(records, by, tags_of, labels)
    columns = slice_columns(got)
    rows = []
    for s in got:
        cells = [s.name, str(s.n)]
        for m in columns:
            v, iv = s.rates.get(m), s.intervals.get(m)
            cells.append("—" if v is None else f"{num(v)} [{iv.lo:.2f}, {iv.hi:.2f}]" if iv else num(v))
        rows.append(cells)
    head = [by, "n", *columns]
    text = f"by {by} (a case with several tags is in each; 95 % intervals):\n" + table(
        head, rows, right={1}, limits={0: 28}
    )
    return text, got


def check_repeat(args) -> None:
    if args.repeat < 1:
        raise InputError(Problem("--repeat", None, f"{args.repeat}: ask every case 1 or more times"))
    if args.repeat > 1 and args.resume:
        raise InputError(
            Problem("--repeat", None, "cannot resume a repeated run; run it again without --resume")
        )


def repeat_run(args, doc, first, out: Path, evaluate, options: dict) -> tuple[Any, list | None]:
    """Ask every case ``args.repeat − 1`` more times and write one run file with them all.
    Returns (the run, the records of the second answers, for the noise floor); the run is
    marked interrupted when a repeat was (the file then holds the first answers only)."""
    from ..core import repeats
    from ..core.runfile import write_run

    later = []
    with tempfile.TemporaryDirectory(prefix="ragtriage-repeat-") as tmp:
        for r in range(2, args.repeat + 1):
            print(f"repeat {r} of {args.repeat}", file=sys.stderr)
            again = evaluate(
                doc, args.system, args.k, out=Path(tmp) / f"r{r}.jsonl", progress=True, **options
            )
            if again.interrupted:
                print(f"interrupted during repeat {r}: {out} holds the first answers only", file=sys.stderr)
                first.interrupted = True
                return first, None
            later.append(again.cases)
    merged = repeats.merge(first.cases, later)
    first.summary = dict(first.summary, repeats=repeats.summary_block(merged, args.repeat))
    write_run(out, first.meta, cast(list, merged), first.summary)
    first.cases = merged
    return first, later[0]


def repeats_text(run, second, labels) -> str:
    from ..core.comparison import compare_runs
    from ..core.stats.text import points

    block = run.summary["repeats"]
    flaky = [r["id"] for r in run.cases if r.get("flaky")]
    share = block["pass_share"]
    line = (
        f"repeats: {block['n']} answers per case · pass share {num(share)} · "
        f"{block['flaky']} flaky case(s)"
        + (f": {', '.join(flaky[:8])}{' …' if len(flaky) > 8 else ''}" if flaky else "")
    )
    first = [{k: v for k, v in r.items() if k != "repeats"} for r in run.cases]
    rc = compare_runs(first, second, ["pass"], clusters=labels, same_system=True)
    c = rc.gate.comparisons[0]
    if rc.noise_floor is not None and c.table is not None:
        line += (
            f"\nnoise floor (A/A, answers 1 against 2): {c.table.worse + c.table.better} of {c.n} cases flip; "
            f"two single runs of this system cannot be told apart below {points(rc.noise_floor, signed=False)}"
        )
    return line
