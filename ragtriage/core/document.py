"""The test-set document: the one place through which every read and write of a
test set goes (the CLI, ``stale --fix``, imports and the app).

How it keeps a person's file intact
-----------------------------------
The file is held as a list of *regions*: plain text, and two *collections*
(the ``cases`` list and the ``labels`` map) cut into one piece of text per
entry. An entry's text is its own lines: the comment lines directly above it
(no blank line between), its body, and comment lines inside it. The text between
two entries (blank lines, detached comments) is a *gap* that stays in place.

An edit re-renders only what changed — one value, one key line, one entry —
in the style the file already uses, re-reads that entry to prove it says what
was meant, and leaves every other byte alone. Saving joins the pieces, skips
the write when nothing changed, refuses to overwrite a file changed on disk,
and replaces the file atomically.

Why not ruamel's round-trip tree: it takes ~6 s to load and ~4 s to dump 10k
cases on this machine (PERFORMANCE-NOTES.md) and rewrites hand-formatted
files; libyaml's composer with exact offsets plus splicing opens 10k cases in a
fraction of that and saves in milliseconds. Reopening an unchanged file reads a
cache of the parsed pieces keyed by the file's content hash.
"""

from __future__ import annotations

import atexit
import difflib
import gc
import hashlib
import marshal
import os
import re
import weakref
from contextlib import contextmanager
from itertools import chain
from pathlib import Path

from pydantic import ValidationError

from . import yamltext as yt
from .clock import utc_now
from .errors import ConflictError, Problem, TestSetError
from .files import atomic_write
from .schema import CASE_FIELDS, LABEL_FIELDS, TOP_KEYS, Case, Label, Settings

MAX_BYTES = int(float(os.environ.get("RAGTRIAGE_MAX_TESTSET_MB", "40")) * 1024 * 1024)
CACHE_FORMAT = 3
LIST_FIELDS = {"expected", "must_contain", "tags"}
TEXT_FIELDS = {"id", "question", "topic", "answer", "notes", "expect"}
BOOL_FIELDS = {"unanswerable"}
UNDO_LIMIT = 200
BIG = 20_000  # cases; above this the reopen cache is written later (flush_cache / at exit)
_PENDING: weakref.WeakSet[TestSetDocument] = weakref.WeakSet()


@atexit.register
def _flush_pending_caches() -> None:
    for doc in list(_PENDING):
        try:
            doc.flush_cache()
        except Exception:  # a cache is a convenience; never fail an exit over it
            pass


_MESSAGES = {
    "missing": "is required",
    "string_type": "must be text",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "tuple_type": "must be a list, e.g. [a, b]",
    "list_type": "must be a list, e.g. [a, b]",
    "dict_type": "must be a mapping of key: value",
    "extra_forbidden": "unknown key",
}


def _msg(err: dict) -> str:
    t = err["type"]
    if t == "literal_error":
        return "must be one of: " + err["ctx"]["expected"].replace("'", "")
    if t == "value_error":
        return str(err["ctx"]["error"])
    if t == "literal_error" or t not in _MESSAGES:
        return err["msg"]
    return _MESSAGES[t]


