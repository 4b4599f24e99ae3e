"""A LlamaIndex pipeline connected to ragtriage, as the README shows it (run from the
repository root): ``ragtriage run tests/adapters/pydocs-llamaindex.yaml --system
python:tests.adapters.pipe_llamaindex:system``; ``python -m tests.adapters.pipe_llamaindex``
writes the chunks file."""

from llama_index.core import SimpleDirectoryReader
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.retrievers.bm25 import BM25Retriever

from ragtriage.adapters import llamaindex as rt
from tests.adapters.stand_ins import ExtractiveLLM  # your LLM here

docs = SimpleDirectoryReader("tests/adapters/docs", file_metadata=rt.file_name_only).load_data()
nodes = rt.assign_ids(SentenceSplitter(chunk_size=256, chunk_overlap=20).get_nodes_from_documents(docs))
retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=5)
system = rt.system(CitationQueryEngine(retriever, llm=ExtractiveLLM()))
if __name__ == "__main__":
    rt.export_corpus(nodes, "tests/adapters/pydocs-llamaindex.chunks.jsonl")
