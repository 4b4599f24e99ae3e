"""Report files (``--json``, ``--junit``, ``--markdown``, ``-o``, ``--out``): checked before
the work, written after it, never over one of the command's inputs.

A report path that is a regular file is replaced atomically (temp file, fsync, rename),
through a symlink to its target so the link stays a link. A device, a FIFO, or the
caller's own open file (``/dev/stdout`` -> ``/proc/self/fd/1``) is written in place:
replacing it by rename would swap ``/dev/null`` for a plain file (as root, in most CI
containers) and write nothing where the caller is reading.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Collection
from os import PathLike
from pathlib import Path

from .errors import InputError, Problem
from .files import atomic_write
from .secrets import redact

PathArg = str | PathLike[str]


def check_writable(path: PathArg, option: str) -> None:
    """Fail fast (before a long run) when a report cannot be written to ``path``."""
    p = Path(path)
    if "\x00" in str(p):
        raise InputError(Problem(repr(str(p)), None, "not a usable path (a NUL byte)", field=option))
    if _special(p) or _fd_alias(p):
        return
    parent = p.parent if str(p.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(
            Problem(str(p), None, f"cannot create its folder ({e.strerror})", field=option)
        ) from None
    except ValueError as e:  # a NUL in the path
        raise InputError(Problem(repr(str(p)), None, f"not a usable path ({e})", field=option)) from None
    if p.is_dir():
        raise InputError(Problem(str(p), None, "is a folder; give a file name", field=option))
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise InputError(Problem(str(p), None, "not writable", field=option))


#: what a person's file or a tool's input is, by kind (:func:`what_it_is`)
GRADES, SIDECAR, RECOVERY, TESTSET, CORPUS, RUN, RUN_IN_USE = (
    "grades",
    "sidecar",
    "recovery",
    "testset",
    "corpus",
    "run",
    "run-in-use",
)
KINDS = frozenset({GRADES, SIDECAR, RECOVERY, TESTSET, CORPUS, RUN, RUN_IN_USE})
_WHAT = {
    GRADES: "a grades file (an expert's grades of answers)",
    SIDECAR: "a triage sidecar (reviewed marks and notes on a run)",
    RECOVERY: "a recovery file (edits in the app not saved yet)",
    TESTSET: "a test set",
    CORPUS: "a chunks file (a corpus)",
    RUN: "a run file",
    RUN_IN_USE: "a run file being triaged (its notes and reviewed marks describe these answers)",
}
_SNIFF = 64 << 10  # bytes of an existing file looked at to tell what it is
_TESTSET_KEYS = re.compile(rb"(?m)^(version|cases)\s*:")


def describe(kind: str) -> str:
    """The words for a kind of :func:`what_it_is`."""
    return _WHAT[kind]


def what_it_is(path: PathArg) -> str | None:
    """Is ``path`` a file a report or export must never replace? Its kind (:data:`GRADES`,
    :data:`SIDECAR`, :data:`RECOVERY`, :data:`TESTSET`, :data:`CORPUS`, :data:`RUN`,
    :data:`RUN_IN_USE`) or None (nothing there, or a file a report may replace: an earlier
    report, an export).

    By name first, even when it does not exist yet: a report written as
    ``x.grades.jsonl``, ``RUN.triage.json`` or ``.ragtriage-recovery-*`` would later be
    read as grades, triage notes or unsaved edits. Then by the first bytes of an existing
    regular file (at most 64 KB, never blocking on a FIFO): a run's meta line, a grade, a
    chunk line, a test set's ``version:``/``cases:`` keys."""
    try:
        name = os.path.basename(os.path.realpath(path)) if os.path.islink(path) else Path(path).name
    except (OSError, ValueError):
        return None
    if name.endswith(".grades.jsonl"):
        return GRADES
    if name.endswith(".triage.json"):
        return SIDECAR
    if name.startswith(".ragtriage-recovery-"):
        return RECOVERY
    head = _head(path)
    if not head:
        return None
    return _sniff(Path(path), name, head)


