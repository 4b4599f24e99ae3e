"""What a run or a sweep would cost, spending nothing (``run --dry-run``, ``sweep --dry-run``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .evaluate import load_testset, open_system
from .judge import open_judge
from .options import _check_k
from .systems import Context, approx_tokens

if TYPE_CHECKING:
    from .document import TestSetDocument
    from .judge.client import Judge


def estimate_tokens(ctx: Context, sys_: Any, case: Any, k: int) -> int:
    """About how many prompt tokens one case costs at ``k``, spending nothing."""
    ranking: list[str] = []
    results = getattr(sys_, "results", None)
    if results is not None:
        res = results.get(case.id) or {}
        if res.get("tokens") is not None:
            return int(res["tokens"])
        ranking = list(res.get("prompt_ids") or (res.get("ranking") or [])[:k])
    elif hasattr(sys_, "retrieve"):
        ranking, _ = sys_.retrieve(case.question, k)
    elif hasattr(getattr(sys_, "retriever", None), "retrieve"):
        ranking, _ = sys_.retriever.retrieve(case.question, k)
    elif ctx.corpus_path is not None:
        ranking = [cid for cid, _ in ctx.index.search(case.question, k)]
    texts = [t for t in (ctx.chunk_text(c) for c in ranking[:k]) if t]
    return approx_tokens(case.question, texts)


def plan(
    testset: str | Path | TestSetDocument,
    system: str = "builtin",
    ks: Iterable[int] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """What a run (or a sweep over ``ks``) would cost: system calls and approximate
    prompt tokens (characters / 4 of the question and the top-k chunk texts)."""
    doc = load_testset(testset)
    ks = list(ks or [doc.settings.k])
    for k in ks:
        _check_k(k)
    ctx, sys_ = open_system(
        doc,
        system,
        timeout=options.get("timeout", 60.0),
        retriever=options.get("retriever"),
        api_key_env=options.get("api_key_env"),
    )
    external = not hasattr(sys_, "ask_sync")
    judge_ = open_judge(doc, options.get("judge"), key_env=options.get("judge_key_env") or "OPENAI_API_KEY")
    rows = []
    local = hasattr(sys_, "ask_sync")  # answers in hand (results:) or made here (builtin): no spending
    for k in ks:
        per_case = [estimate_tokens(ctx, sys_, c, k) for c in doc.cases]
        row = {"k": k, "calls": len(doc.cases), "tokens": sum(per_case)}
        if judge_ is not None:
            row.update(_judge_row(doc, ctx, sys_, judge_, k, per_case, local, options.get("cite")))
        rows.append(row)
    out = {
        "system": sys_.spec,
        "cases": len(doc.cases),
        "external": external,
        "calls": sum(r["calls"] for r in rows),
        "tokens": sum(r["tokens"] for r in rows),
        "rows": rows,
    }
    if judge_ is not None:
        out["judge"] = judge_.spec
        for key in ("judge_calls", "judge_tokens", "judge_abstained", "judge_cached", "judge_errors"):
            out[key] = sum(r.get(key, 0) for r in rows)
        out["judge_exact"] = all(r["judge_exact"] for r in rows)
    return out


def _judge_row(
    doc: Any,
    ctx: Context,
    sys_: Any,
    judge_: Judge,
    k: int,
    per_case: list[int],
    local: bool,
    cite: str | None,
) -> dict[str, Any]:
    """The judge's calls at ``k``: exact when the answers are known without spending (the
    abstentions and the errors are not judged, a cached verdict costs nothing), else at most
    one per case (``judge_exact`` says which)."""
    from .judge.client import estimate_case

    if not local:
        return {
            "judge_calls": len(doc.cases),  # at most: abstentions and cached verdicts are not asked
            "judge_tokens": sum(
                estimate_case(c, t, doc.settings.language) for c, t in zip(doc.cases, per_case)
            ),
            "judge_exact": False,
        }
    from .evaluate import with_cite
    from .scoring import make_record
    from .systems import CaseError

    settings = with_cite(doc.settings, cite)
    records = []
    errors = 0
    for case in doc.cases:
        try:
            res = sys_.ask_sync(case, k)
        except CaseError:
            errors += 1  # no result for this case: the run records an error, the judge is not asked
            continue
        records.append(make_record(case, res, k, ctx.lookup, settings))
    asks = judge_.plan(records, {c.id: c for c in doc.cases}, ctx.chunk_text, doc.settings.language, k)
    calls, tokens = judge_.estimate(asks)
    abstained = sum(1 for r in records if r.get("abstained") or not r.get("answer") or r.get("error"))
    return {
        "judge_calls": calls,
        "judge_tokens": tokens,
        "judge_abstained": abstained,
        "judge_cached": len(asks) - calls,
        "judge_errors": errors,
        "judge_exact": True,
    }
