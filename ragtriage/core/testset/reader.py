"""Reading a test set: bytes to text, text to nodes (libyaml, exact offsets),
nodes to validated models and to the text pieces of :mod:`.regions`.

Every problem is located (``file:line: what is wrong``) and all of them are
reported at once where the file allows it.
"""

from __future__ import annotations

import difflib
import gc
from collections.abc import Iterable
from typing import Any, TypeAlias

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .. import yamltext as yt
from ..errors import Problem, TestSetError
from ..schema import CASE_FIELDS, SETTINGS_KEYS, TOP_KEYS, Case, Label, Settings
from .regions import (
    Coll,
    Item,
    Region,
    anchor_empty,
    content_end,
    find_dash,
    indent_of,
    is_comment_line,
    line_end,
    line_start,
)

LIST_FIELDS = {"expected", "expected_docs", "evidence", "must_contain", "tags"}
TEXT_FIELDS = {"id", "question", "topic", "answer", "notes", "expect"}
BOOL_FIELDS = {"unanswerable"}

# a case's or label's keys -> (key node, value node); PyYAML's nodes are untyped
Fields: TypeAlias = dict[str, tuple[Any, Any]]
# one entry of a collection: (start index, content end index, key, data, line)
Entry: TypeAlias = tuple[int, int, str, dict[str, Any], int]
# the settings as written (top-level keys -> plain data), before validation
RawSettings: TypeAlias = dict[str, Any]
LABEL_TEXT_FIELDS = ("sha", "text", "doc", "when", "corpus")

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


def error_message(err: ErrorDetails) -> str:
    """A pydantic error as a short message for a person."""
    t = err["type"]
    ctx = err.get("ctx") or {}
    if t == "literal_error":
        return "must be one of: " + str(ctx["expected"]).replace("'", "")
    if t == "value_error":
        return str(ctx["error"])
    if t == "less_than_equal":
        return f"must be at most {ctx['le']}"
    if t not in _MESSAGES:
        return err["msg"]
    return _MESSAGES[t]


def suggest(key: str, known: Iterable[str]) -> str:
    known = list(known)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" (known keys: {', '.join(known)})"


def decode(name: str, raw: bytes) -> tuple[str, bool, bool]:
    """(text, had a BOM, CRLF line ends) of a test set's bytes."""
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


def size_problem(name: str, size: int, limit: int) -> TestSetError:
    return TestSetError(
        Problem(
            name,
            None,
            f"file is {size / 1e6:.0f} MB; test sets are limited to {limit // (1024 * 1024)} MiB "
            "(about 200,000 cases; raise RAGTRIAGE_MAX_TESTSET_MB if you really mean it)",
        )
    )


def yaml_problem(name: str, e: Any, text: str) -> Problem:
    """A libyaml error as a located problem."""
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
        ls = line_start(text, mark.index)
        lead = text[ls : text.find("\n", ls) if text.find("\n", ls) >= 0 else len(text)]
        if "\t" in lead[: len(lead) - len(lead.lstrip(" \t"))] or text[mark.index] == "\t":
            msg = "tab in indentation (YAML allows only spaces; replace the tab with spaces)"
    if "expected a single document" in msg or "but found another document" in msg:
        msg = "more than one YAML document (remove the extra `---`)"
    if e.context and "tab" not in msg:
        msg = f"{msg} ({e.context.strip()})"
    if mark is not None:
        msg = f"column {mark.column + 1}: {msg}"
    return Problem(name, line, "not valid YAML: " + msg)


def case_value(key: str, v: Any) -> tuple[Any, str | None]:
    """(value, error) of one case field's node."""
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
        try:
            val = yt.scalar_value(v)
        except yt.NumberTooLong as e:
            return None, str(e)
        if val is None:
            return None, None
        if not isinstance(val, bool):
            return None, f"must be true or false (found {v.value!r})"
        return val, None
    return yt.plain_text(v), None


def read_case_node(item: Any, name: str) -> tuple[dict[str, Any], Fields, list[Problem]]:
    """(data, {key: (key node, value node)}, problems) of one case's mapping node."""
    data: dict[str, Any] = {}
    fields: Fields = {}
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
            first = fields[key][0].start_mark.line + 1
            probs.append(Problem(name, line, f"duplicate key (first at line {first})", case=cid, field=key))
            continue
        fields[key] = (k, v)
        if key not in CASE_FIELDS:
            probs.append(Problem(name, line, "unknown key" + suggest(key, CASE_FIELDS), case=cid, field=key))
            continue
        val, err = case_value(key, v)
        if err:
            probs.append(Problem(name, v.start_mark.line + 1, err, case=cid, field=key))
            continue
        if val is not None:
            data[key] = val
    return data, fields, probs


