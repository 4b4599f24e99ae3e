"""The LangChain adapter on a real chain, offline: TextLoader over the three pydocs pages
in ``docs/``, RecursiveCharacterTextSplitter, langchain-community's BM25Retriever, and an
LCEL chain returning ``{"context", "question", "answer"}`` whose answering step is a
deterministic local ``RunnableLambda`` (``stand_ins.chain_answer``). LangChain has no
retrieval evaluator of its own: the per-case numbers are checked against LlamaIndex's
retrieval metrics on the same ids, and against the hand glue the adapter replaces."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest
from langchain_community.retrievers import BM25Retriever
from langchain_core.documents import Document
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from llama_index.core.evaluation.retrieval.metrics import MRR, HitRate

import ragtriage
from ragtriage.adapters import langchain as rt
from tests.adapters.adapterkit import ADAPTERS, DOCS, code_lines, module_body, per_case
from tests.conftest import ROOT

TESTSET = ADAPTERS / "pydocs-langchain.yaml"
SPEC = "python:tests.adapters.pipe_langchain:system"


@pytest.fixture(scope="module")
def adapter_run():
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        return ragtriage.evaluate(TESTSET, system=SPEC, k=5)


def split_docs():
    from langchain_community.document_loaders import TextLoader
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    docs = [d for p in sorted(DOCS.glob("*.txt")) for d in TextLoader(p, encoding="utf-8").load()]
    return RecursiveCharacterTextSplitter(chunk_size=800, add_start_index=True).split_documents(docs)


PROBE = r"""
import json, sys, uuid, warnings
from pathlib import Path
from langchain_community.document_loaders import TextLoader
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_text_splitters import RecursiveCharacterTextSplitter
from ragtriage.adapters import langchain as rt
docs = [d for p in sorted(Path(sys.argv[1]).glob("*.txt")) for d in TextLoader(p, encoding="utf-8").load()]
split = RecursiveCharacterTextSplitter(chunk_size=800, add_start_index=True)
plain = split.split_documents(docs)
store = InMemoryVectorStore(DeterministicFakeEmbedding(size=8))
raw = store.add_documents(plain)       # what a vector store names them: random uuids
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    derived = rt.export_corpus(plain, sys.argv[2])
assigned = [d.id for d in rt.assign_ids(split.split_documents(docs))]
print(json.dumps({"none": [d.id for d in plain], "raw": raw, "derived": derived, "assigned": assigned}))
"""


def test_ids_are_the_same_in_two_processes(tmp_path):
    seen = []
    for n in (1, 2):
        out = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", PROBE, str(DOCS), str(tmp_path / f"{n}.jsonl")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        seen.append(json.loads(out.stdout))
    one, two = seen
    assert one["none"] == [None] * 115  # a split Document has no id
    assert not set(one["raw"]) & set(two["raw"])  # a vector store's ids are new every time
    assert one["derived"] == two["derived"] and one["assigned"] == two["assigned"]
    assert (tmp_path / "1.jsonl").read_bytes() == (tmp_path / "2.jsonl").read_bytes()
    assert one["assigned"][:2] == ["datastructures-1", "datastructures-2"]
    assert one["derived"][0].startswith("datastructures.txt:0-")


def test_chunks_file_spans_are_the_documents_text(tmp_path):
    chunks = rt.assign_ids(split_docs())
    ids = rt.export_corpus(chunks, tmp_path / "c.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()]
    assert ids == [r["id"] for r in rows] == [d.id for d in chunks]
    texts = {p.name: p.read_text(encoding="utf-8") for p in DOCS.glob("*.txt")}
    for r in rows:
        assert texts[r["doc"]][r["start"] : r["end"]] == r["text"]
    assert len(ragtriage.load_corpus(tmp_path / "c.jsonl")) == 115


def test_run_agrees_with_llamaindex_retrieval_metrics(adapter_run):
    """LangChain has no retrieval evaluator: LlamaIndex's HitRate and MRR on the chain's
    context ids are the peer; our hit and rr at k = 5 (the retriever's depth) agree."""
    ts = ragtriage.load_testset(TESTSET)
    records = {r["id"]: r for r in adapter_run.cases}
    compared = 0
    for case in ts.cases:
        if case.unanswerable:
            continue
        ours = records[case.id]
        got, want = ours["ranking"], list(case.expected)
        granular = case.expect == "all"
        hit = HitRate(use_granular_hit_rate=granular).compute(expected_ids=want, retrieved_ids=got).score
        assert ours["hit"] == (hit == 1.0), case.id
        assert ours["rr"] == pytest.approx(MRR().compute(expected_ids=want, retrieved_ids=got).score), case.id
        compared += 1
    assert compared == 41
    assert 0.6 < adapter_run.summary["hit"] < 0.9  # misses among them: not a trivial agreement


def test_numbered_citations_name_the_context_document(adapter_run):
    corpus = ragtriage.load_corpus(ADAPTERS / "pydocs-langchain.chunks.jsonl")
    checked = 0
    for r in adapter_run.cases:
        answer = r.get("answer") or ""
        if not answer.endswith("]"):
            continue
        body, _, cited = answer[:-1].rpartition(" [")
        assert cited in r["prompt_ids"] and r["prompt_ids"] == r["ranking"], r["id"]
        assert " ".join(body.rstrip("…").split()) in " ".join(corpus[cited].text.split()), r["id"]
        checked += 1
    assert checked >= 40


def test_hand_glue_gives_the_same_per_case_numbers(adapter_run):
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        glue = ragtriage.evaluate(TESTSET, system="python:tests.adapters.handglue_langchain:answer", k=5)
    assert per_case(glue) == per_case(adapter_run)
    assert glue.summary == adapter_run.summary


def test_the_connection_is_at_most_ten_lines():
    adapter = code_lines(ADAPTERS / "pipe_langchain.py")
    glue = code_lines(ADAPTERS / "handglue_langchain.py")
    assert adapter <= 10
    assert glue >= 5 * adapter


def test_retriever_alone_and_scores_from_metadata():
    docs = rt.assign_ids(
        [Document(page_content="alpha beta", metadata={"source": "a.md", "start_index": 0, "score": 0.5})]
    )
    retriever = BM25Retriever.from_documents(docs, k=1)
    got = rt.system(retriever)("alpha", 3)
    assert got == {"ranking": ["a-1"], "scores": [0.5]}


def test_chain_results_it_cannot_read_are_that_case_error():
    text_only = rt.system(RunnableLambda(lambda q: "an answer"))
    with pytest.raises(TypeError, match=r"return \{'context': documents, 'answer': answer\}"):
        text_only("q", 3)
    wrong_keys = rt.system(RunnableLambda(lambda q: {"docs": [], "output": "x"}))
    with pytest.raises(KeyError, match=r"has 'docs', 'output'\): pass context_key=/answer_key="):
        wrong_keys("q", 3)
    renamed = rt.system(
        RunnableLambda(
            lambda d: {"docs": [Document(page_content="x", id="x-1")], "output": AIMessage("ok [x-1]")}
        ),
        answer_key="output",
        context_key="docs",
        input_key="input",
    )
    assert renamed("q", 3) == {"ranking": ["x-1"], "answer": "ok [x-1]", "prompt_ids": ["x-1"]}
    with pytest.raises(TypeError, match="retriever or runnable"):
        rt.system(object())


def test_export_without_ids_warns_how_to_fix(tmp_path):
    with pytest.warns(UserWarning, match=r"call ragtriage\.adapters\.langchain\.assign_ids\(docs\)"):
        ids = rt.export_corpus(split_docs(), tmp_path / "c.jsonl")
    assert ids[0].startswith("datastructures.txt:0-")
    no_span = Document(page_content="text", metadata={"source": "/x/y/notes.md"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert rt.export_corpus([no_span], tmp_path / "d.jsonl")[0].startswith("notes.md#")


def test_readme_shows_this_pipeline():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "```python\n" + module_body("pipe_langchain") + "```" in readme
