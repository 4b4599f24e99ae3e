"""An editing session on one test set: the document, the log of edits, recovery.

Pure logic (no Textual): every change the app makes goes through
:meth:`Session.apply`, which calls the test-set document, appends the operation
to the log and rewrites the recovery file next to the test set
(``.ragtriage-recovery-<name>.json``). A crash or a killed terminal leaves that
file behind; the next ``ragtriage edit`` offers to replay it. Saving removes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..core.files import read_bounded

RECOVERY_VERSION = 1
RECOVERY_MAX = 64 << 20  # edits of a long session fit well within it
OPS = ("update_case", "add_case", "remove_case", "move_case", "set_label", "undo", "redo")


def recovery_path(testset: Path | str) -> Path:
    """Where the recovery file of ``testset`` lives (beside it, hidden)."""
    p = Path(testset)
    return p.with_name(f".ragtriage-recovery-{p.name}.json")


def _file_digest(path: Path) -> str | None:
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
    except OSError:
        return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_none=True)
    return value


class Recovery:
    """The pending edits found beside a test set."""

    def __init__(self, path: Path, ops: list[dict], base_digest: str | None, current_digest: str | None):
        self.path = path
        self.ops = ops
        self.base_digest = base_digest
        self.current_digest = current_digest

    @property
    def base_changed(self) -> bool:
        """The test set changed on disk after these edits were made."""
        return self.base_digest != self.current_digest

    def __len__(self) -> int:
        return sum(1 for op in self.ops if op["op"] not in ("undo", "redo"))


def find_recovery(testset: Path | str) -> Recovery | None:
    """The recovery file of ``testset`` if one with edits exists, else None."""
    testset = Path(testset)
    rp = recovery_path(testset)
    try:
        raw = read_bounded(rp, RECOVERY_MAX, "recovery file")  # never a FIFO, /dev/zero or huge
        data = json.loads(raw) if raw else None
    except (InputError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("ops"), list) or not data["ops"]:
        return None
    ops = [op for op in data["ops"] if isinstance(op, dict) and op.get("op") in OPS]
    if not ops:
        return None
    return Recovery(rp, ops, data.get("base"), _file_digest(testset))


def describe_op(op: str, args: tuple | list, kwargs: dict) -> str:
    """One edit in words, for a toast: "garantía: expected, unanswerable", "new case x"."""
    first = args[0] if args else None
    if op == "update_case":
        fields = ", ".join(k.replace("_", " ") for k in kwargs) or "no field"
        if kwargs.get("id") and kwargs["id"] != first:
            return f"{first}: renamed to {kwargs['id']}"
        return f"{first}: {fields}"
    if op == "add_case":
        return f"new case {kwargs.get('id', '')}".rstrip()
    if op == "remove_case":
        return f"deleted case {first}"
    if op == "move_case":
        return f"moved case {first}"
    if op == "set_label":
        return f"label of {first}"
    return op


class Session:
    """A loaded document plus the log of edits made to it since the last save."""

    def __init__(self, doc, *, recovery: bool = True):
        self.doc = doc
        self.ops: list[dict] = []
        self.recovery_enabled = recovery
        self.recovery_file = recovery_path(doc.path)
        self._base = _file_digest(Path(doc.path))
        self.generation = 0  # bumped on every change; views compare it to refresh
        # A save records labels as an undo step of its own; the user never made it, so
        # the next undo takes it together with the change before it (one ctrl+z, one change).
        self._labels_step = False
        self._done: list[str] = []  # what each undo step did, in words (for the undo toast)
        self._undone: list[str] = []

    # -- edits -------------------------------------------------------------------------
    def apply(self, op: str, *args, **kwargs):
        """Run one document operation, log it and write the recovery file.

        Raises whatever the document raises (``TestSetError`` on a bad value);
        nothing is logged then."""
        if op not in OPS or op in ("undo", "redo"):
            raise ValueError(f"unknown operation {op!r}")
        result = getattr(self.doc, op)(*args, **kwargs)
        self._labels_step = False
        self._done.append(describe_op(op, args, kwargs))
        self._undone.clear()
        self._log({"op": op, "args": _jsonable(list(args)), "kwargs": _jsonable(kwargs)})
        return result

    def update_case(self, case_id: str, **fields):
        return self.apply("update_case", case_id, **fields)

    def add_case(self, index: int | None = None, **fields):
        return self.apply("add_case", index, **fields)

    def remove_case(self, case_id: str):
        return self.apply("remove_case", case_id)

    def set_label(self, chunk_id: str, label):
        return self.apply("set_label", chunk_id, label)

    def undo(self) -> str | None:
        """Undo the last change (with the labels a save recorded for it); returns what
        it undid, in words ("" when not known), or None when there was nothing to undo."""
        if self._labels_step:
            self._labels_step = False
            if self.doc.undo():
                self._log({"op": "undo"})
        if self.doc.undo():
            self._log({"op": "undo"})
            what = self._done.pop() if self._done else ""
            self._undone.append(what)
            return what
        return None

    def redo(self) -> str | None:
        """Redo the last undone change; returns what it did, in words, or None."""
        self._labels_step = False
        if self.doc.redo():
            self._log({"op": "redo"})
            what = self._undone.pop() if self._undone else ""
            self._done.append(what)
            return what
        return None

    @property
    def dirty(self) -> bool:
        return bool(self.doc.dirty)

    def save(self, corpus=None, force: bool = False) -> list[str]:
        """Record labels for newly expected chunks, save atomically, drop the recovery file.

        Returns the chunk ids whose labels were recorded. ``ConflictError``
        passes through when the file changed on disk (and ``force`` is false)."""
        expected = {cid for case in self.doc.cases for cid in case.expected}
        have = set(self.doc.labels)
        recorded = list(self.doc.record_labels(corpus) or [])
        if expected != have:  # labels recorded or pruned: the document made an undo step of it
            self._labels_step = True
        self.doc.save(force=force)
        self.ops.clear()
        self._base = _file_digest(Path(self.doc.path))
        self.discard_recovery()
        self.generation += 1
        return recorded

    # -- recovery ----------------------------------------------------------------------
    def replay(self, recovery: Recovery) -> tuple[int, list[str]]:
        """Re-apply the edits of ``recovery``; returns (applied, problems)."""
        applied, problems = 0, []
        for op in recovery.ops:
            name = op["op"]
            try:
                if name == "undo":
                    self.undo()
                elif name == "redo":
                    self.redo()
                else:
                    self.apply(name, *op.get("args", []), **op.get("kwargs", {}))
                    applied += 1
            except Exception as e:  # a stale recovery: keep going, report the rest
                problems.append(f"{name} {op.get('args', [''])[:1]}: {e}")
        return applied, problems

    def discard_recovery(self) -> None:
        try:
            self.recovery_file.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            pass

    def _log(self, entry: dict) -> None:
        self.ops.append(entry)
        self.generation += 1
        if self.recovery_enabled:
            self._write_recovery()

    def _write_recovery(self) -> None:
        data = {
            "version": RECOVERY_VERSION,
            "testset": Path(self.doc.path).name,
            "base": self._base,
            "ops": self.ops,
        }
        target = self.recovery_file
        try:
            fd, tmp = tempfile.mkstemp(prefix=".ragtriage-", dir=target.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, ensure_ascii=False)
            os.replace(tmp, target)
        except OSError:
            pass  # a read-only folder must not stop editing
