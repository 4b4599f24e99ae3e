"""Shards of one run, joined: ``ragtriage merge`` and ``check --run A --run B``.

Shards belong together when they were made of the same test set (its content hash),
by the same system at the same k (and with the same judge); no case may be in two of
them. ``merge`` also requires that they are finished and cover the test set exactly
once, and writes one run file whose case lines are in the test set's order and whose
summary is computed as an unsharded run computes it — the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from .errors import InputError, Problem
from .records import CaseRecord, RunMeta, Summary
from .runfile import RunFile, read_run

#: meta keys every shard must agree on, and what they mean to people
SAME = {
    "testset_hash": "the test set's content",
    "system": "the system",
    "k": "k",
    "judge": "the judge",
}


def join_runs(runs: Sequence[RunFile]) -> RunFile:
    """One :class:`RunFile` from the shards ``runs`` (its summary None: recompute it).
    Raises :class:`InputError` naming the files that disagree or share a case."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    problems = []
    for r in runs[1:]:
        for key, what in SAME.items():
            if r.meta.get(key) != first.meta.get(key):
                problems.append(
                    Problem(
                        str(r.path),
                        1,
                        f"is not a shard of the same run as {first.path}: {what} differs "
                        f"({key} {r.meta.get(key)!r}, there {first.meta.get(key)!r})",
                        field=key,
                    )
                )
    if problems:
        raise InputError(problems)
    where: dict[str, Path] = {}
    cases: list[CaseRecord] = []
    for r in runs:
        for c in r.cases:
            other = where.get(c["id"])
            if other is not None:
                problems.append(
                    Problem(
                        str(r.path), None, f"case {c['id']!r} is also in {other}: shards must not overlap"
                    )
                )
                if len(problems) >= 20:
                    raise InputError(problems)
                continue
            where[c["id"]] = r.path
            cases.append(c)
    if problems:
        raise InputError(problems)
    meta = cast(RunMeta, {k: v for k, v in first.meta.items() if k not in ("selection", "resumed")})
    starts = [r.meta.get("started") for r in runs if isinstance(r.meta.get("started"), str)]
    if starts:
        meta["started"] = min(cast(list[str], starts))
    meta["merged"] = [str(r.path) for r in runs]
    warnings = [w for r in runs for w in r.warnings]
    return RunFile(first.path, meta, cases, None, warnings)


def merge(paths: Sequence[str], doc: Any) -> tuple[RunMeta, list[CaseRecord], Summary]:
    """(meta, records in the test set's order, summary) of the shards at ``paths``,
    checked to be finished and to cover ``doc`` (the test set) exactly once."""
    from .summary import summarize

    runs = [read_run(p) for p in paths]
    unfinished = [r for r in runs if r.summary is None]
    if unfinished:
        raise InputError(
            [
                Problem(
                    str(r.path),
                    None,
                    "has no summary line: the shard did not finish (resume it with --resume)",
                )
                for r in unfinished
            ]
        )
    joined = join_runs(runs)
    doc_hash = getattr(doc, "content_hash", None)
    if doc_hash and joined.meta.get("testset_hash") and joined.meta["testset_hash"] != doc_hash:
        raise InputError(
            Problem(
                str(runs[0].path),
                1,
                f"was made of another version of {doc.path} (test-set hash {joined.meta['testset_hash']}, "
                f"now {doc_hash}): make the shards again, or check them with `ragtriage check --run …`",
                field="testset_hash",
            )
        )
    by_id = {c["id"]: c for c in joined.cases}
    ids = [c.id for c in doc.cases]
    missing = [i for i in ids if i not in by_id]
    known = set(ids)
    extra = [i for i in by_id if i not in known]
    problems = []
    if missing:
        problems.append(
            Problem(
                str(doc.path),
                None,
                f"{len(missing)} case(s) are in no shard: {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''} "
                "(are all the shards given, each once?)",
            )
        )
    if extra:
        problems.append(
            Problem(
                str(doc.path),
                None,
                f"{len(extra)} case(s) of the shards are not in the test set: {', '.join(extra[:10])}",
            )
        )
    if problems:
        raise InputError(problems)
    records = [by_id[i] for i in ids]
    k = joined.meta["k"]
    return joined.meta, records, summarize(records, k)