def empty_problem(name: str) -> TestSetError:
    return TestSetError(Problem(name, 1, "empty test set: expected `version: 1` and a `cases:` list"))


class Reader:
    """One read of a test set's text into regions, collections and settings."""

    def __init__(self, name: str):
        self.name = name
        self.cases = Coll("cases")
        self.labels = Coll("labels")
        self.regions: list[Region] = []
        self.raw_settings: RawSettings = {}
        self.settings = Settings()
        self.list_style = "flow"

    def parse(self, text: str) -> Reader:
        if not any(ln.strip() and not is_comment_line(ln) for ln in text.split("\n")):
            raise empty_problem(self.name)
        was = gc.isenabled()
        gc.disable()
        try:
            self._refuse_anchors(text)
            try:
                root = yt.compose(text)
            except yt.MarkedYAMLError as e:
                raise TestSetError(yaml_problem(self.name, e, text)) from None
            except yt.YAMLError as e:
                raise TestSetError(Problem(self.name, None, f"not valid YAML: {e}")) from None
            self._build(text, root)
        finally:
            if was:
                gc.enable()
        return self

    def _refuse_anchors(self, text: str) -> None:
        try:
            hit = yt.first_anchor(text)
        except yt.YAMLError:
            return  # not valid YAML: composing says where
        if hit is not None:
            line, what = hit
            kind = "an anchor" if what.startswith("&") else "an alias"
            raise TestSetError(
                Problem(
                    self.name,
                    line + 1,
                    f"{kind} (`{what}`): YAML anchors and aliases are not supported in a test set "
                    "(write the value out in full)",
                )
            )

    # -- building the model from nodes

    def _top_nodes(self, root: Any, problems: list[Problem]) -> dict[str, tuple[Any, Any]]:
        name = self.name
        seen: dict[str, int] = {}
        nodes: dict[str, tuple[Any, Any]] = {}
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
                problems.append(Problem(name, line, "unknown key" + suggest(key, TOP_KEYS), field=key))
                continue
            nodes[key] = (k, v)
        return nodes

    def _read_settings(self, nodes: dict[str, tuple[Any, Any]], problems: list[Problem]) -> None:
        name = self.name
        raw = {}
        for key in SETTINGS_KEYS:
            if key in nodes:
                kn, vn = nodes[key]
                val, bad = self._plain_data(vn, key)
                if bad:
                    problems.append(Problem(name, vn.start_mark.line + 1, bad, field=key))
                    continue
                if val is not None:
                    raw[key] = val
        # version defaults to 1; validate says nothing when it is missing: old hand-written sets work
        try:
            self.settings = Settings.model_validate(raw)
        except ValidationError as e:
            for err in e.errors():
                where = str(err["loc"][0]) if err["loc"] else None
                line = nodes[where][1].start_mark.line + 1 if where in nodes else None
                field = f"gates.{err['loc'][1]}" if where == "gates" and len(err["loc"]) > 1 else where
                problems.append(Problem(name, line, error_message(err), field=field))
        self.raw_settings = raw

    def _build(self, text: str, root: Any) -> None:
        name = self.name
        problems: list[Problem] = []
        if root is None:
            raise empty_problem(name)
        tag = yt.bad_tag(root) if yt.may_have_tags(text) else None
        if tag:
            raise TestSetError(self._tag_problem(root, tag))
        if not isinstance(root, yt.MappingNode):
            kind = "list" if isinstance(root, yt.SequenceNode) else "single value"
            raise TestSetError(
                Problem(
                    name,
                    root.start_mark.line + 1,
                    f"a test set is a mapping with `version`, `cases`, … (found a {kind})",
                )
            )
        nodes = self._top_nodes(root, problems)
        self._read_settings(nodes, problems)
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
        self._cut(text, nodes)

    def _cut(self, text: str, nodes: dict[str, tuple[Any, Any]]) -> None:
        """Cut the text into regions: plain text around the collections."""
        spans: list[tuple[int, int, Coll]] = []
        for coll in (self.cases, self.labels):
            if coll.items and coll.span is not None:
                spans.append((coll.span[0], coll.span[1], coll))
        spans.sort(key=lambda s: s[0])
        regions: list[Region] = []
        pos = 0
        for start, end, coll in spans:
            regions.append(text[pos:start])
            regions.append(coll)
            pos = end
        regions.append(text[pos:])
        self.regions = regions
        for coll in (self.cases, self.labels):
            coll.span = None
            if not coll.items:
                knodes = nodes.get(coll.name)
                anchor_empty(regions, coll, None if knodes is None else knodes[0].start_mark.index)

    def _tag_problem(self, root: Any, tag: str) -> Problem:
        stack = [root]
        seen: set[int] = set()
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if n.tag.replace("tag:yaml.org,2002:", "!!") == tag:
                return Problem(
                    self.name,
                    n.start_mark.line + 1,
                    f"tag {tag} is not allowed (a test set holds plain data only)",
                )
            if isinstance(n, yt.SequenceNode):
                stack.extend(n.value)
            elif isinstance(n, yt.MappingNode):
                for k, v in n.value:
                    stack.extend((k, v))
        return Problem(self.name, None, f"tag {tag} is not allowed")

    @staticmethod
    def _plain_data(node: Any, field: str) -> tuple[Any, str | None]:
        """Plain Python data of a settings value (lists, mappings, scalars)."""
        try:
            return Reader._plain_value(node, field)
        except yt.NumberTooLong as e:
            return None, str(e)

    @staticmethod
    def _plain_value(node: Any, field: str) -> tuple[Any, str | None]:
        if isinstance(node, yt.ScalarNode):
            if field in ("corpus", "language"):
                return yt.plain_text(node), None
            return yt.scalar_value(node), None
        if isinstance(node, yt.SequenceNode):
            items = []
            for it in node.value:
                if not isinstance(it, yt.ScalarNode):
                    return None, "must be a list of text"
                items.append(yt.plain_text(it) if field == "decline" else yt.scalar_value(it))
            return items, None
        mapping = {}
        for k, v in node.value:
            if not isinstance(v, yt.ScalarNode):
                return None, f"{k.value}: must be a single value"
            mapping[k.value] = yt.scalar_value(v)
        return mapping, None

    @staticmethod
    def _entries(text: str, coll: Coll, entries: list[Entry], floor0: int) -> None:
        """Cut the collection's entries into item texts and gaps.
        ``entries``: list of (start_index, content_end_index, key, data, line)."""
        col = coll.col
        n = len(entries)
        bodies = []
        for i, (start, cend, _key, _data, _line) in enumerate(entries):
            bstart = line_start(text, start)
            bend = line_end(text, cend)
            limit = line_start(text, entries[i + 1][0]) if i + 1 < n else len(text)
            # comment lines inside the entry (indented deeper than the entry), up to a blank line
            p = bend
            while p < limit:
                e = line_end(text, p)
                ln = text[p:e].rstrip("\n")
                if ln.strip() and is_comment_line(ln) and indent_of(ln) > col:
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
                ps = line_start(text, p - 1)
                ln = text[ps:p].rstrip("\n")
                if ln.strip() and is_comment_line(ln):
                    p = ps
                    continue
                break
            bodies[i][0] = p
        coll.items = []
        coll.gaps = []
        prev_end = bodies[0][0]
        for (s, e), (_start, _cend, key, data, line) in zip(bodies, entries):
            coll.gaps.append(text[prev_end:s])
            coll.items.append(Item(text[s:e], key, data, line=line))
            prev_end = e
        coll.gaps[0] = ""
        coll.span = (bodies[0][0], bodies[-1][1])

    def _cases_node_problem(self, vn: Any) -> Problem | None:
        if not isinstance(vn, yt.SequenceNode):
            msg = "must be a list of cases (each starting with `- id:`)"
        elif vn.flow_style:
            msg = "write cases as a block list (one `- id: …` entry per case), not [ … ]"
        else:
            return None
        return Problem(self.name, vn.start_mark.line + 1, msg, field="cases")

    def _read_cases(self, text: str, kn: Any, vn: Any, problems: list[Problem]) -> None:
        name = self.name
        coll = self.cases
        if isinstance(vn, yt.ScalarNode) and yt.plain_text(vn) is None:
            return
        bad = self._cases_node_problem(vn)
        if bad is not None:
            if vn.value or not isinstance(vn, yt.SequenceNode):
                problems.append(bad)
            return
        if not vn.value:
            return
        entries: list[Entry] = []
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
            data, fields, probs = read_case_node(item, name)
            cid = data.get("id")
            problems.extend(probs)
            if isinstance(cid, str):
                if cid in first_lines:
                    first = first_lines[cid]
                    problems.append(
                        Problem(name, line, f"duplicate id (first at line {first})", case=cid, field="id")
                    )
                else:
                    first_lines[cid] = line
            dash = find_dash(text, item.start_mark.index)
            key = cid if isinstance(cid, str) else f"#{len(entries)}"
            entries.append((dash, content_end(text, item), key, data, line))
            raws.append((data, fields, line))
            for f in ("expected", "expected_docs", "evidence", "must_contain", "tags"):
                if f in fields and isinstance(fields[f][1], yt.SequenceNode) and fields[f][1].value:
                    styles[bool(fields[f][1].flow_style)] += 1
        self.list_style = "block" if styles[False] > styles[True] else "flow"
        # validate what we could even with problems, to report everything at once
        models = self._validate_raws(raws, problems)
        if problems or not entries:
            return
        first = vn.value[0]
        dash0 = entries[0][0]
        coll.col = dash0 - line_start(text, dash0)
        coll.key_col = first.start_mark.column
        self._entries(text, coll, entries, line_end(text, kn.start_mark.index))
        for it, m in zip(coll.items, models):
            it.model = m

    def _validate_raws(
        self, raws: list[tuple[dict[str, Any], Fields, int]], problems: list[Problem]
    ) -> list[Case]:
        name = self.name
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
                    fl = fields.get(field) if field is not None else None
                    at = fl[1].start_mark.line + 1 if fl else line
                    problems.append(Problem(name, at, error_message(err), case=cid, field=field))
        return models

    def _label_entry(self, text: str, k: Any, v: Any, seen: dict[str, int], problems: list[Problem]) -> Any:
        """(entry, model) of one label, or None with its problems added."""
        name = self.name
        line = k.start_mark.line + 1
        cid = yt.plain_text(k) if isinstance(k, yt.ScalarNode) else None
        if cid is None:
            problems.append(Problem(name, line, "a label's key must be a chunk id", field="labels"))
            return None
        if cid in seen:
            msg = f"duplicate label {cid!r} (first at line {seen[cid]})"
            problems.append(Problem(name, line, msg, field="labels"))
            return None
        seen[cid] = line
        if not isinstance(v, yt.MappingNode):
            msg = f"label {cid!r}: must be a mapping (sha, text, …)"
            problems.append(Problem(name, line, msg, field="labels"))
            return None
        data = {}
        for fk, fv in v.value:
            if not isinstance(fv, yt.ScalarNode):
                continue
            try:
                data[fk.value] = yt.plain_text(fv) if fk.value in LABEL_TEXT_FIELDS else yt.scalar_value(fv)
            except yt.NumberTooLong as e:
                problems.append(Problem(name, fv.start_mark.line + 1, f"label {cid!r}: {fk.value}: {e}"))
                return None
        try:
            model = Label.model_validate(data)
        except ValidationError as e:
            for err in e.errors():
                field = f"labels.{err['loc'][0] if err['loc'] else ''}"
                problems.append(Problem(name, line, f"label {cid!r}: {error_message(err)}", field=field))
            return None
        return (k.start_mark.index, content_end(text, v), cid, data, line), model

    def _read_labels(self, text: str, kn: Any, vn: Any, problems: list[Problem]) -> None:
        name = self.name
        if isinstance(vn, yt.ScalarNode) and yt.plain_text(vn) is None:
            return
        if not isinstance(vn, yt.MappingNode):
            msg = "must be a mapping of chunk id to label"
            problems.append(Problem(name, vn.start_mark.line + 1, msg, field="labels"))
            return
        if not vn.value:
            return
        if vn.flow_style:
            msg = "write labels as a block mapping"
            problems.append(Problem(name, vn.start_mark.line + 1, msg, field="labels"))
            return
        entries = []
        models = []
        seen: dict[str, int] = {}
        for k, v in vn.value:
            got = self._label_entry(text, k, v, seen, problems)
            if got is not None:
                entries.append(got[0])
                models.append(got[1])
        if problems or not entries:
            return
        coll = self.labels
        first_k = vn.value[0][0]
        coll.col = first_k.start_mark.column
        fv = vn.value[0][1]
        coll.key_col = (
            fv.value[0][0].start_mark.column if isinstance(fv, yt.MappingNode) and fv.value else coll.col + 2
        )
        self._entries(text, coll, entries, line_end(text, kn.start_mark.index))
        for it, m in zip(coll.items, models):
            it.model = m
