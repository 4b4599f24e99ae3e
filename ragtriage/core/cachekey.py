"""The key that signs ragtriage's caches, so a cache file nobody here wrote is ignored.

A cache (the test set's reopen cache, the judge's verdicts) may only make a command
faster, never change what it reports. Its folder is easy for someone else to fill: a CI
cache restored from another branch, a shared runner's home, a copied ``~/.cache``. So
every entry carries a keyed BLAKE2b MAC over its content and over what it was made from
(the test set's bytes, the verdict's inputs), and an entry whose MAC does not verify is
ignored as if absent.

The key is 32 random bytes made on first use, readable by this user only, and kept
*outside* the cache folder — ``$RAGTRIAGE_CACHE_KEY`` (a file path), else
``$XDG_CONFIG_HOME/ragtriage/cache.key`` (``~/.config`` when unset) — so restoring or
forging the cache folder does not bring a key with it. A fresh CI job therefore makes
its own key, and entries from another job are re-made, not trusted. Someone who can
read this user's files can forge entries; they could change the installed tool too.
Without a usable key (an unwritable home) nothing is cached.
"""

from __future__ import annotations

import hashlib
import os
import secrets as _random
import stat
from pathlib import Path

KEY_BYTES = 32
MAC_BYTES = 32
_key: bytes | None = None
_key_from: str | None = None


def key_path() -> Path:
    given = os.environ.get("RAGTRIAGE_CACHE_KEY")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "ragtriage" / "cache.key"


def key() -> bytes | None:
    """This user's cache key (made on first use), or None when none can be kept."""
    global _key, _key_from
    path = key_path()
    if _key is not None and _key_from == str(path):
        return _key
    k = _read(path)
    if k is None:
        k = _make(path)
    _key, _key_from = k, str(path)
    return k


def _read(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        trusted = (
            stat.S_ISREG(st.st_mode)
            and st.st_size == KEY_BYTES
            and not st.st_mode & 0o077  # nobody else may read or replace it
            and (not hasattr(os, "getuid") or st.st_uid == os.getuid())
        )
        return os.read(fd, KEY_BYTES + 1) if trusted else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _make(path: Path) -> bytes | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return _read(path)  # another process made it at the same moment (or it is not usable)
    except OSError:
        return None
    try:
        k = _random.token_bytes(KEY_BYTES)
        os.write(fd, k)
        os.fsync(fd)
        return k
    except OSError:
        return None
    finally:
        os.close(fd)


def mac(*parts: bytes | memoryview) -> bytes | None:
    """The MAC of ``parts`` (each behind its length, so no two splits of the same bytes
    agree), or None without a key."""
    k = key()
    if k is None:
        return None
    h = hashlib.blake2b(key=k, digest_size=MAC_BYTES)
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.digest()


def verify(tag: bytes, *parts: bytes | memoryview) -> bool:
    import hmac

    want = mac(*parts)
    return want is not None and hmac.compare_digest(tag, want)
