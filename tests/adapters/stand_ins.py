"""Deterministic local stand-ins for the model in the tests' pipelines (no network, no
weights): they answer from what the real pipeline put in the prompt, citing as they were
asked to, so a real ``CitationQueryEngine`` and a real LangChain chain run end to end.

- :class:`ExtractiveLLM` — a LlamaIndex ``CustomLLM``: reads CitationQueryEngine's
  prompt (``Source N:`` blocks, then ``Query:``), answers with the first sentence of the
  source that shares most words with the query, cited ``[N]`` as the prompt asks.
- :func:`chain_answer` — the step of a LangChain chain that writes the answer from
  ``{"context": [Document, ...], "question": ...}``, citing the context number ``[N]``.

Neither is a mock of the framework: the frameworks' own code builds the prompt and
handles the response; only the model is replaced.
"""

from __future__ import annotations

import re
from typing import Any

_WORD = re.compile(r"\w+")
_STOP = {
    "what",
    "which",
    "when",
    "where",
    "does",
    "with",
    "that",
    "this",
    "from",
    "into",
    "have",
    "there",
    "their",
    "should",
    "would",
    "about",
    "python",
}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if len(w) > 3 and w not in _STOP}


def _sentences(text: str) -> list[str]:
    """The sentences of a text: split at blank lines and after ``. ! ?`` (whitespace squashed)."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        out += [s for s in re.split(r"(?<=[.!?])\s+", " ".join(block.split())) if s]
    return out


def best(question: str, texts: list[str]) -> int | None:
    """The index of the text sharing most content words with the question (the first of
    equals), or None when none shares any."""
    want = _words(question)
    scores = [len(want & _words(t)) for t in texts]
    if not scores or max(scores) == 0:
        return None
    return scores.index(max(scores))


def answer_from(question: str, sources: list[str], limit: int = 300) -> str:
    """The best source's sentence closest to the question, cited ``[N]``, or a decline."""
    i = best(question, sources)
    if i is None:
        return "I don't know."
    sentences = _sentences(sources[i])
    text = sentences[best(question, sentences) or 0]
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return f"{text} [{i + 1}]"


_SOURCE = re.compile(r"^Source (\d+):\n", re.M)


def citation_prompt_parts(prompt: str) -> tuple[str, list[str]]:
    """The query and the numbered sources of a CitationQueryEngine prompt."""
    body = prompt.rsplit("Below are several numbered sources of information", 1)[-1]
    context, _, tail = body.partition("\n------\nQuery: ")
    query = tail.rsplit("\nAnswer:", 1)[0].strip()
    marks = list(_SOURCE.finditer(context))
    sources = [
        context[m.end() : marks[j + 1].start() if j + 1 < len(marks) else len(context)]
        for j, m in enumerate(marks)
    ]
    return query, sources


def _llm_class() -> type:
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.llms.callbacks import llm_completion_callback

    class ExtractiveLLM(CustomLLM):
        """Answers a CitationQueryEngine prompt from its own numbered sources."""

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(context_window=200_000, num_output=256, model_name="extractive")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            query, sources = citation_prompt_parts(prompt)
            return CompletionResponse(text=answer_from(query, sources))

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
            text = self.complete(prompt, formatted=formatted).text
            yield CompletionResponse(text=text, delta=text)

    return ExtractiveLLM


def ExtractiveLLM() -> Any:  # named as the class it makes, as a pipeline writes it
    return _llm_class()()


def chain_answer(inputs: dict[str, Any]) -> str:
    """A LangChain step: the answer from ``inputs["context"]`` (Documents) and the question."""
    return answer_from(inputs["question"], [d.page_content for d in inputs["context"]])
