"""The test-set file: reading (:mod:`.reader`), its text pieces (:mod:`.regions`),
rendering and splicing edits (:mod:`.render`), the reopen cache (:mod:`.cache`),
undo and redo (:mod:`.history`) and the document façade (:mod:`.document`)."""

from .cache import cache_dir
from .document import MAX_BYTES, TestSetDocument

__all__ = ["MAX_BYTES", "TestSetDocument", "cache_dir"]
