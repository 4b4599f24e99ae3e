"""Pick the format: :func:`export_testset` renders a loaded test set, :func:`read_import`
reads another tool's file. The formats themselves are one module each."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError, Problem
from ..files import require_regular_file
from ..records import CaseRecord
from . import FORMATS
from .common import SURROGATE, Imported, PathArg, Reader, TextMatcher, chunk_texts, has_surrogate
from .csv import export_csv_counted, import_csv
from .deepeval import export_deepeval, import_deepeval
from .jsonl import export_jsonl, import_jsonl
from .ragas import export_ragas, import_ragas, run_chunk_ids
from .trec import export_qrels, import_trec, import_trec_docs

READERS: dict[str, Reader] = {
    "jsonl": import_jsonl,
    "csv": import_csv,
    "ragas": import_ragas,
    "deepeval": import_deepeval,
    "trec": import_trec,
}
assert tuple(READERS) == FORMATS


def export_testset(
    doc: Any,
    fmt: str,
    corpus_path: PathArg | None = None,
    run: Mapping[str, CaseRecord] | None = None,
    k: int | None = None,
    level: str = "chunk",
    *,
    csv_raw: bool = False,
) -> tuple[str, list[str]]:
    """Render a loaded test set (``doc.cases``, ``doc.labels``, ``doc.corpus_path``) in ``fmt``.

    ``run`` (case id -> run record) is for ``ragas``: the samples then carry what the
    system retrieved and answered (its first ``k`` ranked chunks); ``level`` is for ``trec``:
    ``doc`` writes document qrels from ``expected_docs``. ``csv_raw``: csv cells exactly as the
    values are, even those a spreadsheet would run as a formula. Returns the text and notes
    about what the format could not carry."""
    cases = list(doc.cases)
    labels = doc.labels or {}
    if corpus_path is None:
        corpus_path = getattr(doc, "corpus_path", None)
    if fmt == "jsonl":
        return export_jsonl(cases, labels), []
    if fmt == "csv":
        text, formulas = export_csv_counted(cases, raw=csv_raw)
        notes = ["csv carries no labels (remembered chunk texts); use jsonl to keep them"]
        if formulas:
            notes.append(
                f"{formulas} cell(s) starting with = + - @ written with a leading ' so a spreadsheet shows "
                "them as text, not as a formula (ragtriage import reads them back exactly; --csv-raw "
                "writes them as they are)"
                if not csv_raw
                else f"{formulas} cell(s) start with = + - @: a spreadsheet may run them as formulas (--csv-raw)"
            )
        return text, notes
    if fmt == "trec":
        return export_qrels(cases, level)
    ids = {cid for c in cases for cid in c.expected}
    if run is not None:
        ids |= run_chunk_ids(run.values(), k)
    texts, notes = chunk_texts(ids, labels, corpus_path)
    if fmt == "ragas":
        text, more = export_ragas(cases, texts, run, k)
    elif fmt == "deepeval":
        text, more = export_deepeval(cases, texts)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return text, notes + more


def read_import(
    path: PathArg, fmt: str, corpus_path: PathArg | None = None, level: str = "chunk"
) -> Imported:
    """Read ``path`` in ``fmt``; raise :class:`InputError` with every problem, located."""
    p = Path(path)
    name = str(path)
    if not p.exists():
        raise InputError(Problem(name, None, "file not found"))
    if p.is_dir():
        raise InputError(Problem(name, None, "is a folder, not a file"))
    require_regular_file(p)
    raw = p.read_bytes()
    if b"\x00" in raw[:4096]:
        raise InputError(Problem(name, None, f"not a text file (NUL byte); expected {fmt}"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(Problem(name, line, "not UTF-8 text (save the file as UTF-8)")) from None
    if fmt not in READERS:
        raise ValueError(f"unknown format {fmt!r}")
    problems: list[Problem] = []
    reader = import_trec_docs if fmt == "trec" and level == "doc" else READERS[fmt]
    result = reader(text, name, problems, TextMatcher(corpus_path))
    problems += [
        Problem(name, None, SURROGATE, field=f"labels.{cid}")
        for cid, label in result.labels.items()
        if has_surrogate(cid) or has_surrogate(label)
    ]
    if not problems and not result.cases:
        problems.append(Problem(name, None, f"no cases found (is this a {fmt} file?)"))
    if problems:
        raise InputError(problems[:50])
    return result
