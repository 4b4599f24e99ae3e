"""``http://HOST/PATH`` — POST ``{"id", "question", "k"}``, answer a §3 object."""
from __future__ import annotations

import httpx
import orjson

from . import CaseError, Context, coerce_result


def _snippet(body: bytes, n: int = 120) -> str:
    text = body.decode("utf-8", "replace").strip().replace("\n", " ")
    return text if len(text) <= n else text[: n - 3] + "..."


def parse_answer(resp: httpx.Response, what: str) -> dict:
    """A §3 dict from a response, or CaseError with a cause a person can act on."""
    if resp.status_code >= 400:
        retry = resp.status_code >= 500 or resp.status_code in (408, 429)
        raise CaseError(f"{what} answered HTTP {resp.status_code}: {_snippet(resp.content)}", retry=retry)
    try:
        obj = orjson.loads(resp.content)
    except orjson.JSONDecodeError:
        raise CaseError(f"{what} answered malformed JSON: {_snippet(resp.content)!r}", retry=True) from None
    if not isinstance(obj, dict):
        raise CaseError(f"{what} answered {type(obj).__name__}, expected a JSON object")
    return obj


class HttpSystem:
    def __init__(self, url: str, ctx: Context, timeout: float = 60.0):
        self.url = url
        self.spec = url
        self.warnings: list = []
        self.timeout = timeout
        self._client: httpx.AsyncClient | None = None

    def prepare(self) -> None:
        pass

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
            self._client = httpx.AsyncClient(timeout=self.timeout, limits=limits, trust_env=False)
        return self._client

    async def ask(self, case, k: int) -> dict:
        body = orjson.dumps({"id": case.id, "question": case.question, "k": k})
        try:
            resp = await self.client.post(self.url, content=body, headers={"content-type": "application/json"})
        except httpx.TimeoutException:
            raise CaseError(f"{self.url} did not answer within {self.timeout:g} s", retry=True) from None
        except httpx.HTTPError as e:
            raise CaseError(f"{self.url}: {type(e).__name__}: {e}", retry=True) from None
        obj = parse_answer(resp, self.url)
        try:
            return coerce_result(obj)
        except ValueError as e:
            raise CaseError(f"bad answer from {self.url}: {e}") from None

    def estimate_tokens(self, case, k: int) -> int:
        return 0

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