def _head(path: PathArg) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, _SNIFF)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _sniff(path: Path, name: str, head: bytes) -> str | None:
    first = head.lstrip(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0]
    obj = None
    if first.startswith(b"{"):
        try:
            obj = json.loads(first)
        except (ValueError, RecursionError):
            obj = None
    if isinstance(obj, dict):
        if obj.get("type") == "meta":
            side = path.with_name(name.removesuffix(".jsonl") + ".triage.json")
            return RUN_IN_USE if side.exists() else RUN
        if "case" in obj and "answer_sha" in obj:
            return GRADES
        if isinstance(obj.get("ops"), list) and "testset" in obj:
            return RECOVERY
        if isinstance(obj.get("cases"), dict) and "run" in obj:
            return SIDECAR
        if "id" in obj and "text" in obj:
            return CORPUS
        return None
    if first.startswith(b"{") and re.search(rb'"run"\s*:', head) and re.search(rb'"cases"\s*:\s*\{', head):
        return SIDECAR  # written indented: its first line is only "{"
    keys = {m.group(1) for m in _TESTSET_KEYS.finditer(head)}
    if keys == {b"version", b"cases"} or (b"cases" in keys and name.endswith((".yaml", ".yml"))):
        return TESTSET
    return None


def refuse_input_as_output(
    path: PathArg | None, option: str, *inputs: PathArg | None, may_replace: Collection[str] = ()
) -> None:
    """Exit 2 when the output ``path`` is one of the command's ``inputs`` (the same file,
    by any name: a link, ``./x``, another spelling), or a person's file or an input of
    another command (:func:`what_it_is`) other than the kinds in ``may_replace``, so
    writing it cannot destroy one. The one place that decides it, for every output option
    of every command and for the app's export dialog."""
    if path is None:
        return
    for given in inputs:
        if given is not None and _same_file(path, given):
            raise InputError(
                Problem(
                    str(path),
                    None,
                    f"is also an input ({given}); not overwritten (choose another path)",
                    field=option,
                )
            )
    kind = what_it_is(path)
    if kind is not None and kind not in may_replace:
        raise InputError(
            Problem(str(path), None, f"is {_WHAT[kind]}; not overwritten (choose another path)", field=option)
        )


def _same_file(a: PathArg, b: PathArg) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one does not exist (then it cannot be the other), or a NUL
        try:
            return os.path.realpath(a) == os.path.realpath(b)
        except ValueError:
            return False


def _special(p: Path) -> bool:
    """A device, FIFO or socket (following links): written in place, never replaced."""
    try:
        return not stat.S_ISREG(os.stat(p).st_mode) and not stat.S_ISDIR(os.stat(p).st_mode)
    except (OSError, ValueError):
        return False


def _fd_alias(p: Path) -> bool:
    """A link that goes through ``/proc`` (``/dev/stdout`` -> ``/proc/self/fd/1``): a file
    the caller already has open, whatever kind it is."""
    hop = str(p)
    for _ in range(40):
        try:
            target = os.readlink(hop)
        except (OSError, ValueError):
            return False
        hop = os.path.join(os.path.dirname(hop), target)
        if os.path.abspath(hop).startswith("/proc/"):
            return True
    return False


def write_report(path: PathArg, text: str) -> None:
    """Write a report file; see the module doc for which are replaced and which are written
    in place. ``$GITHUB_STEP_SUMMARY`` is appended to: it collects what every command of
    the step writes. A registered secret is blanked (:func:`~ragtriage.core.secrets.redact`):
    a summary is often published on the pull request."""
    p = Path(path)
    text = redact(text)
    try:
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary and os.path.abspath(summary) == os.path.abspath(p):
            with open(p, "a", encoding="utf-8") as f:
                f.write(text)
            return
        if _fd_alias(p):
            with open(p, "a", encoding="utf-8") as f:  # after what the command already printed there
                f.write(text)
            return
        if _special(p):
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
            return
        if p.is_symlink():
            p = Path(os.path.realpath(p))  # replace the target; the link stays a link
        parent = p.parent if str(p.parent) else Path(".")
        parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, text)
    except OSError as e:
        raise InputError(Problem(str(p), None, f"cannot write ({e.strerror or e})")) from None
