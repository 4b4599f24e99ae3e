"""``ragtriage stale``: report, --fix through the document (golden files), --json, exit codes."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import GOLDEN, TESTSETS

STALE = GOLDEN / "stale"
EPOCH = {"SOURCE_DATE_EPOCH": "1767225600"}  # 2026-01-01T00:00:00Z in recorded labels


@pytest.fixture
def shop(tmp_path):
    """The shop test set (every status once) beside its new chunks, in a temp folder."""
    for name in ("shop.yaml", "shop-new.chunks.jsonl"):
        shutil.copy(STALE / name, tmp_path / name)
    return tmp_path / "shop.yaml"


def test_report_lists_each_stale_label_with_candidates_and_fix(cli, shop):
    r = cli("stale", shop)
    assert r.returncode == 1, r.stderr
    assert r.stderr == ""
    out = r.stdout
    assert "shop.yaml:13: case 'garantía'" in out
    assert "garantía-1    moved      → garantía-7 (1.00)  [auto]" in out
    assert "rückgabe-1    changed    → rückgabe-9 (1.00)  [auto]" in out
    assert "horario-1     split      → horario-a (0.45) + horario-b (0.44), expect: all  [review]" in out
    assert "cupón-1       missing    → cupón-2" in out and "tallas-viejo  unknown    → tallas-1" in out
    assert "case 'envío'" not in out  # ok labels are only counted
    assert out.rstrip().endswith(
        "9 labels: 1 ok, 1 moved, 1 changed, 2 merged, 1 split, 1 missing, 1 unrecorded, 1 unknown; "
        f"5 fixable automatically (--fix), 3 need review (ragtriage edit {shop})"
    )
    assert (STALE / "shop.yaml").read_bytes() == shop.read_bytes()  # a report never writes


def test_fix_changes_only_the_fixed_lines(cli, shop, tmp_path):
    r = cli("stale", shop, "--fix", "--json", tmp_path / "r.json", env=EPOCH)
    assert r.returncode == 1, r.stderr  # split, missing and unknown are left for a person
    assert "5 fixed and saved, 3 need review" in r.stdout
    assert shop.read_bytes() == (STALE / "shop.fixed.yaml").read_bytes()
    assert (tmp_path / "r.json").read_bytes() == (STALE / "shop.stale.json").read_bytes()
    again = cli("stale", shop)
    assert again.returncode == 1
    assert again.stdout.rstrip().endswith(
        f"8 labels: 5 ok, 1 split, 1 missing, 1 unknown; 0 fixable automatically (--fix), 3 need review "
        f"(ragtriage edit {shop})"
    )
    again = cli("stale", shop, "--fix")  # nothing safe left: the file is not rewritten
    assert shop.read_bytes() == (STALE / "shop.fixed.yaml").read_bytes()


def test_json_has_exactly_the_documented_shape(cli, shop, tmp_path):
    out = tmp_path / "report.json"
    r = cli("stale", shop, "--json", out)
    assert r.returncode == 1
    data = json.loads(out.read_text(encoding="utf-8"))
    assert list(data) == ["labels", "counts"]
    assert data["counts"] == {
        "ok": 1,
        "moved": 1,
        "changed": 1,
        "merged": 2,
        "split": 1,
        "missing": 1,
        "unrecorded": 1,
        "unknown": 1,
    }
    for e in data["labels"]:
        assert list(e) == ["case", "label", "status", "candidates", "fix"]
        assert all(list(c) == ["id", "score"] for c in e["candidates"])
    by = {e["label"]: e for e in data["labels"]}
    assert by["envío-1"] == {
        "case": "envío",
        "label": "envío-1",
        "status": "ok",
        "candidates": [],
        "fix": None,
    }
    assert by["horario-1"]["fix"] == "review" and [c["id"] for c in by["horario-1"]["candidates"]] == [
        "horario-a",
        "horario-b",
    ]
    assert by["factura-1"]["fix"] == "auto"


def test_exit_0_when_nothing_is_stale(cli, tmp_path):
    (tmp_path / "c.jsonl").write_text('{"id": "a", "text": "Alpha beta\\ngamma delta."}\n', encoding="utf-8")
    (tmp_path / "t.yaml").write_text(
        "version: 1\ncorpus: c.jsonl\ncases:\n  - id: q\n    question: alpha?\n    expected: [a]\n"
        "labels:\n  a:\n    text: Alpha  beta gamma delta.\n",
        encoding="utf-8",
    )
    r = cli("stale", tmp_path / "t.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("1 label: 1 ok (no stale label)")


def test_fix_of_a_hand_written_set_records_labels_and_exits_0(cli, tmp_path):
    (tmp_path / "c.jsonl").write_text('{"id": "a", "text": "Alpha beta gamma."}\n', encoding="utf-8")
    t = tmp_path / "t.yaml"
    t.write_text(
        "# mine\nversion: 1\ncorpus: c.jsonl\ncases:\n  - id: q   # keep\n    question: alpha?\n"
        "    expected: [a]\n",
        encoding="utf-8",
    )
    r = cli("stale", t, "--fix", env=EPOCH)
    assert r.returncode == 0, r.stdout + r.stderr
    text = t.read_text(encoding="utf-8")
    assert text.startswith("# mine\nversion: 1\ncorpus: c.jsonl\ncases:\n  - id: q   # keep\n")
    assert (
        "\nlabels:" in text
        and "\n  a:\n    sha: " in text
        and "text: Alpha beta gamma." in text
        and '"2026-01-01T00:00:00Z"' in text
    )


@pytest.mark.parametrize(
    "make, expect",
    [
        (lambda d: None, "not found"),
        (
            lambda d: (d / "t.yaml").write_text(
                "version: 1\ncases:\n  - id: q\n    question: x\n    expected: [a]\n"
            ),
            "no chunks file",
        ),
        (
            lambda d: (d / "t.yaml").write_text(
                "version: 1\ncorpus: nope.jsonl\ncases:\n  - id: q\n    question: x\n    expected: [a]\n"
            ),
            "nope.jsonl",
        ),
        (
            lambda d: (
                (d / "t.yaml").write_text(
                    "version: 1\ncorpus: c.jsonl\ncases:\n  - id: q\n    question: x\n    expected: [a]\n"
                ),
                (d / "c.jsonl").write_text('{"id": "a", "text": "ok"}\n{"id": 3}\n'),
            ),
            "c.jsonl:2",
        ),
        (lambda d: (d / "t.yaml").write_text("version: 1\ncases:\n  - id: q\n    questoin: x\n"), "t.yaml:4"),
    ],
)
def test_bad_input_exits_2_with_a_located_message(cli, tmp_path, make, expect):
    make(tmp_path)
    r = cli("stale", tmp_path / "t.yaml")
    assert r.returncode == 2
    assert expect in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_bad_corpus_leaves_the_test_set_untouched(cli, shop):
    before = shop.read_bytes()
    (shop.parent / "bad.jsonl").write_text('{"id": "garantía-7", "text": "x"}\nnot json\n', encoding="utf-8")
    r = cli("stale", shop, "--corpus", shop.parent / "bad.jsonl", "--fix")
    assert r.returncode == 2 and "bad.jsonl:2" in r.stderr
    assert shop.read_bytes() == before


def test_pydocs_example_against_the_windows_chunking(cli, tmp_path):
    """The shipped real example: every label is stale against the re-chunked corpus; --fix
    resolves the safe ones and leaves splits, doubles and clashing ids for review."""
    for p in (TESTSETS / "pydocs").glob("pydocs*"):
        shutil.copy(p, tmp_path / p.name)
    t = tmp_path / "pydocs.yaml"
    r = cli("stale", t, "--corpus", tmp_path / "pydocs-windows.chunks.jsonl")
    assert r.returncode == 1
    assert r.stdout.rstrip().endswith(
        "44 labels: 20 changed, 17 merged, 7 split; 24 fixable automatically (--fix), "
        f"20 need review (ragtriage edit {t} --corpus {tmp_path / 'pydocs-windows.chunks.jsonl'})"
    )
    # transpose-matrix's text is now in the window datastructures-18, but that id is still the
    # (stale) label of index-in-a-range: fixing it would overwrite what that case remembers
    assert "datastructures-66   merged     → datastructures-18 (0.24)  [review]" in r.stdout
    r = cli("stale", t, "--corpus", tmp_path / "pydocs-windows.chunks.jsonl", "--fix")
    assert "24 fixed and saved, 20 need review" in r.stdout
    # the fixed labels speak of the new chunking, so the test set now names it (comment kept)
    assert "corpus: now pydocs-windows.chunks.jsonl" in r.stdout
    assert "\ncorpus: pydocs-windows.chunks.jsonl" in t.read_text(encoding="utf-8")
    r = cli("stale", t, "--corpus", tmp_path / "pydocs-windows.chunks.jsonl")
    assert r.stdout.splitlines()[-1].startswith("43 labels: 23 ok, 9 changed, 4 merged, 7 split; 0 fixable")
    assert r.returncode == 1
    assert cli("stale", t).returncode == 1  # its corpus is now the windows one: 20 still need review


def test_progress_off_a_terminal_is_a_few_plain_lines(tmp_path, monkeypatch, capsys):
    from ragtriage.commands import stale_cmd

    p = tmp_path / "c.jsonl"
    p.write_bytes(b"x" * 1000)
    assert stale_cmd._progress(p)[0] is None  # small corpus: silent
    monkeypatch.setattr(stale_cmd, "BIG", 0)
    cb, close = stale_cmd._progress(p)
    for done in range(0, 489_100_001, 24_455_000):  # the megabytes of a terminal's bar (decimal)
        cb("scan", done, 489_100_000)
    close()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 10 and lines[0] == "stale: read 48.9 of 489.1 MB (10%)"
    assert lines[-1] == "stale: read 489.1 of 489.1 MB (100%)"


def test_case_lines_in_one_scan_agree_with_the_document(tmp_path):
    """The report finds every case's line in one pass; it must say what case_line says."""
    from ragtriage.core.document import TestSetDocument

    parts = ["# header\nversion: 1\ncases:\n"]
    for i in range(260):
        style = i % 4
        if style == 0:
            parts.append(f"  - id: c{i}\n    question: q{i}\n    expected: [x{i}]\n")
        elif style == 1:
            parts.append(
                f"  # about c{i}\n  - id: 'c{i}'   # quoted\n    question: q{i}\n    expected: [x{i}]\n"
            )
        elif style == 2:
            parts.append(
                f"  - question: |\n      - id: c{i - 1} is not a case line\n    id: c{i}\n    expected: [x{i}]\n"
            )
        else:
            parts.append(f"\n  -   id: \"c{i}\"\n      question: q{i}\n      expected: [x{i}]\n")
    t = tmp_path / "t.yaml"
    t.write_text("".join(parts), encoding="utf-8")
    doc = TestSetDocument.load(t, use_cache=False)
    ids = [c.id for c in doc.cases]
    assert doc.case_lines() == {cid: doc.case_line(cid) for cid in ids}


