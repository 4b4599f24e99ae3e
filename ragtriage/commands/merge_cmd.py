"""``ragtriage merge RUN... -o RUN``: the shards of one run joined into one run file.

The shards must come from the same test set, system and k, be finished, and cover the
test set exactly once; the merged file's case lines are in the test set's order and its
summary is the one an unsharded run writes, byte for byte."""

from __future__ import annotations

import sys
from pathlib import Path

from ..cli import Exit
from ..core.errors import InputError, Problem
from ..core.merge import merge
from ..core.runfile import read_meta, resolve_testset, write_run
from .outputs import guard_run_file, testset_inputs


def main(args) -> int:
    import gc

    gc.disable()  # a short-lived process reading whole runs: the cyclic GC frees nothing here
    from ..core.document import TestSetDocument

    out = Path(args.output)
    # never a shard, a person's file or a run being triaged; an earlier run only with --force
    guard_run_file(out, "-o", args.runs, force=args.force, can_resume=False)
    seen: dict[str, str] = {}
    for p in args.runs:
        key = str(Path(p).resolve())
        if key in seen:
            raise InputError(Problem(p, None, f"is given twice (also as {seen[key]})"))
        seen[key] = p
    ts = resolve_testset(Path(args.runs[0]), read_meta(args.runs[0]), args.testset)
    doc = TestSetDocument.load(ts)
    guard_run_file(out, "-o", [*args.runs, *testset_inputs(doc)], force=args.force, can_resume=False)
    meta, records, summary = merge(args.runs, doc)
    write_run(out, meta, records, summary)
    print(
        f"merged {len(args.runs)} shard(s), {len(records)} cases of {ts} into {out}",
        file=sys.stderr,
    )
    return Exit.OK
