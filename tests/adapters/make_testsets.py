"""Rebuild the adapters' test sets from the pydocs questions (run from the repository root):

    python -m tests.adapters.pipe_llamaindex      # writes pydocs-llamaindex.chunks.jsonl
    python -m tests.adapters.pipe_langchain       # writes pydocs-langchain.chunks.jsonl
    python -m tests.adapters.make_testsets        # writes the two test sets

The documents in ``docs/`` are the three pages of ``testsets/pydocs`` (Python 3.11
documentation, PSF licence: ``LICENSE-PSF.txt``), each page's text at the same character
offsets as ``pydocs-paragraphs.chunks.jsonl``. The questions and their labels are the
42 of ``testsets/pydocs/pydocs.yaml``, labelled by a person against one chunk per
paragraph; here each labelled paragraph becomes the chunks of the new chunking that
hold it whole (any of them answers), or the one that holds most of it.
"""

from __future__ import annotations

from pathlib import Path

import ragtriage
from ragtriage.core.document import TestSetDocument

HERE = Path(__file__).resolve().parent
PYDOCS = HERE.parent.parent / "testsets" / "pydocs"


def relabel(paragraph, chunks) -> list[str]:
    """The chunks of ``chunks`` that hold ``paragraph``'s span whole, else the one with the most of it."""
    same = [c for c in chunks if c.doc == paragraph.doc]
    whole = [c.id for c in same if c.start <= paragraph.start and paragraph.end <= c.end]
    if whole:
        return whole
    overlap = [(min(c.end, paragraph.end) - max(c.start, paragraph.start), c.id) for c in same]
    return [max(overlap)[1]]


def build(name: str, framework: str) -> Path:
    source = ragtriage.load_testset(PYDOCS / "pydocs.yaml")
    paragraphs = ragtriage.load_corpus(PYDOCS / "pydocs-paragraphs.chunks.jsonl")
    chunks_path = HERE / f"{name}.chunks.jsonl"
    chunks = list(ragtriage.load_corpus(chunks_path).values())
    out = HERE / f"{name}.yaml"
    comment = (
        f"The 42 pydocs questions (testsets/pydocs/pydocs.yaml) against the {framework} pipeline of\n"
        f"tests/adapters/pipe_{framework.lower()}.py. Rebuilt by tests/adapters/make_testsets.py: each\n"
        "paragraph a person labelled becomes the chunks of this chunking that hold it."
    )
    doc = TestSetDocument.create(out, corpus=chunks_path.name, language="en", k=5, comment=comment)
    with doc.batch():
        for case in source.cases:
            fields = case.model_dump(exclude_defaults=True)
            held = [relabel(paragraphs[pid], chunks) for pid in case.expected]
            wanted: list[str] = []
            if case.expect == "all":  # one chunk per paragraph; one chunk when one holds them all
                both = set.intersection(*map(set, held))
                wanted = [min(both, key=held[0].index)] if both else list(dict.fromkeys(h[0] for h in held))
            else:
                wanted = list(dict.fromkeys(c for h in held for c in h))
            if wanted:
                fields["expected"] = wanted
            if len(wanted) == 1:
                fields.pop("expect", None)
            doc.add_case(**fields)
        doc.record_labels()
    if out.exists():
        out.unlink()
    doc.save()
    return out


def main() -> None:
    for name, framework in (("pydocs-llamaindex", "LlamaIndex"), ("pydocs-langchain", "LangChain")):
        print(build(name, framework))


if __name__ == "__main__":
    main()
