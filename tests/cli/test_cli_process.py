"""The command line as a real process: the exit codes a CI job sees and "no traceback".
The rest of tests/cli runs ``cli.main(argv)`` in-process (see conftest); these few prove
that the process around it behaves the same."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import TESTSETS


@pytest.fixture
def shop(tmp_path):
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, tmp_path / name)
    return tmp_path / "shop-es.yaml"


def test_ok_is_exit_0(cli, shop):
    r = cli("validate", shop)
    assert r.returncode == 0 and "0 errors" in r.stdout, r.stderr


def test_missed_bar_is_exit_1(cli, shop):
    r = cli("check", shop, "--min", "accuracy=1.0")
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "{tmp}/missing.yaml"],
        ["run", "{ts}", "--k", "0"],
        ["run", "{ts}", "--no-such-option"],
        ["diff", "{ts}", "{ts}"],
        ["import", "{ts}", "--format", "csv", "-o", "{ts}", "--force"],
    ],
)
def test_bad_input_is_exit_2_without_traceback(cli, shop, tmp_path, argv):
    r = cli(*[a.format(ts=shop, tmp=tmp_path) for a in argv])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip()


def test_a_bare_command_line_prints_help_and_exit_2(cli):
    r = cli()
    assert r.returncode == 2 and "usage" in r.stdout.lower()
