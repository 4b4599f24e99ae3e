"""pytest plugin: a test set's cases and bars as test items.

    pytest --ragtriage testsets/shop-es.yaml                           # the builtin system
    pytest --ragtriage testsets/shop-es.yaml --ragtriage-system python:my_rag:answer
    pytest --ragtriage testsets/shop-es.yaml --ragtriage-run run.jsonl # a run already made
    pytest --ragtriage testsets/shop-es.yaml --ragtriage-min hit@3=0.8 -k gate

Installed with ragtriage (the ``pytest11`` entry point ``ragtriage``); it does nothing
unless ``--ragtriage`` is given. There is one item per case (``TESTSET::CASE``: passes
when the case passes, is skipped when it is a draft without expected chunks, fails with
the reports' "where to look" text otherwise) and one per bar (``TESTSET::gate::METRIC``),
plus one for stale labels and one for completeness — the same decisions as ``ragtriage
check``, made once for the session (the system is asked once per case, not per item).
Labels found stale stop the check before the system is asked, as ``check`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

_RESULT = pytest.StashKey[Any]()


def pytest_addoption(parser) -> None:
    g = parser.getgroup("ragtriage", "ragtriage: a RAG test set as test items")
    g.addoption(
        "--ragtriage", metavar="TESTSET", default=None, help="collect the cases and bars of this test set"
    )
    g.addoption(
        "--ragtriage-system",
        metavar="SPEC",
        default="builtin",
        help="the system to ask (builtin, results:PATH, python:MODULE:ATTR, http://…, openai:…)",
    )
    g.addoption(
        "--ragtriage-run",
        metavar="RUN",
        action="append",
        default=[],
        help="judge this run file instead of asking the system (repeatable: shards)",
    )
    g.addoption(
        "--ragtriage-min", metavar="METRIC=VALUE", action="append", default=[], help="a bar (repeatable)"
    )
    g.addoption(
        "--ragtriage-k", metavar="K", type=int, default=None, help="cut-off (default: the test set's k)"
    )


def pytest_collection_modifyitems(session, config, items) -> None:
    path = config.getoption("ragtriage")
    if not path:
        return
    collector = TestSetFile.from_parent(session, path=Path(path).resolve())
    items.extend(collector.collect())


class _Failed(Exception):
    pass


def _decide(config) -> Any:
    """The check's result (or the InputError that stopped it), computed once."""
    if _RESULT in config.stash:
        return config.stash[_RESULT]
    from .core.errors import InputError

    try:
        result = _check(config)
    except InputError as e:
        result = e
    config.stash[_RESULT] = result
    return result


def _check(config):
    from .core import staleness
    from .core.document import TestSetDocument
    from .core.evaluate import evaluate
    from .core.gate import CheckResult, collect_bars, judge
    from .core.merge import join_runs
    from .core.runfile import read_run
    from .core.schema import JUDGE_THRESHOLDS

    doc = TestSetDocument.load(config.getoption("ragtriage"))
    bars = collect_bars(
        {k: v for k, v in doc.settings.gates.items() if k not in JUDGE_THRESHOLDS},
        config.getoption("ragtriage_min"),
    )
    stale, corpus = [], None
    if doc.corpus_path is not None and doc.corpus_path.exists():
        stale, corpus = list(staleness.check(doc, doc.corpus_path).stale), str(doc.corpus_path)
    runs = config.getoption("ragtriage_run")
    if runs:
        run = join_runs([read_run(p) for p in runs])
        chunk_text = None
        if run.meta.get("testset_hash") != doc.content_hash:
            from .core.systems import Context

            chunk_text = Context(doc).chunk_text
        return judge(
            doc, run, bars, stale=stale, run_label=", ".join(runs), chunk_text=chunk_text, stale_corpus=corpus
        )
    if stale:
        return CheckResult(
            testset=str(doc.path),
            run=None,
            k=doc.settings.k,
            records=[],
            summary={},
            bars=[],
            stale=stale,
            case_lines=dict(doc.case_lines()),
            stale_corpus=corpus,
            not_run=len(bars),
            notes=["labels are stale: the system was not asked"],
        )
    made = evaluate(
        doc, config.getoption("ragtriage_system"), config.getoption("ragtriage_k"), executor="process"
    )
    return judge(doc, made, bars, stale=stale)


