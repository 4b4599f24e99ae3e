"""Evaluate a test set against a system: ask, score, summarise, write the run file.

``ragtriage.evaluate(ts, system="builtin", k=3)`` (formats.md §6) is
:func:`evaluate`; ``ragtriage run`` and ``ragtriage sweep`` are thin layers
over :func:`evaluate`, :func:`.plan.plan` (the dry run) and :func:`.sweep.sweep`.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .clock import utc_now
from .errors import InputError, Problem
from .gold import Gold
from .judge import open_judge
from .options import _check_k
from .records import CaseRecord, RunMeta, Summary
from .runfile import RunWriter, make_meta, read_run, write_run
from .runner import run_cases
from .scoring import make_record, rescore
from .summary import summarize
from .systems import Context, make_system

if TYPE_CHECKING:
    from .corpus import Corpus
    from .document import TestSetDocument
    from .judge import Judge
    from .schema import Case
    from .scoring import Retrieved
    from .select import Selection


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

    def to_pandas(self) -> Any:
        """One row per case with the §4 computed fields, typed (``frames``; needs pandas)."""
        from .frames import run_frame

        return run_frame(self.cases)


def load_testset(testset: str | os.PathLike[str] | TestSetDocument) -> TestSetDocument:
    """A test-set document from a path, or the document given."""
    if isinstance(testset, (str, os.PathLike)):
        from .document import TestSetDocument

        return TestSetDocument.load(testset)
    return testset


def _version() -> str:
    from .. import __version__

    return __version__


def _content_hash(doc: object) -> str | None:
    h: str | None = getattr(doc, "content_hash", None)
    if h:
        return h
    path = getattr(doc, "path", None)
    if path and Path(path).exists():
        from .text import file_hash

        return file_hash(path)
    return None


def open_system(
    doc: TestSetDocument, system: object, *, corpus: Corpus | None = None, **options: Any
) -> tuple[Context, Any]:  # the system: one of the classes of .systems
    ctx = Context(doc, corpus=corpus)
    return ctx, make_system(system, ctx, **options)


def evaluate(
    testset: str | os.PathLike[str] | TestSetDocument,
    system: str = "builtin",
    k: int | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    resume: bool = False,
    concurrency: int = 8,
    timeout: float = 60.0,
    retries: int = 2,
    backoff: float | None = None,  # None: runner.BACKOFF, read when a retry waits
    retriever: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    progress: bool = False,
    cancel: threading.Event | None = None,
    corpus: Corpus | None = None,
    ids: Iterable[str] | None = None,
    on_record: Callable[[CaseRecord], None] | None = None,
    retain: list[Any] | None = None,
    judge: str | None = None,
    judge_key_env: str = "OPENAI_API_KEY",
    exclusive: bool = False,
    keep_ranking: int | None = None,
    selection: Selection | None = None,
    executor: str = "thread",
    ray_address: str | None = None,
    cite: str | None = None,
    new_file: bool = False,
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
    name), ``NAME-2.jsonl``, ``NAME-3.jsonl``, … is used instead (``Run.path`` says which).
    With ``keep_ranking`` (a depth) the records in ``Run.cases`` keep their rankings only
    that deep and no scores, once written: a command that needs no more (``run`` prints
    the top k) holds memory that grows with the cases, not with the rankings' depth; the
    run file has every record whole. ``selection`` (a :class:`.select.Selection`: ``--ids``,
    ``--tag``, ``--shard``) runs only the cases it covers and is recorded in the meta line,
    so ``ragtriage merge`` can check that shards cover the test set once. ``executor``
    runs a ``python:`` system's calls in this process (``"thread"``, the default here), in
    a worker process (``"process"``, the CLI's default: a system that exits or crashes is
    an error, not the end of the run) or as Ray tasks (``"ray"``, at ``ray_address``).
    ``cite`` (``inline``, ``prompt``, ``field``; default the test set's ``cite:``) says where
    the grounding check's cited set comes from (evaluation.md).
    With ``new_file`` ``out`` must not exist (InputError if another run made it meanwhile)."""
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
            keep_ranking=keep_ranking,
            selection=selection,
            executor=executor,
            ray_address=ray_address,
            cite=cite,
            new_file=new_file,
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
    settings: Any = None,
) -> tuple[list[CaseRecord], dict[str, CaseRecord]]:
    """The cases ``out`` already holds (rescored against the test set as it is now), kept
    by a resumed run; a run of other options or of another test set is refused."""
    prev = read_run(out)
    warnings.extend(prev.warnings)
    pm = prev.meta
    spec = meta["system"]
    if pm.get("selection") != meta.get("selection"):
        raise InputError(
            Problem(
                str(out),
                1,
                f"was made for {_cover(pm.get('selection'))}, not {_cover(meta.get('selection'))}: "
                "resume with the same --shard/--tag/--ids, or choose another --out",
                field="--resume",
            )
        )
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
    gold = Gold.needed(cases, lambda: ctx.corpus)
    for rec in prev.cases:
        if rec.get("reason") == "error" or rec["id"] not in order:
            continue
        case = cases[order[rec["id"]]]
        new = rescore(rec, case, k, ctx.lookup, settings or doc.settings, gold=gold)
        if judge_ is not None:
            judge_.attach_cached(new, case, ctx.chunk_text, doc.settings.language, k)
        keep.append(new)
    return keep, {r["id"]: r for r in keep}


