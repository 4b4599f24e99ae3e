"""``openai:BASE_URL#MODEL`` — retrieval by ``builtin`` (or ``--retriever SPEC``),
generation by any OpenAI-compatible chat endpoint (llama.cpp, vLLM, Ollama ...).

The prompt holds the top-k chunks as ``[id] text``, asks to cite ``[id]`` and to
decline with the test set's phrase. The API key comes from the environment
variable named by ``--api-key-env``; it is sent as a bearer token and never
printed, logged or written to the run file (the spec recorded is the URL#MODEL).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import orjson

from .. import secrets
from ..errors import InputError, Problem
from . import CaseError, Context, approx_tokens, make_system
from .http import parse_answer, request_json, require_url
from .wire import HttpPool

if TYPE_CHECKING:
    from ..schema import Case

SYSTEM_PROMPT = (
    "You answer questions using only the sources given. Cite every source you use by "
    "its id in square brackets, like [{example}]. If the sources do not answer the question, "
    "reply with exactly: {decline}"
)


def build_messages(question: str, prompt: list[tuple[str, str]], decline: str) -> list[dict[str, str]]:
    example = prompt[0][0] if prompt else "chunk-id"
    sources = "\n\n".join(f"[{cid}] {text}" for cid, text in prompt) or "(no sources)"
    return [
        {"role": "system", "content": SYSTEM_PROMPT.format(example=example, decline=decline)},
        {"role": "user", "content": f"Sources:\n\n{sources}\n\nQuestion: {question}"},
    ]


class OpenAISystem:
    def __init__(
        self,
        target: str,
        ctx: Context,
        *,
        retriever: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
    ):
        base, sep, model = target.partition("#")
        if not sep or not base.startswith(("http://", "https://")) or not model:
            raise InputError(
                Problem(
                    "--system",
                    None,
                    f"openai:{secrets.strip_userinfo(target)}: expected openai:BASE_URL#MODEL, "
                    "e.g. openai:http://127.0.0.1:8080/v1#llama3",
                )
            )
        require_url(base)
        secrets.register_url(base)
        self.base = base.rstrip("/")
        self.model = model
        self.spec = f"openai:{secrets.strip_userinfo(self.base)}#{model}"  # never the userinfo
        self.url = self.base + "/chat/completions"
        self.shown = secrets.strip_userinfo(self.url)
        self.ctx = ctx
        self.timeout = timeout
        self.api_key_env = api_key_env
        self._key, key_warning = secrets.key_from_env(api_key_env)  # stripped; every form redacted
        try:
            self.retriever = make_system(retriever or "builtin", ctx, timeout=timeout)
        except InputError as e:  # the spec came from --retriever: say so
            raise InputError(
                [
                    dataclasses.replace(p, file="--retriever") if p.file == "--system" else p
                    for p in e.problems
                ]
            ) from None
        self.warnings = list(getattr(self.retriever, "warnings", []))
        if key_warning:
            self.warnings.append(Problem("--api-key-env", None, key_warning, severity="warning"))
        self._pool: HttpPool | None = None

    def prepare(self) -> None:
        self.retriever.prepare()

    @property
    def pool(self) -> HttpPool:
        if self._pool is None:
            headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
            self._pool = HttpPool(self.url, headers)
        return self._pool

    def _prompt(self, ranking: list[str], k: int) -> list[tuple[str, str]]:
        out = []
        for cid in ranking[:k]:
            text = self.ctx.chunk_text(cid)
            if text is not None:
                out.append((cid, text))
        return out

    async def ask(self, case: Case, k: int) -> dict[str, Any]:
        retrieved = await self.retriever.ask(case, k)
        ranking = list(retrieved.get("ranking") or [])
        prompt = self._prompt(ranking, k)
        messages = build_messages(case.question, prompt, self.ctx.decline[0])
        body = orjson.dumps({"model": self.model, "messages": messages, "temperature": 0})
        r = await request_json(self.pool, self.url, body)
        obj = parse_answer(r.status, r.body, self.shown, r.retry_after)
        try:
            answer = obj["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise CaseError(
                f"{self.shown} answered JSON without choices[0].message.content", retry=True
            ) from None
        if answer is not None and not isinstance(answer, str):
            raise CaseError(f"{self.shown}: message content is {type(answer).__name__}, expected text")
        usage = obj.get("usage")
        tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        if not isinstance(tokens, int) or isinstance(tokens, bool) or not 0 <= tokens < 1 << 63:
            tokens = approx_tokens(case.question, (t for _, t in prompt))
        out: dict[str, Any] = {
            "ranking": ranking,
            "answer": answer,
            "prompt_ids": [cid for cid, _ in prompt],
            "tokens": tokens,
        }
        if retrieved.get("scores") is not None:
            out["scores"] = retrieved["scores"]
        return out

    def estimate_tokens(self, case: Case, k: int) -> int:
        if hasattr(self.retriever, "retrieve"):
            ranking, _ = self.retriever.retrieve(case.question, k)
            return approx_tokens(case.question, (t for _, t in self._prompt(ranking, k)))
        return approx_tokens(case.question, ())

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
        await self.retriever.aclose()
