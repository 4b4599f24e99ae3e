"""The run file (formats.md §4): JSONL, a meta line, one case line per case as it
finishes, a summary line last.

:class:`RunWriter` streams it (each case line flushed, so an interrupted run
keeps what finished and can be resumed); :func:`read_run` reads it back with
located errors. The CI gate, ``diff`` and triage read runs through
:func:`read_run`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, cast

import orjson

from .clock import utc_now
from .errors import InputError, Problem
from .files import atomic_write, require_regular_file
from .metrics import MAX_K
from .records import CaseRecord, RunMeta, Summary
from .secrets import redact_bytes

_DUMP = orjson.OPT_APPEND_NEWLINE


def make_meta(
    *,
    testset: str,
    testset_hash: str | None,
    system: str,
    k: int,
    version: str,
    started: str | None = None,
    corpus: str | None = None,
) -> RunMeta:
    meta: RunMeta = {
        "type": "meta",
        "testset": testset,
        "testset_hash": testset_hash,
        "system": system,
        "k": k,
        "started": started or utc_now(),
        "version": version,
    }
    if corpus is not None:
        meta["corpus"] = corpus
    return meta


@dataclass
class RunFile:
    """A run read back: ``meta``, ``cases`` (case records in file order), ``summary``
    (None when the run was interrupted before it), ``warnings``."""

    path: Path
    meta: RunMeta
    cases: list[CaseRecord]
    summary: Summary | None
    warnings: list[Problem] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.summary is not None

    @property
    def k(self) -> int | None:
        return self.meta.get("k")

    def by_id(self) -> dict[str, CaseRecord]:
        return {c["id"]: c for c in self.cases}


_META_LINE = 'the first line must be the meta line ({"type": "meta", ...}); is this a ragtriage run file?'


def _str_list(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _count(v: object) -> bool:
    """A whole number of tokens a run can hold (JSON may write it as ``12.0``)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return 0 <= v < 1e15 and float(v).is_integer()


#: case-line fields that may be absent or null, each with its check and what it must be
_CASE_FIELDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "ranking": (_str_list, "a list of chunk ids"),
    "expected": (_str_list, "a list of chunk ids"),
    "expected_docs": (_str_list, "a list of document names"),
    "prompt_ids": (_str_list, "a list of chunk ids"),
    "reasons": (_str_list, "a list of strings"),
    "answer": (lambda v: isinstance(v, str), "a string or null"),
    "tokens": (_count, "a whole number of 0 or more"),
}
_META_FIELDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "testset": (lambda v: isinstance(v, str), "a path (a string)"),
    "testset_hash": (lambda v: isinstance(v, str), "a string"),
    "system": (lambda v: isinstance(v, str), "a string"),
}


class _Reader:
    """One pass over a run file's lines, collecting located problems (at most 50)."""

    def __init__(self, name: str):
        self.name = name
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.meta: RunMeta | None = None
        self.cases: list[CaseRecord] = []
        self.seen: dict[str, int] = {}
        self.summary: dict[str, Any] | None = None

    def problem(self, line: int, msg: str, **where: Any) -> None:
        self.problems.append(Problem(self.name, line, msg, **where))

    def fields(self, obj: dict[str, Any], line: int, checks: dict[str, Any], case: str | None = None) -> bool:
        ok = True
        for key, (check, what) in checks.items():
            v = obj.get(key)
            if v is not None and not check(v):
                self.problem(line, f"must be {what}", case=case, field=key)
                ok = False
        return ok

    def line(self, line: int, obj: object) -> bool:
        """Take one parsed line; False when reading must stop."""
        if not isinstance(obj, dict):
            self.problem(line, f"expected a JSON object, got {type(obj).__name__}")
            return True
        kind = obj.get("type")
        if self.meta is None and kind != "meta":
            self.problem(line, _META_LINE, field="type")
            return False
        if kind == "meta":
            self.meta_line(line, obj)
        elif kind == "case":
            self.case_line(line, obj)
        elif kind == "summary":
            if self.summary is not None:
                self.problem(line, "a second summary line", field="type")
            self.summary = obj
        else:
            self.problem(line, f"unknown line type {kind!r} (meta, case or summary)", field="type")
        return True

    def meta_line(self, line: int, obj: dict[str, Any]) -> None:
        if self.meta is not None:
            self.problem(line, "a second meta line", field="type")
            return
        self.meta = cast(RunMeta, obj)  # its k is checked here, the rest below
        k = obj.get("k")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            self.problem(line, "must be a whole number of 1 or more", field="k")
        elif k > MAX_K:  # no run could have used it (run --k refuses it too)
            self.problem(line, f"must be at most {MAX_K:,}", field="k")
        self.fields(obj, line, _META_FIELDS)

    def case_line(self, line: int, obj: dict[str, Any]) -> None:
        cid = obj.get("id")
        if not isinstance(cid, str) or not cid:
            self.problem(line, "is required (the case id)", field="id")
        elif cid in self.seen:
            self.problem(line, f"duplicate case (first at line {self.seen[cid]})", case=cid, field="id")
        elif not isinstance(obj.get("reason"), str):
            self.problem(line, "is required (the diagnosis)", case=cid, field="reason")
        elif self.fields(obj, line, _CASE_FIELDS, case=cid):
            self.seen[cid] = line
            self.cases.append(cast(CaseRecord, obj))  # id and reason checked above


