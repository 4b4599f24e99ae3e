"""Which cases a run or a check covers: ``--ids``, ``--tag`` and ``--shard I/N``.

A shard is a stable function of the case id alone (blake2b of its UTF-8 bytes, modulo
N), so every machine of a CI matrix agrees on it without talking to the others, a case
keeps its shard when other cases are added or removed, and the N shards of a test set
cover it exactly once. ``--ids`` and ``--tag`` narrow the cases first (a case with any of
the tags); ``--shard`` then takes its share of what is left.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError, Problem

MAX_SHARDS = 10_000


@dataclass(frozen=True)
class Selection:
    """What ``--ids``, ``--tag`` and ``--shard`` asked for (all empty: every case)."""

    ids: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    shard: tuple[int, int] | None = None  # (I, N), 1-based
    sources: dict[str, str] = field(default_factory=dict, compare=False)  # option -> as typed

    @property
    def everything(self) -> bool:
        return not self.ids and not self.tags and self.shard is None

    def describe(self) -> dict[str, Any]:
        """The run file's record of it (the meta line's ``selection``)."""
        out: dict[str, Any] = {}
        if self.shard is not None:
            out["shard"] = f"{self.shard[0]}/{self.shard[1]}"
        if self.tags:
            out["tags"] = list(self.tags)
        if self.ids:
            out["ids"] = len(self.ids)
        return out


def parse_shard(spec: str) -> tuple[int, int]:
    """``'2/4'`` -> ``(2, 4)``; ValueError with a message for people."""
    i, sep, n = spec.partition("/")
    try:
        a, b = int(i.strip()), int(n.strip())
    except ValueError:
        raise ValueError(f"{spec!r}: write I/N, e.g. --shard 1/4 (the first of four shards)") from None
    if not sep or b < 1 or not 1 <= a <= b:
        raise ValueError(f"{spec!r}: I/N with 1 ≤ I ≤ N, e.g. --shard 1/4")
    if b > MAX_SHARDS:
        raise ValueError(f"{spec!r}: at most {MAX_SHARDS:,} shards")
    return a, b


def shard_of(case_id: str, n: int) -> int:
    """The shard (1 to ``n``) a case id belongs to: the same on every machine and run."""
    h = hashlib.blake2b(case_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(h, "big") % n + 1


def _split_ids(values: Iterable[str]) -> list[str]:
    out: list[str] = []
    for v in values:
        out += [x.strip() for x in v.split(",") if x.strip()]
    return out


def selection(
    ids: Sequence[str] | None = (), tags: Sequence[str] | None = (), shard: str | None = None
) -> Selection:
    """A :class:`Selection` from the options as typed (``--ids a,b --ids c``, ``--tag smoke``,
    ``--shard 2/4``); a malformed one is a located exit 2."""
    sources: dict[str, str] = {}
    got = None
    if shard:
        try:
            got = parse_shard(shard)
        except ValueError as e:
            raise InputError(Problem("--shard", None, str(e))) from None
        sources["--shard"] = shard
    id_list = tuple(dict.fromkeys(_split_ids(ids or ())))
    tag_list = tuple(dict.fromkeys(t.strip() for t in tags or () if t.strip()))
    if ids and not id_list:
        raise InputError(Problem("--ids", None, "no case id given (e.g. --ids precio-oficina,domingo)"))
    if id_list:
        sources["--ids"] = ",".join(id_list)
    if tag_list:
        sources["--tag"] = ",".join(tag_list)
    return Selection(id_list, tag_list, got, sources)


def _by_ids(
    cases: Sequence[Any], chosen: list[Any], ids: tuple[str, ...], where: str, problems: list[Problem]
) -> list[Any]:
    known = {c.id for c in cases}
    unknown = [i for i in ids if i not in known]
    if unknown:
        more = " …" if len(unknown) > 10 else ""
        problems.append(Problem("--ids", None, f"not in the {where}: {', '.join(unknown[:10])}{more}"))
    wanted = set(ids)
    return [c for c in chosen if c.id in wanted]


def _by_tags(
    cases: Sequence[Any], chosen: list[Any], tags: tuple[str, ...], where: str, problems: list[Problem]
) -> list[Any]:
    have = {t for c in cases for t in (getattr(c, "tags", None) or ())}
    for t in tags:
        if t not in have:
            problems.append(Problem("--tag", None, f"no case of the {where} has the tag {t!r}"))
    wanted = set(tags)
    return [c for c in chosen if wanted.intersection(getattr(c, "tags", None) or ())]


def select(cases: Sequence[Any], sel: Selection, where: str = "test set") -> list[Any]:
    """The cases ``sel`` covers, in test-set order. An id not in the test set, a tag no case
    has, or a selection that leaves nothing is an error: a CI job that measures no case must
    not pass."""
    if sel.everything:
        return list(cases)
    problems: list[Problem] = []
    chosen = list(cases)
    if sel.ids:
        chosen = _by_ids(cases, chosen, sel.ids, where, problems)
    if sel.tags:
        chosen = _by_tags(cases, chosen, sel.tags, where, problems)
    if problems:
        raise InputError(problems)
    if sel.shard is not None:
        i, n = sel.shard
        chosen = [c for c in chosen if shard_of(c.id, n) == i]
    if not chosen:
        what = " and ".join(f"{k} {v}" for k, v in sel.sources.items()) or "the selection"
        raise InputError(
            Problem(
                next(iter(sel.sources), "--ids"),
                None,
                f"{what} selects no case of the {where} (a shard of a small test set can be empty: use fewer shards)",
            )
        )
    return chosen
