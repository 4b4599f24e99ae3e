"""``http://HOST/PATH`` — POST ``{"id", "question", "k"}``, answer a §3 object."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import orjson

from .. import secrets
from ..errors import InputError, Problem
from . import CaseError, Context, coerce_result
from .wire import HttpPool, Response, TooLarge, WireError, check_url

if TYPE_CHECKING:
    from ..schema import Case


def _snippet(body: bytes, n: int = 120) -> str:
    text = body[: n * 4].decode("utf-8", "replace").strip().replace("\n", " ")
    text = secrets.redact(text)
    return text if len(text) <= n else text[: n - 3] + "..."


def require_url(url: str, option: str = "--system") -> None:
    """A bad endpoint URL is bad input (exit 2), found before any case is asked."""
    problem = check_url(url)
    if problem:
        raise InputError(Problem(option, None, f"{secrets.strip_userinfo(url)}: {problem}"))


def parse_answer(status: int, content: bytes, what: str, retry_after: float | None = None) -> dict[str, Any]:
    """A JSON object from an answer, or CaseError with a cause a person can act on."""
    if status >= 400:
        retry = status >= 500 or status in (408, 429)
        raise CaseError(
            f"{what} answered HTTP {status}: {_snippet(content)}", retry=retry, retry_after=retry_after
        )
    if 300 <= status < 400:
        raise CaseError(f"{what} answered HTTP {status} (a redirect): give the final URL")
    if content[:2] == b"\x1f\x8b":  # what a server sends with Content-Encoding: gzip, never asked for
        raise CaseError(
            f"{what} answered gzip-compressed bytes, not JSON (ragtriage does not ask for compression: "
            "is a proxy or the server compressing unasked?)"
        )
    try:
        obj = orjson.loads(content)
    except orjson.JSONDecodeError:
        raise CaseError(f"{what} answered malformed JSON: {_snippet(content)!r}", retry=True) from None
    if not isinstance(obj, dict):
        raise CaseError(f"{what} answered {type(obj).__name__}, expected a JSON object")
    return obj


async def request_json(pool: HttpPool, url: str, body: bytes) -> Response:
    """POST with network failures turned into CaseErrors (no secrets in the text)."""
    shown = secrets.strip_userinfo(url)
    try:
        return await pool.request(url, body)
    except TooLarge as e:
        raise CaseError(f"{shown}: {e}", retry=False) from None
    except (OSError, WireError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as e:
        detail = e.strerror if isinstance(e, OSError) and e.strerror else (str(e) or type(e).__name__)
        if isinstance(e, asyncio.IncompleteReadError):
            detail = "connection closed in the middle of the answer"
        raise CaseError(f"{shown}: {secrets.redact(detail)}", retry=True) from None


class HttpSystem:
    def __init__(self, url: str, ctx: Context, timeout: float = 60.0):
        require_url(url)
        secrets.register_url(url)
        self.url = url
        self.shown = secrets.strip_userinfo(url)
        self.spec = self.shown  # recorded in the run file: never the userinfo
        self.warnings: list[Problem] = []
        self.timeout = timeout
        self._pool: HttpPool | None = None

    def prepare(self) -> None:
        pass

    @property
    def pool(self) -> HttpPool:
        if self._pool is None:
            self._pool = HttpPool(self.url)
        return self._pool

    async def ask(self, case: Case, k: int) -> dict[str, Any]:
        body = orjson.dumps({"id": case.id, "question": case.question, "k": k})
        r = await request_json(self.pool, self.url, body)
        obj = parse_answer(r.status, r.body, self.shown, r.retry_after)
        answered_for = obj.get("id")
        if answered_for is not None and answered_for != case.id:
            raise CaseError(
                f"{self.shown} answered for case {str(answered_for)[:80]!r}, not {case.id!r}", retry=True
            )
        try:
            return coerce_result(obj)
        except ValueError as e:
            raise CaseError(f"bad answer from {self.shown}: {e}") from None

    def estimate_tokens(self, case: Case, k: int) -> int:
        return 0

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
