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
    names = [m.name for m in pkgutil.iter_modules(ragtriage.core.__path__, "ragtriage.core.")]
    assert "ragtriage.core.document" in names
    code = "import importlib\n" + "".join(f"importlib.import_module({n!r})\n" for n in names)
    assert not _imports_textual(code)


def test_the_app_helpers_without_widgets_do_not_import_textual():
    # session, rows and data are plain logic the app and its tests share
    assert not _imports_textual("import ragtriage.tui.session, ragtriage.tui.rows, ragtriage.tui.data")


def test_cli_and_edit_command_module_import_textual_only_when_run():
    assert not _imports_textual("import ragtriage.cli, ragtriage.commands.edit_cmd")
    assert _imports_textual("import ragtriage.tui.app")  # the check above can fail
