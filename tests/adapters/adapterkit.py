"""What the adapter tests share: the folder, the documents, a line counter and the
per-case fields two runs are compared on."""

from __future__ import annotations

import ast
from pathlib import Path

ADAPTERS = Path(__file__).resolve().parent
DOCS = ADAPTERS / "docs"

#: the fields of a run's case record that do not depend on timing
COMPARED = (
    "id",
    "ranking",
    "scores",
    "answer",
    "prompt_ids",
    "rank",
    "hit",
    "precision",
    "recall",
    "rr",
    "abstained",
    "supported",
    "why",
    "correct",
    "reason",
)


def per_case(run) -> list[dict]:
    return [{f: r.get(f) for f in COMPARED} for r in run.cases]


def code_lines(path: Path, *, imports: bool = False) -> int:
    """Lines a person writes in ``path``, counted as statements (a call the formatter wraps
    over three lines is one line written): docstrings and comments not counted, imports
    only with ``imports``. A ``def`` or ``if`` counts one, plus its body."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not imports:
            continue
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            continue  # a docstring
        count += 1
    return count


def module_body(name: str) -> str:
    """A pipeline module's code without its docstring, as the README shows it."""
    text = (ADAPTERS / f"{name}.py").read_text(encoding="utf-8")
    return text[text.index('"""', 3) + 3 :].strip() + "\n"
