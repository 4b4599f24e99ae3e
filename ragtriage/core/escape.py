"""Text from files, systems and servers, made safe for where it is shown or written.

A case id, a question, a system's answer, a run file's reason or a file name can hold
anything: an escape sequence that retitles the terminal or writes the clipboard, a
bidi control that reorders what is shown, markdown or HTML that adds a heading or runs
a script in a pull-request comment, a character XML cannot hold, a spreadsheet formula.
Each function here renders such text for one destination so that it is shown as the
text it is and cannot change the structure around it. Use the one for the destination,
once, where the text is put in place (not earlier: the data itself stays exact).

- :func:`visible` — a terminal (stdout, stderr, CI logs): control, format (bidi) and
  lone-surrogate characters written as ``\\x1b``, ``\\u202e``; newlines and tabs kept.
- :func:`inline` — one field inside a line of terminal text: as :func:`visible`, and a
  newline or tab is written ``\\n`` / ``\\t`` too, so a value cannot start a new line.
- :func:`md_text` — markdown prose or a table cell (GitHub, CommonMark): every ASCII
  punctuation character backslash-escaped, ``<`` ``>`` ``&`` included, so no emphasis,
  link, autolink, HTML, heading or cell boundary can come from the text.
- :func:`md_code` — a markdown code span (ids, paths), safe inside a table cell.
- :func:`xml_text` — XML 1.0 text or attribute (JUnit): what XML cannot hold written
  visibly; ``ElementTree`` does the ``<`` ``&`` ``"`` escaping.
- :func:`html_text` — HTML text or a quoted attribute value.
- :func:`csv_cell` — a spreadsheet cell: a value that a spreadsheet would run as a
  formula (CWE-1236) gets a leading ``'``; :func:`csv_uncell` reads it back exactly.
"""

from __future__ import annotations

import html
import re

_BAD_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
#: escaped wherever they are: emphasis, code, links, images, HTML, entities, cells,
#: strikethrough, e-mail autolinks and mentions (``a@b``), issue references, math
_MD_ALWAYS = frozenset("\\`*_[]<>&!|~@$#")
#: a block construct when first on a line (a note follows "> "): list, heading, setext
_BREAKS = re.compile(r"\r\n|[\r\n]")
_AUTOLINK = re.compile(r"(?i)(\b(?:https?|ftp|mailto|xmpp)|\bwww)([:.])")
_MD_BLOCK = re.compile(r"[-+=]|\d+[.)]")
_FORMULA = re.compile(r"'*[=+\-@\t\r]")


def _esc(ch: str) -> str:
    o = ord(ch)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def visible(s: str) -> str:
    """``s`` safe for a terminal: every character that is not printable (C0 and C1
    controls, ESC, DEL, bidi and other format characters, line separators, lone
    surrogates) is written as ``\\x1b`` / ``\\u202e``; newlines and tabs are kept."""
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() or ch in "\t\n" else _esc(ch) for ch in s)


def inline(s: object) -> str:
    """One value inside a line of terminal text: :func:`visible`, with newlines, carriage
    returns and tabs written ``\\n`` ``\\r`` ``\\t`` as well (it cannot forge a line)."""
    s = str(s)
    if s.isprintable():
        return s
    return "".join(
        ch if ch.isprintable() else {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch) or _esc(ch) for ch in s
    )


_MD_TABLE = str.maketrans({ch: "\\" + ch for ch in _MD_ALWAYS})  # each backslash-escaped, in C


def md_text(s: object) -> str:
    """Text for a markdown paragraph, quote or table cell: it reads as itself and adds
    nothing (no heading, list, quote, emphasis, code, link, autolink, image, HTML,
    entity, math or cell boundary). The punctuation that could start one is
    backslash-escaped (CommonMark reads ``\\x`` as ``x`` for any ASCII punctuation), and
    so is a list or heading marker at the start; line breaks become spaces, and what a
    terminal would obey is written as :func:`inline` does."""
    text = str(s)
    if "\n" in text or "\r" in text:
        text = _BREAKS.sub(" ", text)
    out = inline(text)
    if _MD_ANY.search(out):  # (a scan in C; translating every cell was a third of the report)
        out = out.translate(_MD_TABLE)
    if _may_autolink(out):
        out = _AUTOLINK.sub(lambda m: m.group(1) + "\\" + m.group(2), out)  # http://, www. as text
    lead = len(out) - len(out.lstrip(" "))
    m = _MD_BLOCK.match(out, lead)
    if m:
        out = out[: m.end() - 1] + "\\" + out[m.end() - 1 :]
    return out


_MD_ANY = re.compile("[" + re.escape("".join(sorted(_MD_ALWAYS))) + "]")
#: what _AUTOLINK's case-blind letters match beyond what ``str.lower`` makes of them:
#: dotless ı and İ (an i), long ſ (an s)
_FOLDS_ODDLY = ("\u0131", "\u0130", "\u017f")


def _may_autolink(out: str) -> bool:
    """False only where :data:`_AUTOLINK` cannot match (a ``:`` or ``.`` after one of its
    words, in any case), so the regex runs only on text that may hold a link."""
    if ":" not in out and "." not in out:
        return False
    if not out.isascii() and any(ch in out for ch in _FOLDS_ODDLY):
        return True
    low = out.lower()
    return any(w in low for w in ("http", "ftp", "mailto", "xmpp", "www"))


def md_code(s: object) -> str:
    """A markdown code span showing ``s`` exactly (after :func:`inline`): fenced with more
    backticks than any run inside it, and ``|`` escaped, which GitHub's tables need even
    inside code."""
    text = inline(s)
    longest = max((len(m) for m in re.findall("`+", text)), default=0) if "`" in text else 0
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) or not text else ""
    if "|" in text:
        text = text.replace("|", chr(92) + "|")
    return f"{fence}{pad}{text}{pad}{fence}"


def xml_text(s: object) -> str:
    """Text XML 1.0 can hold: a control character, lone surrogate or U+FFFE/U+FFFF (which
    make the whole document unreadable) is written visibly instead (``\\x1b``)."""
    text = "" if s is None else str(s)
    if text.isprintable() or ("\n" in text and text.replace("\n", " ").isprintable()):
        return text  # (every character XML cannot hold is unprintable: Cc, Cs, Cn)
    return _BAD_XML.sub(lambda m: _esc(m.group()), text)


def html_text(s: object) -> str:
    """Text for HTML (an element's content or a quoted attribute): ``& < > " '`` escaped,
    what a terminal would obey written visibly."""
    return html.escape(visible(str(s)), quote=True)


def csv_cell(value: str, raw: bool = False) -> str:
    """A CSV cell a spreadsheet shows as text: a value starting with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return (after any apostrophes) gets one more leading ``'``
    (OWASP's advice against CSV injection). ``raw``: the value as it is."""
    if raw or not value or not _FORMULA.match(value):
        return value
    return "'" + value


def csv_uncell(value: str) -> str:
    """The value :func:`csv_cell` was given (one ``'`` taken off a neutralised cell)."""
    if value.startswith("'") and _FORMULA.match(value[1:]):
        return value[1:]
    return value