def test_unwritable_json_path_is_bad_input_before_any_work(cli, shop, tmp_path):
    (tmp_path / "adir").mkdir()
    r = cli("stale", shop, "--fix", "--json", tmp_path / "adir")
    assert r.returncode == 2 and "--json" in r.stderr and "folder" in r.stderr
    assert shop.read_bytes() == (STALE / "shop.yaml").read_bytes()


def test_review_hint_names_the_corpus_checked_against(tmp_path, capsys):
    """Opening the app without --corpus would check the labels against the test set's own
    (old) chunks and say "no stale label": the hint names the chunks file that was checked."""
    from ragtriage import cli

    for p in (TESTSETS / "pydocs").glob("pydocs*"):
        shutil.copy(p, tmp_path / p.name)
    t = tmp_path / "pydocs.yaml"
    new = tmp_path / "pydocs-windows.chunks.jsonl"
    assert cli.main(["stale", str(t), "--corpus", str(new)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{t}: labels against {new} (137 chunks)\n")
    assert out.rstrip().endswith(f"need review (ragtriage edit {t} --corpus {new})")
    assert cli.main(["stale", str(t), "--corpus", str(tmp_path / "pydocs-paragraphs.chunks.jsonl")]) == 0
    assert "--corpus" not in capsys.readouterr().out.splitlines()[-1]  # its own corpus, nothing to review
    assert cli.main(["stale", str(t), "--corpus", str(new), "--fix"]) == 1
    out = capsys.readouterr().out  # --fix pointed `corpus:` at the new chunks: no --corpus needed
    assert f"need review (ragtriage edit {t})" in out
    assert cli.main(["stale", str(t)]) == 1
    assert capsys.readouterr().out.startswith(f"{t}: labels against {new} (137 chunks)")


def test_review_hint_quotes_a_path_with_spaces(tmp_path, capsys):
    from ragtriage import cli

    d = tmp_path / "my sets"
    d.mkdir()
    for p in (TESTSETS / "pydocs").glob("pydocs*"):
        shutil.copy(p, d / p.name)
    t = d / "pydocs.yaml"
    new = d / "pydocs-windows.chunks.jsonl"
    assert cli.main(["stale", str(t), "--corpus", str(new)]) == 1
    assert capsys.readouterr().out.rstrip().endswith(f"(ragtriage edit '{t}' --corpus '{new}')")


def test_a_corpus_unrelated_to_the_labels_is_named_as_such(cli, tmp_path):
    """Issue 20: every label `missing` because the chunks file is another collection (or its
    ids are uuid4s made anew) is said in one note, not left as forty reviews."""
    rows = [
        {"id": f"5e1c-{i}", "text": f"Lorem ipsum dolor sit amet number {i} consectetur."} for i in range(5)
    ]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    labels = "".join(
        f"  a{i}:\n    text: The warranty covers repairs for {i} years after the day of purchase.\n"
        for i in range(3)
    )
    cases = "".join(f"  - id: q{i}\n    question: warranty {i}?\n    expected: [a{i}]\n" for i in range(3))
    (tmp_path / "t.yaml").write_text(
        f"version: 1\ncorpus: c.jsonl\ncases:\n{cases}labels:\n{labels}", encoding="utf-8"
    )
    r = cli("stale", tmp_path / "t.yaml")
    assert r.returncode == 1
    assert "note: none of the 3 labels' ids is in this corpus" in r.stdout and "uuid4" in r.stdout
    rows.append({"id": "a0", "text": "The warranty covers repairs for 0 years after the day of purchase."})
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert "looks unrelated" not in cli("stale", tmp_path / "t.yaml").stdout
