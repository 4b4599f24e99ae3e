"""Compatibility path: the test-set document now lives in :mod:`ragtriage.core.testset`.

``ragtriage.core.document`` *is* :mod:`ragtriage.core.testset.document` (the
same module object), so ``from ragtriage.core.document import TestSetDocument``
keeps working and so does setting a module-level value such as ``MAX_BYTES``
through either path.
"""

from __future__ import annotations

import sys

from .testset import document as _document

sys.modules[__name__] = _document
