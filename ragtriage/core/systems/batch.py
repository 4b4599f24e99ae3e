"""Where ``results:PATH`` reads its lines: one file, a folder of parts or a glob.

What a batch job writes is accepted as it lies: a folder of ``part-*`` files (Spark),
of ``*.json``/``*.jsonl`` files (Ray Data, pandas, DuckDB), a glob (``out/*.jsonl.gz``,
``out/**/*.json``), and parts compressed with gzip (``.gz``, the standard library) or
Zstandard (``.zst``, the ``zstandard`` package: ``pip install ragtriage[zstd]``). Parts
are read one after the other in the order of their names (a stable order on every
machine), each as a stream of lines.

Only regular files are read: a FIFO would block for ever and ``/dev/zero`` never ends,
so both are refused before anything is read. A line longer than the answer limit of the
``http:`` systems (``--max-response-mb``, 16 MB by default) is an error at its
``file:line``, read no further, so a file without newlines cannot fill the memory.
"""

from __future__ import annotations

import glob as _glob
import gzip
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import InputError, Problem

#: what a part's name may end with (before an optional .gz / .zst)
PART_SUFFIXES = (".jsonl", ".json", ".ndjson")
COMPRESSED = (".gz", ".zst")
BLOCK = 1 << 22  # bytes read at a time: lines are cut from blocks, not read one by one
_GLOB = frozenset("*?[")


@dataclass(frozen=True)
class Part:
    """One file of a results source: ``name`` as messages show it, ``path`` to open."""

    name: str
    path: Path

    @property
    def codec(self) -> str | None:
        s = self.path.name.lower()
        return "gzip" if s.endswith(".gz") else "zstd" if s.endswith(".zst") else None


def max_line() -> int:
    """The longest line read: the answer limit of ``http:`` (``--max-response-mb``)."""
    from .wire import max_body

    return max_body()


def _is_part_name(name: str) -> bool:
    low = name.lower()
    for c in COMPRESSED:
        if low.endswith(c):
            low = low[: -len(c)]
            break
    return low.endswith(PART_SUFFIXES) or low.startswith("part-")


def _skipped(name: str) -> bool:
    """Bookkeeping a batch job leaves beside its parts: ``_SUCCESS``, ``.part-0.crc``."""
    return name.startswith((".", "_")) or name.lower().endswith(".crc")


def _require_regular(path: Path, name: str, what: str) -> None:
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(Problem(name, None, f"{what} not found")) from None
    except (OSError, ValueError) as e:
        raise InputError(Problem(name, None, f"cannot read this {what}: {e}")) from None
    if stat.S_ISREG(mode):
        return
    kind = (
        "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device or special file"
    )
    raise InputError(
        Problem(
            name,
            None,
            f"this {what} is {kind}, not a regular file: ragtriage reads results from regular files only "
            "(write the answers to a file first)",
        )
    )


def _folder_parts(folder: Path, name: str) -> list[Part]:
    parts, strays, subfolders = [], [], []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as err:
        raise InputError(
            Problem(name, None, f"cannot list this results folder: {err.strerror or err}")
        ) from None
    for entry in entries:
        if _skipped(entry.name):
            continue
        if entry.is_dir():
            subfolders.append(entry.name)
        elif _is_part_name(entry.name):
            parts.append(Part(os.path.join(name, entry.name), Path(entry.path)))
        else:
            strays.append(entry.name)
    if strays:
        raise InputError(
            Problem(
                name,
                None,
                f"is a results folder, but {strays[0]!r}"
                + (f" (and {len(strays) - 1} more)" if len(strays) > 1 else "")
                + " is not a part (*.jsonl, *.json, *.ndjson or part-*, optionally .gz or .zst): "
                "move it out, or name the parts with a glob such as results:DIR/*.jsonl",
            )
        )
    if not parts:
        where = (
            f" (it has folders: {', '.join(subfolders[:3])}; try results:{name}/**/*.json)"
            if subfolders
            else ""
        )
        raise InputError(
            Problem(name, None, f"results folder holds no part (*.jsonl, *.json, part-*){where}")
        )
    return parts


