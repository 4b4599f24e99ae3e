"""What several test modules build the same way: evaluation.md's five-case table and a
run file written line by line (shared here so test modules never import each other)."""

from __future__ import annotations

import json

from ragtriage.core.schema import Case, Settings

NL = Settings(language="nl")


def five():
    cases = [
        Case(id="q1", question="?", expected=["a"], answer="ja"),
        Case(id="q2", question="?", expected=["b", "c", "d"], answer="ja"),
        Case(id="q3", question="?", expected=["e"], answer="ja"),
        Case(id="q4", question="?", unanswerable=True),
        Case(id="q5", question="?", unanswerable=True),
    ]
    results = [
        {"id": "q1", "ranking": ["a"], "answer": "ja", "supported": True},
        {"id": "q2", "ranking": ["b"], "answer": "nee", "supported": False},
        {"id": "q3", "ranking": ["x"], "answer": None, "supported": False},
        {"id": "q4", "ranking": [], "answer": None, "supported": False},
        {"id": "q5", "ranking": [], "answer": "fantasie", "supported": False},
    ]
    return cases, results


def write_run(path, cases, summary=None, meta=None):
    lines = [{"type": "meta", "testset": "shop-es.yaml", "testset_hash": "aaa", "k": 3, **(meta or {})}]
    lines += [{"type": "case", "id": cid, "reason": reason} for cid, reason in cases]
    if summary is not None:
        lines.append({"type": "summary", **summary})
    path.write_text("".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines), encoding="utf-8")
    return path
