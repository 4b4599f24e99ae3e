"""Text from files, systems and the keyboard, made safe to show in the app.

A case id, a question, a note, a chunk, a system's answer, a file name or what is typed
in the filter can hold anything: ``[@click=app.save]`` or a lone ``[/]`` that Textual
would run or choke on as markup, ``ESC ] 52`` that writes the clipboard, ``ESC [ 2 J``,
a C1 ``\\x9b`` or a U+202E that reorders the line. Everything the app shows from data
goes through here once, where it is put in place (the document keeps the exact text):

- :func:`shown` — a plain string with control, format (bidi) and lone-surrogate
  characters written visibly, as the CLI's ``validate`` does (``\\x1b``, ``\\u202e``);
  newlines and tabs kept;
- :func:`plain` — the same as a rich ``Text``, which Textual never parses as markup
  (what a ``Static``, a ``Label`` or an option is given);
- :func:`shown_text` — a rich ``Text`` built from data, with its styles kept and its
  control characters made visible;
- :func:`masked` — the last guard, for what is painted without passing here (what an
  input field holds, the cells of a table): each such character becomes one visible
  glyph of the same cell, so the terminal never receives it.

No Textual here (rich only): the state layer and the tests use it too.
"""

from __future__ import annotations

import re

from rich.text import Span, Text

from ..core.escape import inline, visible

#: what the terminal would obey or use to reorder text: C0 (tab and newline too, inside a
#: painted line), DEL, C1, bidi and other format characters, separators, lone surrogates
UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\ud800-\udfff]"
)


def _safe(s: str) -> bool:
    return s.isprintable() or not any(not (ch.isprintable() or ch in "\t\n") for ch in s)


def shown(value: object) -> str:
    """``value`` as text for the app: control and bidi characters written visibly."""
    return visible(str(value))


def shown_line(value: object) -> str:
    """One value inside a line (a status line, a title): newlines written ``\\n`` too."""
    return inline(value)


def plain(value: object, style: str = "") -> Text:
    """``value`` as a rich ``Text`` (never markup), its control characters visible."""
    return Text(shown(value), style=style)


def shown_text(text: Text) -> Text:
    """``text`` with its control and bidi characters written visibly, styles kept."""
    s = text.plain
    if _safe(s):
        return text
    cuts = sorted({0, len(s), *(sp.start for sp in text.spans), *(sp.end for sp in text.spans)})
    out = text.blank_copy()
    for a, b in zip(cuts, cuts[1:], strict=False):
        piece = visible(s[a:b])
        at = len(out.plain)
        out.append(piece)
        out.spans.extend(
            Span(at, at + len(piece), sp.style) for sp in text.spans if sp.start <= a and sp.end >= b
        )
    return out


def _glyph(ch: str) -> str:
    o = ord(ch)
    if o < 0x20:
        return chr(0x2400 + o)  # ␛ ␇ ␊: the control pictures
    return "␡" if o == 0x7F else "�"


def masked(s: str) -> str:
    """``s`` with every character the terminal would obey replaced by one visible glyph
    (``␛`` for ESC): the same length, for a line already laid out."""
    return UNSAFE.sub(lambda m: _glyph(m.group()), s)


__all__ = ["UNSAFE", "masked", "plain", "shown", "shown_line", "shown_text"]
