"""Score a ``results:`` source in one streamed pass, a block of cases at a time.

The per-case path reads the whole results file into memory, then asks the system for
each case, one by one. For answers that are already on disk that is wasted work and
memory: a 100k-case file with rankings 100 deep held 1.8 GB. Here the source is read as
a stream of lines (every part, in order), parsed with orjson, and for each block of
:data:`BLOCK` cases

- the retrieval fields (rank, hit, precision, recall, rr) are computed at once with
  numpy from the first positions of the expected chunks (:func:`.metrics.first_positions`
  and :func:`.metrics.at_k`, the code ``check``'s bars at any k use);
- everything else — grounding, correctness, abstention, the one reason — comes from the
  per-case code (:func:`.scoring.make_record`, given the retrieval fields), so a change
  there changes both paths alike and a record is the same, byte for byte.

Each record is handed to ``on_done`` (which writes it to the run file) as soon as its
block is scored; the parsed line is then dropped. A bad line stops the scoring (the
caller discards what it wrote) and the rest is only checked, so one run reports up to
50 located problems, as the per-case path does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .errors import InputError
from .scoring import Retrieved

BLOCK = 1024  # cases scored at once: numpy's overhead spread (4096 gave no faster run), one block's rankings in memory


def retrieval_block(cases: Sequence[Any], results: Sequence[dict[str, Any]], k: int) -> list[Retrieved]:
    """(rank, hit, precision, recall, rr) of every case, as :func:`.metrics.retrieval`
    gives them per case (None where the definition says null), computed at once."""
    from .metrics import at_k, first_positions

    rankings = [r.get("ranking") or [] for r in results]
    p = first_positions(rankings, [c.expected for c in cases], [c.expect for c in cases])
    m = at_k(p, k)
    has = (p.n_gold > 0).tolist()
    out: list[Retrieved] = []
    for rank, ok, hit, prec, rec, rr in zip(
        p.rank.tolist(),
        has,
        m["hit"].tolist(),
        m["precision"].tolist(),
        m["recall"].tolist(),
        m["rr"].tolist(),
    ):
        if ok:
            out.append((rank, hit == 1.0, prec, rec, rr))
        else:
            out.append((rank, None, prec, None, None))
    return out


def score_source(
    system: Any,
    cases: Sequence[Any],
    k: int,
    on_done: Callable[[Any, dict[str, Any], Retrieved | None], None],
    *,
    known_ids: Iterable[str] | None,
    cancel: threading.Event | None = None,
) -> int:
    """Score every case of ``cases`` that the results ``system`` has a line for, then give
    each case without one its error, as the per-case path does; returns how many were
    handed to ``on_done``. Raises :class:`InputError` (after checking the rest of the
    source) on a bad line; warnings go to ``system.warnings``."""
    from .runner import clean_text

    todo = {c.id: c for c in cases}
    reader = system.reader(known_ids)
    done = 0
    block_cases: list[Any] = []
    block_results: list[dict[str, Any]] = []

    def flush() -> None:
        nonlocal done
        if not block_cases:
            return
        if not reader.problems:
            for case, res, got in zip(
                block_cases, block_results, retrieval_block(block_cases, block_results, k)
            ):
                on_done(case, res, got)
                done += 1
        block_cases.clear()
        block_results.clear()

    for _, _, res in reader:
        case = todo.pop(res["id"], None)
        if case is None:  # a case the run does not ask (another shard, kept by --resume)
            continue
        block_cases.append(case)
        block_results.append(res)
        if len(block_cases) >= BLOCK:
            flush()
            if cancel is not None and cancel.is_set():
                return done
    if reader.problems:
        raise InputError(reader.problems)
    flush()
    system.warnings.extend(reader.warnings)
    for case in cases:
        if case.id in todo:
            if cancel is not None and cancel.is_set():
                break
            on_done(case, {"error": clean_text(f"no result for this case in {system.path}")}, None)
            done += 1
    return done
