"""``results:`` reads what batch jobs write: a folder of parts, a glob, .gz and .zst
parts, in a stable order; a repeated id across parts names both files; only regular
files, and no line longer than the answer limit."""

from __future__ import annotations

import gzip
import json
import os
import threading

import pytest

from ragtriage.core.errors import InputError
from ragtriage.core.evaluate import evaluate
from ragtriage.core.systems.batch import parts_of
from ragtriage.core.systems.results import read_results
from tests.evalkit import answer_for, write_testset

IDS = ["precio-oficina", "plazo-devolución", "dinero", "garantía", "domingo"]
QUESTIONS = {
    "precio-oficina": "oficina",
    "plazo-devolución": "devolver",
    "dinero": "dinero",
    "garantía": "garantía",
    "domingo": "domingo",
}


def line(cid: str) -> bytes:
    return (json.dumps({"id": cid, **answer_for(QUESTIONS[cid])}, ensure_ascii=False) + "\n").encode()


@pytest.fixture
def ts(tmp_path):
    return write_testset(tmp_path / "ts")


def message(e: InputError) -> str:
    return "\n".join(str(p) for p in e.problems)


def test_a_folder_of_parts_in_name_order_equals_one_file(ts, tmp_path):
    one = tmp_path / "all.jsonl"
    one.write_bytes(b"".join(line(c) for c in IDS))
    folder = tmp_path / "out"
    folder.mkdir()
    # what Spark leaves beside its parts is not read
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / ".part-00000.json.crc").write_bytes(b"\x00\x01")
    (folder / "part-00001.json").write_bytes(line(IDS[2]) + line(IDS[3]))
    (folder / "part-00000.json").write_bytes(line(IDS[0]) + line(IDS[1]))
    with gzip.open(folder / "part-00002.jsonl.gz", "wb") as f:
        f.write(line(IDS[4]))
    assert [p.name for p in parts_of(str(folder))] == [
        str(folder / "part-00000.json"),
        str(folder / "part-00001.json"),
        str(folder / "part-00002.jsonl.gz"),
    ]
    a = evaluate(ts, f"results:{one}", 2, out=tmp_path / "a.jsonl")
    b = evaluate(ts, f"results:{folder}", 2, out=tmp_path / "b.jsonl")
    assert a.summary == b.summary and a.summary["errors"] == 0
    assert (tmp_path / "a.jsonl").read_bytes().split(b"\n")[1:] == (tmp_path / "b.jsonl").read_bytes().split(
        b"\n"
    )[1:]


def test_a_glob_and_zstd_parts(ts, tmp_path):
    zstandard = pytest.importorskip("zstandard")  # the [zstd] extra; the dev extras install it
    d = tmp_path / "parts"
    d.mkdir()
    for i, cid in enumerate(IDS):
        data = zstandard.ZstdCompressor().compress(line(cid))
        (d / f"shard-{i}.jsonl.zst").write_bytes(data)
    (d / "notes.txt").write_text("not a part")
    got, warnings = read_results(str(d / "*.jsonl.zst"))
    assert sorted(got) == sorted(IDS) and not warnings
    run = evaluate(ts, f"results:{d}/*.zst", 2)
    assert run.summary["errors"] == 0


def test_a_repeated_id_across_parts_names_both_files(tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    (d / "a.jsonl").write_bytes(line("dinero") + line("garantía"))
    (d / "b.jsonl").write_bytes(line("domingo") + line("dinero"))
    with pytest.raises(InputError) as e:
        read_results(str(d))
    assert (
        message(e.value) == f"{d / 'b.jsonl'}:2: case 'dinero': id: duplicate id (first at {d / 'a.jsonl'}:1)"
    )


def test_bad_line_in_a_later_part_is_located_and_nothing_is_written(ts, tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    (d / "part-0.jsonl").write_bytes(b"".join(line(c) for c in IDS[:4]))
    (d / "part-1.jsonl").write_bytes(b'{"id": "domingo", "ranking": [1, 2]}\n')
    out = tmp_path / "run.jsonl"
    out.write_text("an earlier run\n")
    with pytest.raises(InputError) as e:
        evaluate(ts, f"results:{d}", 2, out=out)
    assert f"{d / 'part-1.jsonl'}:1" in message(e.value) and "ranking" in message(e.value)
    assert out.read_text() == "an earlier run\n"  # untouched: the run was never written over it
    assert sorted(os.listdir(tmp_path)) == ["out", "run.jsonl", "ts"]  # no temporary file left


def test_a_folder_with_a_stray_file_or_nothing_is_refused(tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    with pytest.raises(InputError) as e:
        parts_of(str(d))
    assert "holds no part" in message(e.value)
    (d / "part-0.jsonl").write_bytes(line("dinero"))
    (d / "README.md").write_text("hello")
    with pytest.raises(InputError) as e:
        parts_of(str(d))
    assert "'README.md'" in message(e.value) and "glob" in message(e.value)
    with pytest.raises(InputError) as e:
        parts_of(str(tmp_path / "nothing-*.jsonl"))
    assert "no results file matches" in message(e.value)


def test_special_files_are_refused_before_reading(tmp_path):
    for special in ("/dev/zero", "/dev/null"):
        with pytest.raises(InputError) as e:
            parts_of(special)
        assert "not a regular file" in message(e.value) and special in message(e.value)
    fifo = tmp_path / "answers.fifo"
    os.mkfifo(fifo)
    result: list = []

    def read():  # would block for ever in open() if the FIFO were opened
        try:
            read_results(str(fifo))
        except InputError as e:
            result.append(message(e))

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "reading a FIFO hung"
    assert result and "is a FIFO, not a regular file" in result[0]
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError) as e:
        parts_of(str(link))
    assert "not a regular file" in message(e.value)


def test_a_line_over_the_limit_is_an_error_at_its_line(tmp_path, monkeypatch):
    from ragtriage.core.systems import wire

    monkeypatch.setattr(wire, "_max_body", 1000)
    p = tmp_path / "r.jsonl"
    p.write_bytes(line("dinero") + b'{"id": "garant\xc3\xada", "answer": "' + b"x" * 5000 + b'"}\n')
    with pytest.raises(InputError) as e:
        read_results(str(p))
    assert f"{p}:2: a line longer than" in message(e.value)
    # a file with no newline at all stops at the limit, not at the end of memory
    q = tmp_path / "one-line.jsonl"
    q.write_bytes(b"x" * (5 << 20))
    with pytest.raises(InputError) as e:
        read_results(str(q))
    assert f"{q}:1: a line longer than" in message(e.value)


def test_broken_gzip_is_located(tmp_path):
    p = tmp_path / "r.jsonl.gz"
    data = gzip.compress(line("dinero") * 200)
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError) as e:
        read_results(str(p))
    assert str(p) in message(e.value) and "gzip" in message(e.value)