def _glob_parts(pattern: str) -> list[Part]:
    names = sorted(n for n in _glob.glob(pattern, recursive=True) if not _skipped(os.path.basename(n)))
    files = [n for n in names if not os.path.isdir(n)]
    if not files:
        raise InputError(Problem(pattern, None, "no results file matches this pattern"))
    return [Part(n, Path(n)) for n in files]


def parts_of(spec: str) -> list[Part]:
    """The files ``results:SPEC`` names, in reading order; each checked to be a regular file."""
    if not spec:
        raise InputError(Problem("--system", None, "results: needs a path, e.g. results:answers.jsonl"))
    path = Path(spec)
    try:
        exists = os.path.lexists(path)
    except ValueError as e:  # a NUL in the path
        raise InputError(Problem(repr(spec), None, f"not a usable path ({e})")) from None
    if not exists and _GLOB & set(spec):
        parts = _glob_parts(spec)
    elif exists and path.is_dir():
        parts = _folder_parts(path, spec)
    else:
        parts = [Part(spec, path)]
    for p in parts:
        _require_regular(p.path, p.name, "results file")
    return parts


class _Stream(Protocol):
    """What a results part is read through: a file, a gzip or a Zstandard stream."""

    def read(self, size: int = -1, /) -> bytes: ...
    def __enter__(self) -> object: ...
    def __exit__(self, *args: Any, **kwargs: Any) -> object: ...


def _open(part: Part) -> _Stream:
    codec = part.codec
    if codec == "gzip":
        return gzip.open(part.path, "rb")
    if codec == "zstd":
        try:
            import zstandard
        except ImportError:
            raise InputError(
                Problem(
                    part.name,
                    None,
                    "is Zstandard-compressed: reading .zst needs the zstandard package "
                    "(pip install 'ragtriage[zstd]'), or decompress it first",
                )
            ) from None
        f = open(part.path, "rb")
        return zstandard.ZstdDecompressor().stream_reader(f, closefd=True)
    return open(part.path, "rb", buffering=0)


def _read_error(part: Part, line: int, e: Exception) -> InputError:
    what = "not valid gzip data" if part.codec == "gzip" else "not valid Zstandard data" if part.codec else ""
    msg = f"{what} ({e})" if what else f"cannot read: {getattr(e, 'strerror', None) or e}"
    return InputError(Problem(part.name, line, msg))


def lines(part: Part, limit: int | None = None) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of one part, without its newline; blank lines skipped, a
    leading BOM removed. A line over ``limit`` bytes (default :func:`max_line`) is an error."""
    limit = max_line() if limit is None else limit
    lineno = 0
    tail = b""
    first = True
    try:
        f = _open(part)
    except OSError as e:
        raise _read_error(part, 0, e) from None
    with f:
        while True:
            try:
                block = f.read(BLOCK)
            except (OSError, EOFError) as e:  # a gzip/zstd stream cut short or corrupt
                raise _read_error(part, lineno + 1, e) from None
            except Exception as e:  # zstandard.ZstdError
                raise _read_error(part, lineno + 1, e) from None
            if first:
                first = False
                if block.startswith(b"\xef\xbb\xbf"):
                    block = block[3:]
            if not block:
                break
            pieces = (tail + block).split(b"\n") if tail else block.split(b"\n")
            tail = pieces.pop()
            if len(tail) > limit:
                raise _too_long(part, lineno + len(pieces) + 1, limit)
            for raw in pieces:
                lineno += 1
                if len(raw) > limit:
                    raise _too_long(part, lineno, limit)
                if raw and not raw.isspace():
                    yield lineno, raw
    if tail and not tail.isspace():
        yield lineno + 1, tail


def _too_long(part: Part, line: int, limit: int) -> InputError:
    return InputError(
        Problem(
            part.name,
            line,
            f"a line longer than {limit / (1 << 20):g} MB (the answer limit; raise it with --max-response-mb): "
            "read no further",
        )
    )
