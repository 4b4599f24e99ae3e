"""Reading the judge's reply: the asked JSON object, or :class:`ReplyError`.

Models wrap JSON in code fences or add a sentence around it; both are
tolerated. Anything else (a refusal, prose, a ``supported`` that is not a
boolean) is a :class:`ReplyError`: the caller asks once more, then records the
error on the verdict and keeps the deterministic result.
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

import orjson

MAX_REASON = 300  # characters of the judge's reason kept in the run file

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


class Verdict(TypedDict):
    """The run file's ``judge`` object for a judged case (judge.md)."""

    supported: bool | None
    correct: bool | None
    reason: str
    cached: bool


class ReplyError(ValueError):
    """The reply was not the asked JSON; the message says what came instead."""


def _snippet(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _object(text: str) -> dict[str, Any]:
    s = _FENCE.sub("", text.strip())
    try:
        obj = orjson.loads(s)
    except orjson.JSONDecodeError:
        start, end = s.find("{"), s.rfind("}")
        if start < 0 or end <= start:
            raise ReplyError(f"not JSON: {_snippet(text)!r}") from None
        try:
            obj = orjson.loads(s[start : end + 1])
        except orjson.JSONDecodeError:
            raise ReplyError(f"malformed JSON: {_snippet(text)!r}") from None
    if not isinstance(obj, dict):
        raise ReplyError(f"a JSON {type(obj).__name__}, not an object: {_snippet(text)!r}")
    return obj


def parse_verdict(content: str | None, has_reference: bool) -> tuple[bool, bool | None, str]:
    """(supported, correct, reason) from the reply text; ``correct`` is None without a reference."""
    if content is None or not content.strip():
        raise ReplyError("an empty reply")
    obj = _object(content)
    sup = obj.get("supported")
    if not isinstance(sup, bool):
        raise ReplyError(f"supported: expected true or false, got {_snippet(repr(sup), 40)}")
    cor = obj.get("correct")
    if not has_reference:
        cor = None
    elif not isinstance(cor, bool):
        raise ReplyError(f"correct: expected true or false, got {_snippet(repr(cor), 40)}")
    reason = obj.get("reason")
    if not isinstance(reason, str):
        reason = ""
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON:
        reason = reason[: MAX_REASON - 1] + "…"
    return sup, cor, reason
