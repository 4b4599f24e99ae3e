"""The one clock of ragtriage: UTC time as ISO-8601 text, to the second.

``SOURCE_DATE_EPOCH`` (https://reproducible-builds.org/specs/source-date-epoch/)
fixes it, so that a label's ``when``, a run's ``started`` and a triage review
stamp are reproducible in tests and in generated files.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone


def utc_now() -> str:
    """``YYYY-MM-DDTHH:MM:SSZ``, from ``SOURCE_DATE_EPOCH`` when it is set to whole seconds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    t = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch.isdigit() else datetime.now(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")
