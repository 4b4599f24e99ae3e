"""The user's own settings, kept across sessions and test sets (not in any test set).

One JSON file: ``$RAGTRIAGE_CONFIG`` if set, else ``$XDG_CONFIG_HOME/ragtriage/config.json``
(``~/.config/ragtriage/config.json`` when ``XDG_CONFIG_HOME`` is unset). Today it holds
one setting:

``grader``
    the name written as ``by`` on every grade (``<stem>.grades.jsonl``) and review note
    (``<stem>.notes.jsonl``). The app asks for it the first time a grade or a note is
    given and keeps it here; ``$RAGTRIAGE_GRADER`` overrides it (a shared machine, CI).

A missing or unreadable file is no setting; the file is written atomically and only
the keys changed are replaced (others, and unknown ones, are kept).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .files import atomic_write


def config_path() -> Path:
    explicit = os.environ.get("RAGTRIAGE_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ragtriage" / "config.json"


def read_config() -> dict[str, Any]:
    try:
        data = json.loads(config_path().read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def write_config(**values: Any) -> Path:
    """Set ``values`` in the config file (None removes a key); returns its path. Raises ``OSError``."""
    path = config_path()
    data = read_config()
    for key, value in values.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    return path


def grader_name() -> str | None:
    """``$RAGTRIAGE_GRADER``, else the ``grader`` setting, else None (not known yet)."""
    env = os.environ.get("RAGTRIAGE_GRADER", "").strip()
    if env:
        return env
    name = read_config().get("grader")
    return name.strip() if isinstance(name, str) and name.strip() else None
