"""A chunks file is probed (in two processes when it is big) and only the marked chunks and
their neighbours are read again: the evidence, and so the report, must be exactly what a
scan reading every chunk gathers. And the helper process can only cost time: when it
cannot start, dies or is cancelled, the result and the progress are the same."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from ragtriage.core import staleness
from ragtriage.core.corpus import iter_chunks
from ragtriage.core.errors import CorpusError
from ragtriage.core.staleness import LabelState, Scanner, halves, probe
from tests.core.stalekit import (
    SPLIT_CASES,
    WINDOWS,
    evidence_of,
    label_states,
    pydocs_states,
    splitter_corpus,
    write_jsonl,
)


@pytest.fixture
def helper(monkeypatch):
    """Probe every file in two halves, and record what each helper gave back."""
    monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(halves, "_cores", lambda: 2)
    results: list[probe.Marks | None] = []  # what each helper gave back (None: it failed)
    wait = halves._Helper.wait

    def spy(self, advance):
        ok, got = wait(self, advance)
        results.append(got if ok else None)
        return ok, got

    monkeypatch.setattr(halves._Helper, "wait", spy)
    return results


@pytest.fixture
def one_process(monkeypatch):
    monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 1 << 62)


def _report(cases, labels, corpus) -> dict:
    return staleness.check_labels(cases, labels, corpus).to_dict()


@pytest.mark.parametrize("spans", [True, False], ids=["spans", "text-only"])
@pytest.mark.parametrize("old_name, new_name, kind", SPLIT_CASES)
def test_a_probed_file_gives_the_evidence_of_a_full_read(
    tmp_path, monkeypatch, old_name, new_name, kind, spans
):
    """A real re-chunking with split, merged and changed labels: the evidence read from the
    file (probed in one process, then in two) is what reading every chunk gathers, and the
    two ways of probing give the same report."""
    cases, labels, path = splitter_corpus(tmp_path, old_name, new_name, kind, spans)
    full = Scanner(label_states(labels), None, in_memory=True)
    full.scan(list(iter_chunks(path)))
    assert any(len(st.pieces) > 1 for st in full.states.values())  # split texts: neighbours were read
    if spans:
        assert any(st.spans for st in full.states.values())

    monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 1 << 62)
    one = Scanner(label_states(labels), str(path), in_memory=False)
    one.scan(path)
    report = _report(cases, labels, path)

    monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(halves, "_cores", lambda: 2)
    started = []
    start = halves._Helper.start
    monkeypatch.setattr(halves._Helper, "start", lambda *a: started.append(start(*a)) or started[-1])
    two = Scanner(label_states(labels), str(path), in_memory=False)
    two.scan(path)
    assert started and started[0] is not None  # the second half was probed by a helper

    assert evidence_of(one) == evidence_of(two) == evidence_of(full)
    assert one.seq == two.seq == full.seq
    assert one.doc_ranges == two.doc_ranges and set(one.doc_ranges) == set(full.doc_chunks)
    assert _report(cases, labels, path) == report


def _scanned(path: Path) -> Scanner:
    sc = Scanner(pydocs_states(), str(path), in_memory=False)
    sc.scan(path)
    return sc


def test_every_piece_of_evidence_matches_a_full_read(tmp_path, helper):
    """Chunk by chunk (holders, split pieces and their neighbours, span overlaps, near
    misses), the pydocs labels against the re-chunked windows."""
    path = tmp_path / "windows.chunks.jsonl"
    path.write_bytes(WINDOWS.read_bytes())
    chunks = Scanner(pydocs_states(), None, in_memory=True)
    chunks.scan(list(iter_chunks(path)))
    two = _scanned(path)
    assert helper and helper[0] is not None and helper[0].at  # the helper marked chunks
    assert evidence_of(two) == evidence_of(chunks)
    assert two.seq == chunks.seq


def test_the_probe_marks_chunks_that_concern_a_label_and_notes_documents(tmp_path):
    rows = [
        {"id": "a", "text": "nothing to see here at all", "doc": "d1"},
        {"id": "own", "text": "its own id, whatever it says", "doc": "d1"},
        {"id": "b", "text": "one two three four five six seven", "doc": "d2", "start": 10, "end": 40},
        {"id": "c", "text": "neither", "doc": "d2", "start": 100, "end": 120},
    ]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    size = path.stat().st_size
    p = probe.Probe(
        ids=frozenset({"own"}),
        all_fp=False,
        short_lens=frozenset(),
        short_words=frozenset(),
        anchors=frozenset({("three", "four", "five")}),
        docs=frozenset({"d1"}),
        spans={"d2": ([110], [115], 5)},
    )
    marks = probe.probe_range(path, 0, size, p)
    assert [(n, s) for _, n, s in marks.at] == [(2, 1), (3, 2), (4, 3)]  # own id, anchor, span overlap
    assert marks.lines == marks.records == 4 and marks.bad is None
    first, last = marks.docs["d1"]
    assert path.read_bytes()[first:last].count(b"\n") == 1  # exactly d1's two lines
    assert all(path.read_bytes()[o:].startswith(b'{"id"') for o, _, _ in marks.at)


def test_the_halves_are_numbered_as_one_file(tmp_path):
    rows = [{"id": f"c{i}", "text": f"chunk number {i} of the file"} for i in range(40)]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    raw = path.read_bytes().replace(b"\n", b"\n\n", 7)  # a few blank lines in the first half
    path.write_bytes(raw)
    p = probe.Probe(frozenset({"c3", "c30"}), False, frozenset(), frozenset(), frozenset(), frozenset(), {})
    size = len(raw)
    cut = halves._cut(path, size)
    assert 0 < cut < size and raw[cut - 1 : cut] == b"\n"
    whole = probe.probe_range(path, 0, size, p)
    two = probe.join(probe.probe_range(path, 0, cut, p), probe.probe_range(path, cut, size, p))
    assert two == whole
    assert [(n, s) for _, n, s in whole.at] == [(4 + 3, 3), (31 + 7, 30)]


@pytest.mark.parametrize("where", [0.2, 0.9], ids=["first-half", "second-half"])
def test_a_bad_line_is_located_in_either_half(tmp_path, helper, where):
    rows = [{"id": f"c{i}", "text": f"chunk number {i}"} for i in range(200)]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    lines = path.read_bytes().splitlines(keepends=True)
    at = int(len(lines) * where)
    lines[at] = b'{"id": "broken", "text": 3}\n'
    path.write_bytes(b"".join(lines))
    with pytest.raises(CorpusError) as probed:
        _scanned(path)
    with pytest.raises(CorpusError) as read:
        list(iter_chunks(path))
    assert [(p.file, p.line) for p in probed.value.problems] == [(str(path), at + 1)]
    assert str(probed.value) == str(read.value)


def _fake_python(tmp_path: Path, script: str) -> str:
    exe = tmp_path / "fake-python"
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


@pytest.mark.skipif(os.name != "posix", reason="the helper runs on POSIX only")
@pytest.mark.parametrize(
    "script",
    [
        "exit 1\n",
        "cat > /dev/null; echo 4194304; echo 100; exit 1\n",
        "cat > /dev/null; echo '!MemoryError()'\n",
    ],
    ids=["cannot-run", "dies-midway", "reports-failure"],
)
def test_a_failed_helper_costs_time_not_the_result(tmp_path, monkeypatch, helper, script):
    path = tmp_path / "windows.chunks.jsonl"
    path.write_bytes(WINDOWS.read_bytes() * 1)
    want = evidence_of(_scanned(path))
    monkeypatch.setattr("sys.executable", _fake_python(tmp_path, script))
    seen: list[int] = []
    sc = Scanner(pydocs_states(), str(path), in_memory=False)
    sc.scan(path, progress=lambda phase, done, total: seen.append(done))
    assert helper[-1] is None  # the helper gave nothing: its half was probed here
    assert evidence_of(sc) == want
    assert seen == sorted(seen) and seen[-1] == path.stat().st_size  # each byte counted once


@pytest.mark.skipif(os.name != "posix", reason="the helper runs on POSIX only")
def test_cancel_while_the_helper_works_stops_it(tmp_path, monkeypatch, helper):
    path = tmp_path / "windows.chunks.jsonl"
    path.write_bytes(WINDOWS.read_bytes())
    # a helper that never answers: the parent waits for it, reading its progress
    monkeypatch.setattr("sys.executable", _fake_python(tmp_path, "cat > /dev/null; echo 10; exec sleep 60\n"))
    procs = []
    start = halves._Helper.start
    monkeypatch.setattr(halves._Helper, "start", lambda *a: procs.append(start(*a)) or procs[-1])
    cancel = threading.Event()

    def progress(phase, done, total):
        if done >= path.stat().st_size // 2:
            cancel.set()

    with pytest.raises(staleness.Cancelled):
        Scanner(pydocs_states(), str(path), in_memory=False).scan(path, progress=progress, cancel=cancel)
    assert procs[0].proc.returncode is not None  # stopped and reaped


def test_a_file_changed_between_the_probe_and_the_reading_is_an_error(tmp_path, monkeypatch, one_process):
    path = tmp_path / "windows.chunks.jsonl"
    path.write_bytes(WINDOWS.read_bytes())
    probe_file = staleness.scanner.probe_file

    def then_edit(*a, **k):
        marks = probe_file(*a, **k)
        path.write_bytes(b"\n" * 3 + WINDOWS.read_bytes())  # another file under the same name
        return marks

    monkeypatch.setattr(staleness.scanner, "probe_file", then_edit)
    with pytest.raises(CorpusError, match="changed while it was being checked"):
        _scanned(path)


def test_a_short_label_and_a_fingerprint_only_label_are_found_through_the_probe(tmp_path, one_process):
    rows = [{"id": f"c{i}", "text": f"filler text number {i} with nothing"} for i in range(50)]
    rows[20] = {"id": "c20", "text": "Returns: the list, sorted."}
    rows[33] = {"id": "c33", "text": "a text remembered only by its fingerprint"}
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    states = [
        LabelState("old-short", {"text": "the list"}),
        LabelState("old-sha", {"sha": staleness.evidence._fp("a text remembered only by its fingerprint")}),
    ]
    sc = Scanner(states, str(path), in_memory=False)
    sc.scan(path)
    assert [c.id for c in sc.states["old-short"].contains] == ["c20"]
    assert [c.id for c in sc.states["old-sha"].exact] == ["c33"]


WORDS = (
    "the cache keeps every answer for ten minutes unless the request carries a header asking "
    "for a fresh copy which forces the server to rebuild it from the primary database"
).split()


@pytest.mark.parametrize("two_halves", [False, True], ids=["one-process", "helper"])
def test_the_pieces_next_to_a_marked_chunk_are_read_back(tmp_path, monkeypatch, two_halves):
    """A text split in three where only the middle piece holds an anchor: the piece before
    (two words) is read back, the one after (three words) is read when it comes, across
    blank lines: the file gives the three pieces reading everything does."""
    text = " ".join(WORDS)
    filler = [
        {"id": f"f{i}", "text": f"unrelated filler paragraph number {i} about gardens"} for i in range(300)
    ]
    pieces = [
        {"id": "p1", "text": "An introduction. " + " ".join(WORDS[:2])},
        {"id": "p2", "text": " ".join(WORDS[2:-3])},
        {"id": "p3", "text": " ".join(WORDS[-3:]) + ". Then something else."},
    ]
    rows = filler[:150] + pieces + filler[150:]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    raw = path.read_bytes()
    p2 = raw.index(b'{"id":"p2"')
    path.write_bytes(raw[:p2] + b"\n  \n" + raw[p2:].replace(b'{"id":"p3"', b'\n{"id":"p3"', 1))
    labels = {"lab": {"text": text}}
    full = Scanner(label_states(labels), None, in_memory=True)
    full.scan(list(iter_chunks(path)))
    assert [v[0][0] for _, v in sorted(full.states["lab"].pieces.items())] == ["p1", "p2", "p3"]
    if two_halves:
        monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(halves, "_cores", lambda: 2)
    else:
        monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 1 << 62)
    sc = Scanner(label_states(labels), str(path), in_memory=False)
    sc.scan(path)
    marked = probe.probe_range(path, 0, path.stat().st_size, sc.probe()).at
    assert len(marked) == 1  # only the middle piece concerns the label at first sight
    assert evidence_of(sc) == evidence_of(full)
    assert staleness.check_labels([("q", "?", ("lab",))], labels, path).labels[0].status == "split"


def test_an_empty_or_one_line_file_is_probed_whole(tmp_path, helper):
    for raw in (b"", b'{"id": "a", "text": "x"}\n'):
        path = tmp_path / "c.jsonl"
        path.write_bytes(raw)
        assert halves._cut(path, len(raw)) == len(raw)  # nothing to cut: no helper
        sc = _scanned(path)
        assert sc.seq == len(raw.splitlines()) - 1
    assert helper == []


@pytest.mark.parametrize("first", ["label", "other"])
def test_a_byte_order_mark_changes_nothing_but_the_bytes(tmp_path, helper, first):
    """A chunks file saved with a BOM (Windows editors do): the first chunk is read, marked and
    its document noted as without one, in one process and in two, and the report is the same."""
    rows = [
        {"id": "x", "text": "an unrelated opening chunk of the file", "doc": "d"},
        {"id": "a-2", "text": "Returns are accepted within thirty days of delivery when unused.", "doc": "d"},
    ]
    if first == "label":
        rows.reverse()
    plain = write_jsonl(tmp_path / "plain.jsonl", rows)
    marked = tmp_path / "bom.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    labels = {"a": {"text": rows[0 if first == "label" else 1]["text"], "doc": "d"}}
    cases = [("q", "returns?", ("a",))]
    want = _report(cases, labels, plain)
    assert want["labels"][0]["status"] == "moved"
    assert _report(cases, labels, marked) == want
    sc = Scanner(label_states(labels), str(marked), in_memory=False)
    sc.scan(marked)
    size = marked.stat().st_size
    got = probe.probe_range(marked, 0, size, sc.probe())
    assert got.bad is None and got.records == 2 and got.at
    assert got.docs["d"] == (3, size - 1)  # from the first chunk's first byte (after the mark)
