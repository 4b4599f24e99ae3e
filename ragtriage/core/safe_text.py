"""Text from files and systems, made safe where the comparison and the HTML report
show it. (The same names as the escaping helpers another branch adds, so that one can
replace this module: ``visible``, ``inline``, ``md_text``, ``md_code``, ``html_text``.)

A question, an answer, a case id or a tag can hold anything: an escape sequence, a
bidi control that reorders what is shown, markdown or HTML. Each function renders it
for one destination so it reads as the text it is and cannot change the structure
around it.
"""

from __future__ import annotations

import html
import re
import string

_MD_PUNCT = frozenset(string.punctuation)


def _esc(ch: str) -> str:
    o = ord(ch)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def visible(s: object) -> str:
    """Every character that is not printable (C0/C1 controls, ESC, DEL, bidi and other
    format characters, line separators, lone surrogates) written as ``\\x1b`` /
    ``\\u202e``; newlines and tabs kept."""
    s = str(s)
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() or ch in "\t\n" else _esc(ch) for ch in s)


def inline(s: object) -> str:
    """:func:`visible`, with newlines, carriage returns and tabs written ``\\n`` ``\\r``
    ``\\t`` too: one value inside a line cannot start another."""
    s = str(s)
    if s.isprintable():
        return s
    return "".join(
        ch if ch.isprintable() else {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch) or _esc(ch) for ch in s
    )


def md_text(s: object) -> str:
    """Markdown prose or a table cell: every ASCII punctuation character backslash-escaped
    (no heading, emphasis, link, HTML or cell boundary can come from the text)."""
    return "".join("\\" + ch if ch in _MD_PUNCT else ch for ch in inline(" ".join(str(s).splitlines())))


def md_code(s: object) -> str:
    """A markdown code span showing ``s`` exactly, fenced with more backticks than any run
    inside it, ``|`` escaped (GitHub's tables need it even in code)."""
    text = inline(s)
    longest = max((len(m) for m in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) or not text else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def html_text(s: object) -> str:
    """HTML element text or a quoted attribute value: ``& < > " '`` escaped, what a
    terminal would obey written visibly."""
    return html.escape(visible(s), quote=True)
