"""The text pieces of a test set and the plumbing that keeps them joined.

The file is held as a list of *regions*: plain text, and two *collections*
(the ``cases`` list and the ``labels`` map) cut into one piece of text per
entry. An entry's text is its own lines: the comment lines directly above it
(no blank line between), its body, and comment lines inside it. The text between
two entries (blank lines, detached comments) is a *gap* that stays in place.
"""

from __future__ import annotations

import re
from itertools import chain
from typing import Any

from .. import yamltext as yt


class Item:
    """One entry (a case or a label): its own text and the data it says."""

    __slots__ = ("text", "key", "data", "model", "line")

    def __init__(self, text: str, key: str, data: dict[str, Any], model: Any = None, line: int = 0):
        self.text = text
        self.key = key
        self.data = data
        self.model = model
        self.line = line  # line in the file as loaded (for messages before any edit)


class Coll:
    """A block collection region: ``cases`` (a list) or ``labels`` (a mapping)."""

    __slots__ = ("name", "items", "gaps", "col", "key_col", "missing", "span", "open_end")

    def __init__(self, name: str):
        self.name = name
        self.items: list[Item] = []
        self.gaps: list[str] = []  # gaps[i] precedes items[i]; gaps[0] == ""
        self.col = 2  # column of the dash (cases) or of the key (labels)
        self.key_col = 4  # column of the keys inside an entry
        self.missing = False  # the key is not in the file at all
        self.span: tuple[int, int] | None = None  # (start, end) in the text while loading
        self.open_end = True  # an entry may lack its final newline (checked once, when needed)

    def text(self) -> str:
        # gap, entry, gap, entry ... joined at once: no 100k temporary gap+entry strings
        return "".join(chain.from_iterable(zip(self.gaps, [it.text for it in self.items])))


Region = str | Coll


def join(regions: list[Region]) -> str:
    return "".join(r if isinstance(r, str) else r.text() for r in regions)


# ---------------------------------------------------------------- text positions


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def line_end(text: str, pos: int) -> int:
    """Index just past the newline of the line holding ``pos`` (or len(text))."""
    i = text.find("\n", pos)
    return len(text) if i < 0 else i + 1


def content_end(text: str, node: Any) -> int:
    """End of a value's last content line (before its newline), trailing blank lines excluded."""
    end: int = node.end_mark.index
    if isinstance(node, yt.SequenceNode) and node.flow_style is False and node.value:
        return content_end(text, node.value[-1])
    if isinstance(node, yt.MappingNode) and node.flow_style is False and node.value:
        return content_end(text, node.value[-1][1])
    if isinstance(node, yt.ScalarNode) and node.style in ("|", ">"):
        # block scalar: its span runs to the start of the next content line; step back over blank lines
        j = end
        while j > node.start_mark.index:
            ls = line_start(text, j - 1)
            if text[ls:j].strip():
                break
            j = ls
        return j - 1 if j > 0 and text[j - 1] == "\n" else j
    e = text.find("\n", end)
    return len(text) if e < 0 else e


def is_comment_line(line: str) -> bool:
    return line.lstrip(" ").startswith("#")


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def find_dash(text: str, node_start: int) -> int:
    j = node_start - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j


def leading_comment_lines(text: str) -> int:
    """How many lines at the top of an entry's text are its attached comments."""
    lead = 0
    for ln in text.split("\n"):
        if ln.strip() and not is_comment_line(ln):
            break
        lead += 1
    return lead


# ---------------------------------------------------------------- collection plumbing


def insert(regions: list[Region], coll: Coll, item: Item, index: int) -> None:
    if not coll.items:
        open_collection(regions, coll)
        coll.items.append(item)
        coll.gaps.append("")
        return
    ensure_entry_ends_with_newline(coll)
    gap = coll.gaps[-1] if len(coll.gaps) > 1 else ""
    gap = "".join(ln for ln in gap.splitlines(keepends=True) if not ln.strip())  # blank lines only
    if index == 0:
        coll.items.insert(0, item)
        coll.gaps.insert(1, gap)
    else:
        coll.items.insert(index, item)
        coll.gaps.insert(index, gap)
    ensure_entry_ends_with_newline(coll)


def ensure_entry_ends_with_newline(coll: Coll) -> None:
    """Only the file's final entry can lack its newline (a file without one at the end);
    once another entry follows it, it needs one."""
    if not coll.open_end:
        return
    # While ``open_end`` holds only the last entry can be that one: every change that moves
    # entries or puts one after the last comes here first (and an undo brings back a state
    # that held it). Looking at the last alone keeps an add O(1): a walk over 100,000
    # entries after each undo was most of ``d``'s time.
    items = coll.items
    if items and not items[-1].text.endswith("\n"):
        it = items[-1]
        items[-1] = Item(it.text + "\n", it.key, it.data, it.model, it.line)
    coll.open_end = False


def _add_text(regions: list[Region], ri: int, before: str = "", after: str = "") -> None:
    reg = regions[ri]
    assert isinstance(reg, str)
    regions[ri] = before + reg + after


def remove(regions: list[Region], coll: Coll, idx: int) -> None:
    items, gaps = coll.items, coll.gaps
    n = len(items)

    def comments(g: str) -> str:
        return "".join(ln for ln in g.splitlines(keepends=True) if ln.strip())

    if n == 1:
        items.pop()
        gaps.pop()
        close_collection(regions, coll)
        return
    if idx == 0:
        kept = comments(gaps[1])
        items.pop(0)
        gaps.pop(1)
        if kept:
            _add_text(regions, regions.index(coll) - 1, after=kept)
    else:
        kept = comments(gaps[idx])
        items.pop(idx)
        gaps.pop(idx)
        if kept:
            if idx < len(gaps):
                gaps[idx] = kept + gaps[idx]
            else:
                _add_text(regions, regions.index(coll) + 1, before=kept)


