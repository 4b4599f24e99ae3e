"""A run as a pandas DataFrame (``Run.to_pandas()``): one row per case, in test-set order.

pandas is optional (``pip install "ragtriage[pandas]"``) and imported only here. Columns
keep their types with pandas' nullable dtypes: ``hit``/``supported``/``correct``/
``abstained`` are ``boolean`` (``<NA>`` where a case has no value, e.g. ``hit`` of an
unanswerable case), ``rank``/``tokens`` ``Int64``, the ratios ``Float64``, text ``string``;
the id lists (``expected``, ``ranking``, ``prompt_ids``) and ``scores`` stay lists. A run
with document gold adds ``expected_docs``, ``doc_ranking`` and the ``doc_*`` fields after
``rr``; one with quotes, ``evidence`` (each quote's resolution) at the end."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: (column, pandas dtype) in the frame's order; lists are kept as Python objects
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "string"),
    ("topic", "string"),
    ("question", "string"),
    ("expected", "object"),
    ("unanswerable", "boolean"),
    ("ranking", "object"),
    ("scores", "object"),
    ("prompt_ids", "object"),
    ("answer", "string"),
    ("rank", "Int64"),
    ("hit", "boolean"),
    ("precision", "Float64"),
    ("recall", "Float64"),
    ("rr", "Float64"),
    ("abstained", "boolean"),
    ("supported", "boolean"),
    ("why", "string"),
    ("correct", "boolean"),
    ("reason", "string"),
    ("tokens", "Int64"),
    ("latency_ms", "Float64"),
    ("error", "string"),
)
#: with document gold (a case has ``expected_docs``), after ``rr``
DOCS = (
    ("expected_docs", "object"),
    ("doc_ranking", "object"),
    ("doc_rank", "Int64"),
    ("doc_hit", "boolean"),
    ("doc_precision", "Float64"),
    ("doc_recall", "Float64"),
    ("doc_rr", "Float64"),
)
JUDGE = (("judge_supported", "boolean"), ("judge_correct", "boolean"), ("judge_reason", "string"))


def _value(rec: dict[str, Any], name: str) -> Any:
    if name == "unanswerable":
        return bool(rec.get("unanswerable", False))
    if name.startswith("judge_"):
        return (rec.get("judge") or {}).get(name.removeprefix("judge_"))
    value = rec.get(name)
    if name == "reason" and value is not None:
        return str(value)
    return value


def run_frame(records: Sequence[Any]) -> Any:
    """The DataFrame of ``records`` (a run's case records)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            'Run.to_pandas() needs pandas: pip install pandas (or "ragtriage[pandas]")'
        ) from None
    columns = list(COLUMNS)
    if any(r.get("expected_docs") for r in records):
        at = [n for n, _ in columns].index("rr") + 1
        columns[at:at] = DOCS
    if any(r.get("evidence") for r in records):
        columns.append(("evidence", "object"))
    if any("judge" in r for r in records):
        columns += JUDGE
    data = {}
    for name, dtype in columns:
        values = [_value(r, name) for r in records]
        data[name] = pd.Series(values, dtype=dtype) if dtype != "object" else pd.Series(values, dtype=object)
    return pd.DataFrame(data)
