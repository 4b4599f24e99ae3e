"""Exchange test sets with other tools: export to, and import from, five formats.

| format | module | file | what it carries |
|---|---|---|---|
| ``jsonl`` | :mod:`.jsonl` | ours, one case per line | every case field, and the labels of its expected chunks |
| ``csv`` | :mod:`.csv` | one case per row, a header | every case field (lists as ``a | b``, or a JSON array when needed) |
| ``ragas`` | :mod:`.ragas` | EvaluationDataset JSONL | ``user_input``, ``reference``, ``reference_contexts``, ``reference_context_ids`` (with a run: ``response``, ``retrieved_contexts``, ``retrieved_context_ids``) |
| ``deepeval`` | :mod:`.deepeval` | goldens JSON (or JSONL) | ``input``, ``expected_output``, ``context``, ``comments``; the rest in ``additional_metadata`` |
| ``trec`` | :mod:`.trec` | qrels (``qid 0 docid rel``) | case ids and expected chunk ids; a run's rankings as a TREC run file |

:mod:`.common` holds what they share; :mod:`.dispatch` picks one by name. To add a
format: a module with ``export_X`` and ``import_X``, its name in :data:`FORMATS`, and
one line in each table of :mod:`.dispatch`.

Export never changes the test set. Import returns plain case dicts, labels and a
list of notes saying what could not be mapped; the command writes them into a
new commented test set through the test-set document. Every reader rejects bad
input with located problems (file, line, field) before anything is written.

:data:`FORMATS` is read by the command line when it builds its parser, so this
package loads its modules (and pydantic) only when a name below is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: every format name, in the order the command line lists them
FORMATS = ("jsonl", "csv", "ragas", "deepeval", "trec")

_WHERE = {
    "Imported": "common",
    "LIST_FIELDS": "common",
    "chunk_texts": "common",
    "clean_label": "common",
    "guess_language": "common",
    "GUESSABLE": "common",
    "import_comment": "common",
    "label_from_text": "common",
    "export_testset": "dispatch",
    "read_import": "dispatch",
    "export_jsonl": "jsonl",
    "export_csv": "csv",
    "export_ragas": "ragas",
    "RAGAS_RUN_FIELDS": "ragas",
    "RAGAS_KNOWN": "ragas",
    "RAGAS_TAG_FIELDS": "ragas",
    "export_deepeval": "deepeval",
    "DEEPEVAL_RUN_FIELDS": "deepeval",
    "DEEPEVAL_KNOWN": "deepeval",
    "export_qrels": "trec",
    "export_trec_run": "trec",
    "DUPLICATE_PREFIX": "trec",
    "QUESTION_PLACEHOLDER": "trec",
}

if TYPE_CHECKING:
    from .common import (
        GUESSABLE,
        LIST_FIELDS,
        Imported,
        chunk_texts,
        clean_label,
        guess_language,
        import_comment,
        label_from_text,
    )
    from .csv import export_csv
    from .deepeval import DEEPEVAL_KNOWN, DEEPEVAL_RUN_FIELDS, export_deepeval
    from .dispatch import export_testset, read_import
    from .jsonl import export_jsonl
    from .ragas import RAGAS_KNOWN, RAGAS_RUN_FIELDS, RAGAS_TAG_FIELDS, export_ragas
    from .trec import DUPLICATE_PREFIX, QUESTION_PLACEHOLDER, export_qrels, export_trec_run


def __getattr__(name: str) -> Any:
    """``from ragtriage.core.exchange import read_import`` loads the module that defines it."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "FORMATS",
    "Imported",
    "LIST_FIELDS",
    "chunk_texts",
    "clean_label",
    "guess_language",
    "GUESSABLE",
    "import_comment",
    "label_from_text",
    "export_testset",
    "read_import",
    "export_jsonl",
    "export_csv",
    "export_ragas",
    "RAGAS_RUN_FIELDS",
    "RAGAS_KNOWN",
    "RAGAS_TAG_FIELDS",
    "export_deepeval",
    "DEEPEVAL_RUN_FIELDS",
    "DEEPEVAL_KNOWN",
    "export_qrels",
    "export_trec_run",
    "DUPLICATE_PREFIX",
    "QUESTION_PLACEHOLDER",
]  # the names of _WHERE (a test checks the two agree)