def open_collection(regions: list[Region], coll: Coll) -> None:
    """First entry of an empty collection: make `name:` a block key (adding it if missing)."""
    ri = regions.index(coll)
    if coll.missing:
        before = join(regions[:ri])
        add = "" if before.endswith("\n") or not before else "\n"
        if before and not before.endswith("\n\n"):
            add += "\n"
        note = (
            "   # maintained by ragtriage: what each labelled chunk said when labelled"
            if coll.name == "labels"
            else ""
        )
        _add_text(regions, ri - 1, after=add + f"{coll.name}:{note}\n")
        coll.missing = False
        return
    ri, ls, le = key_line(regions, coll)
    text = regions[ri]
    assert isinstance(text, str)
    body = text[ls:le].rstrip("\n")
    m = re.match(r"^(\s*\S+?:)\s*(\[\s*\]|\{\s*\}|~|null)?\s*(#.*)?$", body)
    new = (m.group(1) + (("   " + m.group(3)) if m.group(3) else "")) if m else body
    regions[ri] = text[:ls] + new + "\n" + text[le:]


def close_collection(regions: list[Region], coll: Coll) -> None:
    """Last entry removed: write `cases: []` / `labels: {}` so the file stays clear."""
    ri, ls, le = key_line(regions, coll)
    text = regions[ri]
    assert isinstance(text, str)
    line = text[ls:le].rstrip("\n")
    m = re.match(r"^(\s*\S+?:)\s*(#.*)?$", line)
    empty = "[]" if coll.name == "cases" else "{}"
    new = (m.group(1) + " " + empty + (("   " + m.group(2)) if m.group(2) else "")) if m else line
    regions[ri] = text[:ls] + new + "\n" + text[le:]


def key_line(regions: list[Region], coll: Coll) -> tuple[int, int, int]:
    """(region index, start, end) of the collection's `name:` line in the text before it."""
    ri = regions.index(coll) - 1
    before = regions[ri]
    assert isinstance(before, str)
    pat = re.compile(r"^[ ]*" + re.escape(coll.name) + r"[ ]*:.*$", re.M)
    last = None
    for m in pat.finditer(before):
        last = m
    if last is None:  # pragma: no cover - the key line always precedes its collection
        raise RuntimeError(f"ragtriage bug: no `{coll.name}:` line before its entries")
    return ri, last.start(), line_end(before, last.start())


def anchor_empty(regions: list[Region], coll: Coll, key_index: int | None) -> None:
    """Put an empty collection right after its key line (or, if the key is missing, at the end)."""
    if key_index is None:
        coll.missing = True
        regions.extend([coll, ""])
        return
    pos = key_index
    acc = 0
    for ri, reg in enumerate(regions):
        size = len(reg) if isinstance(reg, str) else len(reg.text())
        if isinstance(reg, str) and acc <= pos < acc + size:
            le = line_end(reg, pos - acc)
            regions[ri : ri + 1] = [reg[:le], coll, reg[le:]]
            return
        acc += size
    coll.missing = True  # pragma: no cover - the key is always found
    regions.extend([coll, ""])


def case_line(regions: list[Region], cases: Coll, idx: int) -> int:
    """1-based line where entry ``idx`` of ``cases`` (its first own line) starts.

    It walks every earlier entry: for the lines of many cases use :func:`case_lines`."""
    n = 1
    for reg in regions:
        if isinstance(reg, str):
            n += reg.count("\n")
            continue
        if reg is cases:
            for i in range(idx):
                n += reg.gaps[i].count("\n") + reg.items[i].text.count("\n")
            n += reg.gaps[idx].count("\n")
            return n + leading_comment_lines(reg.items[idx].text)
        n += reg.text().count("\n")
    raise KeyError(idx)  # pragma: no cover


def case_lines(regions: list[Region], cases: Coll) -> dict[str, int]:
    """Every entry's line (as :func:`case_line`) in one pass over the text."""
    out: dict[str, int] = {}
    n = 1
    for reg in regions:
        if isinstance(reg, str):
            n += reg.count("\n")
            continue
        if reg is not cases:
            n += reg.text().count("\n")
            continue
        for gap, it in zip(reg.gaps, reg.items):
            n += gap.count("\n")
            out[it.key] = n + leading_comment_lines(it.text)
            n += it.text.count("\n")
    return out


# ---------------------------------------------------------------- settings lines


def splice_setting(regions: list[Region], key: str, value: Any) -> None:
    """Replace ``key: value`` on its line (its comment kept), remove it (None), or add it before ``cases:``."""
    pat = re.compile(r"^" + key + r"[ \t]*:(?P<val>[ \t]*[^#\n]*?)(?P<rest>[ \t]+#[^\n]*)?$", re.M)
    for ri, reg in enumerate(regions):
        if not isinstance(reg, str):
            continue
        m = pat.search(reg)
        if not m:
            continue
        if value is None:
            regions[ri] = reg[: m.start()] + reg[line_end(reg, m.start()) :]
        else:
            regions[ri] = reg[: m.start("val")] + " " + yt.render_scalar(value) + reg[m.end("val") :]
        return
    if value is None:
        return
    line = f"{key}: {yt.render_scalar(value)}\n"
    cases_pat = re.compile(r"^cases[ \t]*:", re.M)
    for ri, reg in enumerate(regions):
        if isinstance(reg, str):
            m = cases_pat.search(reg)
            if m:
                regions[ri] = reg[: m.start()] + line + reg[m.start() :]
                return
