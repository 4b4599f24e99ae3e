"""Export from the app (no Textual): the test set in another tool's format, or the CI
report of the loaded run — the renderers ``ragtriage export`` and ``ragtriage check``
use, on the test set as it is in the app (unsaved changes included).

Like every command, an export never writes over one of its inputs (the test set, its
corpus, the run) and says where the path cannot be written before doing any work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import InputError, Problem
from ..core.exchange import FORMATS
from ..core.reports import check_writable, refuse_input_as_output, write_report

#: CI reports: name -> (label, file suffix)
REPORTS = {
    "junit": ("CI report: JUnit XML", "report.xml"),
    "markdown": ("CI report: markdown", "report.md"),
    "json": ("CI report: JSON", "report.json"),
}
#: test-set formats: name -> file suffix
SUFFIX = {
    "jsonl": "jsonl",
    "csv": "csv",
    "ragas": "ragas.jsonl",
    "deepeval": "deepeval.json",
    "trec": "qrels",
}
assert set(SUFFIX) == set(FORMATS)

#: every choice of the dialog, in its order: (name, label)
CHOICES: tuple[tuple[str, str], ...] = tuple((f, f"test set as {f}") for f in FORMATS) + tuple(
    (name, label) for name, (label, _s) in REPORTS.items()
)


def default_path(testset: Path, kind: str) -> Path:
    """``shop.yaml`` -> ``shop.export.jsonl``, ``shop.report.xml``: beside the test set."""
    suffix = REPORTS[kind][1] if kind in REPORTS else f"export.{SUFFIX[kind]}"
    return testset.with_name(f"{testset.stem}.{suffix}")


@dataclass
class Exported:
    """What was written: where, and what the toast says."""

    path: Path
    message: str
    notes: list[str] = field(default_factory=list)
    severity: str = "information"


def guard(path: Path, inputs: list[Path | None]) -> None:
    """Refuse a path that is one of the inputs or cannot be written (raises InputError)."""
    if not str(path).strip():
        raise InputError(Problem('""', None, "an empty path (give a file name)", field="path"))
    refuse_input_as_output(path, "path", *inputs)
    check_writable(path, "path")


def export(
    doc: Any,
    kind: str,
    path: Path,
    *,
    run_path: Path | None = None,
    corpus: Any = None,
) -> Exported:
    """Write ``kind`` (a format of :data:`FORMATS` or a key of :data:`REPORTS`) to ``path``.

    Slow for ragas/deepeval (chunk texts) and CI reports (stale check, rescoring): call it
    in a worker. Raises :class:`InputError` with located problems."""
    guard(path, [doc.path, doc.corpus_path, run_path])
    if kind in REPORTS:
        return _report(doc, kind, path, run_path, corpus)
    if kind not in FORMATS:
        raise ValueError(f"unknown export {kind!r}")
    from ..core.exchange import export_testset

    text, notes = export_testset(doc, kind)
    write_report(path, text)
    n = len(doc.cases)
    return Exported(path, f"exported {n} case{'s' * (n != 1)} as {kind} to {path}", notes)


def _report(doc: Any, kind: str, path: Path, run_path: Path | None, corpus: Any) -> Exported:
    from ..core.gate import collect_bars, judge, render_junit, render_markdown
    from ..core.judge import JUDGE_METRICS
    from ..core.runfile import read_run
    from ..core.schema import JUDGE_THRESHOLDS

    if run_path is None:
        raise InputError(Problem("run", None, "no run loaded: ctrl+r runs the test set first"))
    bars = collect_bars({k: v for k, v in doc.settings.gates.items() if k not in JUDGE_THRESHOLDS}, [])
    if any(b.name in JUDGE_METRICS for b in bars):
        raise InputError(
            Problem(
                str(doc.path),
                None,
                "a gate on a judge metric needs the judge checked against your grades: "
                "use ragtriage check for this report",
                field="gates",
            )
        )
    run = read_run(run_path)
    chunk_text = None
    if run.meta.get("testset_hash") != getattr(doc, "content_hash", None):
        from ..core.systems import Context

        chunk_text = Context(doc, corpus=corpus).chunk_text
    stale, notes = _stale(doc, corpus)
    result = judge(doc, run, bars, stale=stale, run_label=str(run_path), chunk_text=chunk_text)
    result.notes += notes
    from ..core import gate_intervals

    gate_intervals.attach(result, doc)  # the intervals `ragtriage check` gives every rate and bar
    if kind == "junit":
        text = render_junit(result, testset_path=str(doc.path))
    elif kind == "markdown":
        text = render_markdown(result)
    else:
        text = orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"
    write_report(path, text)
    verdict = "✓ the gate holds" if result.passed else "✗ the gate fails"
    label = REPORTS[kind][0].removeprefix("CI report: ")
    return Exported(
        path,
        f"CI report ({label}): {verdict} · written to {path}",
        list(result.notes),
        "information" if result.passed else "warning",
    )


def _stale(doc: Any, corpus: Any) -> tuple[list, list[str]]:
    """Stale labels as ``check`` finds them (the loaded corpus, else its file)."""
    source = corpus if corpus is not None else doc.corpus_path
    if source is None:
        return [], ["no corpus in the test set: stale labels not checked"]
    if corpus is None and not Path(source).exists():
        raise InputError(Problem(str(doc.path), None, f"corpus file not found: {source}", field="corpus"))
    from ..core import staleness

    return list(staleness.check(doc, source).stale), []
