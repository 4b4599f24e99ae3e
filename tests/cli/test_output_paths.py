"""Where reports go (issue 12 #7, #8): a device, FIFO or symlink is written in place or
through, never replaced by a plain file; an output that is one of the command's inputs
is refused (exit 2) and the input is left byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading

import pytest

from tests.conftest import TESTSETS


@pytest.fixture
def shop(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    return tmp_path / "shop-es.yaml"


def _run(cli_in, shop, tmp_path):
    out = tmp_path / "run.jsonl"
    r = cli_in("run", shop, "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    return out


# ------------------------------------------------------------------ #7 special report paths


def test_report_to_a_fifo_is_written_into_it_not_replaced(cli_in, shop, tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = cli_in("validate", shop, "--json", fifo)
    reader.join(timeout=30)
    assert r.returncode in (0, 1), r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(got[0])["cases"] > 0


def test_report_through_a_symlink_writes_the_target_and_keeps_the_link(cli_in, shop, tmp_path):
    target = tmp_path / "reports" / "check.json"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    run = _run(cli_in, shop, tmp_path)
    r = cli_in("check", shop, "--run", run, "--json", link, "--junit", link.with_suffix(".xml"))
    assert r.returncode in (0, 1), r.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "bars" in json.loads(target.read_text())


def test_report_to_a_device_leaves_the_device(cli_in, shop, tmp_path):
    """A private null device (mknod needs root, as in most CI containers): a failing
    run of this test must never replace the machine's own /dev/null."""
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root; without it a report could not replace a device either")
    before = os.stat(dev)
    r = cli_in("validate", shop, "--json", dev)
    assert r.returncode in (0, 1), r.stderr
    after = os.lstat(dev)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_report_to_dev_stdout_lands_on_stdout(cli_process, shop, tmp_path):
    """A real process: /dev/stdout is its pipe, which must not be swapped for a file."""
    r = cli_process("validate", shop, "--json", "/dev/stdout")
    assert r.returncode in (0, 1), r.stderr
    report = r.stdout[r.stdout.index("{") :]
    assert json.loads(report)["testset"] == str(shop)


# ------------------------------------------------------------------ #8 an output that is an input


@pytest.mark.parametrize(
    "argv, victim, option",
    [
        (["run", "{ts}", "--out", "{ts}"], "ts", "--out"),
        (["run", "{ts}", "--out", "{corpus}"], "corpus", "--out"),
        (["run", "{ts}", "--json", "{ts}"], "ts", "--json"),
        (["export", "{ts}", "--format", "jsonl", "-o", "{ts}"], "ts", "-o"),
        (["export", "{ts}", "--format", "csv", "-o", "{other_spelling}"], "ts", "-o"),
        (["validate", "{ts}", "--json", "{corpus}"], "corpus", "--json"),
        (["sweep", "{ts}", "--k", "1-2", "--json", "{ts}"], "ts", "--json"),
        (["check", "{ts}", "--junit", "{ts}"], "ts", "--junit"),
        (["check", "{ts}", "--out", "{corpus}"], "corpus", "--out"),
        (
            ["import", "{corpus}", "--format", "jsonl", "-o", "{ts}", "--force", "--corpus", "{ts}"],
            "ts",
            "-o",
        ),
    ],
)
def test_output_that_is_an_input_is_refused(cli_in, shop, tmp_path, argv, victim, option):
    paths = {
        "ts": shop,
        "corpus": tmp_path / "shop-es.chunks.jsonl",
        "other_spelling": tmp_path / "sub" / ".." / "shop-es.yaml",
    }
    (tmp_path / "sub").mkdir()
    before = {p: p.read_bytes() for p in (paths["ts"], paths["corpus"])}
    r = cli_in(*[a.format(**paths) for a in argv])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "is also an input" in r.stderr and option in r.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert "Traceback" not in r.stderr


def test_diff_report_over_a_run_is_refused(cli_in, shop, tmp_path):
    run = _run(cli_in, shop, tmp_path)
    data = run.read_bytes()
    link = tmp_path / "run-link.jsonl"
    link.symlink_to(run)
    r = cli_in("diff", run, run, "--markdown", link)
    assert r.returncode == 2 and "is also an input" in r.stderr
    assert run.read_bytes() == data and link.is_symlink()


def test_export_trec_run_beside_the_qrels_never_replaces_the_input_run(cli_in, shop, tmp_path):
    run = tmp_path / "x.run"
    r = cli_in("run", shop, "--out", run, "--quiet")
    assert r.returncode == 0, r.stderr
    data = run.read_bytes()
    r = cli_in("export", shop, "--format", "trec", "--run", run, "-o", tmp_path / "x.qrels")
    assert r.returncode == 2 and "is also an input" in r.stderr
    assert run.read_bytes() == data and not (tmp_path / "x.qrels").exists()
