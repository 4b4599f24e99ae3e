"""Report files (``--json``, ``--junit``, ``--markdown``, ``-o``, ``--out``): checked before
the work, written after it, never over one of the command's inputs.

A report path that is a regular file is replaced atomically (temp file, fsync, rename),
through a symlink to its target so the link stays a link. A device, a FIFO, or the
caller's own open file (``/dev/stdout`` -> ``/proc/self/fd/1``) is written in place:
replacing it by rename would swap ``/dev/null`` for a plain file (as root, in most CI
containers) and write nothing where the caller is reading.
"""

from __future__ import annotations

import os
import stat
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


def refuse_input_as_output(path: PathArg | None, option: str, *inputs: PathArg | None) -> None:
    """Exit 2 when the output ``path`` is one of the command's ``inputs`` (the same file,
    by any name: a link, ``./x``, another spelling), so writing it cannot destroy one."""
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
