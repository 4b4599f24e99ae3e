"""Reading YAML with exact positions, and writing small pieces of it.

The test-set document never re-dumps a whole file: it splices freshly rendered
pieces (one value, one case, one label) into the text a person wrote, so every
other byte stays as it was. This module holds the two halves of that:

* reading: libyaml's composer (via PyYAML) gives every node with exact
  character offsets; values are read with YAML 1.2 core rules (``yes`` is a
  string, ``0123`` is 123), and only plain data is ever built (no tags that
  construct objects, no anchors or aliases);
* writing: scalars and lists rendered in the style the file already uses
  (plain, quoted, block, flow or block list) through one kept ruamel.yaml
  emitter: its analysis decides which styles can carry a text and its writers
  quote and escape. On top of it, text another reader could take for something
  else (``yes``, ``0x1f``, a date) or that starts with an indicator is quoted,
  and YAML 1.1 rules make a ``?`` in a flow item quoted, which PyYAML's pure
  reader needs. tests/core/test_writer_fuzz.py proves every rendered piece reads
  back identically under pure-Python PyYAML, libyaml and ruamel.

Speed: the emitter walks a text one character at a time in Python (about 0.4 µs
a character: 225 µs for a 560-character label on this machine, against 5 µs for
the hand-written quoting it replaced). So the common cases skip the walk with
exact shortcuts the fuzz test checks against the emitter — prose that is plain
in every reader, text with ``: `` or `` #`` (never plain), text the
double-quoted writer copies unchanged — and cost 1-4 µs a piece; only text
with quotes, backslashes, controls or line breaks pays the walk.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import yaml
from ruamel.yaml.emitter import Emitter

try:  # libyaml: ~20x faster composing; offsets are the same
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - wheels ship libyaml
    from yaml import SafeLoader as _Loader

if TYPE_CHECKING:  # PyYAML ships no types: to mypy its loader is a plain class

    class _LoaderBase:
        def __init__(self, stream: str) -> None: ...

else:
    _LoaderBase = _Loader

ScalarNode = yaml.ScalarNode
SequenceNode = yaml.SequenceNode
MappingNode = yaml.MappingNode
YAMLError = yaml.YAMLError
MarkedYAMLError = yaml.MarkedYAMLError

_STD = "tag:yaml.org,2002:"
ALLOWED_TAGS = {
    _STD + t for t in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp", "merge", "value")
}

# YAML 1.2 core schema
_NULL = {"", "~", "null", "Null", "NULL"}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
_INT = re.compile(r"^[-+]?[0-9]+$")
_INT_OCT = re.compile(r"^0o[0-7]+$")
_INT_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(inf|Inf|INF)$")
_NAN = re.compile(r"^\.(nan|NaN|NAN)$")

# Anything another YAML reader (1.1 or 1.2) might read as something other than
# the string we mean must be quoted when written.
_AMBIGUOUS = re.compile(
    r"""^(?:
        ~|null|Null|NULL|
        y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|
        [-+]?(?:0b[0-1_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])*|[0-9][0-9_]*)|
        [-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+|
        [-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|
        [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*|
        <<|=
    )$""",
    re.X,
)
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")
_FLOW_BAD = set(",[]{}")


class _FastLoader(_LoaderBase):
    """Composes without resolving implicit tags: ragtriage reads scalars itself
    (YAML 1.2 rules, :func:`scalar_value`), so the 1.1 resolver's regexes on every
    scalar would be wasted work. Explicit tags are kept as written."""

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            return _STR
        return _SEQ if kind is SequenceNode else _MAP


_STR, _SEQ, _MAP = _STD + "str", _STD + "seq", _STD + "map"
_TAG_HINT = re.compile(r"(?:^|[\s\[{,])!")


def compose(text: str) -> Any:
    """Compose one YAML document into nodes (raises yaml.YAMLError); PyYAML's nodes are untyped."""
    return yaml.compose(text, Loader=_FastLoader)


_ANCHOR_HINT = re.compile(r"(?<![^\s\[{,])[&*]")  # & or * at the start or after a space, [, { or ,


def first_anchor(text: str) -> tuple[int, str] | None:
    """(0-based line, ``&name`` or ``*name``) of the first anchor or alias in ``text``, or None.

    A test set is plain data: an alias makes two places one value, which an edit of
    one of them cannot keep (and a file that says ``*name`` without its ``&name``
    does not parse). Scans tokens only when the text could hold one."""
    if ("&" not in text and "*" not in text) or _ANCHOR_HINT.search(text) is None:
        return None  # the `in` tests run at memory speed; most files have neither character
    for tok in yaml.scan(text, Loader=_Loader):
        if isinstance(tok, yaml.AnchorToken):
            return tok.start_mark.line, "&" + tok.value
        if isinstance(tok, yaml.AliasToken):
            return tok.start_mark.line, "*" + tok.value
    return None


def may_have_tags(text: str) -> bool:
    """False when the text cannot hold an explicit tag (a cheap test before walking every node)."""
    return _TAG_HINT.search(text) is not None


def is_plain(node: Scalar) -> bool:
    return node.style in (None, "")


class Scalar(Protocol):
    """What is read of a PyYAML scalar node (PyYAML ships no types)."""

    @property
    def value(self) -> str: ...
    @property
    def style(self) -> str | None: ...


# a scalar's value under YAML 1.2 core rules
ScalarValue: TypeAlias = str | int | float | bool | None


MAX_DIGITS = 4300  # Python's limit for converting decimal text to int


class NumberTooLong(ValueError):
    """A decimal integer longer than :data:`MAX_DIGITS` digits."""


def scalar_value(node: Scalar) -> ScalarValue:
    """The value of a scalar node under YAML 1.2 core rules."""
    v = node.value
    if not is_plain(node):
        return v
    if v in _NULL:
        return None
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    if _INT.match(v):
        digits = len(v.lstrip("+-"))
        if digits > MAX_DIGITS:  # int() refuses these (CVE-2020-10735): a located problem instead
            raise NumberTooLong(f"a number with {digits:,} digits (at most {MAX_DIGITS:,})")
        return int(v)
    if _INT_OCT.match(v):
        return int(v[2:], 8)
    if _INT_HEX.match(v):
        return int(v[2:], 16)
    if _FLOAT.match(v) and any(ch.isdigit() for ch in v):
        return float(v)
    if _INF.match(v):
        return float("-inf") if v.startswith("-") else float("inf")
    if _NAN.match(v):
        return float("nan")
    return v


def plain_text(node: Scalar) -> str | None:
    """A scalar read as text: plain scalars keep their literal spelling (``id: 123``
    is the string ``"123"``); null spellings give None."""
    if is_plain(node) and node.value in _NULL:
        return None
    return node.value


def bad_tag(node: Any) -> str | None:
    """The explicit tag of a node if it is not plain data, else None (walks the tree)."""
    stack: list[Any] = [node]
    seen = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        tag: str = n.tag
        if tag not in ALLOWED_TAGS:
            return tag.replace(_STD, "!!")
        if isinstance(n, SequenceNode):
            stack.extend(n.value)
        elif isinstance(n, MappingNode):
            for k, v in n.value:
                stack.append(k)
                stack.append(v)
    return None


# ---------------------------------------------------------------- rendering


_SURROGATE = re.compile("[\ud800-\udfff]")


class _Emitter(Emitter):
    """ruamel's emitter, kept for the life of the process and driven one scalar at a
    time: its analysis says which styles can carry a text, its writers do the quoting
    and escaping. YAML 1.1 rules, the stricter: a ``?`` inside a flow item is then an
    indicator, as PyYAML's pure reader treats it."""

    use_version = (1, 1)

    def __init__(self) -> None:
        self._buf = io.StringIO()
        super().__init__(self._buf, allow_unicode=True, width=1 << 30)

    def scalar(self, s: str, style: str) -> str:
        buf = self._buf
        buf.seek(0)
        buf.truncate()
        self.column, self.whitespace, self.indention, self.root_context = 0, True, True, False
        if style == '"':
            self.write_double_quoted(s, split=False)
        elif style == "'":
            self.write_single_quoted(s, split=False)
        else:
            self.write_plain(s, split=False)
        return buf.getvalue()


_EMITTER = _Emitter()
# Text that is plain in every reader without asking the emitter (most ids, tags and
# prose); tests/core/test_writer_fuzz.py checks the emitter agrees on every such text.
_FAST_BLOCK = re.compile(r"[^\W_](?:[\w .,;()/¿¡?!'-]*[\w.,;()/¿¡?!'-])?\Z")
_FAST_FLOW = re.compile(r"[^\W_](?:[\w .;()/¿¡!'-]*[\w.;()/¿¡!'-])?\Z")


def plain_ok(s: str, flow: bool = False) -> bool:
    """True if ``s`` can be written unquoted and every YAML reader reads it back as this string."""
    if not s or _AMBIGUOUS.match(s):
        return False
    if (_FAST_FLOW if flow else _FAST_BLOCK).match(s):
        return True
    if s[0] in _INDICATORS or s != s.strip() or "\t" in s:
        return False  # a leading indicator stays quoted, as files written before always had it
    if ": " in s or " #" in s or s.endswith(":") or (flow and ":" in s):
        return False  # indicators the emitter refuses as well, found without its loop
    a = _EMITTER.analyze_scalar(s)
    return bool(a.allow_flow_plain if flow else a.allow_block_plain)


# Text the emitter's double-quoted writer copies unchanged (no quote, backslash, line
# break, control, BOM or non-character): written without the per-character loop.
_DQ_RAW = re.compile(
    "[ !#-\\[\\]-~\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*\\Z"
)


def double_quoted(s: str) -> str:
    if _DQ_RAW.match(s):
        return '"' + s + '"'
    return _EMITTER.scalar(s, '"')


def lone_surrogate(value: object) -> str | None:
    """``U+D800``-style name of the first lone surrogate in ``value`` (text or a list of
    text), or None. A UTF-8 file cannot hold one, so such a value cannot be written."""
    for s in (value,) if isinstance(value, str) else value if isinstance(value, (list, tuple)) else ():
        if isinstance(s, str):
            m = _SURROGATE.search(s)
            if m:
                return f"U+{ord(m.group(0)):04X}"
    return None


def single_quoted(s: str) -> str | None:
    a = _EMITTER.analyze_scalar(s)
    if a.multiline or not a.allow_single_quoted:  # a line break would fold when read back
        return None
    return _EMITTER.scalar(s, "'")


def render_scalar(value: object, style: str | None = None, *, flow: bool = False) -> str:
    """One-line rendering of a scalar, keeping ``style`` ('' plain, "'" or '"') when it can."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return repr(value)
    s = str(value)
    if style == "'":
        q = single_quoted(s)
        if q is not None:
            return q
    if style == '"':
        return double_quoted(s)
    # a one-line plain scalar is written as it is (the emitter's plain writer copies it)
    return s if plain_ok(s, flow) else double_quoted(s)


def render_block_scalar(s: str, indent: int, style: str = "|") -> str | None:
    """``|``/``>`` block text for ``s`` with content at ``indent`` spaces (header
    included, no trailing newline after the last content line); None if the value
    cannot be written faithfully as a block (leading spaces, odd characters)."""
    if not s or s[0] in " \n" or "\r" in s or "\t" in s.lstrip("\n"):
        return None
    if any(not (ch.isprintable() or ch == "\n") for ch in s):
        return None
    if not _EMITTER.analyze_scalar(s).allow_block:
        return None
    body = s.rstrip("\n")
    trailing = len(s) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    if style == ">" and "\n" in body:
        style = "|"  # folded text with line breaks: write it literally, read back the same
    pad = " " * indent
    lines = [(pad + ln) if ln else "" for ln in body.split("\n")]
    if style == ">" and "  " in body:
        return None
    out = style + chomp + "\n" + "\n".join(lines)
    if chomp == "+":
        out += "\n" * (trailing - 1)
    return out


def render_flow_list(
    values: Sequence[object], old_items: Sequence[tuple[object, str]] | None = None, spaced: bool = False
) -> str:
    """``[a, b]``; items whose value is unchanged keep their original spelling."""
    pool: dict[object, list[str]] = {}
    for v, src in old_items or ():
        pool.setdefault(v, []).append(src)
    parts = []
    for v in values:
        srcs = pool.get(v)
        parts.append(srcs.pop(0) if srcs else render_scalar(v, flow=True))
    if not parts:
        return "[]"
    inner = ", ".join(parts)
    return f"[ {inner} ]" if spaced else f"[{inner}]"
