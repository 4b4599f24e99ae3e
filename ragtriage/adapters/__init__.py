"""Adapters from the RAG frameworks people use to ragtriage's files and systems.

- :mod:`ragtriage.adapters.llamaindex` (``pip install "ragtriage[llamaindex]"``)
- :mod:`ragtriage.adapters.langchain` (``pip install "ragtriage[langchain]"``)

Each gives ``export_corpus`` (the chunks file, with ids that are the same in every
process for the same chunking), ``assign_ids`` (the same ids on the pipeline's own
nodes or documents before indexing, so its rankings name them) and ``system`` (a
``python:``-ready callable). Nothing in ragtriage's core, commands or app imports this
package (an import-linter contract in ``.importlinter``): the frameworks stay optional.
"""
