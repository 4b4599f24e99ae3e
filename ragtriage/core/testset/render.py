"""Rendering changed pieces and splicing them into an entry's text.

An edit re-renders only what changed — one value, one key line, one entry —
in the style the file already uses, re-reads that entry to prove it says what
was meant (:func:`check_entry`), and leaves every other byte alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import yamltext as yt
from ..errors import Problem, TestSetError
from ..schema import CASE_FIELDS
from .reader import LIST_FIELDS, Fields, read_case_node
from .regions import Coll, Item, content_end, find_dash, indent_of, line_end, line_start


class UnwritableText(TestSetError):
    """A value no UTF-8 file can hold (a lone surrogate): refused, never half-written."""


def surrogate_message(which: str) -> str:
    return (
        f"holds a lone surrogate ({which}), which a UTF-8 file cannot hold "
        "(often text decoded with the wrong encoding); remove or replace it"
    )


def surrogate_problems(
    name: str,
    values: Iterable[tuple[str, object]],
    *,
    case: str | None = None,
    label: str | None = None,
    line: int | None = None,
    chunks: bool = False,
) -> list[Problem]:
    """A problem for each (field, value) — or (chunk id, chunk text) — that holds a lone surrogate."""
    out = []
    for k, v in values:
        u = yt.lone_surrogate(v)
        if u is None:
            continue
        if chunks:
            msg = f"chunk {k!r}: its text {surrogate_message(u)} in the chunks file"
            out.append(Problem(name, None, msg))
        elif label is not None:
            out.append(Problem(name, None, f"label {label!r}: {k}: {surrogate_message(u)}"))
        else:
            out.append(Problem(name, line, surrogate_message(u), case=case, field=k))
    return out


Edit = tuple[int, int, str, int]  # (start, end, replacement, order among inserts at one place)


def value_text(
    key: str,
    value: Any,
    key_col: int,
    list_style: str,
    *,
    style: str | None = None,
    block_list: bool | None = None,
) -> str:
    """Text after ``key:`` for a new key line (starts with a space or a newline)."""
    if key in LIST_FIELDS:
        use_block = list_style == "block" if block_list is None else block_list
        if use_block and value:
            pad = " " * (key_col + 2)
            return "\n" + "\n".join(pad + "- " + yt.render_scalar(v) for v in value)
        return " " + yt.render_flow_list(list(value))
    if isinstance(value, str) and "\n" in value.rstrip("\n") and style not in ("'", '"'):
        blk = yt.render_block_scalar(value, key_col + 2)
        if blk is not None:
            return " " + blk
    return " " + yt.render_scalar(value, style)


def render_case(data: dict[str, Any], coll: Coll, list_style: str) -> str:
    pad = " " * coll.col
    kpad = " " * coll.key_col
    first = True
    out = []
    for key in CASE_FIELDS:
        if key not in data:
            continue
        val = value_text(key, data[key], coll.key_col, list_style)
        if first:
            dash = pad + "-" + " " * max(1, coll.key_col - coll.col - 1)
            out.append(f"{dash}{key}:{val}")
            first = False
        else:
            out.append(f"{kpad}{key}:{val}")
    return "\n".join(out) + "\n"


def render_label(chunk_id: str, data: dict[str, Any], coll: Coll) -> str:
    pad = " " * coll.col
    kpad = " " * coll.key_col
    lines = [f"{pad}{yt.render_scalar(chunk_id)}:"]
    for k, v in data.items():
        if isinstance(v, (dict, list)):
            continue
        lines.append(f"{kpad}{k}: {yt.render_scalar(v)}")
    return "\n".join(lines) + "\n"


def _insert_edit(
    text: str, node: Any, fields: Fields, keys_in_order: list[str], key: str, new: Any, ctx: tuple[int, str]
) -> Edit:
    """Insert ``key`` after the last present field that comes before it in the canonical order."""
    key_col, list_style = ctx
    order = CASE_FIELDS.index(key)
    anchor = None
    for k in keys_in_order:
        if k in CASE_FIELDS and CASE_FIELDS.index(k) < order:
            anchor = k
    if anchor is None:
        anchor = keys_in_order[0]
    an = fields[anchor][1]
    at = line_end(text, content_end(text, an))
    kcol = node.value[1][0].start_mark.column if len(node.value) > 1 else key_col
    line = " " * kcol + f"{key}:" + value_text(key, new, kcol, list_style) + "\n"
    if at == len(text) and not text.endswith("\n"):
        line = "\n" + line
    return (at, at, line, order)


def edit_entry(
    text: str, data: dict[str, Any], changed: list[str], coll: Coll, list_style: str, name: str
) -> str:
    """Splice the changed fields of one case into its text."""
    root = yt.compose(text)
    node = root.value[0]
    if node.flow_style:
        inside = text[node.start_mark.index : node.end_mark.index]
        if "\n" in inside and "#" in inside:  # re-blocking would drop comments between the braces
            msg = "written as a { … } mapping over several lines with comments inside; write it as a block entry (- id: …) to edit it"
            raise TestSetError(
                Problem(name, None, msg, case=data.get("id"))
            )  # line: of the entry, not the file
        return _reblock(text, node, data, list_style)
    fields = {k.value: (k, v) for k, v in node.value}
    keys_in_order = [k.value for k, v in node.value]
    edits: list[Edit] = []
    key_col = coll.key_col
    for key in changed:
        present = key in fields
        new = data.get(key)
        if present and new is None:
            kn, vn = fields[key]
            pos = keys_in_order.index(key)
            ls = line_start(text, kn.start_mark.index)
            if text[ls : kn.start_mark.index].strip() == "-":
                # first key on the dash line: pull the next key up onto it
                nxt = fields[keys_in_order[pos + 1]][0] if pos + 1 < len(keys_in_order) else None
                if nxt is None:
                    raise TestSetError(
                        Problem(name, None, "a case needs at least one key", case=data.get("id"))
                    )
                edits.append((kn.start_mark.index, nxt.start_mark.index, "", 0))
            else:
                edits.append((ls, line_end(text, content_end(text, vn)), "", 0))
        elif present:
            kn, vn = fields[key]
            edits.append((*replace_value(text, key, kn, vn, new, key_col, list_style), 0))
        else:
            edits.append(_insert_edit(text, node, fields, keys_in_order, key, new, (key_col, list_style)))
    # from the end backwards; inserts at one place go in reverse field order so they read in order
    edits.sort(key=lambda e: (e[0], e[1], e[3]), reverse=True)
    for s, e, rep, _o in edits:
        text = text[:s] + rep + text[e:]
    return text


def _keep_comment(text: str, edit: tuple[int, int, str]) -> tuple[int, int, str]:
    """A multi-line replacement on a line with a trailing comment: the comment moves
    onto the first line (after a block header) instead of trailing the last one."""
    s, e, rep = edit
    if "\n" not in rep:
        return edit
    eol = text.find("\n", e)
    eol = len(text) if eol < 0 else eol
    tail = text[e:eol]
    if not tail.strip().startswith("#"):
        return edit
    head, rest = rep.split("\n", 1)
    return (s, eol, head + tail + "\n" + rest)


def _reblock(text: str, node: Any, data: dict[str, Any], list_style: str) -> str:
    """A case written as a flow mapping (``- {id: a, …}``), edited: written again as a
    block entry at the same place; its comment lines above and its trailing comment stay."""
    dash = find_dash(text, node.start_mark.index)
    ls = line_start(text, dash)
    shape = Coll("cases")
    shape.col = dash - ls
    shape.key_col = shape.col + 2
    body = render_case(data, shape, list_style)
    first, rest = body.split("\n", 1)
    tail = text[node.end_mark.index :]
    nl = tail.find("\n")
    same_line, after = (tail, "") if nl < 0 else (tail[:nl], tail[nl + 1 :])
    if same_line.strip():
        first += same_line
    return text[:ls] + first + "\n" + rest + after


def _replace_scalar(text: str, key: str, kn: Any, vn: Any, new: Any, list_style: str) -> tuple[int, int, str]:
    start = vn.start_mark.index
    if key in LIST_FIELDS:  # was null
        return (start, content_end(text, vn), yt.render_flow_list(list(new)))
    end = content_end(text, vn) if vn.style in ("|", ">") else vn.end_mark.index
    if yt.is_plain(vn) and vn.value == "":
        # `key:` with nothing after it
        colon = text.find(":", kn.end_mark.index)
        return _keep_comment(
            text, (colon + 1, colon + 1, value_text(key, new, kn.start_mark.column, list_style))
        )
    if vn.style in ("|", ">") and isinstance(new, str):
        first_content = line_end(text, start)
        ind = indent_of(text[first_content : line_end(text, first_content)]) or kn.start_mark.column + 2
        blk = yt.render_block_scalar(new, ind, vn.style)
        return (start, end, blk if blk is not None else yt.double_quoted(new))
    if isinstance(new, str) and "\n" in new.rstrip("\n") and yt.is_plain(vn):
        blk = yt.render_block_scalar(new, kn.start_mark.column + 2)
        if blk is not None:
            return _keep_comment(text, (start, end, blk))
    return (start, end, yt.render_scalar(new, "" if yt.is_plain(vn) else vn.style))


def replace_value(
    text: str, key: str, kn: Any, vn: Any, new: Any, key_col: int, list_style: str
) -> tuple[int, int, str]:
    """(start, end, replacement) that turns the value node ``vn`` into ``new``."""
    if isinstance(vn, yt.ScalarNode):
        return _replace_scalar(text, key, kn, vn, new, list_style)
    start = vn.start_mark.index
    # lists
    old_items = [(yt.plain_text(it), text[it.start_mark.index : it.end_mark.index]) for it in vn.value]
    if vn.flow_style:
        spaced = text[start + 1 : start + 2] == " " and len(vn.value) > 0
        return (start, vn.end_mark.index, yt.render_flow_list(list(new), old_items, spaced))
    # block list: keep unchanged items' whole lines (with their comments)
    colon = text.find(":", kn.end_mark.index)
    end = content_end(text, vn)
    if not new:
        return (colon + 1, end, " []")
    first_dash = find_dash(text, vn.value[0].start_mark.index)
    dash_col = first_dash - line_start(text, first_dash)
    pool: dict[str | None, list[str]] = {}
    for it in vn.value:
        d = find_dash(text, it.start_mark.index)
        le = text.find("\n", it.end_mark.index)
        src = text[d : len(text) if le < 0 else le]
        pool.setdefault(yt.plain_text(it), []).append(src)
    lines = []
    for v in new:
        srcs = pool.get(v)
        lines.append(" " * dash_col + (srcs.pop(0) if srcs else "- " + yt.render_scalar(v)))
    return (colon + 1, end, "\n" + "\n".join(lines))


def check_entry(item: Item, is_case: bool, name: str) -> None:
    """Re-read a rendered entry and prove it says exactly what was meant."""
    try:
        root = yt.compose(item.text)
    except yt.YAMLError as e:  # pragma: no cover - a rendering bug
        raise RuntimeError(f"ragtriage bug: rendered YAML does not parse: {e}\n{item.text}") from None
    if is_case:
        node = root.value[0] if isinstance(root, yt.SequenceNode) and len(root.value) == 1 else None
        if node is None:
            raise RuntimeError(f"ragtriage bug: rendered case is not one entry:\n{item.text}")
        data, _f, probs = read_case_node(node, name)
        if probs or data != item.data:
            raise RuntimeError(
                f"ragtriage bug: rendered case reads back differently:\n{item.text}\n{data} != {item.data}"
            )
    else:
        ok = (
            isinstance(root, yt.MappingNode)
            and len(root.value) == 1
            and yt.plain_text(root.value[0][0]) == item.key
        )
        if not ok:
            raise RuntimeError(f"ragtriage bug: rendered label is not one entry:\n{item.text}")
