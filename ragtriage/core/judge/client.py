"""Asking the judge: one chat call per answered case, through the ``openai:``
system's HTTP client (:class:`~ragtriage.core.systems.wire.HttpPool`), with the
run's concurrency, per-call timeout and retries with back-off (a ``Retry-After``
the client exposes on a 429 is honoured).

A reply that is not the asked JSON is asked once more, then recorded as
``{"error": ...}`` on the verdict; the case's deterministic result stands. The
key is registered with :mod:`ragtriage.core.secrets` and every recorded text is
redacted, so a server echoing it back never puts it in a run file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .. import secrets
from ..errors import InputError, Problem
from ..records import CaseRecord
from ..systems import CaseError
from ..systems.http import parse_answer, request_json
from ..systems.wire import HttpPool
from .cache import JudgeCache, cache_key, default_cache_path, unusable
from .prompts import PROMPT_VERSION, build_messages, prompt_language, reference_text
from .reply import ReplyError, parse_verdict

MAX_WAIT = 60.0  # longest pause before a retry, whatever Retry-After asks
ANSWER_TOKENS = 40  # about what a verdict with a one-sentence reason costs
ANSWER_GUESS = 30  # tokens of an answer not yet given, for --dry-run


@dataclass(slots=True)
class Ask:
    """One case to judge: where its verdict goes and what to send."""

    record: CaseRecord
    key: str
    language: str
    question: str
    answer: str
    sources: list[tuple[str, str]]
    reference: tuple[str, str] | None

    @property
    def has_reference(self) -> bool:
        return self.reference is not None

    @property
    def messages(self) -> list[dict[str, str]]:
        """Built only for the cases that are asked (a cached re-run builds none)."""
        return build_messages(self.language, self.question, self.answer, self.sources, self.reference)


def parse_spec(spec: str, where: str = "--judge") -> tuple[str, str]:
    """``openai:BASE_URL#MODEL`` -> (base URL without a trailing /, model)."""
    target = spec.strip()
    rest = target[len("openai:") :] if target.startswith("openai:") else target
    base, sep, model = rest.partition("#")
    secrets.register_url(base)  # a key in the URL is a secret even when the spec is wrong
    if target.startswith("openai:") and sep and base.startswith(("http://", "https://")) and model.strip():
        return base.rstrip("/"), model.strip()
    raise InputError(
        Problem(
            where,
            None,
            f"{secrets.redact(spec)!r}: expected openai:BASE_URL#MODEL, "
            "e.g. openai:http://127.0.0.1:8080/v1#qwen2.5",
        )
    )


def judged(record: Mapping[str, Any]) -> bool:
    """Whether the judge is asked about this case: it answered and did not abstain."""
    answer = record.get("answer")
    return (
        isinstance(answer, str)
        and bool(answer.strip())
        and not record.get("abstained")
        and not record.get("error")
    )


