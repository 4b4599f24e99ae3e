"""Saving a test set from another thread while it is being edited.

The app saves in a worker so that no key waits on the write (at 100,000 cases
recording labels, writing and hashing takes a second or more). The worker must
not read a document the interface thread is changing, so it saves a copy:
:func:`copy_for_save` shares the immutable pieces (entry texts, parsed models)
and gives the copy its own lists, so an edit made meanwhile never changes what
is written; the copy is saved with :meth:`TestSetDocument.save` like any
document; :func:`saved_from` then tells the edited document that the file on
disk is the copy's text — an edit made during the save stays unsaved (the
document is still dirty), nothing is lost.

Package-internal: it reads the document's private state, as its own modules do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import cache as _cache
from . import history as _history
from .regions import Coll

if TYPE_CHECKING:
    from .document import TestSetDocument


def version(doc: TestSetDocument) -> int:
    """A number that changes with every edit of ``doc`` (an undo brings the earlier one back)."""
    return doc._version


def copy_for_save(doc: TestSetDocument) -> TestSetDocument:
    """A copy of ``doc`` to save from another thread. Record labels on ``doc`` first
    (``doc.record_labels(corpus)``): the copy is saved with ``record_labels=False``."""
    copy = object.__new__(type(doc))
    copy.__dict__.update(doc.__dict__)
    colls: dict[int, Coll] = {}
    for old in (doc._cases, doc._labels):
        new = Coll(old.name)
        for slot in Coll.__slots__:
            setattr(new, slot, getattr(old, slot))
        new.items, new.gaps = list(old.items), list(old.gaps)
        colls[id(old)] = new
    copy._regions = [colls.get(id(r), r) if isinstance(r, Coll) else r for r in doc._regions]
    copy._cases, copy._labels = colls[id(doc._cases)], colls[id(doc._labels)]
    copy._index = doc._index  # read, never changed, by a save
    doc._index_shared = copy._index_shared = True
    copy._raw_settings = dict(doc._raw_settings)
    copy._history = _history.History()
    copy._expected_changed = False
    copy._cases_tuple = copy._labels_dict = copy._label_pos = None
    doc._expected_changed = False  # recorded; a later edit of `expected` sets it again
    return copy


def saved_from(doc: TestSetDocument, copy: TestSetDocument) -> None:
    """``copy`` (from :func:`copy_for_save`) was saved: the file on disk is its text."""
    doc._stat, doc._loaded_hash = copy._stat, copy._loaded_hash
    doc._orig_text, doc._saved_version = copy._orig_text, copy._saved_version
    doc._cache_digest = copy._cache_digest
    _cache.PENDING.discard(copy)
    if copy._cache_pending is not None and doc._version == copy._version:
        doc._cache_pending = copy._cache_pending  # the cache is written for this document, at exit
        _cache.PENDING.add(doc)


def unsaved(doc: TestSetDocument) -> bool:
    """Edits since the last load or save, cheaply: True also for edits that cancelled out
    (an add, then a delete), which :attr:`TestSetDocument.dirty` tells apart by joining the
    whole text — 60 ms at 100,000 cases, too slow to ask after every key."""
    return doc._orig_text is None or doc._version != doc._saved_version
