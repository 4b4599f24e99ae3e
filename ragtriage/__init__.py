"""ragtriage: find out why a RAG answer fails — retrieval, grounding or correctness.

The stable Python API (formats.md §6)::

    import ragtriage
    ts = ragtriage.load_testset("testsets/shop-es.yaml")
    corpus = ragtriage.load_corpus("testsets/shop-es.chunks.jsonl")
    run = ragtriage.evaluate(ts, system="builtin", k=3)   # or system=a callable f(question, k)
    run.summary, run.cases, run.to_pandas()
    run = await ragtriage.aevaluate(ts, system=...)       # in async code
"""

from __future__ import annotations

__version__ = "0.1.0"

from .api import aevaluate, evaluate
from .core.corpus import Chunk, Corpus, load_corpus
from .core.errors import CorpusError, InputError, Problem, TestSetError

__all__ = [
    "__version__",
    "load_testset",
    "load_corpus",
    "evaluate",
    "aevaluate",
    "TestSetError",
    "CorpusError",
    "InputError",
    "Problem",
    "Chunk",
    "Corpus",
]


def load_testset(path, *, use_cache: bool = True):
    """Load and validate a test set; raise :class:`TestSetError` on bad input."""
    from .core.document import TestSetDocument

    return TestSetDocument.load(path, use_cache=use_cache)