def _result(config):
    got = _decide(config)
    if isinstance(got, Exception):
        raise _Failed("\n".join(str(p) for p in getattr(got, "problems", [got])))
    return got


class TestSetFile(pytest.File):
    """The items of one test set: its cases, then its gate."""

    def collect(self):
        from .core.document import TestSetDocument
        from .core.errors import InputError
        from .core.gate import collect_bars
        from .core.schema import JUDGE_THRESHOLDS

        try:
            doc = TestSetDocument.load(self.path)
            bars = collect_bars(
                {k: v for k, v in doc.settings.gates.items() if k not in JUDGE_THRESHOLDS},
                self.config.getoption("ragtriage_min"),
            )
            lines = dict(doc.case_lines())
        except InputError as e:
            yield GateItem.from_parent(self, name="test set", kind="input", problems=e.problems)
            return
        for c in doc.cases:
            yield CaseItem.from_parent(self, name=c.id, line=lines.get(c.id))
        for b in bars:
            yield GateItem.from_parent(self, name=f"gate::{b.metric}", kind="bar", metric=b.metric)
        yield GateItem.from_parent(self, name="gate::labels are fresh", kind="stale")
        yield GateItem.from_parent(self, name="gate::every case measured", kind="complete")


class CaseItem(pytest.Item):
    def __init__(self, *, line: int | None = None, **kw):
        super().__init__(**kw)
        self.line = line

    def runtest(self) -> None:
        from .core.diagnosis import PASSING
        from .core.gate import failure_message
        from .core.junit import _case_details

        res = _result(self.config)
        rec = next((r for r in res.records if r["id"] == self.name), None)
        if rec is None:
            if res.not_run:
                pytest.skip("labels are stale: the system was not asked (see gate::labels are fresh)")
            raise _Failed(f"{self.name}: no result in the run")
        reason = rec.get("reason")
        if reason in PASSING:
            return
        if reason == "unlabelled":
            pytest.skip("unlabelled: no expected chunk yet")
        detail = res.details.get(self.name, "")
        raise _Failed(failure_message(rec, detail) + "\n\n" + _case_details(rec, res.k))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, _Failed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, (self.line - 1) if self.line else None, f"ragtriage case {self.name}"


class GateItem(pytest.Item):
    def __init__(self, *, kind: str, metric: str | None = None, problems=None, **kw):
        super().__init__(**kw)
        self.kind = kind
        self.metric = metric
        self.problems = problems

    def runtest(self) -> None:
        from .core.gate import _fmt, _stale_fields

        if self.kind == "input":
            raise _Failed("\n".join(str(p) for p in self.problems or ()))
        res = _result(self.config)
        if self.kind == "bar":
            if res.not_run:
                raise _Failed(f"{self.metric}: not measured: labels are stale, the system was not asked")
            b = next(x for x in res.bars if x.bar.metric == self.metric)
            if not b.passed:
                value = "nothing to measure" if b.value is None else _fmt(b.value)
                raise _Failed(
                    f"{b.bar.metric} = {value} < {b.bar.minimum:g} (bar from {b.bar.source}, k = {b.k})"
                )
        elif self.kind == "stale" and res.stale:
            lines = [
                f"case {s['case']}: label {s['label']} is {s['status']}"
                for s in map(_stale_fields, res.stale)
            ]
            raise _Failed(f"{len(res.stale)} stale label(s); run `ragtriage stale`\n" + "\n".join(lines))
        elif self.kind == "complete" and (res.missing or res.errors):
            raise _Failed(
                f"{len(res.missing)} case(s) without a result, {len(res.errors)} ended in an error: "
                + ", ".join([*res.missing, *res.errors][:20])
            )

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, _Failed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"ragtriage {self.name}"
