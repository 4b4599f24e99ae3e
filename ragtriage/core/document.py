"""Compatibility path: the test-set document now lives in :mod:`ragtriage.core.testset`.

``ragtriage.core.document`` *is* :mod:`ragtriage.core.testset.document` (the
same module object), so ``from ragtriage.core.document import TestSetDocument``
keeps working and so does setting a module-level value such as ``MAX_BYTES``
through either path.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .testset import document as _document

if TYPE_CHECKING:  # mypy cannot follow the sys.modules alias below; show it the same names
    from .testset.document import *  # noqa: F403
    from .testset.document import TestSetDocument as TestSetDocument

sys.modules[__name__] = _document
