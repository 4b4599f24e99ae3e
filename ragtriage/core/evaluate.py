"""Evaluate a test set against a system: ask, score, summarise, write the run file.

``ragtriage.evaluate(ts, system="builtin", k=3)`` (formats.md §6) is
:func:`evaluate`; ``ragtriage run`` and ``ragtriage sweep`` are thin layers
over :func:`evaluate`, :func:`plan` and :func:`sweep`.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .clock import utc_now
from .errors import InputError, Problem
from .judge import open_judge
from .metrics import at_k, mean_or_none, stored_positions
from .options import _check_k
from .records import CaseRecord, RunMeta, Summary
from .runfile import RunWriter, make_meta, read_run, write_run
from .runner import run_cases
from .scoring import make_record, rescore
from .summary import summarize
from .systems import Context, approx_tokens, make_system


@dataclass
class Run:
    """A finished (or interrupted) run: ``summary`` (formats.md §5 keys), ``cases``
    (case records with the §4 computed fields, in test-set order), ``meta``."""

    summary: Summary
    cases: list[CaseRecord]
    meta: RunMeta
    path: Path | None = None
    interrupted: bool = False
    warnings: list[Problem] = field(default_factory=list)
    asked: int = 0

    def __repr__(self) -> str:
        return f"Run({self.meta.get('system')!r}, k={self.meta.get('k')}, {len(self.cases)} cases)"


def load_testset(testset):
    """A test-set document from a path, or the document given."""
    if isinstance(testset, (str, Path)):
        from .document import TestSetDocument

        return TestSetDocument.load(testset)
    return testset


def _version() -> str:
    from .. import __version__

    return __version__


def _content_hash(doc) -> str | None:
    h = getattr(doc, "content_hash", None)
    if h:
        return h
    path = getattr(doc, "path", None)
    if path and Path(path).exists():
        from .text import file_hash

        return file_hash(path)
    return None


def open_system(doc, system: str, *, corpus=None, **options):
    ctx = Context(doc, corpus=corpus)
    return ctx, make_system(system, ctx, **options)


def evaluate(
    testset,
    system: str = "builtin",
    k: int | None = None,
    *,
    out=None,
    resume: bool = False,
    concurrency: int = 8,
    timeout: float = 60.0,
    retries: int = 2,
    backoff: float | None = None,  # None: runner.BACKOFF, read when a retry waits
    retriever: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    progress: bool = False,
    cancel: threading.Event | None = None,
    corpus=None,
    ids=None,
    on_record=None,
    retain: list | None = None,
    judge: str | None = None,
    judge_key_env: str = "OPENAI_API_KEY",
    exclusive: bool = False,
) -> Run:
    """Run every case of ``testset`` (a path or a loaded document) through ``system``
    (a ``--system`` SPEC string) at cut-off ``k`` (default: the test set's k).

    With ``out`` the run file is streamed there; with ``resume`` the cases already
    finished in ``out`` are kept (rescored against the current test set) and only
    the rest are asked. Ctrl-C (or ``cancel``) stops the run: the result has
    ``interrupted=True`` and the run file keeps the finished cases, no summary.
    ``ids`` limits the run to those case ids; ``on_record(record)`` is called as
    each case finishes (e.g. to stream rows into a table). With ``retain`` (a list)
    the objects made for the run (the system with its answers, the corpus) are
    appended to it rather than dropped, for a caller that keeps them until exit.
    ``judge`` (``openai:BASE_URL#MODEL``, default the test set's ``judge:``) asks a
    second model about every answered case once the run is done (judge.md);
    its key is read from ``judge_key_env``.
    With ``exclusive`` the run file is made new: if ``out`` exists (another run took the
    name), ``NAME-2.jsonl``, ``NAME-3.jsonl``, … is used instead (``Run.path`` says which)."""
    import gc

    was = gc.isenabled()
    gc.disable()  # hundreds of thousands of small records: the cyclic GC would dominate
    try:
        return _evaluate(
            testset,
            system,
            k,
            out=out,
            resume=resume,
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            retriever=retriever,
            api_key_env=api_key_env,
            progress=progress,
            cancel=cancel,
            corpus=corpus,
            ids=ids,
            on_record=on_record,
            retain=retain,
            judge=judge,
            judge_key_env=judge_key_env,
            exclusive=exclusive,
        )
    finally:
        if was:
            gc.enable()


#: bounds a typo cannot cross: 10**8 workers, or retries that never end on a failing server
MAX_CONCURRENCY = 1024
MAX_RETRIES = 100


def _check_options(concurrency: int, timeout: float, retries: int) -> None:
    if concurrency < 1:
        raise InputError(Problem("--concurrency", None, "must be 1 or more"))
    if concurrency > MAX_CONCURRENCY:
        raise InputError(Problem("--concurrency", None, f"{concurrency}: at most {MAX_CONCURRENCY}"))
    if retries > MAX_RETRIES:
        raise InputError(Problem("--retries", None, f"{retries}: at most {MAX_RETRIES}"))
    if not (timeout > 0 and math.isfinite(timeout)):  # nan compares false both ways
        raise InputError(Problem("--timeout", None, "must be a number of seconds more than 0"))
    if retries < 0:
        raise InputError(Problem("--retries", None, "must be 0 or more"))


def _same_testset(named: object, doc: Any) -> bool:
    """Whether a run's meta ``testset`` names the file ``doc`` was read from."""
    if not isinstance(named, str) or not named:
        return True  # an old run that names none: nothing to compare
    try:
        return os.path.samefile(named, doc.path)
    except (OSError, ValueError, TypeError):
        return os.path.realpath(named) == os.path.realpath(str(doc.path))


def _resumed(
    out: Any,
    doc: Any,
    *,
    meta: RunMeta,
    k: int,
    cases: list[Any],
    ctx: Context,
    warnings: list[Problem],
    judge_: Any = None,
) -> tuple[list[CaseRecord], dict[str, CaseRecord]]:
    """The cases ``out`` already holds (rescored against the test set as it is now), kept
    by a resumed run; a run of other options or of another test set is refused."""
    prev = read_run(out)
    warnings.extend(prev.warnings)
    pm = prev.meta
    spec = meta["system"]
    if pm.get("system") != spec or pm.get("k") != k:
        raise InputError(
            Problem(
                str(out),
                1,
                f"was made with --system {pm.get('system')} --k {pm.get('k')}, not "
                f"{spec} --k {k}: resume with the same options, or choose another --out",
            )
        )
    changed = bool(
        pm.get("testset_hash") and meta["testset_hash"] and pm["testset_hash"] != meta["testset_hash"]
    )
    if changed and not _same_testset(pm.get("testset"), doc):
        raise InputError(
            Problem(
                str(out),
                1,
                f"is a run of another test set ({pm.get('testset')}), not {doc.path}: "
                "resuming would replace it (choose another --out)",
                field="--resume",
            )
        )
    if changed:
        msg = "the test set changed since this run started; kept cases are rescored against it"
        warnings.append(Problem(str(out), 1, msg, severity="warning"))
    meta["started"] = pm.get("started", meta["started"])
    meta["resumed"] = utc_now()
    order = {c.id: i for i, c in enumerate(cases)}
    keep = []
    for rec in prev.cases:
        if rec.get("reason") == "error" or rec["id"] not in order:
            continue
        case = cases[order[rec["id"]]]
        new = rescore(rec, case, k, ctx.chunk_text, doc.settings)
        if judge_ is not None:
            judge_.attach_cached(new, case, ctx.chunk_text, doc.settings.language, k)
        keep.append(new)
    return keep, {r["id"]: r for r in keep}


def _writer(
    out: Any, meta: RunMeta, keep: list[CaseRecord] | None, exclusive: bool = False
) -> RunWriter | None:
    if out is None:
        return None
    if exclusive:
        return _new_writer(Path(out), meta)
    if Path(out).is_dir():
        raise InputError(
            Problem(
                str(out),
                None,
                "is a folder; give a file name for the run, e.g. runs/run.jsonl",
                field="--out",
            )
        )
    try:
        return RunWriter(out, meta, keep)
    except OSError as e:
        raise InputError(
            Problem(str(out), None, f"cannot write the run file: {e.strerror or e}", field="--out")
        ) from None


def _new_writer(out: Path, meta: RunMeta) -> RunWriter:
    """A writer on a file made new: ``out``, else ``out-2``, ``out-3``, … (never shared)."""
    for n in range(1, 1000):
        path = out if n == 1 else out.with_name(f"{out.stem}-{n}{out.suffix}")
        try:
            return RunWriter(path, meta, exclusive=True)
        except FileExistsError:
            continue
        except OSError as e:
            raise InputError(
                Problem(str(path), None, f"cannot write the run file: {e.strerror or e}", field="--out")
            ) from None
    raise InputError(Problem(str(out), None, "999 run files of that name already exist", field="--out"))


def _in_order(records: dict[str, CaseRecord], cases: list[Any]) -> list[CaseRecord]:
    if len(records) == len(cases) and list(records) == [c.id for c in cases]:
        return list(records.values())  # finished in test-set order (a local system): nothing to sort
    order = {c.id: i for i, c in enumerate(cases)}
    return sorted(records.values(), key=lambda r: order[r["id"]])


def _cases_of(doc, ids) -> list:
    """The test set's cases, or those of ``ids`` (in test-set order)."""
    if ids is None:
        return list(doc.cases)
    wanted = set(ids)
    return [c for c in doc.cases if c.id in wanted]


def _ask_judge(judge_, interrupted: bool, cancel) -> tuple[bool, bool]:
    """Ask the judge about the answers its cache did not know, once the run is complete:
    (whether it was asked, whether the run now counts as interrupted)."""
    if judge_ is None or interrupted:
        return False, interrupted
    asked = bool(judge_.pending)
    return asked, bool(judge_.ask_pending(cancel))


def _finish(
    writer: RunWriter, meta: RunMeta, ordered: list[CaseRecord], summary: Summary, *, rewrite: bool
) -> None:
    """End the run file: the summary line, or — when the judge added verdicts to cases
    already streamed — the whole file again, atomically."""
    if rewrite:
        writer.close()
        write_run(writer.path, meta, ordered, summary)
    else:
        writer.write_summary(summary)


def _evaluate(
    testset,
    system,
    k,
    *,
    out,
    resume,
    concurrency,
    timeout,
    retries,
    backoff,
    retriever,
    api_key_env,
    progress,
    cancel,
    corpus,
    ids,
    on_record,
    retain=None,
    judge=None,
    judge_key_env="OPENAI_API_KEY",
    exclusive=False,
) -> Run:
    from .runner import Progress

    doc = load_testset(testset)
    k = _check_k(k if k is not None else doc.settings.k)
    _check_options(concurrency, timeout, retries)
    if resume and out is None:
        raise InputError(Problem("--resume", None, "needs --out RUN.jsonl, the run file to continue"))
    judge_ = open_judge(
        doc, judge, key_env=judge_key_env, timeout=timeout, retries=retries, concurrency=concurrency
    )
    ctx, sys_ = open_system(
        doc,
        system,
        corpus=corpus,
        timeout=timeout,
        retriever=retriever,
        api_key_env=api_key_env,
        concurrency=concurrency,
    )
    if retain is not None:
        retain.append((ctx, sys_))
    warnings = list(getattr(sys_, "warnings", []))
    cases = _cases_of(doc, ids)
    settings = doc.settings
    meta = make_meta(
        testset=str(doc.path),
        testset_hash=_content_hash(doc),
        system=sys_.spec,
        k=k,
        version=_version(),
        corpus=str(ctx.corpus_path) if ctx.corpus_path is not None else None,
    )
    if judge_ is not None:
        meta["judge"] = judge_.spec
    records: dict[str, CaseRecord] = {}
    keep: list[CaseRecord] | None = None
    if resume and Path(out).exists():
        keep, records = _resumed(
            out, doc, meta=meta, k=k, cases=cases, ctx=ctx, warnings=warnings, judge_=judge_
        )
    todo = [c for c in cases if c.id not in records]
    if hasattr(sys_, "prepare"):
        sys_.prepare()
    writer = _writer(out, meta, keep if resume else None, exclusive and not resume)
    chunk_text = ctx.chunk_text
    interrupted = False
    asked = 0
    local = hasattr(sys_, "ask_sync")
    try:
        with Progress(len(todo), enabled=progress) as bar:

            def on_done(case, res):
                rec = make_record(case, res, k, chunk_text, settings)
                if judge_ is not None:  # a cached verdict is written with the case; others are asked after
                    judge_.attach_cached(rec, case, chunk_text, settings.language, k)
                records[case.id] = rec
                if writer is not None:
                    writer.write_case(rec, flush=not local)
                if on_record is not None:
                    on_record(rec)
                bar.advance()

            try:
                asked = run_cases(
                    sys_,
                    todo,
                    k,
                    on_done,
                    concurrency=concurrency,
                    timeout=timeout,
                    retries=retries,
                    backoff=backoff,
                    cancel=cancel,
                )
            except KeyboardInterrupt:
                interrupted = True
        if cancel is not None and cancel.is_set() and len(records) < len(cases):
            interrupted = True
        ordered = _in_order(records, cases)
        asked_judge, interrupted = _ask_judge(judge_, interrupted, cancel)
        summary = summarize(ordered, k)
        if writer is not None and not interrupted:
            _finish(writer, meta, ordered, summary, rewrite=asked_judge)
    finally:
        if writer is not None:
            writer.close()
    return Run(
        summary, ordered, meta, writer.path if writer is not None else None, interrupted, warnings, asked
    )


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


def as_result(rec: CaseRecord) -> dict[str, Any]:
    """A stored case record back to the system's §3 result (its own verdict, if any)."""
    res = {
        f: rec[f]
        for f in ("ranking", "scores", "answer", "prompt_ids", "tokens", "latency_ms", "error")
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
    r.pop("prompt_ids", None)
    r.pop("tokens", None)
    return r


def _rederived(
    base: Run, cases: list[Any], ctx: Context, sys_: Any, k: int, t: float | None
) -> list[CaseRecord]:
    """Records at ``k`` (ranking cut at score ``t``) made from the stored run, no new call:
    the builtin answerer answers again locally; ``results:`` answers stay as given."""
    builtin = sys_.spec == "builtin"
    fixed = hasattr(sys_, "results")
    settings = ctx.settings
    recs = []
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
        recs.append(make_record(case, res, k, ctx.chunk_text, settings))
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
    if recs is not None:
        s = summarize(recs, k)
        row.update(supported=s["supported"], correct=s["accuracy"], tokens=s["tokens"], reasons=s["reasons"])
        if judged:
            row.update(judge_supported=s.get("judge_supported"), judge_correct=s.get("judge_correct"))
    else:
        row.update(supported=None, correct=None, tokens=None, reasons=None)
    return row


def sweep(
    testset,
    system: str = "builtin",
    ks=(1, 2, 3, 4),
    thresholds=(None,),
    *,
    progress: bool = False,
    **options,
) -> dict:
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
                recs = _rederived(base, cases, ctx, sys_, k, t)
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
