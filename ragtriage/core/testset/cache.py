"""The reopen cache: the parsed pieces of a test set, keyed by the bytes on disk.

Reopening an unchanged file reads a marshal blob of its regions instead of
parsing the YAML again. The entry is named by the content hash of the file's
bytes, and carries a keyed MAC (:mod:`ragtriage.core.cachekey`) over that hash and
the blob: an entry this user's ragtriage did not write (a CI cache from another
branch, a forged file that drops ``gates`` or changes ``expected``) fails the MAC
and is ignored before anything in it is unmarshalled, so a cache can only ever
serve what parsing those very bytes gave. A cache file that is not a regular
file, or is too big, is ignored the same way (and replaced by the next write).
"""

from __future__ import annotations

import atexit
import gc
import marshal
import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pydantic import BaseModel

from .. import cachekey
from ..errors import InputError
from ..files import read_bounded
from ..schema import Case, Label, Settings
from .regions import Coll, Item, Region

if TYPE_CHECKING:
    from .document import TestSetDocument

CACHE_FORMAT = 5  # 5: a keyed MAC before the blob; 4: anchors and aliases refused
MAGIC = b"RTC5"
MAX_CACHE_BYTES = 1 << 30  # no test set (40 MB at most) makes a bigger entry
PENDING: weakref.WeakSet[TestSetDocument] = weakref.WeakSet()


@atexit.register
def _flush_pending_caches() -> None:
    for doc in list(PENDING):
        try:
            doc.flush_cache()
        except Exception:  # a cache is a convenience; never fail an exit over it
            pass


def cache_dir() -> Path:
    d = os.environ.get("RAGTRIAGE_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ragtriage"


def cache_path(digest: str) -> Path:
    return cache_dir() / f"ts-{digest}.bin"


_M = TypeVar("_M", bound=BaseModel)


def trusted_maker(model: type[_M]) -> Callable[[dict[str, Any]], _M]:
    """``make(data)``: the same model as ``model.model_construct(**data)`` for data
    that passed validation (the reopen cache), about 6x faster at 100k cases: the
    field defaults are resolved once, not per case. Falls back to
    ``model_construct`` for anything it does not cover (aliases, extras, a missing
    required field, a default that is not immutable)."""
    construct = model.model_construct
    fields = model.__pydantic_fields__
    plain = (
        not model.__pydantic_post_init__
        and model.model_config.get("extra") != "allow"
        and all(f.alias is None and f.validation_alias is None for f in fields.values())
    )
    template: dict[str, Any] = {}
    required = set()
    for name, f in fields.items():
        if f.is_required():
            required.add(name)
            template[name] = None  # always replaced: the data must hold it
        else:
            v = f.get_default(call_default_factory=True, validated_data={})
            if not (v is None or type(v) in (str, bool, int, float) or (type(v) is tuple and not v)):
                plain = False  # a mutable default: model_construct copies it per instance
            template[name] = v
    if not plain:
        return lambda d: construct(**d)
    names = frozenset(fields)
    new = model.__new__
    setattr_ = object.__setattr__
    # One fields-set per combination of keys, shared by the models that have it (~700
    # bytes a case otherwise). Frozen models never change it; pydantic's copies copy it.
    shared: dict[tuple[str, ...], set[str]] = {}

    def make(d: dict[str, Any]) -> _M:
        keys = d.keys()
        if not (keys >= required and keys <= names):
            return construct(**d)
        m = new(model)
        values = template.copy()  # keys in field order, as model_construct makes them
        values.update(d)
        setattr_(m, "__dict__", values)
        key = tuple(keys)
        fields_set = shared.get(key)
        if fields_set is None:
            fields_set = shared[key] = set(keys)
        setattr_(m, "__pydantic_fields_set__", fields_set)
        setattr_(m, "__pydantic_extra__", None)
        setattr_(m, "__pydantic_private__", None)
        return m

    return make


class Cached(NamedTuple):
    """What a cache entry holds, ready for a document."""

    bom: bool
    crlf: bool
    raw_settings: dict[str, Any]
    settings: Settings
    list_style: str
    regions: list[Region]
    cases: Coll
    labels: Coll


def write_cache(digest: str, path: Path, doc: Cached) -> None:
    try:
        regions: list[Any] = []
        for reg in doc.regions:
            if isinstance(reg, str):
                regions.append(reg)
            else:
                items = tuple((it.text, it.key, it.data, it.line) for it in reg.items)
                regions.append((reg.name, reg.col, reg.key_col, reg.missing, tuple(reg.gaps), items))
        where = str(path.resolve())
        blob = marshal.dumps(
            (CACHE_FORMAT, where, doc.bom, doc.crlf, doc.raw_settings, doc.list_style, regions)
        )
        tag = cachekey.mac(digest.encode(), blob)
        if tag is None:
            return  # no key to sign it with: nothing is cached
        d = cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{digest}.{os.getpid()}.tmp"
        tmp.write_bytes(MAGIC + tag + blob)
        os.replace(tmp, cache_path(digest))
    except (OSError, ValueError):
        return  # a cache is a convenience
    prune()


MAX_ENTRIES = 64  # test sets; the oldest entries beyond this go when a new one is written


def remove(digest: str) -> None:
    try:
        cache_path(digest).unlink()
    except OSError:
        pass


def prune(keep: int = MAX_ENTRIES, tmp_age: float = 3600.0) -> None:
    """Keep the ``keep`` newest entries; remove temp files of killed cache writes."""
    import time

    d = cache_dir()
    try:
        entries = sorted(d.glob("ts-*.bin"), key=lambda p: p.stat().st_mtime, reverse=True)
        for p in entries[keep:]:
            p.unlink()
        limit = time.time() - tmp_age
        for p in d.glob(".*.tmp"):
            if p.stat().st_mtime < limit:
                p.unlink()
    except OSError:
        pass  # a cache is a convenience (another process may prune at the same time)


def read_cache(digest: str) -> Cached | None:
    try:
        data = read_bounded(cache_path(digest), MAX_CACHE_BYTES, "cache entry")
    except InputError:  # a FIFO, a device, a huge file where an entry should be: not read
        return None
    if data is None or not data.startswith(MAGIC):
        return None
    head = len(MAGIC) + cachekey.MAC_BYTES
    blob = memoryview(data)[head:]
    if not cachekey.verify(data[len(MAGIC) : head], digest.encode(), blob):
        return None  # not written by this user's ragtriage for these bytes: never unmarshalled
    was = gc.isenabled()
    gc.disable()
    try:
        fmt, _where, bom, crlf, raw_settings, list_style, regions = marshal.loads(blob)
        if fmt != CACHE_FORMAT:
            return None
        colls = {"cases": Coll("cases"), "labels": Coll("labels")}
        out: list[Region] = []
        construct_case = trusted_maker(Case)
        construct_label = trusted_maker(Label)
        for reg in regions:
            if isinstance(reg, str):
                out.append(reg)
                continue
            name, col, key_col, missing, gaps, items = reg
            coll = colls[name]
            coll.col, coll.key_col, coll.missing = col, key_col, missing
            coll.gaps = list(gaps)
            make = construct_case if name == "cases" else construct_label
            coll.items = [Item(t, k, d, make(d), ln) for t, k, d, ln in items]
            out.append(coll)
        settings = Settings.model_validate(raw_settings)
        return Cached(bom, crlf, raw_settings, settings, list_style, out, colls["cases"], colls["labels"])
    except Exception:  # a stale or foreign cache file: parse the YAML instead
        return None
    finally:
        if was:
            gc.enable()
