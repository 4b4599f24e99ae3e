"""Exchange test sets with other tools: export to, and import from, five formats.

| format | file | what it carries |
|---|---|---|
| ``jsonl`` | ours, one case per line | every case field, and the labels of its expected chunks |
| ``csv`` | one case per row, a header | every case field (lists as ``a | b``, or a JSON array when needed) |
| ``ragas`` | EvaluationDataset JSONL | ``user_input``, ``reference``, ``reference_contexts``, ``reference_context_ids`` |
| ``deepeval`` | goldens JSON | ``input``, ``expected_output``, ``context``, ``comments``; the rest in ``additional_metadata`` |
| ``trec`` | qrels (``qid 0 docid rel``) | case ids and expected chunk ids; a run's rankings as a TREC run file |

Export never changes the test set. Import returns plain case dicts, labels and a
list of notes saying what could not be mapped; the command writes them into a
new commented test set through the test-set document. Every reader rejects bad
input with located problems (file, line, field) before anything is written.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from .errors import InputError, Problem
from .schema import CASE_FIELDS, LABEL_FIELDS, Case
from .text import fingerprint

FORMATS = ("jsonl", "csv", "ragas", "deepeval", "trec")

#: ragas SingleTurnSample fields that describe one run of a system, not the test set
RAGAS_RUN_FIELDS = ("response", "retrieved_contexts", "retrieved_context_ids", "multi_responses")
RAGAS_KNOWN = ("user_input", "reference", "reference_contexts", "reference_context_ids")
#: ragas testset-generator fields, kept as tags
RAGAS_TAG_FIELDS = ("synthesizer_name", "persona_name", "query_style", "query_length")
DEEPEVAL_RUN_FIELDS = ("actual_output", "retrieval_context", "tools_called")
DEEPEVAL_KNOWN = ("input", "expected_output", "context", "comments", "additional_metadata", "source_file")
_DEEPEVAL_ALIASES = {
    "expectedOutput": "expected_output",
    "actualOutput": "actual_output",
    "retrievalContext": "retrieval_context",
    "additionalMetadata": "additional_metadata",
    "sourceFile": "source_file",
    "toolsCalled": "tools_called",
    "expectedTools": "expected_tools",
}
LIST_FIELDS = ("expected", "must_contain", "tags")
DUPLICATE_PREFIX = "ragtriage:duplicate:"


@dataclass
class Imported:
    """What an import produced: case fields in file order, labels, and notes for the user."""

    cases: list[dict] = field(default_factory=list)
    labels: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# ====================================================================== export


def _case_dict(case: Case) -> dict:
    """Every case field, lists as lists, defaults included (the flat form)."""
    d = {}
    for name in CASE_FIELDS:
        v = getattr(case, name)
        d[name] = list(v) if isinstance(v, tuple) else v
    return d


def _label_dict(label) -> dict:
    if label is None:
        return {}
    if isinstance(label, Mapping):
        return {k: v for k, v in label.items() if v is not None}
    data = label.model_dump() if hasattr(label, "model_dump") else dict(label)
    return {k: v for k, v in data.items() if v is not None}


def chunk_texts(ids: Iterable[str], labels: Mapping, corpus_path=None) -> tuple[dict[str, str], list[str]]:
    """Text of each chunk id: from the corpus when it has it (streamed, only the ids
    asked for are kept), else the text remembered in the label. Returns (texts, notes)."""
    wanted = set(ids)
    texts: dict[str, str] = {}
    notes: list[str] = []
    if corpus_path is not None and wanted and Path(corpus_path).exists():
        from .corpus import iter_chunks

        for chunk in iter_chunks(corpus_path):
            if chunk.id in wanted:
                texts[chunk.id] = chunk.text
                if len(texts) == len(wanted):
                    break
    missing = []
    for cid in sorted(wanted - texts.keys()):
        text = _label_dict(labels.get(cid)).get("text")
        if text is not None:
            texts[cid] = text
        else:
            missing.append(cid)
    if missing:
        notes.append(
            f"no text for {len(missing)} expected chunk(s) (not in the corpus, no label): "
            f"{', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}; their contexts are left out"
        )
    return texts, notes


def export_testset(doc, fmt: str, corpus_path=None) -> tuple[str, list[str]]:
    """Render a loaded test set (``doc.cases``, ``doc.labels``, ``doc.corpus_path``) in ``fmt``.

    Returns the text and notes about what the format could not carry."""
    cases = list(doc.cases)
    labels = doc.labels or {}
    if corpus_path is None:
        corpus_path = getattr(doc, "corpus_path", None)
    if fmt == "jsonl":
        return export_jsonl(cases, labels), []
    if fmt == "csv":
        return export_csv(cases), ["csv carries no labels (remembered chunk texts); use jsonl to keep them"]
    if fmt == "trec":
        return export_qrels(cases)
    ids = {cid for c in cases for cid in c.expected}
    texts, notes = chunk_texts(ids, labels, corpus_path)
    if fmt == "ragas":
        text, more = export_ragas(cases, texts)
    elif fmt == "deepeval":
        text, more = export_deepeval(cases, texts)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return text, notes + more


def _dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def export_jsonl(cases: Sequence[Case], labels: Mapping) -> str:
    out = []
    for c in cases:
        d = _case_dict(c)
        d["labels"] = {cid: _label_dict(labels[cid]) for cid in c.expected if cid in labels}
        out.append(_dumps(d))
    return "".join(line + "\n" for line in out)


def _list_cell(values: Sequence[str]) -> str:
    """``a | b`` when that reads back unchanged, else a JSON array."""
    if not values:
        return ""
    plain = all(
        v and "|" not in v and v == v.strip() and not v.startswith("[") and "\n" not in v for v in values
    )
    return " | ".join(values) if plain else _dumps(list(values))


def export_csv(cases: Sequence[Case]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CASE_FIELDS)
    for c in cases:
        row = []
        for name in CASE_FIELDS:
            v = getattr(c, name)
            if name in LIST_FIELDS:
                row.append(_list_cell(v))
            elif name == "unanswerable":
                row.append("true" if v else "false")
            else:
                row.append("" if v is None else v)
        w.writerow(row)
    return buf.getvalue()


def _dropped(fmt: str, cases: Sequence[Case], checks: dict) -> list[str]:
    """One note naming what ``fmt`` cannot carry, with how many cases use it."""
    parts = []
    for what, pred in checks.items():
        n = sum(1 for c in cases if pred(c))
        if n:
            parts.append(f"{what} ({n} case(s))")
    return [f"{fmt} has no place for {'; '.join(parts)}: not exported"] if parts else []


def export_ragas(cases: Sequence[Case], texts: Mapping[str, str]) -> tuple[str, list[str]]:
    out = []
    for c in cases:
        ids = [cid for cid in c.expected if cid in texts]
        row = {"user_input": c.question}
        if c.answer is not None:
            row["reference"] = c.answer
        row["reference_contexts"] = [texts[cid] for cid in ids]
        row["reference_context_ids"] = ids
        out.append(_dumps(row))
    notes = _dropped(
        "ragas",
        cases,
        {
            "case ids": lambda c: True,
            "topic": lambda c: c.topic,
            "must_contain": lambda c: c.must_contain,
            "expect: all": lambda c: c.expect == "all",
            "unanswerable": lambda c: c.unanswerable,
            "tags": lambda c: c.tags,
            "notes": lambda c: c.notes,
        },
    )
    return "".join(line + "\n" for line in out), notes


def export_deepeval(cases: Sequence[Case], texts: Mapping[str, str]) -> tuple[str, list[str]]:
    goldens = []
    for c in cases:
        g = {"input": c.question}
        if c.answer is not None:
            g["expected_output"] = c.answer
        g["context"] = [texts[cid] for cid in c.expected if cid in texts]
        if c.notes is not None:
            g["comments"] = c.notes
        meta = {"id": c.id}
        if c.topic is not None:
            meta["topic"] = c.topic
        meta["expected"] = list(c.expected)
        if c.expect != "any":
            meta["expect"] = c.expect
        if c.must_contain:
            meta["must_contain"] = list(c.must_contain)
        if c.unanswerable:
            meta["unanswerable"] = True
        if c.tags:
            meta["tags"] = list(c.tags)
        g["additional_metadata"] = meta
        goldens.append(g)
    return json.dumps(goldens, ensure_ascii=False, indent=2) + "\n", []


def export_qrels(cases: Sequence[Case]) -> tuple[str, list[str]]:
    lines = []
    for c in cases:
        for cid in c.expected:
            lines.append(f"{c.id} 0 {cid} 1")
    notes = _dropped(
        "TREC qrels",
        cases,
        {
            "unanswerable cases": lambda c: c.unanswerable,
            "unlabelled cases": lambda c: c.unlabelled,
            "questions": lambda c: True,
        },
    )
    return "".join(line + "\n" for line in lines), notes


def export_trec_run(run_cases: Iterable[Mapping], tag: str = "ragtriage") -> str:
    """A TREC run file (``qid Q0 docid rank score tag``) from a run's case records.

    trec_eval re-sorts by score; the scores written are the rank reversed
    (depth, depth-1, …, 1), so its order is the order ragtriage scored. A chunk
    repeated in a ranking counts once, at its first position, and the later slot
    keeps its place: it is written as a never-relevant placeholder id."""
    tag = re.sub(r"\s+", "_", tag) or "ragtriage"
    lines = []
    for rec in run_cases:
        qid = rec.get("id")
        ranking = rec.get("ranking") or []
        seen = set()
        depth = len(ranking)
        for i, docid in enumerate(ranking):
            if docid in seen:
                docid = f"{DUPLICATE_PREFIX}{i + 1}"
            seen.add(docid)
            lines.append(f"{qid} Q0 {docid} {i + 1} {depth - i} {tag}")
    return "".join(line + "\n" for line in lines)


# ====================================================================== import


def _slug(text: str, limit: int = 40) -> str:
    text = unicodedata.normalize("NFC", text).lower()
    words = re.findall(r"\w+", text)
    out = ""
    for w in words:
        nxt = f"{out}-{w}" if out else w
        if len(nxt) > limit:
            break
        out = nxt
    return out or (words[0][:limit] if words else "")


class _Ids:
    """Unique case ids: given ones are checked, missing ones made from the question."""

    def __init__(self, name: str, problems: list[Problem]):
        self.name = name
        self.problems = problems
        self.first: dict[str, int | None] = {}
        self.generated = 0

    def given(self, cid: str, line: int | None) -> None:
        if cid in self.first:
            where = self.first[cid]
            self.problems.append(
                Problem(
                    self.name,
                    line,
                    f"duplicate id {cid!r}" + (f" (first at line {where})" if where else ""),
                    case=None,
                    field="id",
                )
            )
        else:
            self.first[cid] = line

    def make(self, question: str, line: int | None) -> str:
        base = _slug(question) or f"q{len(self.first) + 1}"
        cid, n = base, 2
        while cid in self.first:
            cid, n = f"{base}-{n}", n + 1
        self.first[cid] = line
        self.generated += 1
        return cid


def _validate(fields: dict, name: str, line: int | None, problems: list[Problem]) -> dict | None:
    """Check one case with the test set's own rules; located problems, no exception."""
    try:
        Case(**fields)
    except ValidationError as e:
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"]) or None
            msg = err["msg"].removeprefix("Value error, ").replace("a valid tuple", "a list")
            problems.append(Problem(name, line, msg, case=fields.get("id"), field=loc))
        return None
    return {k: v for k, v in fields.items() if v is not None}


