"""The escaping helpers under the name the comparison and the HTML report import them by:
the one implementation is :mod:`ragtriage.core.escape` (one renderer per destination,
documented there)."""

from __future__ import annotations

from .escape import html_text, inline, md_code, md_text, visible

__all__ = ["html_text", "inline", "md_code", "md_text", "visible"]
