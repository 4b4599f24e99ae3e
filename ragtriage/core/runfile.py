"""The run file (formats.md §4): JSONL, a meta line, one case line per case as it
finishes, a summary line last.

:class:`RunWriter` streams it (each case line flushed, so an interrupted run
keeps what finished and can be resumed); :func:`read_run` reads it back with
located errors. The CI gate, ``diff`` and triage read runs through
:func:`read_run`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from .clock import utc_now
from .errors import InputError, Problem

_DUMP = orjson.OPT_APPEND_NEWLINE


def make_meta(
    *,
    testset: str,
    testset_hash: str | None,
    system: str,
    k: int,
    version: str,
    started: str | None = None,
    **extra,
) -> dict:
    meta = {
        "type": "meta",
        "testset": testset,
        "testset_hash": testset_hash,
        "system": system,
        "k": k,
        "started": started or utc_now(),
        "version": version,
    }
    meta.update({key: v for key, v in extra.items() if v is not None})
    return meta


@dataclass
class RunFile:
    """A run read back: ``meta``, ``cases`` (case records in file order), ``summary``
    (None when the run was interrupted before it), ``warnings``."""

    path: Path
    meta: dict
    cases: list[dict]
    summary: dict | None
    warnings: list[Problem] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.summary is not None

    @property
    def k(self) -> int | None:
        return self.meta.get("k")

    def by_id(self) -> dict[str, dict]:
        return {c["id"]: c for c in self.cases}


def read_run(path) -> RunFile:
    """Read a run file; bad lines raise :class:`InputError` naming file, line and field.

    A last line cut off mid-way (a killed run) is dropped with a warning."""
    path = Path(path)
    name = str(path)
    if not path.exists():
        raise InputError(Problem(name, None, "run file not found"))
    if path.is_dir():
        raise InputError(Problem(name, None, "is a folder, not a run file"))
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    problems: list[Problem] = []
    warnings: list[Problem] = []
    meta: dict | None = None
    cases: list[dict] = []
    seen: dict[str, int] = {}
    summary: dict | None = None
    last = len(lines)
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            if lineno == last and not data.endswith(b"\n"):
                warnings.append(
                    Problem(name, lineno, "last line cut off (interrupted run?); ignored", severity="warning")
                )
                continue
            problems.append(Problem(name, lineno, f"not valid JSON ({e.args[0] if e.args else e})"))
            continue
        kind = obj.get("type") if isinstance(obj, dict) else None
        if not isinstance(obj, dict):
            problems.append(Problem(name, lineno, f"expected a JSON object, got {type(obj).__name__}"))
        elif meta is None and kind != "meta":
            problems.append(
                Problem(
                    name,
                    lineno,
                    "the first line must be the meta line "
                    "({\"type\": \"meta\", ...}); is this a ragtriage run file?",
                    field="type",
                )
            )
            break
        elif kind == "meta":
            if meta is not None:
                problems.append(Problem(name, lineno, "a second meta line", field="type"))
            else:
                meta = obj
                if not isinstance(obj.get("k"), int) or isinstance(obj.get("k"), bool) or obj["k"] < 1:
                    problems.append(Problem(name, lineno, "must be a whole number of 1 or more", field="k"))
        elif kind == "case":
            cid = obj.get("id")
            if not isinstance(cid, str) or not cid:
                problems.append(Problem(name, lineno, "is required (the case id)", field="id"))
            elif cid in seen:
                problems.append(
                    Problem(name, lineno, f"duplicate case (first at line {seen[cid]})", case=cid, field="id")
                )
            elif not isinstance(obj.get("reason"), str):
                problems.append(
                    Problem(name, lineno, "is required (the diagnosis)", case=cid, field="reason")
                )
            elif obj.get("ranking") is not None and not isinstance(obj.get("ranking"), list):
                problems.append(
                    Problem(name, lineno, "must be a list of chunk ids", case=cid, field="ranking")
                )
            else:
                seen[cid] = lineno
                cases.append(obj)
        elif kind == "summary":
            if summary is not None:
                problems.append(Problem(name, lineno, "a second summary line", field="type"))
            summary = obj
        else:
            problems.append(
                Problem(name, lineno, f"unknown line type {kind!r} (meta, case or summary)", field="type")
            )
        if len(problems) >= 50:
            break
    if meta is None and not problems:
        problems.append(Problem(name, None, "empty run file (no meta line)"))
    if problems or meta is None:
        raise InputError(problems)
    if summary is not None:
        summary = {key: v for key, v in summary.items() if key != "type"}
    return RunFile(path, meta, cases, summary, warnings)


# ---------------------------------------------------------------------------- without reading it all


def resolve_testset(run_path: Path, meta: dict, given=None) -> Path:
    """The test set of a run: ``given`` (``--testset``) or the one named in its meta line,
    tried as written (relative to the working folder), then relative to the run file."""
    if given:
        p = Path(given)
        if not p.is_file():
            raise InputError(Problem(str(p), None, "test set not found"))
        return p
    named = meta.get("testset")
    if not named:
        raise InputError(
            Problem(str(run_path), 1, "the run names no test set: pass --testset TESTSET", field="testset")
        )
    p = Path(named)
    # a run moved with its test set beside it (a CI artifact, a copy in another folder)
    # names the old absolute path: the file of that name next to the run is the one
    cands = (
        [p, run_path.parent / p.name]
        if p.is_absolute()
        else [p, run_path.parent / p, run_path.parent / p.name]
    )
    for cand in cands:
        if cand.is_file():
            return cand
    raise InputError(
        Problem(
            str(run_path),
            1,
            f"the run's test set {named} was not found: pass --testset TESTSET",
            field="testset",
        )
    )


def read_meta(run_path) -> dict:
    """The meta line of a run file (first line only: cheap on a huge run)."""
    run_path = Path(run_path)
    if not run_path.is_file():
        raise InputError(Problem(str(run_path), None, "run file not found"))
    with open(run_path, "rb") as f:
        first = f.readline()
    if first.startswith(b"\xef\xbb\xbf"):
        first = first[3:]
    try:
        meta = orjson.loads(first)
    except orjson.JSONDecodeError:
        meta = None
    if not isinstance(meta, dict) or meta.get("type") != "meta":
        raise InputError(
            Problem(
                str(run_path),
                1,
                "the first line must be the meta line "
                "({\"type\": \"meta\", ...}); is this a ragtriage run file?",
                field="type",
            )
        )
    return meta


class RunWriter:
    """Streams a run file. Every case line is flushed as written."""

    def __init__(self, path, meta: dict, keep: list[dict] | None = None):
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if keep is not None:
            # resume: rewrite meta + kept cases atomically, then append
            tmp = self.path.with_name(self.path.name + ".tmp")
            with open(tmp, "wb") as f:
                f.write(orjson.dumps(meta, option=_DUMP))
                for rec in keep:
                    f.write(orjson.dumps(rec, option=_DUMP))
            os.replace(tmp, self.path)
            self._f = open(self.path, "ab", buffering=1 << 20)
        else:
            self._f = open(self.path, "wb", buffering=1 << 20)
            self._f.write(orjson.dumps(meta, option=_DUMP))
            self._f.flush()
        self.n = len(keep or ())

    def write_case(self, record: dict, flush: bool = True) -> None:
        self._f.write(orjson.dumps(record, option=_DUMP | orjson.OPT_SERIALIZE_NUMPY))
        self.n += 1
        if flush:
            self._f.flush()

    def write_summary(self, summary: dict) -> None:
        self._f.write(orjson.dumps({"type": "summary", **summary}, option=_DUMP))
        self._f.flush()

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
