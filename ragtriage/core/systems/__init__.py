"""Systems under test (cli.md): what ``--system SPEC`` names.

Every system answers one case at a time with a §3 result dict
(``ranking``, ``scores``, ``answer``, ``prompt_ids``, ``supported``, ``tokens``,
``latency_ms``, ``error``) through ``async ask(case, k)``. The runner adds
concurrency, timeouts and retries; a system only raises :class:`CaseError`
(or any exception) for a case that failed.

| SPEC | module |
|---|---|
| ``builtin`` | :mod:`.builtin` — BM25 + extractive answerer, offline |
| ``results:PATH`` | :mod:`.results` — answers produced elsewhere |
| ``python:MODULE:ATTR`` | :mod:`.python` — a callable, sync or async |
| ``http://…`` / ``https://…`` | :mod:`.http` — POST ``{"id","question","k"}`` |
| ``openai:BASE_URL#MODEL`` | :mod:`.openai` — builtin retrieval + a chat endpoint |
"""

from __future__ import annotations

import dataclasses
import math
from functools import cached_property
from pathlib import Path

from ..errors import InputError, Problem

RESULT_TYPES = {
    "ranking": "a list of chunk ids",
    "scores": "a list of numbers",
    "answer": "a string or null",
    "prompt_ids": "a list of chunk ids",
    "docs": "a list of document names (or null), one per ranked chunk",
    "supported": "true or false",
    "tokens": "a whole number",
    "latency_ms": "a number",
    "error": "a string",
}


