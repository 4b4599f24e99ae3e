"""Shared fixtures: a private cache dir, the repo root, and the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTSETS = ROOT / "testsets"
GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never read or write the user's cache or settings (the grader's name: "tester" unless a
    test unsets it); fixed locale; no colour."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("RAGTRIAGE_CACHE_DIR", str(cache))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    monkeypatch.delenv("RAGTRIAGE_CONFIG", raising=False)
    monkeypatch.setenv("RAGTRIAGE_GRADER", "tester")
    monkeypatch.setenv("RAGTRIAGE_CACHE_KEY", str(tmp_path_factory.mktemp("key") / "cache.key"))
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("NO_COLOR", "1")
    yield


def run_cli(*args, cwd=None, env=None, input=None, timeout=120):
    """Run ``python -m ragtriage ARGS`` in a subprocess; returns CompletedProcess (text)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("COLUMNS", "120")
    if env:
        e.update(env)
    return subprocess.run(
        [sys.executable, "-m", "ragtriage", *map(str, args)],
        cwd=cwd or ROOT,
        env=e,
        input=input,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return run_cli
