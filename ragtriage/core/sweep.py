"""``ragtriage sweep``: one row per (k, threshold) from one stored ranking.

Retrieval numbers for every k come from the run at the largest k; answers are
re-derived locally where that is possible (builtin, ``results:``), else asked again.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputError, Problem
from .evaluate import Run, evaluate, load_testset, open_system, with_cite
from .gold import Gold
from .judge import open_judge
from .metrics import at_k, mean_or_none, stored_positions
from .options import _check_k
from .records import CaseRecord
from .scoring import make_record
from .summary import summarize
from .systems import Context, approx_tokens

if TYPE_CHECKING:
    from .document import TestSetDocument


def as_result(rec: CaseRecord) -> dict[str, Any]:
    """A stored case record back to the system's §3 result (its own verdict, if any)."""
    res = {
        f: rec[f]
        for f in (
            "ranking",
            "docs",
            "scores",
            "answer",
            "prompt_ids",
            "cited",
            "tokens",
            "latency_ms",
            "error",
        )
        if rec.get(f) is not None
    }
    res.setdefault("ranking", [])
    res.setdefault("answer", rec.get("answer"))
    if isinstance(rec.get("external_supported"), bool):
        res["supported"] = rec["external_supported"]
    return res


def _filter(res: dict[str, Any], t: float | None) -> dict[str, Any]:
    """The result with its ranking cut where the score drops below ``t``."""
    if t is None or res.get("scores") is None or res.get("error"):
        return res
    keep = [i for i, s in enumerate(res["scores"]) if s >= t]
    r = dict(res)
    r["ranking"] = [res["ranking"][i] for i in keep]
    r["scores"] = [res["scores"][i] for i in keep]
    if isinstance(res.get("docs"), list) and len(res["docs"]) == len(res["ranking"]):
        r["docs"] = [res["docs"][i] for i in keep]
    r.pop("prompt_ids", None)
    r.pop("tokens", None)
    return r


def _rederived(
    base: Run, cases: list[Any], ctx: Context, sys_: Any, k: int, t: float | None, cite: str | None = None
) -> list[CaseRecord]:
    """Records at ``k`` (ranking cut at score ``t``) made from the stored run, no new call:
    the builtin answerer answers again locally; ``results:`` answers stay as given."""
    builtin = sys_.spec == "builtin"
    fixed = hasattr(sys_, "results")
    settings = with_cite(ctx.settings, cite)
    recs = []
    gold = Gold.needed(cases, lambda: ctx.corpus)
    for rec, case in zip(base.cases, cases, strict=True):
        res = _filter(as_result(rec), t)
        given = (sys_.results.get(case.id) or {}) if fixed else {}
        if builtin and not res.get("error"):
            from .systems.builtin import extractive_answer

            prompt = [(cid, ctx.chunk_text(cid) or "") for cid in res["ranking"][:k]]
            res["answer"] = extractive_answer(case.question, prompt, settings.language, ctx.decline[0])
            res["prompt_ids"] = [cid for cid, _ in prompt]
            res.pop("tokens", None)
        elif fixed and not given.get("prompt_ids"):
            res.pop("prompt_ids", None)
        if res.get("tokens") is None or (fixed and not given.get("tokens")):
            ids = res.get("prompt_ids") or res["ranking"][:k]
            res["tokens"] = approx_tokens(case.question, (ctx.chunk_text(c) or "" for c in ids))
        recs.append(make_record(case, res, k, ctx.lookup, settings, gold=gold))
    return recs


