"""The first look at every line of a chunks file: which chunks concern a label at all.

Most of a stale check is this look: a million chunks, each parsed, split into words and
tested against a few sets, of which about one in sixteen concerns a label
(``benchmarks/bench_stale.py``, 1M chunks x 10k labels: 64k). So a chunks file is
probed first, and the :class:`~.scanner.Scanner` then reads only the chunks the probe
marked, and their neighbours, in file order, straight from the file.

The probe is a pure function of a byte range and of :class:`Probe` (plain sets, cheap to
pickle), so a big file (:data:`PARALLEL_MIN_BYTES`) is probed in two halves at once: the
second in a helper process on the machine's second core (the check is CPU-bound Python:
a thread would not run beside it). The helper is a plain ``python -c`` child in its own
session (ctrl+c goes to the parent, which stops it; nothing it prints reaches a terminal
app); if it cannot start, fails or dies, the parent probes that half itself, so a helper
can cost time, never a result.

The probe may mark more chunks than concern a label, never fewer: the scanner asks the
same questions again of every chunk it reads (``tests/core/test_stale_probe.py`` compares
the evidence chunk by chunk with a scan that reads everything).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
from bisect import bisect_left
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple, TypeAlias

import orjson

from ..corpus import MAX_LINE

Trigram: TypeAlias = tuple[str, str, str]
Mark: TypeAlias = tuple[int, int, int]  # (byte offset of the line, line number, chunk number)

BLOCK = 1 << 22  # read 4 MB at a time (progress and cancel are checked per block)
PARALLEL_MIN_BYTES = 32 << 20  # below this a helper costs more than half a probe saves
_BOM = b"\xef\xbb\xbf"


class Probe(NamedTuple):
    """What makes a chunk worth reading (see the scanner, which builds it)."""

    ids: frozenset[str]  # a label's own id
    all_fp: bool  # fingerprint-only labels: every chunk
    short_lens: frozenset[int]  # word counts of short texts (fingerprinted)
    short_words: frozenset[str]  # a word a chunk holding a short text has
    anchors: frozenset[Trigram]  # the anchor trigrams of the remembered texts
    docs: frozenset[str]  # documents whose place in the file is noted
    spans: dict[str, tuple[list[int], list[int], int]]  # doc -> label starts (sorted), their ends, longest


class Marks(NamedTuple):
    """What the probe of one byte range found (numbers count from the range's start)."""

    at: list[Mark]  # the chunks to read, in file order
    lines: int  # lines in the range
    records: int  # chunks in the range (lines that are not blank)
    docs: dict[str, tuple[int, int]]  # a noted document -> (offset of its first line, end of its last)
    bad: int | None  # the first line that is not a chunk (the probe stops there)


def probe_range(
    path: Path, lo: int, hi: int, probe: Probe, on_block: Callable[[bytes], None] | None = None
) -> Marks:
    """Mark the chunks of the lines in bytes ``lo``-``hi`` of ``path`` (both at a line's
    start, or ``hi`` the file's end) that concern a label; note where each document lies."""
    ids, all_fp, short_lens, short_words, anchors, docs, spans = probe
    short_hit = short_words.intersection if short_words else None
    anchor_hit = anchors.intersection
    with_docs = bool(docs or spans)
    loads = orjson.loads
    at: list[Mark] = []
    mark = at.append
    doc_at: dict[str, tuple[int, int]] = {}
    lineno = 0
    seq = -1
    off = lo  # where the next line starts
    rest = b""
    with open(path, "rb") as f:
        f.seek(lo)
        left = hi - lo
        while left > 0:
            block = f.read(min(BLOCK, left))
            if not block:
                break
            left -= len(block)
            if on_block is not None:
                on_block(block)
            parts = (rest + block).split(b"\n")
            rest = parts.pop()
            if left <= 0 and rest:  # the file's last line, without a newline
                parts.append(rest)
                rest = b""
            for raw in parts:
                lineno += 1
                here = off
                off += len(raw) + 1
                if len(raw) > MAX_LINE:
                    return Marks(at, lineno, seq + 1, doc_at, lineno)
                if lineno == 1 and lo == 0 and raw.startswith(_BOM):
                    raw = raw[3:]
                if not raw or raw.isspace():
                    continue
                try:  # the rule of corpus.iter_chunks: an id, a text, whole-number offsets
                    rec = loads(raw)
                    cid = rec["id"]
                    text = rec["text"]
                    if type(cid) is not str or type(text) is not str or not cid or cid.isspace():
                        raise ValueError
                    start, end = rec.get("start"), rec.get("end")
                    if not ((start is None or type(start) is int) and (end is None or type(end) is int)):
                        raise ValueError
                except Exception:
                    return Marks(at, lineno, seq + 1, doc_at, lineno)
                seq += 1
                toks = text.split()
                if (
                    cid in ids
                    or all_fp
                    or len(toks) in short_lens
                    or (short_hit is not None and short_hit(toks))
                    or anchor_hit(zip(toks, toks[1:], toks[2:]))
                ):
                    mark((here, lineno, seq))
                    marked = True
                else:
                    marked = False
                if with_docs:
                    doc = rec.get("doc")
                    if type(doc) is str:
                        if doc in docs:
                            r = doc_at.get(doc)
                            doc_at[doc] = (here if r is None else r[0], off - 1)
                        if not marked and start is not None and end is not None and doc in spans:
                            starts, ends, longest = spans[doc]
                            for k in range(bisect_left(starts, start - longest), bisect_left(starts, end)):
                                if max(starts[k], start) < min(ends[k], end):
                                    mark((here, lineno, seq))
                                    break
            if len(rest) > MAX_LINE:
                return Marks(at, lineno + 1, seq + 1, doc_at, lineno + 1)
    return Marks(at, lineno, seq + 1, doc_at, None)


def join(first: Marks, second: Marks) -> Marks:
    """The marks of two consecutive ranges, numbered from the first's start."""
    at = first.at + [(o, n + first.lines, s + first.records) for o, n, s in second.at]
    docs = dict(first.docs)
    for doc, (a, b) in second.docs.items():
        r = docs.get(doc)
        docs[doc] = (a if r is None else r[0], b)
    bad = first.bad if first.bad is not None else (None if second.bad is None else second.bad + first.lines)
    return Marks(at, first.lines + second.lines, first.records + second.records, docs, bad)


# ---------------------------------------------------------------- two at once


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _cut(path: Path, size: int) -> int:
    """The start of the first line at or after the middle of the file (``size``: none)."""
    with open(path, "rb") as f:
        f.seek(size // 2 - 1)
        line = f.readline(MAX_LINE + 2)
        if not line.endswith(b"\n"):
            return size  # the end of the file, or a line too long: one range says so
        return f.tell()


# The helper imports this very package (sys.path[0] is the working folder for -c: replaced),
# so it runs the parent's code even beside another installed ragtriage.
_SERVE = "import sys; sys.path[0] = sys.argv[1]; from ragtriage.core.staleness.probe import _serve; _serve()"


class _Helper:
    """A child process probing one byte range; it reports bytes read, then its marks."""

    def __init__(self, proc: subprocess.Popen[bytes], span: int) -> None:
        self.proc = proc
        self.span = span  # the bytes of its range: it cannot have read more
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buf = b""
        self.result: Marks | None = None
        self.dead = False
        self.reported = 0  # bytes the child said it read

    @classmethod
    def start(cls, path: Path, lo: int, hi: int, probe: Probe) -> _Helper | None:
        if not sys.executable or getattr(sys, "frozen", False):  # a frozen app is not a Python
            return None
        root = str(Path(__file__).resolve().parents[3])  # the folder holding this ragtriage package
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", _SERVE, root],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return None
        request = pickle.dumps((str(path), lo, hi, probe), pickle.HIGHEST_PROTOCOL)

        def send() -> None:  # in a thread: the pipe takes 64 kB until the child reads
            assert proc.stdin is not None
            with contextlib.suppress(OSError):
                proc.stdin.write(request)
                proc.stdin.close()

        threading.Thread(target=send, name="ragtriage-probe-send", daemon=True).start()
        return cls(proc, hi - lo)

    def poll(self) -> int:
        """Take what the child wrote so far; returns the bytes it reported reading since."""
        done = 0
        while self.result is None and not self.dead:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self.dead = True
                break
            self.buf += data
            while self.result is None:
                nl = self.buf.find(b"\n")
                if nl < 0:
                    break
                head = self.buf[:nl]
                if head.startswith(b"="):  # the marks: a pickle of the length given
                    n = int(head[1:])
                    if len(self.buf) < nl + 1 + n:
                        break
                    self.result = pickle.loads(self.buf[nl + 1 : nl + 1 + n])
                    self.buf = b""
                elif head.isdigit():
                    n = min(int(head), self.span - self.reported)
                    done += n
                    self.reported += n
                    self.buf = self.buf[nl + 1 :]
                else:  # the child failed: probe its range here
                    self.dead = True
                    break
        return done

    def wait(self, advance: Callable[[int], None]) -> Marks | None:
        """The child's marks (None if it failed), reporting its progress while it works."""
        while self.result is None and not self.dead:
            select.select([self.fd], [], [], 0.05)
            advance(self.poll())
        return self.result

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _serve() -> None:
    """The helper: probe the range asked on stdin, report progress and marks on stdout."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it
    out = sys.stdout.buffer
    try:
        path, lo, hi, probe = pickle.load(sys.stdin.buffer)

        def report(block: bytes) -> None:
            out.write(b"%d\n" % len(block))
            out.flush()

        marks = probe_range(Path(path), lo, hi, Probe(*probe), report)
        payload = pickle.dumps(marks, pickle.HIGHEST_PROTOCOL)
        out.write(b"=%d\n" % len(payload) + payload)
        out.flush()
    except BaseException as e:  # anything: the parent probes the range itself
        with contextlib.suppress(BaseException):
            out.write(b"!" + repr(e).encode("utf-8", "replace").replace(b"\n", b" ") + b"\n")
            out.flush()


def probe_file(
    path: Path,
    probe: Probe,
    size: int,
    advance: Callable[[int], None],
) -> Marks:
    """Probe the whole file (``size`` bytes): in two halves at once when it is big and a
    second core is free. ``advance(n)`` is told of every ``n`` bytes read (by either side);
    it may raise (a cancel), which stops the helper."""
    two = size >= PARALLEL_MIN_BYTES and os.name == "posix" and _cores() > 1  # (the helper's pipes: POSIX)
    cut = _cut(path, size) if two else size
    helper = _Helper.start(path, cut, size, probe) if cut < size else None
    if helper is None:
        return probe_range(path, 0, size, probe, lambda block: advance(len(block)))
    try:
        first = probe_range(path, 0, cut, probe, lambda block: advance(len(block) + helper.poll()))
        if first.bad is not None:
            return first  # a bad line: the first one is in the first half
        second = helper.wait(advance)
        if second is None:  # the helper failed: probe its half here (its bytes were counted once)
            credit = helper.reported

            def again(block: bytes) -> None:
                nonlocal credit
                take = min(len(block), credit)
                credit -= take
                advance(len(block) - take)

            second = probe_range(path, cut, size, probe, again)
        return join(first, second)
    finally:
        helper.stop()