def _read_bytes(path: Path) -> bytes:
    name = str(path)
    try:
        if not path.exists():
            raise InputError(Problem(name, None, "run file not found"))
    except ValueError as e:  # a NUL in the path
        raise InputError(Problem(repr(name), None, f"not a usable path ({e})")) from None
    if path.is_dir():
        raise InputError(Problem(name, None, "is a folder, not a run file"))
    require_regular_file(path, "run file")
    data = path.read_bytes()
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def read_run(path: str | PathLike[str]) -> RunFile:
    """Read a run file; bad lines raise :class:`InputError` naming file, line and field.

    A last line cut off mid-way (a killed run) is dropped with a warning."""
    path = Path(path)
    data = _read_bytes(path)
    reader = _Reader(str(path))
    lines = data.split(b"\n")
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            if lineno == len(lines) and not data.endswith(b"\n"):
                msg = "last line cut off (interrupted run?); ignored"
                reader.warnings.append(Problem(str(path), lineno, msg, severity="warning"))
            else:
                reader.problem(lineno, f"not valid JSON ({e.args[0] if e.args else e})")
            continue
        if not reader.line(lineno, obj) or len(reader.problems) >= 50:
            break
    if reader.meta is None and not reader.problems:
        reader.problems.append(Problem(str(path), None, "empty run file (no meta line)"))
    if reader.problems or reader.meta is None:
        raise InputError(reader.problems)
    summary = reader.summary
    if summary is not None:
        summary = {key: v for key, v in summary.items() if key != "type"}
    return RunFile(path, reader.meta, reader.cases, summary, reader.warnings)


# ---------------------------------------------------------------------------- without reading it all


def resolve_testset(run_path: Path, meta: RunMeta, given: str | PathLike[str] | None = None) -> Path:
    """The test set of a run: ``given`` (``--testset``) or the one named in its meta line,
    tried as written (relative to the working folder), then relative to the run file."""
    if given:
        p = Path(given)
        if not p.is_file():
            raise InputError(Problem(str(p), None, "test set not found"))
        return p
    named = meta.get("testset")
    if not named or not isinstance(named, str):  # a number or a list names no file
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


def read_meta(run_path: str | PathLike[str]) -> RunMeta:
    """The meta line of a run file (first line only: cheap on a huge run)."""
    run_path = Path(run_path)
    require_regular_file(run_path, "run file")  # a FIFO would block the app's start for ever
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
    return cast(RunMeta, meta)  # the first line of a run file, as read (not checked further)


def _as_json(o: object) -> object:
    """What JSON cannot hold, as near as it can (orjson's ``default``): a ``python:``
    system may return bytes, a set or any object in a field the run keeps."""
    if isinstance(o, (bytes, bytearray)):
        return bytes(o).decode("utf-8", "replace")
    if isinstance(o, (set, frozenset)):
        return sorted(o, key=repr)
    return str(o)


