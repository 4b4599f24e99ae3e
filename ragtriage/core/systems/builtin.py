"""The embedded baseline: BM25 retrieval over the test set's corpus and a
deterministic extractive answerer. Offline, no model, no key.

The answerer takes, from the top-k chunks, the sentence that shares the most
content words with the question (words compared by their first five letters,
so ``devolver`` meets ``devolución``), and cites its chunk as ``[id]``. When
that sentence shares less than a quarter of the question's content words, nothing
matches well and it declines with the test set's first decline phrase.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..errors import Problem
from ..search import stopwords, tokenize
from . import Context, approx_tokens

if TYPE_CHECKING:
    from ..schema import Case

_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
STEM = 5
MIN_OVERLAP = 0.25
DEPTH = 20  # ranking depth kept, so retrieval at any k up to it needs no new call


def _stems(text: str, stop: frozenset[str]) -> set[str]:
    return {t[:STEM] for t in tokenize(text, stop)}


def extractive_answer(
    question: str,
    prompt: list[tuple[str, str]],
    language: str | None,
    decline: str,
    min_overlap: float = MIN_OVERLAP,
) -> str:
    """Best-matching sentence of the prompt chunks with its ``[id]``, or the decline phrase."""
    stop = stopwords(language)
    q = _stems(question, stop)
    best: tuple[float, str | None, str | None] = (0.0, None, None)
    if q:
        for cid, text in prompt:
            for sent in _SENTENCE.split(text):
                sent = sent.strip()
                if not sent:
                    continue
                score = len(q & _stems(sent, stop)) / len(q)
                if score > best[0]:
                    best = (score, cid, sent)
    if best[1] is None or best[0] < min_overlap:
        return decline[:1].upper() + decline[1:] + "."
    return f"{best[2]} [{best[1]}]"


class BuiltinSystem:
    spec = "builtin"

    def __init__(self, ctx: Context):
        self.ctx = ctx
        ctx.require_corpus("the builtin system")
        self.warnings: list[Problem] = []

    def prepare(self) -> None:
        """Build the index before the clock of the first case starts."""
        self.ctx.index  # noqa: B018

    def retrieve(self, question: str, n: int) -> tuple[list[str], list[float]]:
        hits = self.ctx.index.search(question, n=n)
        return [h[0] for h in hits], [round(h[1], 6) for h in hits]

    def prompt_texts(self, ranking: list[str], k: int) -> list[tuple[str, str]]:
        corpus = self.ctx.require_corpus("the builtin system")  # (it was required when made)
        return [(cid, corpus[cid].text) for cid in ranking[:k] if cid in corpus]

    async def ask(self, case: Case, k: int) -> dict[str, Any]:
        return self.ask_sync(case, k)

    def ask_sync(self, case: Case, k: int) -> dict[str, Any]:
        ranking, scores = self.retrieve(case.question, max(k, DEPTH))
        prompt = self.prompt_texts(ranking, k)
        answer = extractive_answer(case.question, prompt, self.ctx.language, self.ctx.decline[0])
        return {
            "ranking": ranking,
            "scores": scores,
            "answer": answer,
            "prompt_ids": [cid for cid, _ in prompt],
            "tokens": approx_tokens(case.question, (t for _, t in prompt)),
        }

    def estimate_tokens(self, case: Case, k: int) -> int:
        ranking, _ = self.retrieve(case.question, k)
        return approx_tokens(case.question, (t for _, t in self.prompt_texts(ranking, k)))

    async def aclose(self) -> None:
        pass
