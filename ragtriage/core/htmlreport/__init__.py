"""The self-contained HTML report (``ragtriage report``, ``check --html``): one file,
no network, opens from disk (docs/spec/cli.md, "report").

:func:`gather` collects what it shows from a judged run; :func:`render` writes the page.
"""

from __future__ import annotations

from .data import ReportData, gather
from .page import render

__all__ = ["ReportData", "gather", "render"]