def _sweep_row(
    base: Run,
    *,
    recs: list[CaseRecord] | None,
    m: dict[str, Any],
    ans: Any,
    k: int,
    t: float | None,
    judged: bool = False,
) -> dict[str, Any]:
    if t is None:
        ret: dict[str, Any] = {
            "hit": mean_or_none(m["hit"], ans),
            "recall": mean_or_none(m["recall"], ans),
            "mrr": mean_or_none(m["rr"], ans),
        }
    else:
        from .metrics import retrieval_at

        cut = recs if recs is not None else [dict(r, **_filter(as_result(r), t)) for r in base.cases]
        ret = retrieval_at(cut, k)
        ret.pop("precision", None)
    row = {"k": k, "threshold": t, **ret}
    if any("doc_hit" in r for r in base.cases):  # document gold: the right document within k documents
        from .docrank import doc_retrieval_at

        src = base.cases if t is None else recs
        row["doc_hit"] = doc_retrieval_at(src, k)["doc_hit"] if src is not None else None
    if recs is not None:
        s = summarize(recs, k)
        row.update(supported=s["supported"], correct=s["accuracy"], tokens=s["tokens"], reasons=s["reasons"])
        if judged:
            row.update(judge_supported=s.get("judge_supported"), judge_correct=s.get("judge_correct"))
    else:
        row.update(supported=None, correct=None, tokens=None, reasons=None)
    return row


def sweep(
    testset: str | Path | TestSetDocument,
    system: str = "builtin",
    ks: Iterable[int] = (1, 2, 3, 4),
    thresholds: Iterable[float | None] = (None,),
    *,
    progress: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """One row per (k, threshold): hit, recall, mrr, supported, correct, tokens.

    Retrieval numbers for every k come from one stored ranking (the run at the
    largest k), with no new calls. Answers depend on k: a system that answers
    per call is asked again for each other k; ``results:`` answers do not change
    with k; the builtin answerer re-answers locally from the stored ranking.
    With a threshold the ranking is cut where the score drops below it; answers
    are then re-derived for builtin and ``results:``, other systems get the
    retrieval numbers only (answer columns null)."""
    doc = load_testset(testset)
    ks = sorted(set(ks))
    for k in ks:
        _check_k(k)
    kmax = ks[-1]
    base = evaluate(doc, system, kmax, progress=progress, **options)
    if base.interrupted:
        raise KeyboardInterrupt
    calls = base.asked
    cases = [doc.case(r["id"]) for r in base.cases]
    ctx, sys_ = open_system(
        doc,
        system,
        timeout=options.get("timeout", 60.0),
        retriever=options.get("retriever"),
        api_key_env=options.get("api_key_env", "OPENAI_API_KEY"),
    )
    judge_ = open_judge(
        doc,
        options.get("judge"),
        key_env=options.get("judge_key_env") or "OPENAI_API_KEY",
        timeout=options.get("timeout", 60.0),
        retries=options.get("retries", 2),
        concurrency=options.get("concurrency", 8),
    )
    by_id = {c.id: c for c in doc.cases}
    local = sys_.spec == "builtin" or hasattr(sys_, "results")  # answers re-derived without a call
    if any(t is not None for t in thresholds) and not any(r.get("scores") for r in base.cases):
        raise InputError(
            Problem(
                "--threshold", None, f"the system {sys_.spec} returns no scores: a threshold cannot apply"
            )
        )
    pos = stored_positions(base.cases)
    ans = pos.n_gold > 0
    rows = []
    for k in ks:
        m = at_k(pos, k)
        run_k = None
        if k == kmax:
            run_k = base
        elif not local:
            run_k = evaluate(doc, system, k, progress=progress, **options)
            calls += run_k.asked
        for t in thresholds:
            recs = None
            if t is None and run_k is not None:
                recs = run_k.cases
            elif local:
                recs = _rederived(base, cases, ctx, sys_, k, t, options.get("cite"))
            if recs is not None and judge_ is not None and (run_k is None or recs is not run_k.cases):
                judge_.judge_records(
                    recs, by_id, ctx.chunk_text, doc.settings.language, k
                )  # cached answers cost nothing
            rows.append(_sweep_row(base, recs=recs, m=m, ans=ans, k=k, t=t, judged=judge_ is not None))
    return {
        "system": base.meta["system"],
        "testset": base.meta["testset"],
        "n": len(base.cases),
        "calls": calls,
        "rows": rows,
    }
