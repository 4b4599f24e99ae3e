"""What every exchange format shares: the import result, located problems, unique ids,
chunk texts for contexts, the JSON readers, and the notes about what was not carried."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from ..errors import Problem
from ..schema import CASE_FIELDS, LABEL_FIELDS, Case
from ..text import fingerprint

#: fields that hold lists of strings, in a case
LIST_FIELDS = ("expected", "expected_docs", "evidence", "must_contain", "tags")

PathArg = str | PathLike[str]


@dataclass
class Imported:
    """What an import produced: case fields in file order, labels, and notes for the user."""

    cases: list[dict[str, Any]] = field(default_factory=list)
    #: chunk id -> a label dict, or the remembered context text
    labels: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class Reader(Protocol):
    """One format's import: the decoded text -> what was imported; problems appended, located."""

    def __call__(self, text: str, name: str, problems: list[Problem], matcher: TextMatcher) -> Imported: ...


# ====================================================================== export helpers


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def case_dict(case: Case) -> dict[str, Any]:
    """Every case field, lists as lists, defaults included (the flat form)."""
    d = {}
    for name in CASE_FIELDS:
        v = getattr(case, name)
        d[name] = list(v) if isinstance(v, tuple) else v
    return d


def label_dict(label: object) -> dict[str, Any]:
    if label is None:
        return {}
    if isinstance(label, Mapping):
        return {k: v for k, v in label.items() if v is not None}
    model_dump = getattr(label, "model_dump", None)
    data = model_dump() if model_dump is not None else dict(label)  # type: ignore[call-overload]
    return {k: v for k, v in data.items() if v is not None}


def chunk_texts(
    ids: Iterable[str], labels: Mapping[str, Any], corpus_path: PathArg | None = None
) -> tuple[dict[str, str], list[str]]:
    """Text of each chunk id: from the corpus when it has it (streamed, only the ids
    asked for are kept), else the text remembered in the label. Returns (texts, notes)."""
    wanted = set(ids)
    texts: dict[str, str] = {}
    notes: list[str] = []
    if corpus_path is not None and wanted and Path(corpus_path).exists():
        from ..corpus import iter_chunks

        for chunk in iter_chunks(corpus_path):
            if chunk.id in wanted:
                texts[chunk.id] = chunk.text
                if len(texts) == len(wanted):
                    break
    missing = []
    for cid in sorted(wanted - texts.keys()):
        text = label_dict(labels.get(cid)).get("text")
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


def dropped(fmt: str, cases: Sequence[Case], checks: Mapping[str, Callable[[Case], object]]) -> list[str]:
    """One note naming what ``fmt`` cannot carry, with how many cases use it."""
    parts = []
    for what, pred in checks.items():
        n = sum(1 for c in cases if pred(c))
        if n:
            parts.append(f"{what} ({n} case(s))")
    return [f"{fmt} has no place for {'; '.join(parts)}: not exported"] if parts else []


# ====================================================================== import helpers


def slug(text: str, limit: int = 40) -> str:
    text = unicodedata.normalize("NFC", text).lower()
    words = re.findall(r"\w+", text)
    out = ""
    for w in words:
        nxt = f"{out}-{w}" if out else w
        if len(nxt) > limit:
            break
        out = nxt
    return out or (words[0][:limit] if words else "")


class Ids:
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
        base = slug(question) or f"q{len(self.first) + 1}"
        cid, n = base, 2
        while cid in self.first:
            cid, n = f"{base}-{n}", n + 1
        self.first[cid] = line
        self.generated += 1
        return cid


_SURROGATES = re.compile("[\ud800-\udfff]")


def has_surrogate(v: object) -> bool:
    """A lone surrogate (``"\\ud800"`` in JSON) somewhere in ``v``: not text, no file can hold it."""
    if isinstance(v, str):
        return not v.isascii() and _SURROGATES.search(v) is not None
    if isinstance(v, (list, tuple)):
        return any(has_surrogate(x) for x in v)
    if isinstance(v, dict):
        return any(has_surrogate(k) or has_surrogate(x) for k, x in v.items())
    return False


SURROGATE = "holds a lone surrogate (\\ud800 to \\udfff, half of a character): not text"


def validate(
    fields: dict[str, Any], name: str, line: int | None, problems: list[Problem]
) -> dict[str, Any] | None:
    """Check one case with the test set's own rules; located problems, no exception."""
    bad = [k for k, v in fields.items() if has_surrogate(v)]
    for k in bad:
        problems.append(Problem(name, line, SURROGATE, case=None, field=k))
    if bad:
        return None
    try:
        Case(**fields)
    except ValidationError as e:
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"]) or None
            msg = err["msg"].removeprefix("Value error, ").replace("a valid tuple", "a list")
            problems.append(Problem(name, line, msg, case=fields.get("id"), field=loc))
        return None
    return {k: v for k, v in fields.items() if v is not None}


def note_counts(notes: list[str], counts: Mapping[str, int], template: str) -> None:
    for key, n in counts.items():
        if n:
            notes.append(template.format(key=key, n=n))