def _approx(messages: Sequence[Mapping[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages) // 4


def estimate_case(case: Any, prompt_tokens: int, language: str | None) -> int:
    """About how many tokens judging ``case`` costs before its answer is known: the
    generator's prompt (question and chunks, ``prompt_tokens``), the instruction,
    the reference, an answer about as long as the reference, and the verdict."""
    ref = reference_text(getattr(case, "answer", None), getattr(case, "must_contain", ()) or ())
    instruction = build_messages(language, "", "", [], ref)
    ref_tokens = len(ref[1]) // 4 if ref else 0
    return prompt_tokens + _approx(instruction) + 2 * ref_tokens + ANSWER_GUESS + ANSWER_TOKENS


class Judge:
    """A judge endpoint with its cache; :meth:`judge_records` adds ``judge`` to records."""

    def __init__(
        self,
        spec: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        cache_path: Path | None | str = "default",
        timeout: float = 60.0,
        retries: int = 2,
        concurrency: int = 8,
        backoff: float = 0.5,
        where: str = "--judge",
    ):
        self.base, self.model = parse_spec(spec, where)
        self.spec = f"openai:{secrets.strip_userinfo(self.base)}#{self.model}"
        self.url = self.base + "/chat/completions"
        self.api_key_env = api_key_env
        self._key, key_warning = secrets.key_from_env(api_key_env)  # stripped; every form redacted
        self.warnings = (
            [Problem("--judge-key-env", None, key_warning, severity="warning")] if key_warning else []
        )
        self.timeout = timeout
        self.retries = retries
        self.concurrency = max(1, concurrency)
        self.backoff = backoff
        path = default_cache_path() if cache_path == "default" else cache_path
        self._cache_path = Path(path) if path is not None else None
        why = unusable(self._cache_path)
        if why:
            self.warnings.append(Problem(str(self._cache_path), None, why, severity="warning"))
            self._cache_path = None
        # what a verdict depends on besides the case: where it is asked, which model, and the
        # sampling settings (temperature 0, see _call); two endpoints serving a model of
        # the same name are two judges
        self.identity = f"{secrets.strip_userinfo(self.base)}#{self.model}#t=0"
        self._cache: JudgeCache | None = None
        self.pending: list[Ask] = []  # cases with no cached verdict, for ask_pending
        self._memo: dict[str, str] = {}  # chunk text -> digest, for the cache keys
        self.calls = 0  # HTTP calls made, retries included
        self.tokens = 0

    @property
    def cache(self) -> JudgeCache:
        if self._cache is None:
            self._cache = JudgeCache(self._cache_path)
        return self._cache

    # ------------------------------------------------------------ what to ask

    def _ask_for(
        self,
        rec: CaseRecord,
        case: Any,
        chunk_text: Callable[[str], str | None],
        lang: str,
        k: int,
        memo: dict[str, str],
    ) -> Ask | None:
        """What to ask about ``rec`` (None: the judge does not look at it)."""
        answer = rec.get("answer")
        if type(answer) is not str or rec.get("abstained") or rec.get("error") or not answer.strip():
            return None
        ids = rec.get("prompt_ids")
        if ids is None:
            ids = (rec.get("ranking") or [])[:k]
        sources = []
        texts = []
        for cid in ids:
            t = chunk_text(cid)
            if t is not None:
                sources.append((cid, t))
                texts.append(t)
        ref = reference_text(getattr(case, "answer", None), getattr(case, "must_contain", ()) or ())
        question = rec.get("question") or getattr(case, "question", "")
        if type(question) is not str:
            question = str(question)
        key = cache_key(self.identity, f"{PROMPT_VERSION}/{lang}", question, answer, texts, ref, memo)
        return Ask(rec, key, lang, question, answer, sources, ref)

    def plan(
        self,
        records: Sequence[CaseRecord],
        cases: Mapping[str, Any],
        chunk_text: Callable[[str], str | None],
        language: str | None,
        k: int,
    ) -> list[Ask]:
        """An :class:`Ask` for every record the judge looks at, in order."""
        lang = prompt_language(language)
        get_case = cases.get
        memo = self._memo
        out = []
        for rec in records:
            a = self._ask_for(rec, get_case(rec["id"]), chunk_text, lang, k, memo)
            if a is not None:
                out.append(a)
        return out

    def estimate(self, asks: Sequence[Ask]) -> tuple[int, int]:
        """(calls, approximate tokens) the asks not in the cache would cost."""
        todo = [a for a in asks if self.cache.get(a.key) is None]
        return len(todo), sum(_approx(a.messages) + ANSWER_TOKENS for a in todo)

    # ------------------------------------------------------------ asking

    def attach_cached(
        self,
        rec: CaseRecord,
        case: Any,
        chunk_text: Callable[[str], str | None],
        language: str | None,
        k: int,
    ) -> None:
        """Give ``rec`` its cached verdict now (before it is written), or queue it for
        :meth:`ask_pending`. A re-run of unchanged cases thus writes its run file once."""
        a = self._ask_for(rec, case, chunk_text, prompt_language(language), k, self._memo)
        if a is None:
            return
        hit = self.cache.get(a.key)
        if hit is None:
            rec.pop("judge", None)
            self.pending.append(a)
        else:
            rec["judge"] = {"supported": hit[0], "correct": hit[1], "reason": hit[2], "cached": True}

    def ask_pending(self, cancel: threading.Event | None = None) -> int:
        """Ask the queued cases; returns how many were left without a verdict (cancelled)."""
        todo, self.pending = self.pending, []
        if todo:
            from .. import aio  # inside a notebook's running loop too

            aio.run(lambda: self._ask_all(todo, cancel), cancel)
        self.cache.close()
        return sum(1 for a in todo if "judge" not in a.record)

    def judge_records(
        self,
        records: Sequence[CaseRecord],
        cases: Mapping[str, Any],
        chunk_text: Callable[[str], str | None],
        language: str | None,
        k: int,
        cancel: threading.Event | None = None,
    ) -> int:
        """Add ``judge`` to every judged record (cached verdicts first, then calls);
        returns how many records were left without a verdict (cancelled)."""
        get_case = cases.get
        for rec in records:
            self.attach_cached(rec, get_case(rec["id"]), chunk_text, language, k)
        return self.ask_pending(cancel)

    async def _ask_all(self, asks: list[Ask], cancel: threading.Event | None) -> None:
        import asyncio  # (here: the judge module is imported by every run, asyncio costs 0.1 s)

        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        pool = HttpPool(self.url, headers)
        queue = iter(asks)

        async def worker() -> None:
            for a in queue:
                if cancel is not None and cancel.is_set():
                    return
                a.record["judge"] = await self._ask(pool, a)

        workers = [asyncio.create_task(worker()) for _ in range(min(self.concurrency, len(asks)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            await pool.aclose()

    async def _ask(self, pool: HttpPool, a: Ask) -> dict[str, Any]:
        import asyncio

        attempt = 0
        replies = 0
        spent = 0
        while True:
            try:
                content, tokens = await asyncio.wait_for(self._call(pool, a.messages), self.timeout)
            except asyncio.CancelledError:
                raise
            except (CaseError, asyncio.TimeoutError) as e:
                retry = e.retry if isinstance(e, CaseError) else True
                if attempt >= self.retries or not retry:
                    cause = (
                        f"no answer within {self.timeout:g} s (timeout)"
                        if isinstance(e, asyncio.TimeoutError)
                        else str(e)
                    )
                    tries = f" (after {attempt + 1} tries)" if attempt else ""
                    return self._error(f"{cause}{tries}", spent)
                wait = getattr(e, "retry_after", None)
                if not isinstance(wait, (int, float)) or wait < 0:
                    wait = self.backoff * (2**attempt)
                await asyncio.sleep(min(float(wait), MAX_WAIT))
                attempt += 1
                continue
            except Exception as e:  # anything else from the wire: that verdict's error, never a crash
                return self._error(f"{type(e).__name__}: {e}", spent)
            spent += tokens
            try:
                sup, cor, reason = parse_verdict(content, a.has_reference)
            except ReplyError as e:
                replies += 1
                if replies < 2:
                    continue  # one more try: sampling noise or a cut-off reply
                return self._error(f"the judge's reply was not the asked JSON (2 tries): {e}", spent)
            reason = secrets.redact(reason)
            self.cache.put(a.key, (sup, cor, reason))
            out: dict[str, Any] = {"supported": sup, "correct": cor, "reason": reason, "cached": False}
            if spent:
                out["tokens"] = spent
            return out

    def _error(self, text: str, spent: int) -> dict[str, Any]:
        out: dict[str, Any] = {"error": secrets.redact(text)}
        if spent:
            out["tokens"] = spent
        return out

    async def _call(self, pool: HttpPool, messages: list[dict[str, str]]) -> tuple[str | None, int]:
        body = orjson.dumps({"model": self.model, "messages": messages, "temperature": 0})
        self.calls += 1
        r = await request_json(pool, self.url, body)
        try:
            obj = parse_answer(r.status, r.body, self.url, r.retry_after)  # a 429's Retry-After is kept
        except CaseError as e:
            raise CaseError(secrets.redact(str(e)), retry=e.retry, retry_after=e.retry_after) from None
        try:
            message = obj["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise CaseError(f"{self.url} answered JSON without choices[0].message", retry=True) from None
        content = message.get("content") if isinstance(message, dict) else None
        refusal = message.get("refusal") if isinstance(message, dict) else None
        usage = obj.get("usage")
        tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
        if not isinstance(tokens, int) or isinstance(tokens, bool):
            tokens = _approx(messages) + len(content or "") // 4
        self.tokens += tokens
        if isinstance(refusal, str) and refusal.strip() and not content:
            return f"(refused: {refusal})", tokens
        if content is not None and not isinstance(content, str):
            return f"(content is {type(content).__name__})", tokens
        return content, tokens
