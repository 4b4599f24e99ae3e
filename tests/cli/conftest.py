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

from tests.conftest import ROOT


class _Text(io.StringIO):
    """A captured stream that says it is not a terminal, like a pipe."""

    def isatty(self) -> bool:
        return False


@pytest.fixture
def cli_in(monkeypatch):
    """Run ``ragtriage ARGS`` in this process; returns a CompletedProcess (text)."""

    def run(*args, cwd=None, env=None, input=None):
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
        return subprocess.CompletedProcess(list(args), int(code), out.getvalue(), err.getvalue())

    return run
