"""The core never imports Textual; the commands other than edit do not either."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import ragtriage.core

from ..conftest import ROOT


def _imports_textual(code: str) -> bool:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('textual' in sys.modules)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip().splitlines()[-1] == "True"


def test_no_core_module_imports_textual():
    # every module and subpackage of the core, however deep (core/testset/, core/staleness/, ...)
    names = [m.name for m in pkgutil.walk_packages(ragtriage.core.__path__, "ragtriage.core.")]
    assert "ragtriage.core.document" in names and "ragtriage.core.systems.wire" in names
    code = "import importlib\n" + "".join(f"importlib.import_module({n!r})\n" for n in names)
    assert not _imports_textual(code)


def test_the_app_helpers_without_widgets_do_not_import_textual():
    # session, rows and data are plain logic the app and its tests share
    assert not _imports_textual("import ragtriage.tui.session, ragtriage.tui.rows, ragtriage.tui.data")


def test_no_command_but_edit_and_triage_imports_textual():
    import ragtriage.commands

    names = [m.name for m in pkgutil.iter_modules(ragtriage.commands.__path__, "ragtriage.commands.")]
    others = [n for n in names if n.rsplit(".", 1)[1] not in ("edit_cmd", "triage_cmd")]
    assert "ragtriage.commands.run_cmd" in others and len(others) >= 8
    code = "import importlib\n" + "".join(f"importlib.import_module({n!r})\n" for n in others)
    assert not _imports_textual(code)


def test_cli_and_edit_command_module_import_textual_only_when_run():
    assert not _imports_textual("import ragtriage.cli, ragtriage.commands.edit_cmd")
    assert _imports_textual("import ragtriage.tui.app")  # the check above can fail
