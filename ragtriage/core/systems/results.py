"""``results:PATH`` — answers already produced elsewhere (system-results JSONL, formats.md §3).

The file is read once, up front. A line that is not a JSON object, has no string
``id``, repeats an id or has a field of the wrong type is a located error (exit
2, nothing written). Ids that are not in the test set are reported as warnings;
a case with no line becomes that case's ``error``.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from ..errors import InputError, Problem
from . import CaseError, Context, coerce_result

MAX_PROBLEMS = 50


def read_results(path, known_ids=None) -> tuple[dict[str, dict], list[Problem]]:
    """id -> result dict, and warnings (unknown ids). Raises InputError on bad lines."""
    path = Path(path)
    name = str(path)
    if not path.exists():
        raise InputError(Problem(name, None, "results file not found"))
    if path.is_dir():
        raise InputError(Problem(name, None, "is a folder, not a results file"))
    problems: list[Problem] = []
    warnings: list[Problem] = []
    out: dict[str, dict] = {}
    first_line: dict[str, int] = {}
    loads = orjson.loads
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as e:
            problems.append(Problem(name, lineno, f"not valid JSON ({e.args[0] if e.args else e})"))
        else:
            if not isinstance(obj, dict):
                problems.append(Problem(name, lineno, f"expected a JSON object, got {type(obj).__name__}"))
            else:
                cid = obj.get("id")
                if not isinstance(cid, str) or not cid:
                    problems.append(Problem(name, lineno, "is required (the case id, a string)", field="id"))
                elif cid in first_line:
                    problems.append(
                        Problem(
                            name,
                            lineno,
                            f"duplicate id (first at line {first_line[cid]})",
                            case=cid,
                            field="id",
                        )
                    )
                else:
                    try:
                        res = coerce_result(obj)
                    except ValueError as e:
                        field, _, msg = str(e).partition(": ")
                        problems.append(Problem(name, lineno, msg or str(e), case=cid, field=field))
                    else:
                        first_line[cid] = lineno
                        if known_ids is not None and cid not in known_ids:
                            warnings.append(
                                Problem(
                                    name,
                                    lineno,
                                    "not in the test set; line ignored",
                                    case=cid,
                                    severity="warning",
                                )
                            )
                        else:
                            out[cid] = res
        if len(problems) >= MAX_PROBLEMS:
            problems.append(Problem(name, None, "too many problems; stopped reading"))
            break
    if problems:
        raise InputError(problems)
    return out, warnings


class ResultsSystem:
    def __init__(self, path: str, ctx: Context):
        if not path:
            raise InputError(Problem("--system", None, "results: needs a path, e.g. results:answers.jsonl"))
        self.path = path
        self.spec = f"results:{path}"
        ids = {c.id for c in ctx.doc.cases}
        self.results, self.warnings = read_results(path, ids)

    def prepare(self) -> None:
        pass

    def get(self, case) -> dict:
        res = self.results.get(case.id)
        if res is None:
            raise CaseError(f"no result for this case in {self.path}")
        return res

    async def ask(self, case, k: int) -> dict:
        return self.get(case)

    def ask_sync(self, case, k: int) -> dict:
        return self.get(case)

    def estimate_tokens(self, case, k: int) -> int:
        return 0

    async def aclose(self) -> None:
        pass
