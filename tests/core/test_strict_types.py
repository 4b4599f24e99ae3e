"""ragtriage.core is type-checked under mypy's strict flags, every module of it.

The flags come from mypy itself (what ``--strict`` changes), the project's settings from
pyproject.toml as mypy reads them (``.ci/run`` runs ``mypy`` with that configuration), so
a new core module, a later override that relaxes a flag, or a flag a newer mypy adds to
``--strict`` all fail here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mypy.main import process_options
from mypy.options import PER_MODULE_OPTIONS, Options

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy depends on tomli below 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "ragtriage" / "core"


def _options(args: list[str]) -> Options:
    return process_options(args)[1]


@pytest.fixture(scope="module")
def strict_flags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each per-module option that ``--strict`` changes, with the value it sets."""
    ini = tmp_path_factory.mktemp("mypy") / "mypy.ini"
    ini.write_text("[mypy]\n")
    plain = _options(["--config-file", str(ini), "-c", "pass"])
    strict = _options(["--config-file", str(ini), "--strict", "-c", "pass"])
    names = sorted(n for n in PER_MODULE_OPTIONS if getattr(strict, n) != getattr(plain, n))
    return {n: getattr(strict, n) for n in names}


@pytest.fixture(scope="module")
def project(monkeypatch_module: pytest.MonkeyPatch) -> Options:
    """The options mypy builds from the project's pyproject.toml (run from the repo root)."""
    monkeypatch_module.chdir(ROOT)
    return _options(["--config-file", str(ROOT / "pyproject.toml")])


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def _core_modules() -> list[str]:
    out = []
    for path in sorted(CORE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


def test_strict_changes_the_flags_this_test_relies_on(strict_flags: dict[str, Any]) -> None:
    # a sanity check on the derivation: these are in every mypy's --strict
    assert {"disallow_untyped_defs", "disallow_any_generics", "warn_return_any"} <= set(strict_flags)
    assert strict_flags["disallow_untyped_defs"] is True
    assert strict_flags["implicit_reexport"] is False


def test_every_core_module_is_checked_strictly(strict_flags: dict[str, Any], project: Options) -> None:
    modules = _core_modules()
    assert "ragtriage.core" in modules and "ragtriage.core.runner" in modules
    relaxed = {}
    for mod in modules:
        opts = project.clone_for_module(mod)
        flags = sorted(name for name, want in strict_flags.items() if getattr(opts, name) != want)
        if opts.ignore_errors:
            flags.append("ignore_errors")
        if flags:
            relaxed[mod] = flags
    assert relaxed == {}


def test_a_module_added_to_core_is_strict_too(strict_flags: dict[str, Any], project: Options) -> None:
    opts = project.clone_for_module("ragtriage.core.not_written_yet.sub")
    assert {n: getattr(opts, n) for n in strict_flags} == strict_flags


def test_no_override_relaxes_a_strict_flag_for_core(strict_flags: dict[str, Any]) -> None:
    """The same read of pyproject.toml as a person's: no ``[[tool.mypy.overrides]]`` that
    names a core module (or a glob over one) turns a strict flag back, nor ``strict = false``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    # pyproject spells no_implicit_reexport for mypy's implicit_reexport
    spelled = {("no_" + n if n == "implicit_reexport" else n): True for n in strict_flags}
    bad = []
    for ov in config["tool"]["mypy"].get("overrides", []):
        mods = ov["module"] if isinstance(ov["module"], list) else [ov["module"]]
        if not any(m.startswith("ragtriage.core") or m in ("ragtriage.*", "*") for m in mods):
            continue
        for key, value in ov.items():
            if key == "strict" or key in spelled:
                if value is not True:
                    bad.append((mods, key, value))
            elif key == "ignore_errors" and value:
                bad.append((mods, key, value))
    assert bad == []
