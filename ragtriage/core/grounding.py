"""Abstention, correctness and the built-in grounding check (evaluation.md).

``check_grounding`` returns an empty string when the answer is supported, else
the first reason found, written for a person:

1. an abstention is supported;
2. no cited chunk -> ``no source``;
3. a cited chunk that is not in the corpus -> ``source not in corpus: ID`` (when the
   corpus is known: a citation of a chunk nobody can read supports nothing);
4. a cited ID the generator did not see -> ``source outside prompt: ID``;
5. a number in the answer (outside citations) that is not a number of the cited
   chunks -> ``number N missing from source`` (numbers read as numbers, number
   words of the language, units compared when both sides give one).

Where the cited set comes from is the test set's ``cite`` (``--cite``): ``inline``, the
``[chunk-id]`` citations in the answer; ``prompt``, the chunks the generator saw (for a
system that returns its sources beside the answer and does not cite); ``field``, the
``cited`` list of the result.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any, Protocol

from .numbers import Number, find_numbers, same_number
from .text import collapse

DECLINE = {
    "es": ("no lo sé",),
    "de": ("ich weiß es nicht",),
    "en": ("I don't know",),
    "nl": ("ik weet het niet",),
}

# [id] or [id1, id2]; chunk ids carry no whitespace
CITATION = re.compile(r"\[\s*([^\s\[\],]+(?:\s*[,;]\s*[^\s\[\],]+)*)\s*\]")
_SPLIT = re.compile(r"\s*[,;]\s*")
_LEAD = "¿¡\"'«»“”‘’„‚([{-–—*_ \t\r\n"


def decline_phrases(language: str | None, decline: Iterable[str] | None = None) -> tuple[str, ...]:
    """The test set's ``decline`` if given, else the language's default (en when unknown)."""
    if decline:
        return tuple(decline)
    lang = (language or "en").lower().split("-")[0].split("_")[0]
    return DECLINE.get(lang, DECLINE["en"])


def _fold(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFC", text).replace("’", "'").replace("‘", "'")
    return text.casefold()


@lru_cache(maxsize=256)
def _folded(phrases: tuple[str, ...]) -> tuple[str, ...]:
    # trimmed of leading punctuation as the answer is (`¿Perdón?`, `«sin datos»`), else such a
    # phrase could never match; a phrase that is only punctuation is kept as written, and an
    # empty one is dropped (it would make every answer an abstention)
    out = (_fold(p.lstrip(_LEAD)).strip() or _fold(p).strip() for p in phrases)
    return tuple(p for p in out if p)


def is_abstention(answer: str | None, phrases: Sequence[str]) -> bool:
    """Null, empty, or starting (case-insensitive, after trimming) with a decline phrase."""
    if answer is None:
        return True
    a = answer.lstrip(_LEAD)
    if not a:
        return True
    a = _fold(a[:200])
    return a.startswith(_folded(tuple(phrases)))


def citations(answer: str | None) -> list[str]:
    """Cited chunk ids in order of appearance (duplicates kept once)."""
    out: list[str] = []
    if not answer:
        return out
    for m in CITATION.finditer(answer):
        for cid in _SPLIT.split(m.group(1)):
            if cid and cid not in out:
                out.append(cid)
    return out


def strip_citations(answer: str) -> str:
    return CITATION.sub(" ", answer)


_TRAIL = ".!?…;:。 \t\r\n"


def normalise_answer(text: str) -> str:
    """For reference-answer equality: :func:`~ragtriage.core.text.collapse` (NFC, whitespace
    collapsed), then citations dropped, case, curly apostrophes and final punctuation ignored."""
    t = _fold(collapse(strip_citations(text)))
    t = " ".join(t.split())
    return t.rstrip(_TRAIL).strip()


class Graded(Protocol):
    """What :func:`is_correct` reads of a case (a :class:`~ragtriage.core.schema.Case`)."""

    @property
    def unanswerable(self) -> bool: ...
    @property
    def answer(self) -> str | None: ...
    @property
    def must_contain(self) -> Sequence[str]: ...


def is_correct(case: Graded, answer: str | None, abstained: bool) -> bool:
    """evaluation.md ``correct``: unanswerable -> abstained; reference answer ->
    normalised equality; else every ``must_contain`` string is in the answer."""
    if case.unanswerable:
        return abstained
    if abstained or answer is None:
        return False
    if case.answer is not None:
        return normalise_answer(answer) == normalise_answer(case.answer)
    if not case.must_contain:
        return True
    text = collapse(answer)  # the same normalisation as `answer` (case kept): NFD, no-break spaces
    return all(collapse(s) in text for s in case.must_contain)


@lru_cache(maxsize=1 << 12)  # the chunks cited again and again; not every chunk of a big run
def _source_numbers(text: str, language: str | None) -> dict[int | Decimal | str, list[Number]]:
    """A chunk's numbers by value (in text order), once per chunk text. Shared: never mutate."""
    by_value: dict[int | Decimal | str, list[Number]] = {}
    for n in find_numbers(text, language):
        by_value.setdefault(n.value, []).append(n)
    return by_value


def _same_id(cid: str, prompt_ids: Sequence[str]) -> str | None:
    """The prompt id equal to ``cid`` under Unicode NFC, if any (ASCII ids never differ)."""
    if cid.isascii():
        return None
    want = unicodedata.normalize("NFC", cid)
    for p in prompt_ids:
        if not p.isascii() and unicodedata.normalize("NFC", p) == want:
            return p
    return None


