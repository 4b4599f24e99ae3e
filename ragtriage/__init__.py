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

import os as _os
import sys as _sys

__version__ = "0.1.0"


def _quiet_interrupt(signum, frame):  # pragma: no cover - only before the command starts
    _os.write(2, b"interrupted\n")
    _os._exit(130)


# The command line (`ragtriage ...`, `python -m ragtriage ...`): a Ctrl-C while Python is
# still importing the tool would print a traceback; until cli.main takes over, it ends
# the process quietly with 130. A library user's `import ragtriage` is left alone.
if _os.path.basename(_sys.argv[0] if _sys.argv else "") in ("ragtriage", "-m"):
    import signal as _signal

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _quiet_interrupt)

from .api import aevaluate, evaluate  # noqa: E402  (after the interrupt handler)
from .core.corpus import Chunk, Corpus, load_corpus  # noqa: E402
from .core.errors import CorpusError, InputError, Problem, TestSetError  # noqa: E402

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
