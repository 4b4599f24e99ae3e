"""Every piece the writer renders reads back identically under pure-Python PyYAML
(``yaml.SafeLoader``, not the C one), libyaml (``yaml.CSafeLoader``) and ruamel —
scalars in each style and context, block scalars, flow lists, and whole edits of a
test set (Unicode, control characters, YAML indicators, comments, flow and block
styles). A bounded hypothesis fuzz (issue 12)."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from ragtriage.core import yamltext as yt
from ragtriage.core.errors import TestSetError
from ragtriage.core.testset import TestSetDocument

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EDITS = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

_RUAMEL = YAML(typ="safe", pure=True)


def readers(text: str) -> dict[str, object]:
    """The document as each reader reads it; a reader that fails is a test failure."""
    out = {"pyyaml-pure": yaml.load(text, Loader=yaml.SafeLoader)}
    if hasattr(yaml, "CSafeLoader"):
        out["libyaml"] = yaml.load(text, Loader=yaml.CSafeLoader)
    out["ruamel"] = _RUAMEL.load(text)
    return out


# Characters that break hand-written quoting: YAML indicators, quotes, comments,
# line breaks of every kind, C0/C1 controls, BOM, non-characters, Spanish punctuation.
SPECIAL = list("-?:,[]{}#&*!|>'\"%@` \t\n\r\\") + [
    "\x00",
    "\x07",
    "\x1b",
    "\x7f",
    "\x80",
    "\x85",
    "\x9f",
    "\xa0",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\ufffe",
    "\uffff",
    "¿",
    "¡",
    "ñ",
    "é",
    "ü",
    "\U0001f600",
]
WORDS = [
    "yes",
    "no",
    "null",
    "~",
    "true",
    "0x1f",
    "1e3",
    "0o7",
    "2024-01-01",
    "<<",
    "=",
    ".inf",
    "---",
    "...",
]
text_st = st.one_of(
    st.text(alphabet=st.sampled_from(SPECIAL + list("abc xyz019")), max_size=20),
    st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=20),
    st.sampled_from(WORDS),
    st.lists(st.sampled_from(WORDS + ["¿abierto?", "horario", " ", ": ", " #"]), max_size=4).map("".join),
)
one_line_st = text_st.filter(lambda s: "\n" not in s)


def same_everywhere(doc: str, want: object, pick) -> None:
    for name, data in readers(doc).items():
        assert pick(data) == want, (name, doc)


@FUZZ
@given(value=text_st, style=st.sampled_from(["", "'", '"', None]), flow=st.booleans())
def test_a_scalar_reads_back_in_every_reader(value, style, flow):
    piece = yt.render_scalar(value, style, flow=flow)
    assert "\n" not in piece
    if flow:
        same_everywhere(f"k: [{piece}, z]\n", [value, "z"], lambda d: d["k"])
        same_everywhere(f"k: [ {piece} ]\n", [value], lambda d: d["k"])
    else:
        same_everywhere(f"k: {piece}\n", value, lambda d: d["k"])
        same_everywhere(f"k: {piece}   # comment\n", value, lambda d: d["k"])
        same_everywhere(f"- {piece}\n", [value], lambda d: d)


@FUZZ
@given(values=st.lists(text_st, max_size=5), spaced=st.booleans())
def test_a_flow_list_reads_back_in_every_reader(values, spaced):
    piece = yt.render_flow_list(values, None, spaced)
    same_everywhere(f"tags: {piece}\n", values, lambda d: d["tags"])


@FUZZ
@given(value=text_st, style=st.sampled_from(["|", ">"]), indent=st.integers(2, 6))
def test_a_block_scalar_reads_back_in_every_reader(value, style, indent):
    blk = yt.render_block_scalar(value, indent, style)
    assume(blk is not None)
    same_everywhere(f"k: {blk}\nnext: 1\n", value, lambda d: d["k"])


@FUZZ
@given(data=st.data(), flow=st.booleans())
def test_what_the_fast_path_writes_plain_the_emitter_would_too(data, flow):
    fast = yt._FAST_FLOW if flow else yt._FAST_BLOCK
    value = data.draw(st.from_regex(fast, fullmatch=True))
    assert fast.match(value)
    assume(not yt._AMBIGUOUS.match(value))
    a = yt._EMITTER.analyze_scalar(value)
    assert a.allow_flow_plain if flow else a.allow_block_plain, value
    piece = yt.render_scalar(value, "", flow=flow)
    assert piece == value
    same_everywhere(
        f"k: [{piece}]\n" if flow else f"k: {piece}\n", [value] if flow else value, lambda d: d["k"]
    )


@FUZZ
@given(value=text_st, flow=st.booleans())
def test_the_writer_never_writes_plain_what_the_emitter_would_quote(value, flow):
    a = yt._EMITTER.analyze_scalar(value)
    if yt.plain_ok(value, flow):
        assert a.allow_flow_plain if flow else a.allow_block_plain, value
    if ": " in value or " #" in value or value.endswith(":") or (flow and value.startswith(":")):
        assert not (a.allow_flow_plain if flow else a.allow_block_plain), value


# The character class of yamltext._DQ_RAW as code-point ranges. Drawing from these is the
# same set of strings as st.from_regex(_DQ_RAW), without hypothesis expanding a class of
# a million characters one by one (5-8 s of set-up per run, for 200 examples that take
# a fraction of a second); the test below checks the ranges are exactly that class.
DQ_RAW_RANGES = [
    (0x20, 0x21),
    (0x23, 0x5B),
    (0x5D, 0x7E),
    (0xA0, 0x2027),
    (0x202A, 0xD7FF),
    (0xE000, 0xFEFE),
    (0xFF00, 0xFFFD),
    (0x10000, 0x10FFFF),
]
dq_raw_st = st.text(
    st.one_of([st.characters(min_codepoint=lo, max_codepoint=hi) for lo, hi in DQ_RAW_RANGES])
)


def test_dq_raw_ranges_are_exactly_the_writers_class():
    def inside(c: int) -> bool:
        return any(lo <= c <= hi for lo, hi in DQ_RAW_RANGES)

    edges = {c + d for lo, hi in DQ_RAW_RANGES for c in (lo, hi) for d in (-1, 0, 1)}
    points = set(range(0x3000)) | edges | set(range(0xD700, 0x10100))
    for c in sorted(p for p in points if 0 <= p <= 0x10FFFF):
        assert bool(yt._DQ_RAW.match(chr(c))) == inside(c), hex(c)


@FUZZ
@given(value=st.one_of(text_st, dq_raw_st))
def test_double_quoting_is_exactly_the_emitters(value):
    assert yt.double_quoted(value) == yt._EMITTER.scalar(value, '"')


# ---------------------------------------------------------------- whole edits of a test set

BASES = [
    "version: 1\ncases:\n  - id: a\n    question: uno   # c\n    tags: [x, y]\n    notes: n\n"
    "  - id: b\n    question: 'dos'\n    expected:\n      - c1\n",
    "version: 1\n# top\ncases:\n  # about a\n  - {id: a, question: uno, tags: [x]}   # flow\n"
    "  - id: b\n    question: \"dos\"\n    notes: |\n      línea\n      otra\n",
    "version: 1\ncases:\n- id: a\n  question: uno\n  notes:   # empty\n- id: b\n  question: dos\n"
    "labels:\n  c1:\n    sha: s\n    text: t\n",
]
FIELD_VALUES = {
    "question": text_st.filter(lambda s: s.strip() != ""),
    "notes": st.one_of(text_st, st.none()),
    "answer": st.one_of(text_st, st.none()),
    "topic": st.one_of(one_line_st, st.none()),
    "tags": st.lists(text_st, max_size=3).map(tuple),
    "must_contain": st.lists(text_st, max_size=3).map(tuple),
}
edit_st = st.lists(
    st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(sorted(FIELD_VALUES))).flatmap(
        lambda t: FIELD_VALUES[t[1]].map(lambda v: (t[0], t[1], v))
    ),
    min_size=1,
    max_size=4,
)


@EDITS
@given(base=st.sampled_from(BASES), edits=edit_st, label=text_st)
def test_edits_save_a_file_every_reader_reads_as_the_document_says(tmp_path_factory, base, edits, label):
    p = tmp_path_factory.mktemp("fuzz") / "t.yaml"
    p.write_text(base, encoding="utf-8")
    doc = TestSetDocument.load(p, use_cache=False)
    for cid, field, value in edits:
        try:
            doc.update_case(cid, **{field: value})
        except TestSetError:
            pass  # refused with a message (e.g. an empty question): the document is unchanged
    doc.add_case(id="nuevo", question="q", notes=label, tags=(label,))
    doc.set_label("c9", {"sha": "s", "text": label, "doc": label})
    doc.save(record_labels=False)
    text = p.read_text(encoding="utf-8")
    back = TestSetDocument.load(p, use_cache=False)
    assert back.cases == doc.cases
    want_cases = [c.model_dump(exclude_defaults=True) for c in doc.cases]
    for name, data in readers(text).items():
        got = []
        for c in data["cases"]:
            c = {k: v for k, v in c.items() if v is not None}
            for k in ("tags", "expected", "must_contain"):
                if k in c:
                    c[k] = tuple(c[k])
                    if not c[k]:
                        del c[k]
            got.append(c)
        assert got == want_cases, (name, text)
        assert data["labels"]["c9"]["text"] == label, (name, text)


@pytest.mark.parametrize("value", ["¿abierto?", "¿qué?", "a?b", "¿y: z?"])
def test_question_marks_in_flow_lists_are_readable_by_pure_pyyaml(tmp_path, value):
    p = tmp_path / "t.yaml"
    p.write_text("version: 1\ncases:\n  - id: a\n    question: q\n    tags: [horario]\n", encoding="utf-8")
    doc = TestSetDocument.load(p)
    doc.update_case("a", tags=("horario", value))
    doc.save()
    data = yaml.load(p.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    assert data["cases"][0]["tags"] == ["horario", value]
