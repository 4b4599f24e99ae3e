"""What a run or a sweep would cost, spending nothing (``run --dry-run``, ``sweep --dry-run``)."""

from __future__ import annotations

from .evaluate import load_testset, open_system
from .judge import open_judge
from .options import _check_k
from .systems import Context, approx_tokens


def estimate_tokens(ctx: Context, sys_, case, k: int) -> int:
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


def plan(testset, system: str = "builtin", ks=None, **options) -> dict:
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
    for k in ks:
        per_case = [estimate_tokens(ctx, sys_, c, k) for c in doc.cases]
        row = {"k": k, "calls": len(doc.cases), "tokens": sum(per_case)}
        if judge_ is not None:
            from .judge.client import estimate_case

            row["judge_calls"] = len(doc.cases)  # at most: abstentions are not judged
            row["judge_tokens"] = sum(
                estimate_case(c, t, doc.settings.language) for c, t in zip(doc.cases, per_case)
            )
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
        out["judge_calls"] = sum(r["judge_calls"] for r in rows)
        out["judge_tokens"] = sum(r["judge_tokens"] for r in rows)
    return out
