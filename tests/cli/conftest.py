"""The CLI in-process: ``cli.main(argv)`` with its output captured, for the tests that do
not need a real process (exit codes through ``main``'s return, no interpreter start-up).
A few tests keep the subprocess ``cli`` fixture to prove exit codes and "no traceback"."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, run_cli


class _Text(io.StringIO):
    """A captured stream that says it is not a terminal, like a pipe."""

    def isatty(self) -> bool:
        return False


@pytest.fixture
def cli_in(monkeypatch):
    """Run ``ragtriage ARGS`` in this process; returns a CompletedProcess (text)."""

    def run(*args, cwd=None, env=None, input=None, timeout=None):
        from ragtriage.cli import main

        monkeypatch.chdir(cwd or ROOT)
        monkeypatch.setenv("COLUMNS", os.environ.get("COLUMNS", "120"))
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setattr(sys, "stdin", io.StringIO(input or ""))
        out, err = _Text(), _Text()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:  # argparse usage errors
                code = e.code if isinstance(e.code, int) else 2
        from ragtriage.core import secrets

        secrets.forget_all()  # a process forgets its secrets when it ends; so does this run
        return subprocess.CompletedProcess(list(args), int(code), out.getvalue(), err.getvalue())

    return run


#: test modules kept on a real process: the stale command's own tests (their owner's call),
#: and the module whose point is the process (exit codes, "no traceback", signals)
SUBPROCESS_MODULES = {"test_stale.py", "test_cli_process.py"}


@pytest.fixture
def cli(request, cli_in):
    """The CLI for tests in this folder: in-process (about 40x faster than a new
    interpreter each time), except in :data:`SUBPROCESS_MODULES`; ``cli_process`` is the
    real process wherever one is needed."""
    if request.node.path.name in SUBPROCESS_MODULES or os.environ.get("RAGTRIAGE_CLI_TESTS") == "process":
        return run_cli  # RAGTRIAGE_CLI_TESTS=process: every test on a real process, to compare
    return cli_in


@pytest.fixture
def cli_process():
    return run_cli