def _plain(v: object) -> object:
    """``v`` with integers beyond 64 bits written as strings (orjson refuses them)."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**64 else str(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_plain(x) for x in (sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v)]
    return v


def write_run(path: str | PathLike[str], meta: RunMeta, records: list[CaseRecord], summary: Summary) -> None:
    """The whole run file at once, atomically (after the judge added its verdicts to the
    streamed cases); every line redacted like the streamed ones."""
    parts = [orjson.dumps(meta, option=_DUMP)]
    parts += [dump_record(r) for r in records]
    parts.append(orjson.dumps({"type": "summary", **summary}, option=_DUMP))
    atomic_write(path, redact_bytes(b"".join(parts)))


def dump_record(record: CaseRecord) -> bytes:
    """One case line. A field JSON cannot encode is written as text, never a crash mid-run."""
    option = _DUMP | orjson.OPT_SERIALIZE_NUMPY
    try:
        return orjson.dumps(record, default=_as_json, option=option)
    except TypeError:  # an integer beyond 64 bits (default is not asked about those)
        return orjson.dumps(_plain(record), default=_as_json, option=option)


class RunWriter:
    """Streams a run file. Every case line is flushed as written.

    Lines are written as cases finish; :meth:`reorder` then puts the case lines in the
    test set's order (a concurrent system finishes in any order, shards and Ray tasks
    too), so the finished file does not depend on timing. With ``deferred`` the lines go
    to a temporary file beside ``path`` that :meth:`close` moves onto it, and
    :meth:`discard` removes: a source found bad half-way leaves ``path`` as it was."""

    def __init__(
        self,
        path: str | PathLike[str],
        meta: RunMeta,
        keep: list[CaseRecord] | None = None,
        *,
        exclusive: bool = False,
        deferred: bool = False,
    ):
        """``exclusive``: the file must not exist yet (FileExistsError otherwise), so two
        runs started at once never share one."""
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._spans: list[tuple[str, int, int]] = []  # (case id, offset, length) in write order
        self._placeholder = False
        self._target = self.path
        if exclusive:
            # the name is taken now (O_EXCL), so two runs started at once never share one
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            self._placeholder = deferred
        if deferred:
            self._target = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        head = orjson.dumps(meta, option=_DUMP)
        if keep is not None:
            # resume: rewrite meta + kept cases atomically, then append
            tmp = self.path.with_name(self.path.name + ".tmp")
            with open(tmp, "wb") as f:
                f.write(head)
                pos = len(head)
                for rec in keep:
                    line = orjson.dumps(rec, option=_DUMP)
                    f.write(line)
                    self._spans.append((rec["id"], pos, len(line)))
                    pos += len(line)
            os.replace(tmp, self._target)
            self._f = open(self._target, "ab", buffering=1 << 20)
            self._pos = pos
        else:
            self._f = open(self._target, "wb", buffering=1 << 20)
            try:
                self._f.write(head)
                self._f.flush()
            except OSError as e:
                raise self._named(e) from None
            self._pos = len(head)
        self._head = len(head)
        self.n = len(keep or ())

    def write_case(self, record: CaseRecord, flush: bool = True) -> None:
        line = redact_bytes(dump_record(record))
        try:
            self._f.write(line)
            if flush:
                self._f.flush()
        except OSError as e:
            raise self._named(e) from None
        self._spans.append((record["id"], self._pos, len(line)))
        self._pos += len(line)
        self.n += 1

    def reorder(self, ids: list[str]) -> None:
        """Put the case lines in the order of ``ids`` (every id written, once), copying
        each line from the file as written: nothing is kept in memory for it."""
        if [cid for cid, _, _ in self._spans] == ids:
            return
        where = {cid: (off, n) for cid, off, n in self._spans}
        self._f.flush()
        tmp = self._target.with_name(self._target.name + ".order")
        src = os.open(self._target, os.O_RDONLY)
        try:
            with open(tmp, "wb", buffering=1 << 20) as out:
                out.write(os.pread(src, self._head, 0))
                spans = []
                pos = self._head
                for cid in ids:
                    off, n = where[cid]
                    out.write(os.pread(src, n, off))
                    spans.append((cid, pos, n))
                    pos += n
        finally:
            os.close(src)
        self._f.close()
        os.replace(tmp, self._target)
        self._f = open(self._target, "ab", buffering=1 << 20)
        self._spans, self._pos = spans, pos

    def write_summary(self, summary: Summary) -> None:
        try:
            self._f.write(orjson.dumps({"type": "summary", **summary}, option=_DUMP))
            self._f.flush()
        except OSError as e:
            raise self._named(e) from None

    def _named(self, e: OSError) -> OSError:
        """A write error (a full disk names no file) said with the run file and what it holds."""
        msg = f"{e.strerror or e}; the cases written so far are kept (continue with --resume)"
        return OSError(e.errno, msg, str(self.path))

    def close(self) -> None:
        if not self._f.closed:
            try:
                self._f.close()
            except OSError as e:  # the last buffered lines met a full disk
                raise self._named(e) from None
            if self._target != self.path:
                os.replace(self._target, self.path)

    def discard(self) -> None:
        """Forget a deferred file: ``path`` stays as it was (or is removed when this writer
        took a new name for it)."""
        if not self._f.closed:
            self._f.close()
        if self._target == self.path:
            return
        for p in (self._target, *((self.path,) if self._placeholder else ())):
            try:
                os.unlink(p)
            except OSError:
                pass

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
