"""``http://HOST/PATH`` — POST ``{"id", "question", "k"}``, answer a §3 object."""

from __future__ import annotations

import asyncio

import orjson

from . import CaseError, Context, coerce_result
from .wire import HttpPool, WireError


def _snippet(body: bytes, n: int = 120) -> str:
    text = body.decode("utf-8", "replace").strip().replace("\n", " ")
    return text if len(text) <= n else text[: n - 3] + "..."


def parse_answer(status: int, content: bytes, what: str) -> dict:
    """A JSON object from an answer, or CaseError with a cause a person can act on."""
    if status >= 400:
        retry = status >= 500 or status in (408, 429)
        raise CaseError(f"{what} answered HTTP {status}: {_snippet(content)}", retry=retry)
    try:
        obj = orjson.loads(content)
    except orjson.JSONDecodeError:
        raise CaseError(f"{what} answered malformed JSON: {_snippet(content)!r}", retry=True) from None
    if not isinstance(obj, dict):
        raise CaseError(f"{what} answered {type(obj).__name__}, expected a JSON object")
    return obj


async def post_json(pool: HttpPool, url: str, body: bytes) -> tuple[int, bytes]:
    """POST with network failures turned into retryable CaseErrors (no secrets in the text)."""
    try:
        return await pool.post(url, body)
    except (OSError, WireError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as e:
        detail = e.strerror if isinstance(e, OSError) and e.strerror else (str(e) or type(e).__name__)
        raise CaseError(f"{url}: {detail}", retry=True) from None


class HttpSystem:
    def __init__(self, url: str, ctx: Context, timeout: float = 60.0):
        self.url = url
        self.spec = url
        self.warnings: list = []
        self.timeout = timeout
        self._pool: HttpPool | None = None

    def prepare(self) -> None:
        pass

    @property
    def pool(self) -> HttpPool:
        if self._pool is None:
            self._pool = HttpPool(self.url)
        return self._pool

    async def ask(self, case, k: int) -> dict:
        body = orjson.dumps({"id": case.id, "question": case.question, "k": k})
        status, content = await post_json(self.pool, self.url, body)
        obj = parse_answer(status, content, self.url)
        try:
            return coerce_result(obj)
        except ValueError as e:
            raise CaseError(f"bad answer from {self.url}: {e}") from None

    def estimate_tokens(self, case, k: int) -> int:
        return 0

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