def _cover(sel: dict[str, Any] | None) -> str:
    if not sel:
        return "the whole test set"
    return ", ".join(f"{k} {v}" for k, v in sel.items())


def _writer(
    out: Any,
    meta: RunMeta,
    keep: list[CaseRecord] | None,
    *,
    resume: bool = False,
    exclusive: bool = False,
    new_file: bool = False,
    deferred: bool = False,
) -> RunWriter | None:
    """The run file's writer: resumed (``keep`` kept), made new under a free name
    (``exclusive``), made new under exactly ``out`` (``new_file``), or replacing ``out``."""
    if not resume:
        keep = None
    else:
        exclusive = new_file = False
    if out is None:
        return None
    if exclusive:
        return _new_writer(Path(out), meta, deferred)
    if new_file and keep is None:
        try:
            return RunWriter(out, meta, exclusive=True, deferred=deferred)
        except FileExistsError:
            msg = "already exists (made by another run meanwhile); not replaced (--force replaces it)"
            raise InputError(Problem(str(out), None, msg, field="--out")) from None
        except OSError as e:
            raise InputError(
                Problem(str(out), None, f"cannot write the run file: {e.strerror or e}", field="--out")
            ) from None
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
        return RunWriter(out, meta, keep, deferred=deferred)
    except OSError as e:
        raise InputError(
            Problem(str(out), None, f"cannot write the run file: {e.strerror or e}", field="--out")
        ) from None


def _new_writer(out: Path, meta: RunMeta, deferred: bool = False) -> RunWriter:
    """A writer on a file made new: ``out``, else ``out-2``, ``out-3``, … (never shared)."""
    for n in range(1, 1000):
        path = out if n == 1 else out.with_name(f"{out.stem}-{n}{out.suffix}")
        try:
            return RunWriter(path, meta, exclusive=True, deferred=deferred)
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


def with_cite(settings: Any, cite: str | None) -> Any:
    """The test set's settings with ``cite`` (``--cite``) in place of its ``cite:``."""
    if cite is None or cite == getattr(settings, "cite", "inline"):
        return settings
    from .grounding import CITE_MODES

    if cite not in CITE_MODES:
        raise InputError(Problem("--cite", None, f"{cite!r}: one of {', '.join(CITE_MODES)}"))
    return settings.model_copy(update={"cite": cite})


def _id_warnings(records: list[CaseRecord], k: int, cite: str, corpus: str | None) -> list[Problem]:
    """Unknown ranked or cited ids, a run in which nothing is cited (idcheck.py): warnings."""
    from .idcheck import citation_warning, id_warnings

    texts = id_warnings(records, k, corpus)
    note = citation_warning(records, cite)
    if note:
        texts.append(note)
    return [Problem("run", None, t, severity="warning") for t in texts]


def _cases_of(
    doc: TestSetDocument, ids: Iterable[str] | None, selection: Selection | None = None
) -> list[Case]:
    """The test set's cases, or those of ``ids`` and of ``selection`` (in test-set order)."""
    cases = list(doc.cases)
    if ids is not None:
        wanted = set(ids)
        cases = [c for c in cases if c.id in wanted]
    if selection is not None and not selection.everything:
        from .select import select

        cases = select(cases, selection)
    return cases


def _meta(
    doc: TestSetDocument, ctx: Context, sys_: Any, k: int, judge_: Judge | None, selection: Selection | None
) -> RunMeta:
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
    if selection is not None and not selection.everything:
        meta["selection"] = selection.describe()
    return meta


def _ask_judge(judge_: Judge | None, interrupted: bool, cancel: threading.Event | None) -> tuple[bool, bool]:
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
        writer.reorder([r["id"] for r in ordered])  # the test set's order, whatever finished first
        writer.write_summary(summary)