def _note_counts(notes: list[str], counts: Mapping[str, int], template: str) -> None:
    for key, n in counts.items():
        if n:
            notes.append(template.format(key=key, n=n))


class _TextMatcher:
    """Find chunk ids by text in a corpus (normalised equality), for files that give texts only."""

    def __init__(self, corpus_path):
        self.corpus_path = corpus_path
        self._by_sha: dict[str, list[str]] | None = None

    def ids_for(self, text: str) -> list[str]:
        if self.corpus_path is None:
            return []
        if self._by_sha is None:
            from .corpus import iter_chunks

            self._by_sha = {}
            for chunk in iter_chunks(self.corpus_path):
                self._by_sha.setdefault(fingerprint(chunk.text), []).append(chunk.id)
        return self._by_sha.get(fingerprint(text), [])


def read_import(path, fmt: str, corpus_path=None) -> Imported:
    """Read ``path`` in ``fmt``; raise :class:`InputError` with every problem, located."""
    p = Path(path)
    name = str(path)
    if not p.exists():
        raise InputError(Problem(name, None, "file not found"))
    if p.is_dir():
        raise InputError(Problem(name, None, "is a folder, not a file"))
    raw = p.read_bytes()
    if b"\x00" in raw[:4096]:
        raise InputError(Problem(name, None, f"not a text file (NUL byte); expected {fmt}"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(Problem(name, line, "not UTF-8 text (save the file as UTF-8)")) from None
    readers = {
        "jsonl": _import_jsonl,
        "csv": _import_csv,
        "ragas": _import_ragas,
        "deepeval": _import_deepeval,
        "trec": _import_trec,
    }
    if fmt not in readers:
        raise ValueError(f"unknown format {fmt!r}")
    problems: list[Problem] = []
    result = readers[fmt](text, name, problems, _TextMatcher(corpus_path))
    if not problems and not result.cases:
        problems.append(Problem(name, None, f"no cases found (is this a {fmt} file?)"))
    if problems:
        raise InputError(problems[:50])
    return result


def _jsonl_objects(text: str, name: str, problems: list[Problem]):
    """(line, object) per non-blank line; a file that is one JSON array is accepted too."""
    if text.lstrip().startswith("["):
        yield from _json_array_items(text, name, problems)
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(Problem(name, lineno, f"not valid JSON ({e.msg} at column {e.colno})"))
            continue
        if not isinstance(obj, dict):
            problems.append(
                Problem(name, lineno, f"expected a JSON object per line, got {type(obj).__name__}")
            )
            continue
        yield lineno, obj


def _json_array_items(text: str, name: str, problems: list[Problem], key: str | None = None):
    """(line, object) for each item of a JSON array (or of ``{key: [...]}``), with its line."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as e:
        problems.append(Problem(name, e.lineno, f"not valid JSON ({e.msg} at column {e.colno})"))
        return
    if isinstance(whole, dict) and key and isinstance(whole.get(key), list):
        items = whole[key]
        start = text.find("[", text.find(json.dumps(key)) + len(key) + 2)
    elif isinstance(whole, list):
        items = whole
        start = text.find("[")
    else:
        problems.append(
            Problem(name, 1, "expected a JSON array" + (f" (or an object with {key!r})" if key else ""))
        )
        return
    # walk the array once more with raw_decode to learn where each item starts
    dec = json.JSONDecoder()
    pos = start + 1
    for item in items:
        while text[pos] in " \t\r\n,":
            pos += 1
        line = text.count("\n", 0, pos) + 1
        _, end = dec.raw_decode(text, pos)
        pos = end
        if not isinstance(item, dict):
            problems.append(Problem(name, line, f"expected a JSON object, got {type(item).__name__}"))
            continue
        yield line, item


def _str_list(v, name, line, cid, fld, problems) -> list[str] | None:
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in v):
        return [str(x) for x in v]
    problems.append(Problem(name, line, "must be a list of strings", case=cid, field=fld))
    return None


# ---------------------------------------------------------------- jsonl (ours)


def _import_jsonl(text, name, problems, matcher) -> Imported:
    res = Imported()
    ids = _Ids(name, problems)
    unknown: dict[str, int] = {}
    for line, obj in _jsonl_objects(text, name, problems):
        fields = {}
        for k, v in obj.items():
            if k in CASE_FIELDS:
                fields[k] = v
            elif k != "labels":
                close = difflib.get_close_matches(k, (*CASE_FIELDS, "labels"), n=1, cutoff=0.75)
                if close:  # our own format: a near miss is a typo that would lose data silently
                    problems.append(
                        Problem(
                            name,
                            line,
                            f"unknown field (did you mean {close[0]!r}?)",
                            case=obj.get("id") if isinstance(obj.get("id"), str) else None,
                            field=k,
                        )
                    )
                else:
                    unknown[k] = unknown.get(k, 0) + 1
        cid = fields.get("id")
        if not isinstance(cid, str):
            problems.append(Problem(name, line, "is required (a string)", field="id"))
            continue
        ids.given(cid, line)
        case = _validate(fields, name, line, problems)
        labels = obj.get("labels") or {}
        if not isinstance(labels, dict):
            problems.append(
                Problem(name, line, "must be an object {chunk id: label}", case=cid, field="labels")
            )
            continue
        for chunk_id, label in labels.items():
            if not isinstance(label, dict):
                problems.append(
                    Problem(name, line, "must be an object", case=cid, field=f"labels.{chunk_id}")
                )
                continue
            res.labels[chunk_id] = label
        if case is not None:
            res.cases.append(case)
    _note_counts(
        res.notes, unknown, "field `{key}` ({n} line(s)) is not a ragtriage case field: not imported"
    )
    return res


# ---------------------------------------------------------------- csv

_TRUE = {"true", "yes", "y", "1", "x", "sí", "si", "ja", "wahr"}
_FALSE = {"false", "no", "n", "0", "", "nein", "falsch"}


def _list_from_cell(cell: str, name, line, cid, fld, problems) -> list[str] | None:
    s = cell.strip()
    if not s:
        return []
    if s.startswith("["):
        try:
            v = json.loads(s)
        except json.JSONDecodeError:
            v = None
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return v
        problems.append(
            Problem(
                name,
                line,
                "starts with [ but is not a JSON array of strings "
                "(write `a | b`, or a JSON array like [\"a\", \"b\"])",
                case=cid,
                field=fld,
            )
        )
        return None
    if fld == "expected" and "|" not in s:
        return s.replace(",", " ").split()  # chunk ids: spaces or commas also separate
    return [part.strip() for part in s.split("|") if part.strip()]


def _import_csv(text, name, problems, matcher) -> Imported:
    res = Imported()
    first = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=first.count) if any(d in first for d in ",;\t") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        problems.append(Problem(name, None, "empty file (expected a header row)"))
        return res
    except csv.Error as e:
        problems.append(Problem(name, 1, f"not valid CSV ({e})"))
        return res
    cols = [h.strip().lstrip("\ufeff") for h in header]
    cols = [c.lower() if c.lower() in CASE_FIELDS else c for c in cols]  # "Question" is `question`
    if "question" not in cols:
        close = [c for c in cols if difflib.get_close_matches(c, ["question"], n=1)]
        hint = f" (did you mean to name {close[0]!r} `question`?)" if close else ""
        problems.append(
            Problem(name, 1, f"no `question` column; columns are: {', '.join(cols)}{hint}", field="question")
        )
        return res
    seen_cols = {}
    for i, c in enumerate(cols):
        if c in seen_cols:
            problems.append(Problem(name, 1, f"column {c!r} appears twice", field=c))
        seen_cols[c] = i
    unknown = [c for c in cols if c not in CASE_FIELDS]
    if unknown:
        res.notes.append(f"column(s) {', '.join(repr(c) for c in unknown)} are not case fields: not imported")
    ids = _Ids(name, problems)
    start = 2
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            problems.append(Problem(name, reader.line_num, f"not valid CSV ({e})"))
            break
        line = start
        start = reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(cols):
            problems.append(Problem(name, line, f"{len(row)} cells but the header has {len(cols)} columns"))
            continue
        cells = {c: (row[i] if i < len(row) else "") for c, i in seen_cols.items() if c in CASE_FIELDS}
        cid = cells.get("id", "").strip() or None
        fields: dict = {}
        bad = False
        for k, v in cells.items():
            if k == "id":
                continue
            if k in LIST_FIELDS:
                lst = _list_from_cell(v, name, line, cid, k, problems)
                bad |= lst is None
                fields[k] = lst or []
            elif k == "unanswerable":
                s = v.strip().lower()
                if s in _TRUE:
                    fields[k] = True
                elif s in _FALSE:
                    fields[k] = False
                else:
                    problems.append(Problem(name, line, f"{v!r} is not true/false", case=cid, field=k))
                    bad = True
            elif k == "expect":
                fields[k] = v.strip() or "any"
            elif k == "question":
                fields[k] = v
            else:
                fields[k] = v if v.strip() else None
        if bad:
            continue
        if cid is None:
            cid = ids.make(fields.get("question") or "", line)
        else:
            ids.given(cid, line)
        fields = {"id": cid, **fields}
        case = _validate(fields, name, line, problems)
        if case is not None:
            res.cases.append(case)
    if ids.generated:
        res.notes.append(f"{ids.generated} row(s) without an id: ids made from the question")
    return res


# ---------------------------------------------------------------- ragas


def _contexts_to_ids(texts, ids_given, matcher, line, cid, counters) -> tuple[list[str], dict[str, str]]:
    """Expected ids and {id: remembered text} from ragas/deepeval contexts."""
    labels = {}
    if ids_given:
        if texts and len(texts) == len(ids_given):
            labels = dict(zip(ids_given, texts))
        elif texts:
            counters["contexts and ids differ in length: texts not kept as labels"] += 1
        return list(ids_given), labels
    expected: list[str] = []
    for t in texts:
        found = matcher.ids_for(t)
        if len(found) >= 1:
            if found[0] not in expected:
                expected.append(found[0])
                labels[found[0]] = t
            if len(found) > 1:
                counters["a context matches several chunks: the first one was taken"] += 1
        elif matcher.corpus_path is None:
            counters["contexts without chunk ids (give --corpus to find them by text)"] += 1
        else:
            counters["contexts found in no chunk of the corpus"] += 1
    return expected, labels


def _import_ragas(text, name, problems, matcher) -> Imported:
    res = Imported()
    ids = _Ids(name, problems)
    run_fields: dict[str, int] = {}
    unknown: dict[str, int] = {}
    counters: dict[str, int] = _Counter()
    references = 0
    drafts = 0
    for line, obj in _jsonl_objects(text, name, problems):
        q = obj.get("user_input")
        if isinstance(q, list):
            problems.append(
                Problem(
                    name,
                    line,
                    "a multi-turn sample (a list of messages): only single-turn samples can become cases",
                    field="user_input",
                )
            )
            continue
        if not isinstance(q, str) or not q.strip():
            problems.append(Problem(name, line, "is required (the question, a string)", field="user_input"))
            continue
        for k in obj:
            if k in RAGAS_RUN_FIELDS:
                run_fields[k] = run_fields.get(k, 0) + 1
            elif k not in RAGAS_KNOWN and k not in RAGAS_TAG_FIELDS:
                unknown[k] = unknown.get(k, 0) + 1
        cid = ids.make(q, line)
        texts = _str_list(obj.get("reference_contexts"), name, line, cid, "reference_contexts", problems)
        given = _str_list(
            obj.get("reference_context_ids"), name, line, cid, "reference_context_ids", problems
        )
        if texts is None or given is None:
            continue
        expected, labels = _contexts_to_ids(texts, given, matcher, line, cid, counters)
        fields: dict = {"id": cid, "question": q, "expected": expected}
        ref = obj.get("reference")
        if ref is not None:
            if not isinstance(ref, str):
                problems.append(Problem(name, line, "must be a string", case=cid, field="reference"))
                continue
            fields["answer"] = ref
            references += 1
        tags = [f"{k}:{obj[k]}" for k in RAGAS_TAG_FIELDS if isinstance(obj.get(k), str) and obj[k].strip()]
        tags = [re.sub(r"\s+", "_", t) for t in tags]
        if tags:
            fields["tags"] = tags
        if not expected:
            drafts += 1
        case = _validate(fields, name, line, problems)
        if case is not None:
            res.cases.append(case)
            res.labels.update(labels)
    res.notes.append(f"case ids made from the questions ({ids.generated}): ragas samples have no id")
    if references:
        res.notes.append(
            f"`reference` → `answer` ({references} case(s)): correctness becomes normalised equality with it; "
            "for a long reference, prefer `must_contain` with the words that matter"
        )
    if drafts:
        res.notes.append(
            f"{drafts} case(s) without reference contexts: imported as drafts (unlabelled) — "
            "label them, or mark them unanswerable, in `ragtriage edit`"
        )
    _note_counts(
        res.notes, run_fields, "`{key}` ({n} row(s)) belongs to a run, not to a test set: not imported"
    )
    _note_counts(
        res.notes, unknown, "field `{key}` ({n} row(s)) is not a ragas field ragtriage knows: not imported"
    )
    _note_counts(res.notes, counters, "{key}: {n}")
    return res


class _Counter(dict):
    def __missing__(self, key):
        return 0


# ---------------------------------------------------------------- deepeval


def _import_deepeval(text, name, problems, matcher) -> Imported:
    res = Imported()
    ids = _Ids(name, problems)
    run_fields: dict[str, int] = {}
    unknown: dict[str, int] = {}
    meta_unknown: dict[str, int] = {}
    counters: dict[str, int] = _Counter()
    references = 0
    drafts = 0
    for line, raw in _json_array_items(text, name, problems, key="goldens"):
        obj = {_DEEPEVAL_ALIASES.get(k, k): v for k, v in raw.items()}
        q = obj.get("input")
        if not isinstance(q, str) or not q.strip():
            problems.append(Problem(name, line, "is required (the question, a string)", field="input"))
            continue
        for k, v in obj.items():
            if k in DEEPEVAL_RUN_FIELDS and v not in (None, [], ""):
                run_fields[k] = run_fields.get(k, 0) + 1
            elif k not in DEEPEVAL_KNOWN and k not in DEEPEVAL_RUN_FIELDS and v not in (None, [], ""):
                unknown[k] = unknown.get(k, 0) + 1
        meta = obj.get("additional_metadata") or {}
        if not isinstance(meta, dict):
            problems.append(Problem(name, line, "must be an object", field="additional_metadata"))
            continue
        fields: dict = {}
        for k, v in meta.items():
            if k in CASE_FIELDS and k != "question":
                fields[k] = v
            else:
                meta_unknown[k] = meta_unknown.get(k, 0) + 1
        cid = fields.get("id")
        if isinstance(cid, str) and cid:
            ids.given(cid, line)
        else:
            cid = fields["id"] = ids.make(q, line)
        fields["question"] = q
        texts = _str_list(obj.get("context"), name, line, cid, "context", problems)
        if texts is None:
            continue
        given = fields.get("expected")
        if given is not None and not (isinstance(given, list) and all(isinstance(x, str) for x in given)):
            problems.append(
                Problem(
                    name, line, "must be a list of chunk ids", case=cid, field="additional_metadata.expected"
                )
            )
            continue
        expected, labels = _contexts_to_ids(texts, given or [], matcher, line, cid, counters)
        fields["expected"] = expected
        eo = obj.get("expected_output")
        if eo is not None:
            if not isinstance(eo, str):
                problems.append(Problem(name, line, "must be a string", case=cid, field="expected_output"))
                continue
            fields["answer"] = eo
            if "id" not in meta:
                references += 1
        comments = obj.get("comments")
        if comments is not None:
            if not isinstance(comments, str):
                problems.append(Problem(name, line, "must be a string", case=cid, field="comments"))
                continue
            fields["notes"] = comments
        sf = obj.get("source_file")
        if isinstance(sf, str) and sf and "notes" not in fields:
            fields["notes"] = f"source file: {sf}"
        if not expected and not fields.get("unanswerable"):
            drafts += 1
        case = _validate(fields, name, line, problems)
        if case is not None:
            res.cases.append(case)
            res.labels.update(labels)
    if ids.generated:
        res.notes.append(f"{ids.generated} golden(s) without additional_metadata.id: ids made from the input")
    if references:
        res.notes.append(
            f"`expected_output` → `answer` ({references} case(s)): correctness becomes normalised equality "
            "with it; for a long answer, prefer `must_contain` with the words that matter"
        )
    if drafts:
        res.notes.append(
            f"{drafts} case(s) without context: imported as drafts (unlabelled) — "
            "label them, or mark them unanswerable, in `ragtriage edit`"
        )
    _note_counts(
        res.notes, run_fields, "`{key}` ({n} golden(s)) belongs to a run, not to a test set: not imported"
    )
    _note_counts(res.notes, unknown, "field `{key}` ({n} golden(s)): not imported")
    _note_counts(
        res.notes, meta_unknown, "additional_metadata `{key}` ({n} golden(s)): not a case field, not imported"
    )
    _note_counts(res.notes, counters, "{key}: {n}")
    return res


# ---------------------------------------------------------------- trec qrels

QUESTION_PLACEHOLDER = "(question missing: TREC qrels carry none; write it here)"


def _import_trec(text, name, problems, matcher) -> Imported:
    res = Imported()
    order: list[str] = []
    rel: dict[str, list[str]] = {}
    judged_only: set[str] = set()
    first_line: dict[str, int] = {}
    zero = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split()
        if len(parts) == 3:  # BEIR-style TSV: query-id corpus-id score (with a header)
            if lineno == 1 or parts[2].lower() == "score":
                continue
            qid, docid, grade = parts
        elif len(parts) == 4:
            qid, _iteration, docid, grade = parts
        else:
            problems.append(
                Problem(
                    name,
                    lineno,
                    f"expected 4 columns `qid 0 docid relevance` "
                    f"(or 3: qid docid relevance), got {len(parts)}",
                )
            )
            continue
        try:
            g = int(grade)
        except ValueError:
            try:
                g = float(grade)
            except ValueError:
                problems.append(
                    Problem(name, lineno, f"relevance {grade!r} is not a number", field="relevance")
                )
                continue
        if qid not in rel:
            rel[qid] = []
            order.append(qid)
            first_line[qid] = lineno
        if g > 0:
            if docid not in rel[qid]:
                rel[qid].append(docid)
        else:
            zero += 1
            judged_only.add(qid)
    unans = 0
    for qid in order:
        fields = {"id": qid, "question": QUESTION_PLACEHOLDER, "expected": rel[qid]}
        if not rel[qid]:
            fields["unanswerable"] = True  # judged, and nothing relevant
            unans += 1
        case = _validate(fields, name, first_line[qid], problems)
        if case is not None:
            res.cases.append(case)
    if res.cases:
        res.notes.append(
            f"questions: TREC qrels carry none; {len(res.cases)} case(s) got a placeholder "
            "question to fill in"
        )
    if zero:
        res.notes.append(f"{zero} judgement(s) with relevance 0: not expected chunks")
    if unans:
        res.notes.append(f"{unans} query id(s) with only non-relevant judgements: imported as unanswerable")
    return res


GUESSABLE = ("en", "es", "de", "nl", "fr", "pt", "it")


def guess_language(questions: Iterable[str]) -> str | None:
    """The language most questions are written in, from common words; None when unclear.
    The test set's ``language`` picks decline phrases and number words, so an import
    of Spanish questions should not silently become ``en``."""
    from .search import stopwords

    lists = {lang: stopwords(lang) for lang in GUESSABLE}
    score = dict.fromkeys(GUESSABLE, 0)
    n = 0
    for q in questions:
        words = re.findall(r"\w+", q.casefold())
        for lang, sw in lists.items():
            score[lang] += sum(1 for w in words if w in sw)
        n += 1
        if n >= 2000:
            break
    ranked = sorted(score.items(), key=lambda kv: -kv[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    if top >= 3 and top >= 1.5 * second:
        return best
    return None


def import_comment(src, fmt: str, notes: Sequence[str]) -> str:
    """The header comment of an imported test set: where it came from and what was not mapped."""
    lines = [f"Imported from {Path(src).name} ({fmt}) by `ragtriage import`."]
    if notes:
        lines.append("Not carried over or to check:")
        lines += [f"- {n}" for n in notes]
    lines.append("Check it with `ragtriage validate`, then label drafts in `ragtriage edit`.")
    return "\n".join(lines)


def label_from_text(text: str) -> dict:
    """A label remembered from an imported context text (no corpus needed)."""
    return {"sha": fingerprint(text), "text": text}


def clean_label(label: Mapping) -> dict:
    """Only the label fields ragtriage knows, non-null."""
    return {k: label[k] for k in LABEL_FIELDS if label.get(k) is not None}


__all__ = [
    "FORMATS",
    "Imported",
    "export_testset",
    "export_jsonl",
    "export_csv",
    "export_ragas",
    "export_deepeval",
    "export_qrels",
    "export_trec_run",
    "read_import",
    "import_comment",
    "label_from_text",
    "clean_label",
    "guess_language",
]