class CaseError(Exception):
    """One case failed; the message is the cause shown to people. ``retry``:
    whether asking again may help (a 500 may pass, a missing line will not);
    ``retry_after``: seconds the server asked to wait before that (``Retry-After``)."""

    def __init__(self, message: str, retry: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.retry = retry
        self.retry_after = retry_after


class Context:
    """What a system may need from the test set: cases, settings, the corpus and
    its lexical index (both loaded lazily, once)."""

    def __init__(self, doc, *, corpus=None):
        self.doc = doc
        self.settings = doc.settings
        self._corpus = corpus
        self._corpus_path = getattr(doc, "corpus_path", None)
        self._texts: dict[str, str | None] = {}

    @property
    def language(self) -> str | None:
        return self.settings.language

    @property
    def decline(self) -> tuple[str, ...]:
        from ..grounding import decline_phrases

        return decline_phrases(self.settings.language, self.settings.decline)

    @property
    def corpus_path(self) -> Path | None:
        return self._corpus_path

    @property
    def corpus(self):
        """The test set's chunks (None when it names no corpus)."""
        if self._corpus is None:
            path = self.corpus_path
            if path is None:
                return None
            from ..corpus import load_corpus, require_readable

            require_readable(path, self.doc)  # unreadable: at the test set's `corpus:` line, as validate says
            self._corpus = load_corpus(path)
        return self._corpus

    def require_corpus(self, who: str):
        c = self.corpus
        if c is None:
            raise InputError(
                Problem(
                    str(getattr(self.doc, "path", "test set")),
                    None,
                    f"{who} needs the test set's chunks: add `corpus: CHUNKS.jsonl` to it",
                    field="corpus",
                )
            )
        return c

    @cached_property
    def index(self):
        from ..search import LexicalIndex

        return LexicalIndex.build(self.require_corpus("the builtin retriever"), language=self.language)

    @cached_property
    def lookup(self):
        """:meth:`chunk_text` as the scoring takes it: with :meth:`in_corpus` when the test
        set has a corpus (so unknown ids are recorded), plain otherwise."""
        from ..scoring import ChunkText

        if self._corpus_path is None:
            return self.chunk_text
        c = self.corpus
        ids = getattr(c, "_chunks", c)
        slow = self.in_corpus

        def known(cid: str) -> bool:  # (the corpus's dict first: most ids are in it)
            return cid in ids or (not cid.isascii() and slow(cid))

        return ChunkText(self.chunk_text, known, ids)

    def in_corpus(self, cid: str) -> bool:
        """Does the corpus hold chunk ``cid`` (the same id in another Unicode form counts)?"""
        c = self.corpus
        if c is None:
            return True
        chunks = getattr(c, "_chunks", c)
        if cid in chunks:
            return True
        if cid.isascii():
            return False
        import unicodedata

        return any(unicodedata.normalize(f, cid) in chunks for f in ("NFC", "NFD"))

    def chunk_text(self, cid: str) -> str | None:
        """Text of a chunk, from the corpus, else from the test set's labels."""
        c = self.corpus if self._corpus_path is not None else None
        if c is not None:
            ch = getattr(c, "_chunks", c).get(cid)
            if ch is not None:
                return ch.text
        labels = getattr(self.doc, "labels", None) or {}
        lab = labels.get(cid)
        return getattr(lab, "text", None) if lab is not None else None


_STR = {str}
_NUM = {int, float}


def _is_id_list(v) -> bool:
    if type(v) is not list:
        return False
    try:
        "".join(v)  # C-speed check that every item is a str
    except TypeError:
        return False
    return True


def _is_number(v) -> bool:
    return (type(v) is int or type(v) is float) and math.isfinite(v)


def _is_scores(v) -> bool:
    return type(v) is list and set(map(type, v)) <= _NUM and all(map(_isfinite, v))


_isfinite = math.isfinite


def _is_doc_list(v) -> bool:
    return type(v) is list and all(x is None or type(x) is str for x in v)


_CHECKS = {
    "ranking": _is_id_list,
    "docs": _is_doc_list,
    "prompt_ids": _is_id_list,
    "scores": _is_scores,
    "answer": lambda x: type(x) is str,
    "supported": lambda x: type(x) is bool or x is None,
    "tokens": lambda x: type(x) is int and 0 <= x < 1 << 63,
    "latency_ms": _is_number,
    "error": lambda x: type(x) is str,
    "id": lambda x: type(x) is str,
}


def coerce_result(obj) -> dict:
    """A §3 result from a dict, dataclass or object; raises ``ValueError('field: must be ...')``."""
    if type(obj) is dict:  # the usual case (a JSON object): skip the other shapes' checks
        pass
    elif obj is None:
        raise ValueError("the system returned nothing (expected a result object)")
    elif isinstance(obj, str):
        obj = {"answer": obj}
    elif isinstance(obj, (int, float, list, tuple, bytes, set)):
        raise ValueError(f"expected a result object (a dict with answer, ranking, ...), got {_short(obj)}")
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        obj = dataclasses.asdict(obj)
    elif not isinstance(obj, dict):
        obj = {f: getattr(obj, f) for f in (*RESULT_TYPES, "id") if hasattr(obj, f)}
    checks = _CHECKS
    for f, v in obj.items():
        if v is None:
            continue
        ok = checks.get(f)
        if ok is not None and not ok(v):
            raise ValueError(f"{f}: must be {RESULT_TYPES.get(f, 'a string')}, got {_short(v)}")
    out = obj if type(obj) is dict else dict(obj)
    if "supported" in out and out["supported"] is None:
        out = dict(out)
        del out["supported"]
    sc = out.get("scores")
    if sc is not None and len(sc) != len(out.get("ranking") or ()):
        raise ValueError(
            f"scores: {len(sc)} scores for {len(out.get('ranking') or [])} ranked chunks "
            "(must be the same length)"
        )
    dc = out.get("docs")
    if dc is not None and out.get("ranking") and len(dc) != len(out["ranking"]):
        raise ValueError(
            f"docs: {len(dc)} documents for {len(out['ranking'])} ranked chunks "
            "(one per ranked chunk, null where it is not known)"
        )
    return out


def _short(v) -> str:
    try:
        s = repr(v)
    except ValueError:  # an int of more than 4,300 digits
        return "a number too large to print"
    return s if len(s) <= 60 else s[:57] + "..."


def approx_tokens(question: str, texts) -> int:
    """About how many prompt tokens: characters / 4 of the question and the chunk texts."""
    return (len(question) + sum(len(t) for t in texts)) // 4


def make_system(spec: object, ctx: Context, **options):
    """The system named by ``spec`` (or the callable given as ``spec``); bad specs raise
    :class:`InputError` (exit 2)."""
    if not isinstance(spec, str):
        from .python import PythonSystem

        return PythonSystem.of(spec, workers=options.get("concurrency") or 8)
    spec = spec.strip()
    if options.get("retriever") and not spec.startswith("openai:"):
        raise InputError(
            Problem(
                "--retriever", None, f"only openai: systems use a retriever ({spec} retrieves on its own)"
            )
        )
    timeout = options.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise InputError(Problem("--timeout", None, f"must be a number of seconds above 0, got {timeout!r}"))
    if spec == "builtin":
        from .builtin import BuiltinSystem

        return BuiltinSystem(ctx)
    if spec.startswith("results:"):
        from .results import ResultsSystem

        return ResultsSystem(spec[len("results:") :], ctx)
    if spec.startswith("python:"):
        from .python import PythonSystem

        return PythonSystem(
            spec[len("python:") :],
            ctx,
            workers=options.get("concurrency") or 8,
            executor=options.get("executor") or "thread",
            ray_address=options.get("ray_address"),
        )
    if spec.startswith(("http://", "https://")):
        from .http import HttpSystem

        return HttpSystem(spec, ctx, timeout=options.get("timeout") or 60.0)
    if spec.startswith("openai:"):
        from .openai import OpenAISystem

        return OpenAISystem(
            spec[len("openai:") :],
            ctx,
            retriever=options.get("retriever"),
            api_key_env=options.get("api_key_env") or "OPENAI_API_KEY",
            timeout=options.get("timeout") or 60.0,
        )
    raise InputError(
        Problem(
            "--system",
            None,
            f"unknown system {spec!r} (one of: builtin, results:PATH, python:MODULE:ATTR, "
            "http://HOST/PATH, openai:BASE_URL#MODEL)",
        )
    )


def set_max_response_mb(mb) -> None:
    """The answer size limit of ``http:`` and ``openai:`` systems, in MB (``--max-response-mb``)."""
    from .wire import set_max_body

    if isinstance(mb, bool) or not isinstance(mb, (int, float)) or not math.isfinite(mb) or mb <= 0:
        raise InputError(Problem("--max-response-mb", None, f"must be a number of MB above 0, got {mb!r}"))
    set_max_body(max(1, int(min(mb, 1 << 30) * (1 << 20))))  # 1e308 MB means "no limit", not an overflow