class TextMatcher:
    """Find chunk ids by text in a corpus (normalised equality), for files that give texts only."""

    def __init__(self, corpus_path: PathArg | None):
        self.corpus_path = corpus_path
        self._by_sha: dict[str, list[str]] | None = None

    def ids_for(self, text: str) -> list[str]:
        if self.corpus_path is None:
            return []
        if self._by_sha is None:
            from ..corpus import iter_chunks

            self._by_sha = {}
            for chunk in iter_chunks(self.corpus_path):
                self._by_sha.setdefault(fingerprint(chunk.text), []).append(chunk.id)
        return self._by_sha.get(fingerprint(text), [])


def jsonl_objects(text: str, name: str, problems: list[Problem]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) per non-blank line; a file that is one JSON array is accepted too."""
    if text.lstrip().startswith("["):
        yield from json_array_items(text, name, problems)
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(Problem(name, lineno, f"not valid JSON ({e.msg} at column {e.colno})"))
            continue
        except (RecursionError, ValueError) as e:  # nesting; an integer of 4,301+ digits
            problems.append(Problem(name, lineno, f"not usable JSON ({_too_big(e)})"))
            continue
        if not isinstance(obj, dict):
            problems.append(
                Problem(name, lineno, f"expected a JSON object per line, got {type(obj).__name__}")
            )
            continue
        yield lineno, obj


def _too_big(e: Exception) -> str:
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return "a number too long to read" if "digits" in str(e) else str(e)


def json_array_items(
    text: str, name: str, problems: list[Problem], key: str | None = None, hint: str = ""
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) for each item of a JSON array (or of ``{key: [...]}``), with its line."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as e:
        problems.append(Problem(name, e.lineno, f"not valid JSON ({e.msg} at column {e.colno}){hint}"))
        return
    except (RecursionError, ValueError) as e:
        problems.append(Problem(name, 1, f"not usable JSON ({_too_big(e)})"))
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


def str_list(
    v: object, name: str, line: int | None, cid: str | None, fld: str, problems: list[Problem]
) -> list[str] | None:
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in v):
        return [str(x) for x in v]
    problems.append(Problem(name, line, "must be a list of strings", case=cid, field=fld))
    return None


def contexts_to_ids(
    texts: Sequence[str],
    ids_given: Sequence[str],
    matcher: TextMatcher,
    counters: Counter[str],
    quotes: list[str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """Expected ids and {id: remembered text} from ragas/deepeval contexts; with a corpus, a
    context that is no chunk's whole text goes to ``quotes`` (when given): an `evidence`
    passage ragtriage looks for in the corpus itself (``validate`` shows where it resolves,
    ``stale`` lists one found nowhere)."""
    labels: dict[str, str] = {}
    if ids_given:
        if texts and len(texts) == len(ids_given):
            labels = dict(zip(ids_given, texts, strict=True))
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
        elif quotes is not None:
            quotes.append(t)
            counters["contexts that are no chunk's whole text: imported as `evidence` quotes"] += 1
        else:
            counters["contexts found in no chunk of the corpus"] += 1
    return expected, labels


def draft_and_reference_notes(res: Imported, references: int, drafts: int, ref_field: str, ctx: str) -> None:
    """The notes ragas and deepeval imports share: reference answers, and cases left as drafts."""
    if references:
        res.notes.append(
            f"`{ref_field}` → `answer` ({references} case(s)): correctness becomes normalised equality "
            f"with it; for a long {'reference' if ref_field == 'reference' else 'answer'}, prefer "
            "`must_contain` with the words that matter"
        )
    if drafts:
        res.notes.append(
            f"{drafts} case(s) without {ctx}: imported as drafts (unlabelled) — "
            "label them, or mark them unanswerable, in `ragtriage edit`"
        )


# ====================================================================== the new test set


GUESSABLE = ("en", "es", "de", "nl", "fr", "pt", "it")


def guess_language(questions: Iterable[str]) -> str | None:
    """The language most questions are written in, from common words; None when unclear.
    The test set's ``language`` picks decline phrases and number words, so an import
    of Spanish questions should not silently become ``en``."""
    from ..search import stopwords

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


def import_comment(src: PathArg, fmt: str, notes: Sequence[str]) -> str:
    """The header comment of an imported test set: where it came from and what was not mapped."""
    lines = [f"Imported from {Path(src).name} ({fmt}) by `ragtriage import`."]
    if notes:
        lines.append("Not carried over or to check:")
        lines += [f"- {n}" for n in notes]
    lines.append("Check it with `ragtriage validate`, then label drafts in `ragtriage edit`.")
    return "\n".join(lines)


def label_from_text(text: str) -> dict[str, str]:
    """A label remembered from an imported context text (no corpus needed)."""
    return {"sha": fingerprint(text), "text": text}


def clean_label(label: Mapping[str, Any]) -> dict[str, Any]:
    """Only the label fields ragtriage knows, non-null."""
    return {k: label[k] for k in LABEL_FIELDS if label.get(k) is not None}