def _fmt(n: Number) -> str:
    return n.text


def _citations(answer: str) -> tuple[list[str], str]:
    """The cited chunk ids in order of first citation, and the answer with the citations cut out."""
    cited: list[str] = []
    pieces: list[str] = []
    last = 0
    for m in CITATION.finditer(answer):
        pieces.append(answer[last : m.start()])
        last = m.end()
        g = m.group(1)
        for cid in _SPLIT.split(g) if ("," in g or ";" in g) else (g,):
            if cid and cid not in cited:
                cited.append(cid)
    pieces.append(answer[last:])
    return cited, " ".join(pieces)


def _numbers_by_value(
    cited: Sequence[str], chunk_text: Callable[[str], str | None], language: str | None
) -> dict[Any, list[Number]]:
    """The cited chunks' numbers by value, in citation then text order."""
    by_value: dict[Any, list[Number]] = {}
    shared = True  # by_value is still one chunk's cached dict (not to be changed)
    for cid in cited:
        text = chunk_text(cid)
        if not text:
            continue
        numbers = _source_numbers(text, language)
        if not by_value:
            by_value = numbers
            continue
        if shared:
            by_value = {v: list(ns) for v, ns in by_value.items()}
            shared = False
        for v, ns in numbers.items():
            have = by_value.get(v)
            if have is None:
                by_value[v] = list(ns)
            else:
                have.extend(ns)
    return by_value


def _unsupported_number(wanted: Sequence[Number], by_value: Mapping[Any, list[Number]]) -> str:
    for n in wanted:
        same = [s for s in by_value.get(n.value) or () if same_number(n, s)]
        if not same:
            return f"number {_fmt(n)} missing from source"
        if n.unit is not None and all(s.unit is not None and s.unit != n.unit for s in same):
            src = same[0]
            return (
                f"number {_fmt(n)} missing from source "
                f"(the source has {src.text} {_unit_word(src.unit)}, not {_unit_word(n.unit)})"
            )
    return ""


CITE_MODES = ("inline", "prompt", "field")
NO_SOURCE = {
    "inline": "no source",
    "prompt": "no source (the generator saw no chunk)",
    "field": "no source (the result has no `cited` list)",
}


def cited_ids(
    answer: str | None, prompt_ids: Sequence[str], cite: str = "inline", cited: Any = None
) -> list[str]:
    """The cited set of ``cite`` mode (see the module doc), duplicates kept once."""
    if cite == "prompt":
        return list(dict.fromkeys(prompt_ids))
    if cite == "field":
        if type(cited) is not list:
            return []
        return list(dict.fromkeys(c for c in cited if type(c) is str and c))
    return _citations(answer or "")[0]


def check_grounding(
    answer: str | None,
    prompt_ids: Sequence[str],
    chunk_text: Callable[[str], str | None],
    *,
    language: str | None = None,
    decline: Sequence[str] | None = None,
    abstained: bool | None = None,
    cite: str = "inline",
    cited: Any = None,
    known: Callable[[str], bool] | None = None,
) -> str:
    """'' when supported, else the first reason (see the module doc). ``cited``: the
    result's ``cited`` list (``cite="field"``); ``known(id)``: is that chunk in the corpus
    (None: no corpus to tell)."""
    return ground(answer, prompt_ids, chunk_text, language, decline, abstained, cite, cited, known)[0]


def ground(
    answer: str | None,
    prompt_ids: Sequence[str],
    chunk_text: Callable[[str], str | None],
    language: str | None = None,
    decline: Sequence[str] | None = None,
    abstained: bool | None = None,
    cite: str = "inline",
    cited: Any = None,
    known: Callable[[str], bool] | None = None,
) -> tuple[str, list[str]]:
    """:func:`check_grounding`'s reason, and the cited set it judged (read once: the scoring
    records the cited ids the corpus does not hold)."""
    if abstained is None:
        abstained = is_abstention(answer, decline_phrases(language, decline))
    inline, body = _citations(answer) if answer and "[" in answer else ([], answer or "")
    cited = inline if cite == "inline" else cited_ids(answer, prompt_ids, cite, cited)
    if abstained:
        return "", cited
    return _reason(cited, body, prompt_ids, chunk_text, language, cite, known), cited


def _reason(
    cited: list[str],
    body: str,
    prompt_ids: Sequence[str],
    chunk_text: Callable[[str], str | None],
    language: str | None,
    cite: str,
    known: Callable[[str], bool] | None,
) -> str:
    if not cited:
        return NO_SOURCE.get(cite, "no source")
    if known is not None:
        for cid in cited:
            if not known(cid):
                return f"source not in corpus: {cid}"
    cited = list(cited)
    for i, cid in enumerate(cited):
        if cid not in prompt_ids:
            # the same id in another Unicode form (a generator writes "í" composed where the
            # chunks file has it decomposed) is the same chunk: cite it as the prompt wrote it
            same = _same_id(cid, prompt_ids)
            if same is None:
                return f"source outside prompt: {cid}"
            cited[i] = same
    wanted = find_numbers(body, language)
    if not wanted:
        return ""
    return _unsupported_number(wanted, _numbers_by_value(cited, chunk_text, language))


def _unit_word(unit: str | None) -> str:
    return {
        "EUR": "€",
        "USD": "$",
        "GBP": "£",
        "day": "days",
        "week": "weeks",
        "month": "months",
        "year": "years",
        "hour": "hours",
        "minute": "minutes",
        "second": "seconds",
    }.get(unit or "", unit or "")