def cache_dir() -> Path:
    d = os.environ.get("RAGTRIAGE_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ragtriage"


def _suggest(key: str, known) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" (known keys: {', '.join(known)})"


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_end(text: str, pos: int) -> int:
    """Index just past the newline of the line holding ``pos`` (or len(text))."""
    i = text.find("\n", pos)
    return len(text) if i < 0 else i + 1


def _content_end(text: str, node) -> int:
    """End of a value's last content line (before its newline), trailing blank lines excluded."""
    end = node.end_mark.index
    if isinstance(node, yt.SequenceNode) and node.flow_style is False and node.value:
        return _content_end(text, node.value[-1])
    if isinstance(node, yt.MappingNode) and node.flow_style is False and node.value:
        return _content_end(text, node.value[-1][1])
    if isinstance(node, yt.ScalarNode) and node.style in ("|", ">"):
        # block scalar: its span runs to the start of the next content line; step back over blank lines
        j = end
        while j > node.start_mark.index:
            ls = _line_start(text, j - 1)
            if text[ls:j].strip():
                break
            j = ls
        return j - 1 if j > 0 and text[j - 1] == "\n" else j
    e = text.find("\n", end)
    return len(text) if e < 0 else e


def _is_comment_line(line: str) -> bool:
    return line.lstrip(" ").startswith("#")


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _trusted_maker(model):
    """``make(data)``: the same model as ``model.model_construct(**data)`` for data
    that passed validation (the reopen cache), about 6x faster at 100k cases: the
    field defaults are resolved once, not per case. Falls back to
    ``model_construct`` for anything it does not cover (aliases, extras, a missing
    required field, a default that is not immutable)."""
    construct = model.model_construct
    fields = model.__pydantic_fields__
    plain = (
        not model.__pydantic_post_init__
        and model.model_config.get("extra") != "allow"
        and all(f.alias is None and f.validation_alias is None for f in fields.values())
    )
    template: dict = {}
    required = set()
    for name, f in fields.items():
        if f.is_required():
            required.add(name)
            template[name] = None  # always replaced: the data must hold it
        else:
            v = f.get_default(call_default_factory=True, validated_data={})
            if not (v is None or type(v) in (str, bool, int, float) or (type(v) is tuple and not v)):
                plain = False  # a mutable default: model_construct copies it per instance
            template[name] = v
    if not plain:
        return lambda d: construct(**d)
    names = frozenset(fields)
    new = model.__new__
    setattr_ = object.__setattr__
    # One fields-set per combination of keys, shared by the models that have it (~700
    # bytes a case otherwise). Frozen models never change it; pydantic's copies copy it.
    shared: dict[tuple, set] = {}

    def make(d: dict):
        keys = d.keys()
        if not (keys >= required and keys <= names):
            return construct(**d)
        m = new(model)
        values = template.copy()  # keys in field order, as model_construct makes them
        values.update(d)
        setattr_(m, "__dict__", values)
        key = tuple(keys)
        fields_set = shared.get(key)
        if fields_set is None:
            fields_set = shared[key] = set(keys)
        setattr_(m, "__pydantic_fields_set__", fields_set)
        setattr_(m, "__pydantic_extra__", None)
        setattr_(m, "__pydantic_private__", None)
        return m

    return make


class _Item:
    """One entry (a case or a label): its own text and the data it says."""

    __slots__ = ("text", "key", "data", "model", "line")

    def __init__(self, text: str, key: str, data: dict, model=None, line: int = 0):
        self.text = text
        self.key = key
        self.data = data
        self.model = model
        self.line = line  # line in the file as loaded (for messages before any edit)


class _Coll:
    """A block collection region: ``cases`` (a list) or ``labels`` (a mapping)."""

    __slots__ = ("name", "items", "gaps", "col", "key_col", "missing", "span", "open_end")

    def __init__(self, name: str):
        self.name = name
        self.items: list[_Item] = []
        self.gaps: list[str] = []  # gaps[i] precedes items[i]; gaps[0] == ""
        self.col = 2  # column of the dash (cases) or of the key (labels)
        self.key_col = 4  # column of the keys inside an entry
        self.missing = False  # the key is not in the file at all
        self.span = None  # (start, end) in the text while loading
        self.open_end = True  # an entry may lack its final newline (checked once, when needed)

    def text(self) -> str:
        # gap, entry, gap, entry ... joined at once: no 100k temporary gap+entry strings
        return "".join(chain.from_iterable(zip(self.gaps, [it.text for it in self.items])))


def _find_dash(text: str, node_start: int) -> int:
    j = node_start - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j


class TestSetDocument:
    """A test set loaded for reading and editing; see the module docstring."""

    __test__ = False
    _edits = 0  # a process-wide counter: each edit gets a new version number

    # ------------------------------------------------------------ loading

    def __init__(self, path: Path, text: str, *, bom: bool = False, crlf: bool = False):
        self.path = Path(path)
        self._bom = bom
        self._crlf = crlf
        self._orig_text = text
        self._regions: list = [text]
        self._cases = _Coll("cases")
        self._labels = _Coll("labels")
        self._index: dict[str, int] = {}
        self._raw_settings: dict = {}
        self.settings = Settings()
        self._cases_tuple = None
        self._labels_dict = None
        self._undo: list = []
        self._redo: list = []
        self._stat = None
        self._loaded_hash = None
        self._list_style = "flow"
        self._expected_changed = False
        self._version = 0
        self._saved_version = 0
        self._cache_pending = None
        self._in_batch = False
        self._dirty_memo = (-1, True)

    @classmethod
    def load(cls, path, *, use_cache: bool = True) -> TestSetDocument:
        path = Path(path)
        name = str(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise TestSetError(Problem(name, None, "file not found")) from None
        except OSError as e:
            raise TestSetError(Problem(name, None, f"cannot read ({e.strerror})")) from None
        if not path.is_file():
            raise TestSetError(Problem(name, None, "is not a file"))
        if st.st_size > MAX_BYTES:
            raise TestSetError(
                Problem(
                    name,
                    None,
                    f"file is {st.st_size / 1e6:.0f} MB; test sets are limited to {MAX_BYTES // (1024 * 1024)} MiB "
                    "(about 200,000 cases; raise RAGTRIAGE_MAX_TESTSET_MB if you really mean it)",
                )
            )
        raw = path.read_bytes()
        digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
        doc = None
        if use_cache:
            doc = cls._from_cache(path, digest)
        if doc is None:
            text, bom, crlf = cls._decode(name, raw)
            doc = cls(path, text, bom=bom, crlf=crlf)
            doc._parse(text)
            if use_cache:
                if len(doc._cases.items) < BIG:
                    doc._write_cache(digest)
                else:  # ~2 s at 100k cases: not on the way to the first screen
                    doc._cache_pending = digest
                    _PENDING.add(doc)
        doc._stat = (st.st_mtime_ns, st.st_size)
        doc._loaded_hash = digest
        return doc

    @classmethod
    def from_text(cls, text: str, path="<text>") -> TestSetDocument:
        doc = cls(Path(path), text)
        doc._parse(text)
        return doc

    @classmethod
    def create(
        cls, path, *, corpus=None, language: str = "en", k: int = 3, comment: str | None = None, decline=None
    ) -> TestSetDocument:
        """A new, empty test set (not yet written; call :meth:`save`)."""
        lines = []
        for ln in (comment or "").splitlines():
            lines.append(("# " + ln).rstrip())
        lines.append("version: 1")
        if corpus:
            lines.append(f"corpus: {yt.render_scalar(str(corpus))}   # chunks file, relative to this file")
        lines.append(f"language: {yt.render_scalar(language)}")
        if decline:
            lines.append("decline: " + yt.render_flow_list(list(decline)))
        lines.append(f"k: {int(k)}")
        lines.append("cases: []")
        doc = cls.from_text("\n".join(lines) + "\n", path)
        doc._orig_text = None  # nothing on disk yet: the first save writes
        return doc

    @staticmethod
    def _decode(name: str, raw: bytes) -> tuple[str, bool, bool]:
        if b"\x00" in raw:
            line = raw[: raw.index(b"\x00")].count(b"\n") + 1
            raise TestSetError(Problem(name, line, "not a text file (NUL byte); a test set is YAML text"))
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw[: e.start].count(b"\n") + 1
            raise TestSetError(Problem(name, line, "not valid UTF-8 text (save the file as UTF-8)")) from None
        bom = text.startswith("\ufeff")
        if bom:
            text = text[1:]
        n_lf = text.count("\n")
        crlf = n_lf > 0 and text.count("\r\n") == n_lf
        if crlf:
            text = text.replace("\r\n", "\n")
        return text, bom, crlf

    def _parse(self, text: str) -> None:
        name = str(self.path)
        if not any(ln.strip() and not _is_comment_line(ln) for ln in text.split("\n")):
            raise TestSetError(Problem(name, 1, "empty test set: expected `version: 1` and a `cases:` list"))
        was = gc.isenabled()
        gc.disable()
        try:
            try:
                root = yt.compose(text)
            except yt.MarkedYAMLError as e:
                raise TestSetError(self._yaml_problem(e, text)) from None
            except yt.YAMLError as e:
                raise TestSetError(Problem(name, None, f"not valid YAML: {e}")) from None
            self._build(text, root)
        finally:
            if was:
                gc.enable()

    def _yaml_problem(self, e, text: str) -> Problem:
        mark = e.problem_mark or e.context_mark
        if (
            e.context_mark is not None
            and e.problem_mark is not None
            and e.problem_mark.index >= len(text.rstrip())
        ):
            mark = e.context_mark  # ran off the end: point at what was left open
        line = mark.line + 1 if mark else None
        msg = (e.problem or "not valid YAML").strip()
        if mark is not None and 0 <= mark.index < len(text):
            ls = _line_start(text, mark.index)
            lead = text[ls : text.find("\n", ls) if text.find("\n", ls) >= 0 else len(text)]
            if "\t" in lead[: len(lead) - len(lead.lstrip(" \t"))] or text[mark.index] == "\t":
                msg = "tab in indentation (YAML allows only spaces; replace the tab with spaces)"
        if "expected a single document" in msg or "but found another document" in msg:
            msg = "more than one YAML document (remove the extra `---`)"
        if e.context and "tab" not in msg:
            msg = f"{msg} ({e.context.strip()})"
        if mark is not None:
            msg = f"column {mark.column + 1}: {msg}"
        return Problem(str(self.path), line, "not valid YAML: " + msg)

    # -- building the model from nodes

    def _build(self, text: str, root) -> None:
        name = str(self.path)
        problems: list[Problem] = []
        if root is None:
            raise TestSetError(Problem(name, 1, "empty test set: expected `version: 1` and a `cases:` list"))
        tag = yt.bad_tag(root) if yt.may_have_tags(text) else None
        if tag:
            # find where: walk for the first bad node
            raise TestSetError(self._tag_problem(root, tag))
        if not isinstance(root, yt.MappingNode):
            raise TestSetError(
                Problem(
                    name,
                    root.start_mark.line + 1,
                    "a test set is a mapping with `version`, `cases`, … (found a "
                    f"{'list' if isinstance(root, yt.SequenceNode) else 'single value'})",
                )
            )
        seen: dict[str, int] = {}
        nodes: dict[str, tuple] = {}
        for k, v in root.value:
            key = k.value if isinstance(k, yt.ScalarNode) else None
            line = k.start_mark.line + 1
            if key is None:
                problems.append(Problem(name, line, "keys must be plain names"))
                continue
            if key in seen:
                problems.append(Problem(name, line, f"duplicate key (first at line {seen[key]})", field=key))
                continue
            seen[key] = line
            if key not in TOP_KEYS:
                problems.append(Problem(name, line, "unknown key" + _suggest(key, TOP_KEYS), field=key))
                continue
            nodes[key] = (k, v)

        # settings
        raw = {}
        for key in (
            "version",
            "corpus",
            "language",
            "decline",
            "k",
            "gates",
            "judge",
            "judge_kappa",
            "judge_min_grades",
        ):
            if key in nodes:
                kn, vn = nodes[key]
                val, err = self._plain_data(vn, key)
                if err:
                    problems.append(Problem(name, vn.start_mark.line + 1, err, field=key))
                    continue
                if val is not None:
                    raw[key] = val
        if "version" not in nodes:
            pass  # version defaults to 1; validate says nothing: old hand-written sets work
        try:
            self.settings = Settings.model_validate(raw)
        except ValidationError as e:
            for err in e.errors():
                key = str(err["loc"][0]) if err["loc"] else None
                line = nodes[key][1].start_mark.line + 1 if key in nodes else None
                if key == "gates" and len(err["loc"]) > 1:
                    field = f"gates.{err['loc'][1]}"
                else:
                    field = key
                problems.append(Problem(name, line, _msg(err), field=field))
        self._raw_settings = raw

        # regions
        spans = []  # (start, end, coll)
        if "cases" in nodes:
            self._read_cases(text, *nodes["cases"], problems)
        else:
            problems.append(
                Problem(name, None, "no `cases:` list (add `cases:` with at least one case)", field="cases")
            )
        if "labels" in nodes:
            self._read_labels(text, *nodes["labels"], problems)
        if problems:
            raise TestSetError(problems)
        # cut the text into regions
        for coll in (self._cases, self._labels):
            if coll.items:
                spans.append((coll.span[0], coll.span[1], coll))
        spans.sort(key=lambda s: s[0])
        regions: list = []
        pos = 0
        for start, end, coll in spans:
            regions.append(text[pos:start])
            regions.append(coll)
            pos = end
        regions.append(text[pos:])
        self._regions = regions
        for coll in (self._cases, self._labels):
            coll.span = None
            if not coll.items:
                self._anchor_empty(coll, nodes.get(coll.name))
        self._reindex()

    def _tag_problem(self, root, tag) -> Problem:
        stack = [root]
        while stack:
            n = stack.pop()
            if n.tag.replace("tag:yaml.org,2002:", "!!") == tag:
                return Problem(
                    str(self.path),
                    n.start_mark.line + 1,
                    f"tag {tag} is not allowed (a test set holds plain data only)",
                )
            if isinstance(n, yt.SequenceNode):
                stack.extend(n.value)
            elif isinstance(n, yt.MappingNode):
                for k, v in n.value:
                    stack.extend((k, v))
        return Problem(str(self.path), None, f"tag {tag} is not allowed")

    def _plain_data(self, node, field: str):
        """Plain Python data of a settings value (lists, mappings, scalars)."""
        if isinstance(node, yt.ScalarNode):
            if field in ("corpus", "language"):
                return yt.plain_text(node), None
            return yt.scalar_value(node), None
        if isinstance(node, yt.SequenceNode):
            out = []
            for it in node.value:
                if not isinstance(it, yt.ScalarNode):
                    return None, "must be a list of text"
                out.append(yt.plain_text(it) if field == "decline" else yt.scalar_value(it))
            return out, None
        out = {}
        for k, v in node.value:
            if not isinstance(v, yt.ScalarNode):
                return None, f"{k.value}: must be a single value"
            out[k.value] = yt.scalar_value(v)
        return out, None

    def _entries(self, text: str, coll: _Coll, entries: list[tuple], first_col: int, floor0: int) -> None:
        """Cut the collection's entries into item texts and gaps.
        ``entries``: list of (start_index, content_end_index, key, data, line)."""
        col = first_col
        n = len(entries)
        bodies = []
        for i, (start, cend, _key, _data, _line) in enumerate(entries):
            bstart = _line_start(text, start)
            bend = _line_end(text, cend)
            limit = _line_start(text, entries[i + 1][0]) if i + 1 < n else len(text)
            # comment lines inside the entry (indented deeper than the entry), up to a blank line
            p = bend
            while p < limit:
                e = _line_end(text, p)
                ln = text[p:e].rstrip("\n")
                if ln.strip() and _is_comment_line(ln) and _indent_of(ln) > col:
                    p = e
                    bend = e
                    continue
                break
            bodies.append([bstart, bend])
        # attached comment lines above each entry (no blank line between), not inside the previous body
        for i in range(n):
            bstart = bodies[i][0]
            floor = bodies[i - 1][1] if i else floor0  # never climb above the collection's key line
            p = bstart
            while p > floor:
                ps = _line_start(text, p - 1)
                ln = text[ps:p].rstrip("\n")
                if ln.strip() and _is_comment_line(ln):
                    p = ps
                    continue
                break
            bodies[i][0] = p
        coll.items = []
        coll.gaps = []
        prev_end = bodies[0][0]
        for (s, e), (_start, _cend, key, data, line) in zip(bodies, entries):
            coll.gaps.append(text[prev_end:s])
            coll.items.append(_Item(text[s:e], key, data, line=line))
            prev_end = e
        coll.gaps[0] = ""
        coll.span = (bodies[0][0], bodies[-1][1])

    def _read_cases(self, text: str, kn, vn, problems: list[Problem]) -> None:
        name = str(self.path)
        coll = self._cases
        if isinstance(vn, yt.ScalarNode) and yt.plain_text(vn) is None:
            return
        if not isinstance(vn, yt.SequenceNode):
            problems.append(
                Problem(
                    name,
                    vn.start_mark.line + 1,
                    "must be a list of cases (each starting with `- id:`)",
                    field="cases",
                )
            )
            return
        if not vn.value:
            return
        if vn.flow_style:
            problems.append(
                Problem(
                    name,
                    vn.start_mark.line + 1,
                    "write cases as a block list (one `- id: …` entry per case), not [ … ]",
                    field="cases",
                )
            )
            return
        entries = []
        first_lines: dict[str, int] = {}
        raws = []
        styles = {True: 0, False: 0}  # flow lists vs block lists in the file
        for item in vn.value:
            line = item.start_mark.line + 1
            if not isinstance(item, yt.MappingNode):
                problems.append(
                    Problem(name, line, "each case must be a mapping with at least `id` and `question`")
                )
                continue
            data, fields, probs = self._read_case_node(item, name)
            cid = data.get("id")
            problems.extend(probs)
            if isinstance(cid, str):
                if cid in first_lines:
                    problems.append(
                        Problem(
                            name,
                            line,
                            f"duplicate id (first at line {first_lines[cid]})",
                            case=cid,
                            field="id",
                        )
                    )
                else:
                    first_lines[cid] = line
            dash = _find_dash(text, item.start_mark.index)
            entries.append(
                (
                    dash,
                    _content_end(text, item),
                    cid if isinstance(cid, str) else f"#{len(entries)}",
                    data,
                    line,
                )
            )
            raws.append((data, fields, line))
            for f in ("expected", "must_contain", "tags"):
                if f in fields and isinstance(fields[f][1], yt.SequenceNode) and fields[f][1].value:
                    styles[bool(fields[f][1].flow_style)] += 1
        self._list_style = "block" if styles[False] > styles[True] else "flow"
        if problems or not entries:
            # still validate what we could, to report everything at once
            self._validate_raws(raws, problems)
            return
        models = self._validate_raws(raws, problems)
        if problems:
            return
        first = vn.value[0]
        dash0 = entries[0][0]
        coll.col = dash0 - _line_start(text, dash0)
        coll.key_col = first.start_mark.column
        self._entries(text, coll, entries, coll.col, _line_end(text, kn.start_mark.index))
        for it, m in zip(coll.items, models):
            it.model = m

    def _read_case_node(self, item, name: str):
        data: dict = {}
        fields: dict = {}
        probs: list[Problem] = []
        cid = None
        for k, v in item.value:
            if isinstance(k, yt.ScalarNode) and k.value == "id" and isinstance(v, yt.ScalarNode):
                cid = yt.plain_text(v)
        for k, v in item.value:
            key = k.value if isinstance(k, yt.ScalarNode) else None
            line = k.start_mark.line + 1
            if key is None:
                probs.append(Problem(name, line, "keys must be plain names", case=cid))
                continue
            if key in fields:
                probs.append(
                    Problem(
                        name,
                        line,
                        f"duplicate key (first at line {fields[key][0].start_mark.line + 1})",
                        case=cid,
                        field=key,
                    )
                )
                continue
            fields[key] = (k, v)
            if key not in CASE_FIELDS:
                probs.append(
                    Problem(name, line, "unknown key" + _suggest(key, CASE_FIELDS), case=cid, field=key)
                )
                continue
            val, err = self._case_value(key, v)
            if err:
                probs.append(Problem(name, v.start_mark.line + 1, err, case=cid, field=key))
                continue
            if val is not None:
                data[key] = val
        return data, fields, probs

    @staticmethod
    def _case_value(key: str, v):
        if key in LIST_FIELDS:
            if isinstance(v, yt.ScalarNode):
                if yt.plain_text(v) is None:
                    return None, None
                return None, f"must be a list: write [{v.value}]"
            if not isinstance(v, yt.SequenceNode):
                return None, "must be a list, e.g. [a, b]"
            out = []
            for it in v.value:
                if not isinstance(it, yt.ScalarNode) or yt.plain_text(it) is None:
                    return None, "every entry must be text"
                out.append(yt.plain_text(it))
            return tuple(out), None
        if not isinstance(v, yt.ScalarNode):
            kind = "a list" if isinstance(v, yt.SequenceNode) else "a mapping"
            want = "true or false" if key in BOOL_FIELDS else "text"
            return None, f"must be {want}, not {kind}"
        if key in BOOL_FIELDS:
            val = yt.scalar_value(v)
            if val is None:
                return None, None
            if not isinstance(val, bool):
                return None, f"must be true or false (found {v.value!r})"
            return val, None
        return yt.plain_text(v), None

    def _validate_raws(self, raws, problems: list[Problem]):
        name = str(self.path)
        models = []
        for data, fields, line in raws:
            try:
                models.append(Case.model_validate(data))
            except ValidationError as e:
                cid = data.get("id") if isinstance(data.get("id"), str) else None
                for err in e.errors():
                    field = str(err["loc"][0]) if err["loc"] else None
                    if field is None and "unanswerable" in str(err.get("msg", "")):
                        field = "unanswerable"
                    fl = fields.get(field)
                    at = fl[1].start_mark.line + 1 if fl else line
                    problems.append(Problem(name, at, _msg(err), case=cid, field=field))
        return models

    def _read_labels(self, text: str, kn, vn, problems: list[Problem]) -> None:
        name = str(self.path)
        if isinstance(vn, yt.ScalarNode) and yt.plain_text(vn) is None:
            return
        if not isinstance(vn, yt.MappingNode):
            problems.append(
                Problem(
                    name, vn.start_mark.line + 1, "must be a mapping of chunk id to label", field="labels"
                )
            )
            return
        if not vn.value:
            return
        if vn.flow_style:
            problems.append(
                Problem(name, vn.start_mark.line + 1, "write labels as a block mapping", field="labels")
            )
            return
        entries = []
        models = []
        seen: dict[str, int] = {}
        for k, v in vn.value:
            line = k.start_mark.line + 1
            cid = yt.plain_text(k) if isinstance(k, yt.ScalarNode) else None
            if cid is None:
                problems.append(Problem(name, line, "a label's key must be a chunk id", field="labels"))
                continue
            if cid in seen:
                problems.append(
                    Problem(
                        name, line, f"duplicate label {cid!r} (first at line {seen[cid]})", field="labels"
                    )
                )
                continue
            seen[cid] = line
            if not isinstance(v, yt.MappingNode):
                problems.append(
                    Problem(name, line, f"label {cid!r}: must be a mapping (sha, text, …)", field="labels")
                )
                continue
            data = {}
            for fk, fv in v.value:
                if isinstance(fv, yt.ScalarNode):
                    data[fk.value] = (
                        yt.plain_text(fv)
                        if fk.value in ("sha", "text", "doc", "when", "corpus")
                        else yt.scalar_value(fv)
                    )
            try:
                model = Label.model_validate(data)
            except ValidationError as e:
                for err in e.errors():
                    problems.append(
                        Problem(
                            name,
                            line,
                            f"label {cid!r}: {_msg(err)}",
                            field=f"labels.{err['loc'][0] if err['loc'] else ''}",
                        )
                    )
                continue
            entries.append((k.start_mark.index, _content_end(text, v), cid, data, line))
            models.append(model)
        if problems or not entries:
            return
        coll = self._labels
        first_k = vn.value[0][0]
        coll.col = first_k.start_mark.column
        fv = vn.value[0][1]
        coll.key_col = (
            fv.value[0][0].start_mark.column if isinstance(fv, yt.MappingNode) and fv.value else coll.col + 2
        )
        self._entries(text, coll, entries, coll.col, _line_end(text, kn.start_mark.index))
        for it, m in zip(coll.items, models):
            it.model = m

    def _anchor_empty(self, coll: _Coll, knodes) -> None:
        """Put an empty collection right after its key line (or, if the key is missing, at the end)."""
        if knodes is None:
            coll.missing = True
            self._regions.extend([coll, ""])
            return
        kn, _vn = knodes
        pos = kn.start_mark.index
        acc = 0
        for ri, reg in enumerate(self._regions):
            size = len(reg) if isinstance(reg, str) else len(reg.text())
            if isinstance(reg, str) and acc <= pos < acc + size:
                le = _line_end(reg, pos - acc)
                self._regions[ri : ri + 1] = [reg[:le], coll, reg[le:]]
                return
            acc += size
        coll.missing = True  # pragma: no cover - the key is always found
        self._regions.extend([coll, ""])

    def _key_line(self, coll: _Coll) -> tuple[int, int, int]:
        """(region index, start, end) of the collection's `name:` line in the text before it."""
        ri = self._regions.index(coll) - 1
        before = self._regions[ri]
        pat = re.compile(r"^[ ]*" + re.escape(coll.name) + r"[ ]*:.*$", re.M)
        last = None
        for m in pat.finditer(before):
            last = m
        if last is None:  # pragma: no cover - the key line always precedes its collection
            raise RuntimeError(f"ragtriage bug: no `{coll.name}:` line before its entries")
        return ri, last.start(), _line_end(before, last.start())

    # ------------------------------------------------------------ cache

    def _cache_path(self, digest: str) -> Path:
        return cache_dir() / f"ts-{digest}.bin"

    def _write_cache(self, digest: str) -> None:
        try:
            regions = []
            for reg in self._regions:
                if isinstance(reg, str):
                    regions.append(reg)
                else:
                    regions.append(
                        (
                            reg.name,
                            reg.col,
                            reg.key_col,
                            reg.missing,
                            tuple(reg.gaps),
                            tuple((it.text, it.key, it.data, it.line) for it in reg.items),
                        )
                    )
            blob = marshal.dumps(
                (
                    CACHE_FORMAT,
                    str(self.path.resolve()),
                    self._bom,
                    self._crlf,
                    self._raw_settings,
                    self._list_style,
                    regions,
                )
            )
            d = cache_dir()
            d.mkdir(parents=True, exist_ok=True)
            tmp = d / f".{digest}.{os.getpid()}.tmp"
            tmp.write_bytes(blob)
            os.replace(tmp, self._cache_path(digest))
        except (OSError, ValueError):
            pass  # a cache is a convenience

    @classmethod
    def _from_cache(cls, path: Path, digest: str):
        p = cache_dir() / f"ts-{digest}.bin"
        try:
            blob = p.read_bytes()
        except OSError:
            return None
        was = gc.isenabled()
        gc.disable()
        try:
            fmt, _where, bom, crlf, raw_settings, list_style, regions = marshal.loads(blob)
            if fmt != CACHE_FORMAT:
                return None
            doc = cls(path, "", bom=bom, crlf=crlf)
            doc._raw_settings = raw_settings
            doc.settings = Settings.model_validate(raw_settings)
            doc._list_style = list_style
            doc._regions = []
            construct_case = _trusted_maker(Case)
            construct_label = _trusted_maker(Label)
            for reg in regions:
                if isinstance(reg, str):
                    doc._regions.append(reg)
                    continue
                name, col, key_col, missing, gaps, items = reg
                coll = doc._cases if name == "cases" else doc._labels
                coll.col, coll.key_col, coll.missing = col, key_col, missing
                coll.gaps = list(gaps)
                make = construct_case if name == "cases" else construct_label
                coll.items = [_Item(t, k, d, make(d), ln) for t, k, d, ln in items]
                doc._regions.append(coll)
            doc._orig_text = doc._join()
            doc._reindex()
            return doc
        except Exception:  # a stale or foreign cache file: parse the YAML instead
            return None
        finally:
            if was:
                gc.enable()

    # ------------------------------------------------------------ reading API

    def _reindex(self) -> None:
        self._index = {it.key: i for i, it in enumerate(self._cases.items)}
        self._label_pos = None
        self._cases_tuple = None
        self._labels_dict = None

    def _label_index(self, chunk_id: str) -> int | None:
        if self._label_pos is None:
            self._label_pos = {it.key: i for i, it in enumerate(self._labels.items)}
        return self._label_pos.get(chunk_id)

    @property
    def cases(self) -> tuple[Case, ...]:
        if self._cases_tuple is None:
            self._cases_tuple = tuple(it.model for it in self._cases.items)
        return self._cases_tuple

    def __len__(self) -> int:
        return len(self._cases.items)

    def case(self, case_id: str) -> Case:
        return self._cases.items[self._index[case_id]].model

    def index_of(self, case_id: str) -> int:
        return self._index[case_id]

    def __contains__(self, case_id) -> bool:
        return case_id in self._index

    @property
    def labels(self) -> dict[str, Label]:
        if self._labels_dict is None:
            self._labels_dict = {it.key: it.model for it in self._labels.items}
        return self._labels_dict

    @property
    def corpus_path(self) -> Path | None:
        c = self.settings.corpus
        if not c:
            return None
        p = Path(c)
        return p if p.is_absolute() else (self.path.parent / p)

    @property
    def decline_phrases(self) -> tuple[str, ...] | None:
        return self.settings.decline

    def _join(self) -> str:
        return "".join(r if isinstance(r, str) else r.text() for r in self._regions)

    @property
    def text(self) -> str:
        return self._join()

    @property
    def dirty(self) -> bool:
        """Unsaved changes? (Undoing back to the saved state makes it clean again.)"""
        if self._orig_text is None:
            return True
        if self._version == self._saved_version:
            return False
        if self._dirty_memo[0] != self._version:  # edits that cancel out (add, then delete) leave it clean
            self._dirty_memo = (self._version, self._join() != self._orig_text)
        return self._dirty_memo[1]

    @property
    def content_hash(self) -> str:
        """Hash of the test set's content as it is now (12 hex digits)."""
        text = (
            self._orig_text if not self.dirty else self._join()
        )  # not dirty: the text is the one loaded/saved
        return hashlib.blake2b(text.encode("utf-8"), digest_size=6).hexdigest()

    def case_line(self, case_id: str) -> int:
        """1-based line where the case's entry (its first own line) starts in the current text."""
        idx = self._index[case_id]
        n = 1
        for reg in self._regions:
            if isinstance(reg, str):
                n += reg.count("\n")
                continue
            if reg is self._cases:
                for i in range(idx):
                    n += reg.gaps[i].count("\n") + reg.items[i].text.count("\n")
                n += reg.gaps[idx].count("\n")
                it = reg.items[idx]
                # skip the attached comment lines
                for ln in it.text.split("\n"):
                    if ln.strip() and not _is_comment_line(ln):
                        break
                    n += 1
                return n
            n += reg.text().count("\n")
        raise KeyError(case_id)  # pragma: no cover

    def case_lines(self) -> dict[str, int]:
        """Every case's line (as :meth:`case_line`) in one pass over the text."""
        out: dict[str, int] = {}
        n = 1
        for reg in self._regions:
            if isinstance(reg, str):
                n += reg.count("\n")
                continue
            if reg is not self._cases:
                n += reg.text().count("\n")
                continue
            for gap, it in zip(reg.gaps, reg.items):
                n += gap.count("\n")
                lead = 0
                for ln in it.text.split("\n"):
                    if ln.strip() and not _is_comment_line(ln):
                        break
                    lead += 1
                out[it.key] = n + lead
                n += it.text.count("\n")
        return out

    # ------------------------------------------------------------ editing: settings

    def update_settings(self, **values) -> Settings:
        """Change top-level scalar settings (``corpus``, ``language``, ``k``) in place:
        the value on its line is replaced (its comment kept), or a new line is added
        before ``cases:``."""
        allowed = ("corpus", "language", "k")
        for key in values:
            if key not in allowed:
                raise self._problem(f"cannot set {key!r} here (one of: {', '.join(allowed)})", field=key)
        raw = dict(self._raw_settings)
        raw.update({k: v for k, v in values.items() if v is not None})
        for k, v in values.items():
            if v is None:
                raw.pop(k, None)
        try:
            settings = Settings.model_validate(raw)
        except ValidationError as e:
            raise TestSetError(
                [Problem(str(self.path), None, _msg(err), field=str(err["loc"][0])) for err in e.errors()]
            ) from None
        regions = list(self._regions)
        for key, value in values.items():
            pat = re.compile(r"^" + key + r"[ \t]*:(?P<val>[ \t]*[^#\n]*?)(?P<rest>[ \t]+#[^\n]*)?$", re.M)
            done = False
            for ri, reg in enumerate(regions):
                if not isinstance(reg, str):
                    continue
                m = pat.search(reg)
                if not m:
                    continue
                if value is None:
                    regions[ri] = reg[: m.start()] + reg[_line_end(reg, m.start()) :]
                else:
                    rendered = " " + yt.render_scalar(value)
                    regions[ri] = reg[: m.start("val")] + rendered + reg[m.end("val") :]
                done = True
                break
            if done or value is None:
                continue
            line = f"{key}: {yt.render_scalar(value)}\n"
            cases_pat = re.compile(r"^cases[ \t]*:", re.M)
            for ri, reg in enumerate(regions):
                if isinstance(reg, str):
                    m = cases_pat.search(reg)
                    if m:
                        regions[ri] = reg[: m.start()] + line + reg[m.start() :]
                        break
        self._push_undo()
        self._regions = regions
        self._raw_settings = raw
        self.settings = settings
        return settings

    # ------------------------------------------------------------ undo

    def _snapshot(self):
        return (
            list(self._regions),
            [(c, list(c.gaps), list(c.items), c.missing) for c in (self._cases, self._labels)],
            self._expected_changed,
            self._version,
            (self._raw_settings, self.settings),
        )

    def _restore(self, snap) -> None:
        regions, colls, changed, self._version, (self._raw_settings, self.settings) = snap
        self._regions = regions
        for c, gaps, items, missing in colls:
            c.gaps, c.items, c.missing = gaps, items, missing
            c.open_end = True
        self._expected_changed = changed
        self._reindex()

    @contextmanager
    def batch(self):
        """Many edits as one: a single undo step, and no cyclic GC while they run
        (imports and ``stale --fix`` add thousands of entries; the GC would dominate)."""
        if self._in_batch:
            yield self
            return
        self._push_undo()
        self._in_batch = True
        was = gc.isenabled()
        gc.disable()
        try:
            yield self
        finally:
            self._in_batch = False
            if was:
                gc.enable()

    def _push_undo(self) -> None:
        if self._in_batch:
            TestSetDocument._edits += 1
            self._version = TestSetDocument._edits
            return
        self._undo.append(self._snapshot())
        if len(self._undo) > UNDO_LIMIT:
            del self._undo[0]
        self._redo.clear()
        TestSetDocument._edits += 1
        self._version = TestSetDocument._edits

    def undo(self) -> bool:
        if not self._undo:
            return False
        self._redo.append(self._snapshot())
        self._restore(self._undo.pop())
        return True

    def redo(self) -> bool:
        if not self._redo:
            return False
        self._undo.append(self._snapshot())
        self._restore(self._redo.pop())
        return True

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    # ------------------------------------------------------------ editing: cases

    def _problem(self, message: str, case=None, field=None, line=None) -> TestSetError:
        return TestSetError(Problem(str(self.path), line, message, case=case, field=field))

    def _check_fields(self, fields: dict, case_id=None) -> None:
        for key in fields:
            if key not in CASE_FIELDS:
                raise self._problem("unknown field" + _suggest(key, CASE_FIELDS), case=case_id, field=key)

    def _validated(self, data: dict, case_id=None, line=None) -> Case:
        try:
            return Case.model_validate(data)
        except ValidationError as e:
            probs = []
            for err in e.errors():
                field = (
                    str(err["loc"][0])
                    if err["loc"]
                    else ("unanswerable" if "unanswerable" in err["msg"] else None)
                )
                probs.append(Problem(str(self.path), line, _msg(err), case=case_id, field=field))
            raise TestSetError(probs) from None

    @staticmethod
    def _normal(data: dict) -> dict:
        out = {}
        for k, v in data.items():
            if v is None:
                continue
            if k in LIST_FIELDS:
                if isinstance(v, str):
                    v = (v,)
                v = tuple(v)
            out[k] = v
        return out

    def validate_case(self, case_id: str | None, **fields) -> list[Problem]:
        """Problems the edit would cause, without applying it (for the editor's as-you-type errors)."""
        try:
            self._check_fields(fields, case_id)
            base = dict(self._cases.items[self._index[case_id]].data) if case_id in self._index else {}
            base.update(fields)
            data = self._normal(base)
            self._validated(data, case_id)
            new_id = data.get("id")
            if new_id != case_id and new_id in self._index:
                return [
                    Problem(str(self.path), None, f"id {new_id!r} is already used", case=case_id, field="id")
                ]
        except TestSetError as e:
            return e.problems
        return []

    def update_case(self, case_id: str, **fields) -> Case:
        """Change fields of a case; ``None`` removes a key (the field takes its default)."""
        if case_id not in self._index:
            raise self._problem("no such case", case=case_id)
        self._check_fields(fields, case_id)
        idx = self._index[case_id]
        item = self._cases.items[idx]
        data = dict(item.data)
        for k, v in fields.items():
            if v is None:
                data.pop(k, None)
            else:
                data[k] = v
        data = self._normal(data)
        model = self._validated(data, case_id)
        new_id = data["id"]
        if new_id != case_id and new_id in self._index:
            raise self._problem(f"id {new_id!r} is already used", case=case_id, field="id")
        changed = [k for k in CASE_FIELDS if data.get(k) != item.data.get(k)]
        if not changed:
            return item.model
        text = self._edit_entry(item.text, data, changed, self._cases)
        new_item = _Item(text, new_id, data, model, item.line)
        self._check_entry(new_item, self._cases)
        self._push_undo()
        self._cases.items[idx] = new_item
        if "expected" in changed:
            self._expected_changed = True
        if new_id != case_id:
            self._reindex()
        else:  # same id, same place: only the cached tuple of models is out of date
            self._cases_tuple = None
        return model

    def add_case(self, index: int | None = None, **fields) -> Case:
        self._check_fields(fields)
        data = self._normal(fields)
        cid = data.get("id")
        if isinstance(cid, str) and cid in self._index:
            raise self._problem(f"id {cid!r} is already used", case=cid, field="id")
        model = self._validated(data, cid)
        coll = self._cases
        text = self._render_case(data, coll)
        item = _Item(text, cid, data, model)
        self._check_entry(item, coll)
        self._push_undo()
        at = len(coll.items) if index is None else max(0, min(index, len(coll.items)))
        self._insert(coll, item, at)
        if data.get("expected"):
            self._expected_changed = True
        if at == len(coll.items) - 1:  # appended: no other case moved (bulk imports stay linear)
            self._index[cid] = at
            self._cases_tuple = None
        else:
            self._reindex()
        return model

    def remove_case(self, case_id: str) -> None:
        if case_id not in self._index:
            raise self._problem("no such case", case=case_id)
        self._push_undo()
        self._remove(self._cases, self._index[case_id])
        self._reindex()

    def move_case(self, case_id: str, new_index: int) -> None:
        if case_id not in self._index:
            raise self._problem("no such case", case=case_id)
        old = self._index[case_id]
        items = self._cases.items
        new_index = max(0, min(new_index, len(items) - 1))
        if new_index == old:
            return
        self._push_undo()
        it = items.pop(old)
        items.insert(new_index, it)
        self._ensure_entry_ends_with_newline(self._cases)
        self._reindex()

    def duplicate_case(self, case_id: str, new_id: str) -> Case:
        data = dict(self._cases.items[self._index[case_id]].data)
        data["id"] = new_id
        return self.add_case(self._index[case_id] + 1, **data)

    # ------------------------------------------------------------ editing: labels

    def set_label(self, chunk_id: str, label) -> None:
        """Record (or with None, forget) what chunk ``chunk_id`` said when labelled."""
        coll = self._labels
        idx = self._label_index(chunk_id)
        if label is None:
            if idx is not None:
                self._push_undo()
                self._remove(coll, idx)
                self._reindex()
            return
        if isinstance(label, Label):
            data = {k: v for k, v in label.model_dump().items() if v is not None}
        else:
            data = {k: v for k, v in dict(label).items() if v is not None}
        model = Label.model_validate(data)
        ordered = {k: data[k] for k in LABEL_FIELDS if k in data}
        ordered.update({k: v for k, v in data.items() if k not in ordered})
        lead = ""
        if idx is not None:
            old = coll.items[idx]
            if old.data == ordered:
                return
            lines = old.text.split("\n")
            n = 0
            while n < len(lines) and lines[n].strip() and _is_comment_line(lines[n]):
                n += 1
            lead = "\n".join(lines[:n]) + ("\n" if n else "")
        text = lead + self._render_label(chunk_id, ordered, coll)
        item = _Item(text, chunk_id, ordered, model)
        self._check_entry(item, coll)
        self._push_undo()
        if idx is None:
            self._insert(coll, item, len(coll.items))
            if self._label_pos is not None:
                self._label_pos[chunk_id] = len(coll.items) - 1
        else:
            coll.items[idx] = item
        self._labels_dict = None

    def record_labels(self, corpus=None, *, now: str | None = None, prune: bool = True) -> list[str]:
        """Record labels for expected chunk ids that have none, from ``corpus`` (a Corpus or
        mapping id -> Chunk) or, if None, from the test set's chunks file (streamed; only the
        needed ids are kept). With ``prune``, labels no case expects any more are dropped.
        Returns the ids recorded."""
        expected = []
        seen = set()
        for it in self._cases.items:
            for cid in it.data.get("expected", ()):
                if cid not in seen:
                    seen.add(cid)
                    expected.append(cid)
        have = {it.key for it in self._labels.items}
        need = [c for c in expected if c not in have]
        removed = [c for c in have if c not in seen] if prune else []
        if not need and not removed:
            return []
        found = {}
        corpus_hash = None
        if need:
            if corpus is None:
                cp = self.corpus_path
                if cp is None or not cp.exists():
                    need = []
                else:
                    from .corpus import iter_chunks

                    hasher = hashlib.blake2b(digest_size=6)
                    want = set(need)
                    for ch in iter_chunks(cp, problems=[], hasher=hasher):
                        if ch.id in want and ch.id not in found:
                            found[ch.id] = ch
                    corpus_hash = hasher.hexdigest()
            else:
                found = {c: corpus[c] for c in need if c in corpus}
                corpus_hash = getattr(corpus, "content_hash", None)
        when = now or utc_now()
        from .text import fingerprint

        recorded = []
        with self.batch():
            for cid in need:
                ch = found.get(cid)
                if ch is None:
                    continue
                lab = {
                    "sha": fingerprint(ch.text),
                    "text": ch.text,
                    "doc": ch.doc,
                    "start": ch.start,
                    "end": ch.end,
                    "when": when,
                    "corpus": corpus_hash,
                }
                self.set_label(cid, lab)
                recorded.append(cid)
            for cid in removed:
                self.set_label(cid, None)
        return recorded

    # ------------------------------------------------------------ collection plumbing

    def _insert(self, coll: _Coll, item: _Item, index: int) -> None:
        if not coll.items:
            self._open_collection(coll)
            coll.items.append(item)
            coll.gaps.append("")
            return
        self._ensure_entry_ends_with_newline(coll)
        gap = coll.gaps[-1] if len(coll.gaps) > 1 else ""
        gap = "".join(ln for ln in gap.splitlines(keepends=True) if not ln.strip())  # blank lines only
        if index == 0:
            coll.items.insert(0, item)
            coll.gaps.insert(1, gap)
        else:
            coll.items.insert(index, item)
            coll.gaps.insert(index, gap)
        self._ensure_entry_ends_with_newline(coll)

    def _ensure_entry_ends_with_newline(self, coll: _Coll) -> None:
        """Only the file's final entry can lack its newline (a file without one at the end);
        once another entry follows it, it needs one."""
        if not coll.open_end:
            return
        for i, it in enumerate(coll.items):
            if not it.text.endswith("\n"):
                coll.items[i] = _Item(it.text + "\n", it.key, it.data, it.model, it.line)
        coll.open_end = False

    def _remove(self, coll: _Coll, idx: int) -> None:
        items, gaps = coll.items, coll.gaps
        n = len(items)

        def comments(g: str) -> str:
            return "".join(ln for ln in g.splitlines(keepends=True) if ln.strip())

        if n == 1:
            items.pop()
            gaps.pop()
            self._close_collection(coll)
            return
        if idx == 0:
            kept = comments(gaps[1])
            items.pop(0)
            gaps.pop(1)
            if kept:
                self._regions[self._regions.index(coll) - 1] += kept
        else:
            kept = comments(gaps[idx])
            items.pop(idx)
            gaps.pop(idx)
            if kept:
                if idx < len(gaps):
                    gaps[idx] = kept + gaps[idx]
                else:
                    ri = self._regions.index(coll) + 1
                    self._regions[ri] = kept + self._regions[ri]

    def _open_collection(self, coll: _Coll) -> None:
        """First entry of an empty collection: make `name:` a block key (adding it if missing)."""
        ri = self._regions.index(coll)
        if coll.missing:
            before = "".join(r if isinstance(r, str) else r.text() for r in self._regions[:ri])
            add = "" if before.endswith("\n") or not before else "\n"
            if before and not before.endswith("\n\n"):
                add += "\n"
            note = (
                "   # maintained by ragtriage: what each labelled chunk said when labelled"
                if coll.name == "labels"
                else ""
            )
            self._regions[ri - 1] += add + f"{coll.name}:{note}\n"
            coll.missing = False
            return
        ri, ls, le = self._key_line(coll)
        before = self._regions[ri]
        body = before[ls:le].rstrip("\n")
        m = re.match(r"^(\s*\S+?:)\s*(\[\s*\]|\{\s*\}|~|null)?\s*(#.*)?$", body)
        new = (m.group(1) + (("   " + m.group(3)) if m.group(3) else "")) if m else body
        self._regions[ri] = before[:ls] + new + "\n" + before[le:]

    def _close_collection(self, coll: _Coll) -> None:
        """Last entry removed: write `cases: []` / `labels: {}` so the file stays clear."""
        ri, ls, le = self._key_line(coll)
        before = self._regions[ri]
        line = before[ls:le].rstrip("\n")
        m = re.match(r"^(\s*\S+?:)\s*(#.*)?$", line)
        empty = "[]" if coll.name == "cases" else "{}"
        new = (m.group(1) + " " + empty + (("   " + m.group(2)) if m.group(2) else "")) if m else line
        self._regions[ri] = before[:ls] + new + "\n" + before[le:]

    # ------------------------------------------------------------ rendering

    def _value_text(
        self, key: str, value, key_col: int, *, style=None, block_list: bool | None = None
    ) -> str:
        """Text after ``key:`` for a new key line (starts with a space or a newline)."""
        if key in LIST_FIELDS:
            use_block = self._list_style == "block" if block_list is None else block_list
            if use_block and value:
                pad = " " * (key_col + 2)
                return "\n" + "\n".join(pad + "- " + yt.render_scalar(v) for v in value)
            return " " + yt.render_flow_list(list(value))
        if isinstance(value, str) and "\n" in value.rstrip("\n") and style not in ("'", '"'):
            blk = yt.render_block_scalar(value, key_col + 2)
            if blk is not None:
                return " " + blk
        return " " + yt.render_scalar(value, style)

    def _render_case(self, data: dict, coll: _Coll) -> str:
        pad = " " * coll.col
        kpad = " " * coll.key_col
        first = True
        out = []
        for key in CASE_FIELDS:
            if key not in data:
                continue
            val = self._value_text(key, data[key], coll.key_col)
            if first:
                dash = pad + "-" + " " * max(1, coll.key_col - coll.col - 1)
                out.append(f"{dash}{key}:{val}")
                first = False
            else:
                out.append(f"{kpad}{key}:{val}")
        return "\n".join(out) + "\n"

    def _render_label(self, chunk_id: str, data: dict, coll: _Coll) -> str:
        pad = " " * coll.col
        kpad = " " * coll.key_col
        lines = [f"{pad}{yt.render_scalar(chunk_id)}:"]
        for k, v in data.items():
            if isinstance(v, (dict, list)):
                continue
            lines.append(f"{kpad}{k}: {yt.render_scalar(v)}")
        return "\n".join(lines) + "\n"

    def _edit_entry(self, text: str, data: dict, changed: list[str], coll: _Coll) -> str:
        """Splice the changed fields of one case into its text."""
        root = yt.compose(text)
        node = root.value[0]
        fields = {k.value: (k, v) for k, v in node.value}
        keys_in_order = [k.value for k, v in node.value]
        edits = []  # (start, end, replacement)
        key_col = coll.key_col
        for key in changed:
            present = key in fields
            new = data.get(key)
            if present and new is None:
                kn, vn = fields[key]
                pos = keys_in_order.index(key)
                ls = _line_start(text, kn.start_mark.index)
                if text[ls : kn.start_mark.index].strip() == "-":
                    # first key on the dash line: pull the next key up onto it
                    nxt = fields[keys_in_order[pos + 1]][0] if pos + 1 < len(keys_in_order) else None
                    if nxt is None:
                        raise self._problem("a case needs at least one key", case=data.get("id"))
                    edits.append((kn.start_mark.index, nxt.start_mark.index, ""))
                else:
                    edits.append((ls, _line_end(text, _content_end(text, vn)), ""))
            elif present:
                kn, vn = fields[key]
                edits.append(self._replace_value(text, key, kn, vn, new, key_col))
            else:
                # insert after the last present field that comes before it in the canonical order
                order = CASE_FIELDS.index(key)
                anchor = None
                for k in keys_in_order:
                    if k in CASE_FIELDS and CASE_FIELDS.index(k) < order:
                        anchor = k
                if anchor is None:
                    anchor = keys_in_order[0]
                an = fields[anchor][1]
                at = _line_end(text, _content_end(text, an))
                kcol = node.value[1][0].start_mark.column if len(node.value) > 1 else key_col
                line = " " * kcol + f"{key}:" + self._value_text(key, new, kcol) + "\n"
                if at == len(text) and not text.endswith("\n"):
                    line = "\n" + line
                edits.append((at, at, line, order))
                continue
            edits[-1] = edits[-1] + (0,)
        # from the end backwards; inserts at one place go in reverse field order so they read in order
        edits.sort(key=lambda e: (e[0], e[1], e[3]), reverse=True)
        for s, e, rep, _o in edits:
            text = text[:s] + rep + text[e:]
        return text

    def _replace_value(self, text: str, key: str, kn, vn, new, key_col: int):
        start = vn.start_mark.index
        if isinstance(vn, yt.ScalarNode):
            if key in LIST_FIELDS:  # was null
                return (start, _content_end(text, vn), yt.render_flow_list(list(new)))
            end = _content_end(text, vn) if vn.style in ("|", ">") else vn.end_mark.index
            if yt.is_plain(vn) and vn.value == "":
                # `key:` with nothing after it
                colon = text.find(":", kn.end_mark.index)
                return (colon + 1, colon + 1, self._value_text(key, new, kn.start_mark.column))
            if vn.style in ("|", ">") and isinstance(new, str):
                first_content = _line_end(text, start)
                ind = (
                    _indent_of(text[first_content : _line_end(text, first_content)])
                    or kn.start_mark.column + 2
                )
                blk = yt.render_block_scalar(new, ind, vn.style)
                if blk is not None:
                    return (start, end, blk)
                return (start, end, yt.double_quoted(new))
            if isinstance(new, str) and "\n" in new.rstrip("\n") and yt.is_plain(vn):
                blk = yt.render_block_scalar(new, kn.start_mark.column + 2)
                if blk is not None:
                    return (start, end, blk)
            return (start, end, yt.render_scalar(new, "" if yt.is_plain(vn) else vn.style))
        # lists
        old_items = [(yt.plain_text(it), text[it.start_mark.index : it.end_mark.index]) for it in vn.value]
        if vn.flow_style:
            spaced = text[start + 1 : start + 2] == " " and len(vn.value) > 0
            return (start, vn.end_mark.index, yt.render_flow_list(list(new), old_items, spaced))
        # block list: keep unchanged items' whole lines (with their comments)
        colon = text.find(":", kn.end_mark.index)
        end = _content_end(text, vn)
        if not new:
            return (colon + 1, end, " []")
        dash_col = vn.value[0].start_mark.column - 2 if vn.value else key_col + 2
        first_dash = _find_dash(text, vn.value[0].start_mark.index)
        dash_col = first_dash - _line_start(text, first_dash)
        pool: dict = {}
        for it in vn.value:
            d = _find_dash(text, it.start_mark.index)
            line_end = text.find("\n", it.end_mark.index)
            src = text[d : len(text) if line_end < 0 else line_end]
            pool.setdefault(yt.plain_text(it), []).append(src)
        lines = []
        for v in new:
            srcs = pool.get(v)
            lines.append(" " * dash_col + (srcs.pop(0) if srcs else "- " + yt.render_scalar(v)))
        return (colon + 1, end, "\n" + "\n".join(lines))

    def _check_entry(self, item: _Item, coll: _Coll) -> None:
        """Re-read a rendered entry and prove it says exactly what was meant."""
        try:
            root = yt.compose(item.text)
        except yt.YAMLError as e:  # pragma: no cover - a rendering bug
            raise RuntimeError(f"ragtriage bug: rendered YAML does not parse: {e}\n{item.text}") from None
        if coll is self._cases:
            node = root.value[0] if isinstance(root, yt.SequenceNode) and len(root.value) == 1 else None
            if node is None:
                raise RuntimeError(f"ragtriage bug: rendered case is not one entry:\n{item.text}")
            data, _f, probs = self._read_case_node(node, str(self.path))
            if probs or data != item.data:
                raise RuntimeError(
                    f"ragtriage bug: rendered case reads back differently:\n{item.text}\n"
                    f"{data} != {item.data}"
                )
        else:
            ok = (
                isinstance(root, yt.MappingNode)
                and len(root.value) == 1
                and yt.plain_text(root.value[0][0]) == item.key
            )
            if not ok:
                raise RuntimeError(f"ragtriage bug: rendered label is not one entry:\n{item.text}")

    # ------------------------------------------------------------ saving

    def render(self) -> bytes:
        return self._encode(self._join())

    def _encode(self, text: str) -> bytes:
        if self._crlf:
            text = text.replace("\n", "\r\n")
        if self._bom:
            text = "\ufeff" + text
        return text.encode("utf-8")

    def save(
        self,
        path=None,
        *,
        force: bool = False,
        corpus=None,
        record_labels: bool = True,
        write_cache: bool | None = None,
    ) -> bool:
        """Write the test set atomically. Returns False when nothing needed writing.

        Labels are recorded for newly expected chunks (from ``corpus`` or the test
        set's chunks file) before writing. Raises :class:`ConflictError` if the file
        changed on disk since it was loaded (``force=True`` overwrites).

        The reopen cache is refreshed at once for test sets under 20,000 cases; for
        bigger ones (where it takes about a second) only when asked
        (``write_cache=True``) or later through :meth:`flush_cache`, so a save stays
        fast while someone is typing."""
        if record_labels and self._expected_changed:
            try:
                self.record_labels(corpus)
            except Exception:  # an unreadable corpus must not stop a save; validate reports it
                pass
            self._expected_changed = False
        target = Path(path) if path is not None else self.path
        same = target == self.path
        text = self._join()
        if same and not force:
            self._check_conflict()
        if same and self._orig_text is not None and text == self._orig_text:
            self._saved_version = self._version
            return False
        data = self._encode(text)
        atomic_write(target, data)
        if same:
            st = os.stat(target)
            self._stat = (st.st_mtime_ns, st.st_size)
            self._orig_text = text
            self._saved_version = self._version
            self._loaded_hash = hashlib.blake2b(data, digest_size=16).hexdigest()
            self._cache_pending = self._loaded_hash
            if write_cache or (write_cache is None and len(self._cases.items) < BIG):
                self.flush_cache()
            else:
                _PENDING.add(self)
        return True

    def flush_cache(self) -> None:
        """Write the reopen cache for the content last loaded or saved, if not written yet
        (big test sets defer it; it also runs at interpreter exit)."""
        digest = self._cache_pending
        self._cache_pending = None
        _PENDING.discard(self)
        if digest and self._orig_text is not None and self._join() == self._orig_text:
            self._write_cache(digest)

    def changed_on_disk(self) -> bool:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return self._stat is not None
        if self._stat is None:
            return True
        if (st.st_mtime_ns, st.st_size) == self._stat:
            return False
        return hashlib.blake2b(self.path.read_bytes(), digest_size=16).hexdigest() != self._loaded_hash

    def _check_conflict(self) -> None:
        if self._stat is None and not self.path.exists():
            return
        if self.changed_on_disk():
            raise ConflictError(str(self.path))

    def reload(self) -> TestSetDocument:
        """A fresh document from disk (the current one is left as it is)."""
        return type(self).load(self.path)
