"""A LangChain chain connected to ragtriage, as the README shows it (run from the
repository root): ``ragtriage run tests/adapters/pydocs-langchain.yaml --system
python:tests.adapters.pipe_langchain:system``; ``python -m tests.adapters.pipe_langchain``
writes the chunks file."""

from pathlib import Path

from langchain_community.document_loaders import TextLoader
from langchain_community.retrievers import BM25Retriever
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ragtriage.adapters import langchain as rt
from tests.adapters.stand_ins import chain_answer  # your prompt | llm here

docs = [
    d
    for p in sorted(Path("tests/adapters/docs").glob("*.txt"))
    for d in TextLoader(p, encoding="utf-8").load()
]
chunks = rt.assign_ids(
    RecursiveCharacterTextSplitter(chunk_size=800, add_start_index=True).split_documents(docs)
)
retriever = BM25Retriever.from_documents(chunks, k=5)
chain = RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(
    answer=RunnableLambda(chain_answer)
)
system = rt.system(chain, numbered_citations=True)
if __name__ == "__main__":
    rt.export_corpus(chunks, "tests/adapters/pydocs-langchain.chunks.jsonl")
