"""The hand-labelled grounding answers (``tests/core/data/grounding-labelled.yaml``) and how
the check is scored on them: an *alarm* is the check saying an answer is not supported;
precision is the share of alarms on answers a person labelled ``unsupported``, recall the
share of those answers that raise one (issue 20)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data" / "grounding-labelled.yaml"


def load() -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    return data["sources"], data["answers"]


@dataclass
class Outcome:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    false_alarms: list[tuple[str, str, str]] = field(default_factory=list)  # (lang, answer, why)
    misses: list[tuple[str, str]] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def score(check_grounding, lang: str | None = None) -> Outcome:
    """Run ``check_grounding`` (``ragtriage.core.grounding.check_grounding``, of this checkout or
    another) on every labelled answer, the answer citing its chunks inline."""
    sources, answers = load()
    out = Outcome()
    for a in answers:
        la = sources[a["src"][0]]["lang"]
        if lang is not None and la != lang:
            continue
        texts = {cid: sources[cid]["text"] for cid in a["src"]}
        answer = a["answer"] + " " + " ".join(f"[{cid}]" for cid in a["src"])
        why = check_grounding(answer, list(texts), texts.get, language=la)
        alarm = bool(why)
        if a["label"] == "unsupported":
            if alarm:
                out.tp += 1
            else:
                out.fn += 1
                out.misses.append((la, a["answer"]))
        elif alarm:
            out.fp += 1
            out.false_alarms.append((la, a["answer"], why))
        else:
            out.tn += 1
    return out
