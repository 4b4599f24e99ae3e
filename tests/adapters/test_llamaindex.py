"""The LlamaIndex adapter on a real pipeline, offline: SimpleDirectoryReader over the
three pydocs pages in ``docs/``, SentenceSplitter, LlamaIndex's BM25 retriever and a real
CitationQueryEngine whose model is a deterministic local ``CustomLLM``
(``stand_ins.ExtractiveLLM``). Per-case numbers are checked against LlamaIndex's own
RetrieverEvaluator, and against the hand glue the adapter replaces."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings

import pytest
from llama_index.core import SimpleDirectoryReader, StorageContext, SummaryIndex
from llama_index.core.evaluation import RetrieverEvaluator
from llama_index.core.evaluation.retrieval.metrics import HitRate
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import NodeRelationship, TextNode
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.retrievers.bm25 import BM25Retriever

import ragtriage
from ragtriage.adapters import llamaindex as rt
from ragtriage.core.grounding import citations
from tests.adapters.adapterkit import ADAPTERS, DOCS, code_lines, module_body, per_case
from tests.conftest import ROOT

TESTSET = ADAPTERS / "pydocs-llamaindex.yaml"
SPEC = "python:tests.adapters.pipe_llamaindex:system"
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def fresh_nodes():
    docs = SimpleDirectoryReader(str(DOCS), file_metadata=rt.file_name_only).load_data()
    return SentenceSplitter(chunk_size=256, chunk_overlap=20).get_nodes_from_documents(docs)


@pytest.fixture(scope="module")
def pipe():
    from tests.adapters import pipe_llamaindex

    return pipe_llamaindex


@pytest.fixture(scope="module")
def adapter_run(pipe):
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        return ragtriage.evaluate(TESTSET, system=SPEC, k=5)


PROBE = r"""
import json, sys, warnings
from llama_index.core import SimpleDirectoryReader
from llama_index.core.node_parser import SentenceSplitter
from ragtriage.adapters import llamaindex as rt
docs = SimpleDirectoryReader(sys.argv[1], file_metadata=rt.file_name_only).load_data()
split = SentenceSplitter(chunk_size=256, chunk_overlap=20)
plain = split.get_nodes_from_documents(docs)
raw = [n.node_id for n in plain]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    derived = rt.export_corpus(plain, sys.argv[2])
assigned = [n.node_id for n in rt.assign_ids(split.get_nodes_from_documents(docs))]
print(json.dumps({"raw": raw, "derived": derived, "assigned": assigned}))
"""


def test_ids_are_the_same_in_two_processes(tmp_path):
    """Two separate interpreters chunk the same documents: LlamaIndex's own ids differ
    (uuid4 each time), the adapter's (derived and assigned) and the chunks files do not."""
    seen = []
    for n in (1, 2):
        out = subprocess.run(
            [sys.executable, "-c", PROBE, str(DOCS), str(tmp_path / f"{n}.jsonl")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        seen.append(json.loads(out.stdout))
    one, two = seen
    assert len(one["raw"]) == len(two["raw"]) == 73
    assert all(UUID4.match(i) for i in one["raw"]) and not set(one["raw"]) & set(two["raw"])
    assert one["derived"] == two["derived"] and one["assigned"] == two["assigned"]
    assert (tmp_path / "1.jsonl").read_bytes() == (tmp_path / "2.jsonl").read_bytes()
    assert one["assigned"][:3] == ["datastructures-1", "datastructures-2", "datastructures-3"]
    assert one["derived"][0] == "datastructures.txt:0-974"
    assert not any(UUID4.match(i) for i in one["derived"] + one["assigned"])


def test_chunks_file_spans_are_the_documents_text(tmp_path):
    nodes = rt.assign_ids(fresh_nodes())
    ids = rt.export_corpus(nodes, tmp_path / "c.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()]
    assert ids == [r["id"] for r in rows] == [n.node_id for n in nodes]
    texts = {p.name: p.read_text(encoding="utf-8") for p in DOCS.glob("*.txt")}
    for r in rows:
        assert set(r) == {"id", "text", "doc", "start", "end"}
        assert texts[r["doc"]][r["start"] : r["end"]] == r["text"]
    corpus = ragtriage.load_corpus(tmp_path / "c.jsonl")  # our own reader accepts it
    assert len(corpus) == 73


def test_index_docstore_and_persisted_dir_give_the_same_file(tmp_path, cli_in):
    nodes = rt.assign_ids(fresh_nodes())
    rt.export_corpus(nodes, tmp_path / "nodes.jsonl")
    index = SummaryIndex(nodes)
    rt.export_corpus(index, tmp_path / "index.jsonl")
    rt.export_corpus(index.docstore, tmp_path / "docstore.jsonl")
    index.storage_context.persist(str(tmp_path / "storage"))
    res = cli_in("corpus", "--from", "llamaindex", tmp_path / "storage", "-o", tmp_path / "cli.jsonl")
    assert res.returncode == 0, res.stderr
    assert "73 chunk(s) of 3 document(s)" in res.stdout
    want = (tmp_path / "nodes.jsonl").read_bytes()
    for name in ("index", "docstore", "cli"):
        assert (tmp_path / f"{name}.jsonl").read_bytes() == want, name
    again = cli_in("corpus", "--from", "llamaindex", tmp_path / "storage", "-o", tmp_path / "cli.jsonl")
    assert again.returncode == 2 and "already exists; not overwritten" in again.stderr


def test_persisted_random_ids_are_named_by_span(tmp_path, cli_in):
    """A store persisted with LlamaIndex's own uuid ids: the chunks are named FILE:START-END,
    and the adapter maps a pipeline loaded from that store to the same names."""
    nodes = fresh_nodes()
    index = SummaryIndex(nodes)
    index.storage_context.persist(str(tmp_path / "storage"))
    res = cli_in("corpus", "--from", "llamaindex", tmp_path / "storage", "-o", tmp_path / "c.jsonl")
    assert res.returncode == 0, res.stderr
    assert "73 node(s) had LlamaIndex's random ids" in res.stderr
    ids = [json.loads(line)["id"] for line in (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()]
    store = StorageContext.from_defaults(persist_dir=str(tmp_path / "storage")).docstore
    loaded = list(store.docs.values())
    retriever = BM25Retriever.from_defaults(nodes=loaded, similarity_top_k=5)
    got = rt.system(retriever)("How do I insert an item at the front of a list?", 5)
    assert set(got["ranking"]) <= set(ids) and got["ranking"][0] == "datastructures.txt:0-974"


def test_corpus_command_errors(tmp_path, cli_in):
    missing = cli_in("corpus", "--from", "llamaindex", tmp_path / "nope", "-o", tmp_path / "c.jsonl")
    assert missing.returncode == 2 and "nope: PERSIST_DIR: folder not found" in missing.stderr
    (tmp_path / "empty").mkdir()
    none = cli_in("corpus", "--from", "llamaindex", tmp_path / "empty", "-o", tmp_path / "c.jsonl")
    assert none.returncode == 2 and "has no docstore.json" in none.stderr
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "docstore.json").write_text("{not json", encoding="utf-8")
    bad = cli_in("corpus", "--from", "llamaindex", tmp_path / "bad", "-o", tmp_path / "c.jsonl")
    assert bad.returncode == 2 and "not a LlamaIndex docstore" in bad.stderr
    assert "Traceback" not in missing.stderr + none.stderr + bad.stderr
    assert not (tmp_path / "c.jsonl").exists()


def test_export_without_assigned_ids_warns_how_to_fix(tmp_path):
    nodes = fresh_nodes()
    with pytest.warns(UserWarning, match=r"call ragtriage\.adapters\.llamaindex\.assign_ids\(nodes\)"):
        ids = rt.export_corpus(nodes, tmp_path / "c.jsonl")
    assert ids[0] == "datastructures.txt:0-974"
    # the adapter names the uuid nodes of a pipeline built from them the same way
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=5)
    got = rt.system(retriever)("What does json.dumps return?", 5)
    assert set(got["ranking"]) <= set(ids) and "answer" not in got and len(got["scores"]) == 5


def test_run_agrees_with_llamaindex_retriever_evaluator(pipe, adapter_run):
    """Every answerable case: our hit and rr at k = 5 are LlamaIndex's hit rate and MRR
    for the same retriever and the same expected ids (granular hit rate 1.0 for `expect: all`)."""
    ts = ragtriage.load_testset(TESTSET)
    evaluator = RetrieverEvaluator.from_metric_names(["hit_rate", "mrr"], retriever=pipe.retriever)
    granular = RetrieverEvaluator(metrics=[HitRate(use_granular_hit_rate=True)], retriever=pipe.retriever)
    records = {r["id"]: r for r in adapter_run.cases}
    compared = 0
    for case in ts.cases:
        if case.unanswerable:
            continue
        theirs = evaluator.evaluate(query=case.question, expected_ids=list(case.expected)).metric_vals_dict
        ours = records[case.id]
        if case.expect == "all":
            full = granular.evaluate(query=case.question, expected_ids=list(case.expected))
            assert ours["hit"] == (full.metric_vals_dict["hit_rate"] == 1.0), case.id
        else:
            assert ours["hit"] == (theirs["hit_rate"] == 1.0), case.id
        assert ours["rr"] == pytest.approx(theirs["mrr"]), case.id
        compared += 1
    assert compared == 41
    # not a trivial agreement: misses and lower ranks are among them
    assert adapter_run.summary["hit"] == pytest.approx(40 / 41, abs=1e-3)
    assert 0.5 < adapter_run.summary["mrr"] < 0.9


def test_citations_name_the_chunk_they_quote(adapter_run):
    """CitationQueryEngine's ``[N]`` is rewritten to the id of the retrieved node whose text
    source N is; the model quotes a sentence of that source, so it is in that chunk."""
    corpus = ragtriage.load_corpus(ADAPTERS / "pydocs-llamaindex.chunks.jsonl")
    cited_cases = 0
    for r in adapter_run.cases:
        if not r.get("answer") or r["answer"] == "I don't know.":
            continue
        end = re.search(r"\s*\[([^\]]+)\]$", r["answer"])  # the model cites once, at the end
        assert end is not None and end.group(1) in r["prompt_ids"], r["id"]
        assert end.group(1) in citations(r["answer"])  # as ragtriage reads the citation
        sentence = " ".join(r["answer"][: end.start()].rstrip("…").split())
        assert sentence in " ".join(corpus[end.group(1)].text.split()), r["id"]
        cited_cases += 1
    assert cited_cases >= 40
    assert adapter_run.summary["supported"] > 0.9


def test_hand_glue_gives_the_same_per_case_numbers(pipe, adapter_run):
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        glue = ragtriage.evaluate(TESTSET, system="python:tests.adapters.handglue_llamaindex:answer", k=5)
    assert per_case(glue) == per_case(adapter_run)
    assert glue.summary == adapter_run.summary


def test_the_connection_is_at_most_ten_lines():
    """README's claim: the adapter connection is ≤ 10 lines (imports not counted), where
    the hand glue for the same pipeline is several times that."""
    adapter = code_lines(ADAPTERS / "pipe_llamaindex.py")
    glue = code_lines(ADAPTERS / "handglue_llamaindex.py")
    assert adapter <= 10
    assert glue >= 5 * adapter


def test_numbered_citations_only_for_numbered_sources():
    node = TextNode(id_="a-1", text="Source 1:\nThe sky is red.\n")
    assert rt.source_ids([node], [TextNode(id_="a-1", text="The sky is red.")]) == ["a-1"]
    plain = TextNode(id_="b-1", text="The sky is red.")
    assert rt.source_ids([plain], [plain]) == ["b-1"]


def test_system_refuses_what_it_cannot_run():
    index = SummaryIndex([TextNode(id_="a-1", text="x")])
    with pytest.raises(TypeError, match=r"index\.as_retriever\(\)"):
        rt.system(index)
    with pytest.raises(TypeError, match="not str"):
        rt.system("python:x:y")
    with pytest.raises(TypeError, match="list of nodes before it is indexed"):
        rt.assign_ids(index)
    with pytest.raises(TypeError, match="ragtriage corpus --from llamaindex"):
        rt.export_corpus("storage", "x.jsonl")


def test_assign_ids_keeps_links_and_your_own_ids():
    nodes = rt.assign_ids(fresh_nodes())
    ids = {n.node_id for n in nodes}
    links = 0
    for n in nodes:
        for kind, rel in n.relationships.items():
            if kind != NodeRelationship.SOURCE:  # the source is the document, not a node
                assert rel.node_id in ids
                links += 1
    assert links == 2 * (73 - 3)  # previous and next within each of the three documents
    assert (
        nodes[1].prev_node.node_id == "datastructures-1" and nodes[1].next_node.node_id == "datastructures-3"
    )
    mine = [
        TextNode(id_="mine", text="a", metadata={"file_name": "x.md"}),
        TextNode(text="b", metadata={"file_name": "x.md"}),
    ]
    assert [n.node_id for n in rt.assign_ids(mine)] == ["mine", "x-2"]


def test_two_documents_of_one_name_are_refused(tmp_path):
    a = TextNode(text="one", metadata={"file_name": "a.md"}, start_char_idx=0, end_char_idx=3)
    b = TextNode(text="two", metadata={"file_name": "a.md"}, start_char_idx=0, end_char_idx=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="would both be 'a.md:0-3'"):
            rt.export_corpus([a, b], tmp_path / "c.jsonl")
    assert not (tmp_path / "c.jsonl").exists()


def test_docstore_round_trip(tmp_path):
    nodes = rt.assign_ids(fresh_nodes())
    store = SimpleDocumentStore()
    store.add_documents(nodes)
    assert rt.export_corpus(store, tmp_path / "c.jsonl") == [n.node_id for n in nodes]


def test_readme_shows_this_pipeline():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "```python\n" + module_body("pipe_llamaindex") + "```" in readme