def _slim(rec: CaseRecord, depth: int) -> None:
    """What a command keeps of a record it has written: the ranking to ``depth`` (the
    deepest k it still measures), no scores. The run file holds the record whole."""
    ranking = rec.get("ranking")
    if ranking is not None and len(ranking) > depth:
        rec["ranking"] = ranking[:depth]
    rec.pop("scores", None)


def _score_columnar(
    sys_: Any,
    todo: list[Case],
    k: int,
    on_done: Callable[[Any, dict[str, Any], Retrieved | None], None],
    *,
    cases: list[Case],
    cancel: threading.Event | None,
    writer: RunWriter | None,
) -> int:
    """:func:`.columnar.score_source`; a bad line leaves the run file as it was."""
    from .columnar import score_source

    try:
        return score_source(sys_, todo, k, on_done, known_ids={c.id for c in cases}, cancel=cancel)
    except InputError:
        if writer is not None:
            writer.discard()
        raise


def _evaluate(
    testset: str | os.PathLike[str] | TestSetDocument,
    system: str,
    k: int | None,
    *,
    out: str | os.PathLike[str] | None,
    resume: bool,
    concurrency: int,
    timeout: float,
    retries: int,
    backoff: float | None,
    retriever: str | None,
    api_key_env: str,
    progress: bool,
    cancel: threading.Event | None,
    corpus: Corpus | None,
    ids: Iterable[str] | None,
    on_record: Callable[[CaseRecord], None] | None,
    retain: list[Any] | None = None,
    judge: str | None = None,
    judge_key_env: str = "OPENAI_API_KEY",
    exclusive: bool = False,
    keep_ranking: int | None = None,
    selection: Selection | None = None,
    executor: str = "thread",
    ray_address: str | None = None,
    cite: str | None = None,
    new_file: bool = False,
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
        executor=executor,
        ray_address=ray_address,
    )
    if retain is not None:
        retain.append((ctx, sys_))
    warnings: list[Problem] = list(getattr(judge_, "warnings", []))
    cases = _cases_of(doc, ids, selection)
    settings = with_cite(doc.settings, cite)
    meta = _meta(doc, ctx, sys_, k, judge_, selection)
    if settings.cite != "inline":
        meta["cite"] = settings.cite
    records: dict[str, CaseRecord] = {}
    keep: list[CaseRecord] | None = None
    if resume and out is not None and Path(out).exists():
        keep, records = _resumed(
            out,
            doc,
            meta=meta,
            k=k,
            cases=cases,
            ctx=ctx,
            warnings=warnings,
            judge_=judge_,
            settings=settings,
        )
    todo = [c for c in cases if c.id not in records]
    columnar = hasattr(sys_, "reader")  # results: answers on disk, scored in one streamed pass
    if hasattr(sys_, "prepare") and not columnar:
        sys_.prepare()
    writer = _writer(
        out, meta, keep, resume=resume, exclusive=exclusive, new_file=new_file, deferred=columnar
    )
    chunk_text = ctx.lookup
    gold = Gold.needed(todo, lambda: ctx.corpus)  # documents and quotes, resolved once
    interrupted = False
    asked = 0
    flush = not hasattr(sys_, "ask_sync")  # a local system's lines are flushed in blocks
    slim = keep_ranking if judge_ is None else None  # the judge rewrites the file from whole records
    try:
        with Progress(len(todo), enabled=progress) as bar:

            def on_done(case: Case, res: dict[str, Any], retrieved: Retrieved | None = None) -> None:
                rec = make_record(case, res, k, chunk_text, settings, retrieved, gold=gold)
                if judge_ is not None:  # a cached verdict is written with the case; others are asked after
                    judge_.attach_cached(rec, case, chunk_text, settings.language, k)
                records[case.id] = rec
                if writer is not None:
                    writer.write_case(rec, flush=flush)
                if on_record is not None:
                    on_record(rec)
                if slim is not None:
                    _slim(rec, slim)
                bar.advance()

            try:
                if columnar:
                    asked = _score_columnar(sys_, todo, k, on_done, cases=cases, cancel=cancel, writer=writer)
                else:
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
        if not interrupted:
            warnings.extend(_id_warnings(ordered, k, settings.cite, meta.get("corpus")))
        if writer is not None and not interrupted:
            _finish(writer, meta, ordered, summary, rewrite=asked_judge)
    finally:
        if writer is not None:
            writer.close()
    warnings[:0] = getattr(sys_, "warnings", [])
    return Run(
        summary, ordered, meta, writer.path if writer is not None else None, interrupted, warnings, asked
    )
