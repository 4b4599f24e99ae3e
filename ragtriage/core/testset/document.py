"""The test-set document: the one place through which every read and write of a
test set goes (the CLI, ``stale --fix``, imports and the app).

How it keeps a person's file intact
-----------------------------------
The file is held as a list of *regions* (:mod:`.regions`): plain text, and two *collections* (the
``cases`` list and the ``labels`` map) cut into one piece of text per entry. An edit re-renders only
what changed (:mod:`.render`) in the style the file already uses, re-reads that entry to prove it says
what was meant, and leaves every other byte alone. Saving joins the pieces, skips the write when nothing
changed, refuses to overwrite a file changed on disk, and replaces the file atomically.

Why not ruamel's round-trip tree: it takes ~6 s to load and ~4 s to dump 10k cases on this machine and
rewrites hand-formatted files; libyaml's composer with exact offsets plus splicing (:mod:`.reader`)
opens 10k cases in a fraction of that and saves in milliseconds. Reopening an unchanged file reads a
cache of the parsed pieces keyed by the file's content hash (:mod:`.cache`).
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from operator import attrgetter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import yamltext as yt
from ..clock import utc_now
from ..errors import Problem, TestSetError
from ..schema import CASE_FIELDS, LABEL_FIELDS, Case, Label, Settings
from . import cache as _cache
from . import history as _history
from . import labels as _labels
from . import ondisk as _ondisk
from . import regions as _regions
from . import saving as _saving
from .reader import LIST_FIELDS, RawSettings, Reader, decode, error_message, size_problem, suggest
from .regions import Coll, Item, Region
from .render import UnwritableText, check_entry, edit_entry, render_case, render_label, surrogate_problems

# re-exported for the old path ragtriage.core.document (the same module; see core/document.py)
__all__ = ["BIG", "CACHE_FORMAT", "MAX_BYTES", "TestSetDocument", "cache_dir", "yt"]
cache_dir = _cache.cache_dir
BIG = 20_000  # cases; above this the reopen cache is written later (flush_cache / at exit)
CACHE_FORMAT = _cache.CACHE_FORMAT
_trusted_maker = _cache.trusted_maker

MAX_BYTES = int(float(os.environ.get("RAGTRIAGE_MAX_TESTSET_MB", "40")) * 1024 * 1024)
SETTABLE = ("corpus", "language", "k")  # the settings :meth:`TestSetDocument.update_settings` changes


class TestSetDocument:
    """A test set loaded for reading and editing; see the module docstring."""

    __test__ = False

    # ------------------------------------------------------------ loading

    def __init__(self, path: Path, text: str, *, bom: bool = False, crlf: bool = False):
        self.path = Path(path)
        self._bom = bom
        self._crlf = crlf
        self._orig_text: str | None = text
        self._regions: list[Region] = [text]
        self._cases = Coll("cases")
        self._labels = Coll("labels")
        self._index: dict[str, int] = {}
        self._index_shared = False  # a snapshot holds this dict too: copy it before a change in place
        self._label_pos: dict[str, int] | None = None
        self._raw_settings: RawSettings = {}
        self.settings = Settings()
        self._cases_tuple: tuple[Case, ...] | None = None
        self._labels_dict: dict[str, Label] | None = None
        self._history = _history.History()
        self._stat: tuple[int, ...] | None = None
        self._cache_digest: str | None = None  # the cache entry this document last read or wrote
        self._loaded_hash: str | None = None
        self._list_style = "flow"
        self._expected_changed = False
        self._version = 0
        self._saved_version = 0
        self._cache_pending: str | None = None
        self._in_batch = False
        self._dirty_memo = (-1, True)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, use_cache: bool = True) -> TestSetDocument:
        path = Path(path)
        name = str(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise TestSetError(Problem(name, None, "file not found")) from None
        except OSError as e:
            raise TestSetError(Problem(name, None, f"cannot read ({e.strerror})")) from None
        if not path.is_file():
            raise TestSetError(Problem(name, None, "is not a file"))
        if st.st_size > MAX_BYTES:
            raise size_problem(name, st.st_size, MAX_BYTES)
        raw, st = _ondisk.read(path, MAX_BYTES)  # bytes and stat of one open file, not two moments
        if len(raw) > MAX_BYTES:
            raise size_problem(name, len(raw), MAX_BYTES)
        digest = _ondisk.digest(raw)
        doc = cls._from_cache(path, digest, raw) if use_cache else None
        if doc is None:
            text, bom, crlf = decode(name, raw)
            doc = cls(path, text, bom=bom, crlf=crlf)
            doc._parse(text)
            if use_cache:
                if len(doc._cases.items) < BIG:
                    doc._write_cache(digest)
                else:  # ~2 s at 100k cases: not on the way to the first screen
                    doc._cache_pending = digest
                    _cache.PENDING.add(doc)
        doc._stat = _ondisk.fingerprint(st)
        if use_cache and doc._cache_pending is None:
            doc._cache_digest = digest
        doc._loaded_hash = digest
        return doc

    @classmethod
    def _from_cache(cls, path: Path, digest: str, raw: bytes) -> TestSetDocument | None:
        """The document from the reopen cache, only if its text is exactly the bytes on disk."""
        cached = _cache.read_cache(digest)
        if cached is None:
            return None
        doc = cls(path, "", bom=cached.bom, crlf=cached.crlf)
        doc._take(cached.regions, cached.cases, cached.labels, cached.raw_settings, cached.settings)
        doc._list_style = cached.list_style
        doc._orig_text = doc._join()
        if doc._encode(doc._orig_text) != raw:  # a stale, foreign or forged entry: read the file
            return None
        return doc

    @classmethod
    def from_text(cls, text: str, path: str | os.PathLike[str] = "<text>") -> TestSetDocument:
        doc = cls(Path(path), text)
        doc._parse(text)
        return doc

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        *,
        corpus: str | os.PathLike[str] | None = None,
        language: str = "en",
        k: int = 3,
        comment: str | None = None,
        decline: list[str] | tuple[str, ...] | None = None,
    ) -> TestSetDocument:
        """A new, empty test set (not yet written; call :meth:`save`)."""
        lines = []
        for ln in (comment or "").splitlines():
            lines.append(("# " + ln).rstrip())
        lines.append("version: 1")
        if corpus:
            lines.append(f"corpus: {yt.render_scalar(str(corpus))}   # chunks file, relative to this file")
        lines.append(f"language: {yt.render_scalar(language)}")
        if decline:
            lines.append("decline: " + yt.render_flow_list(list(decline)))
        lines.append(f"k: {int(k)}")
        lines.append("cases: []")
        doc = cls.from_text("\n".join(lines) + "\n", path)
        doc._orig_text = None  # nothing on disk yet: the first save writes
        return doc

    def _parse(self, text: str) -> None:
        r = Reader(str(self.path)).parse(text)
        self._take(r.regions, r.cases, r.labels, r.raw_settings, r.settings)
        self._list_style = r.list_style

    def _take(
        self, regions: list[Region], cases: Coll, labels: Coll, raw_settings: RawSettings, settings: Settings
    ) -> None:
        self._regions, self._cases, self._labels = regions, cases, labels
        self._raw_settings, self.settings = raw_settings, settings
        self._reindex()

    # ------------------------------------------------------------ cache

    def _write_cache(self, digest: str) -> None:
        _cache.write_cache(digest, self.path, self._cached())
        old, self._cache_digest = self._cache_digest, digest
        if old and old != digest:  # that version is no longer on disk (one entry per test set)
            _cache.remove(old)

    def _cached(self) -> _cache.Cached:
        return _cache.Cached(
            self._bom,
            self._crlf,
            self._raw_settings,
            self.settings,
            self._list_style,
            self._regions,
            self._cases,
            self._labels,
        )

    # ------------------------------------------------------------ reading API

    def _reindex(self, start: int = 0, gone: str = "") -> None:
        """The case index again from ``start`` on (the cases before it kept their places)."""
        items = self._cases.items
        if not start:
            self._index, self._index_shared = {it.key: i for i, it in enumerate(items)}, False
            self._label_pos = self._cases_tuple = self._labels_dict = None
            return
        index = dict(self._index) if self._index_shared else self._index  # a snapshot's: copy first
        index.pop(gone, None)  # then a dict update in C: 8 ms where a rebuild takes 60 at 100k cases
        index.update(zip(map(attrgetter("key"), items[start:]), range(start, len(items))))
        self._index, self._index_shared, self._cases_tuple = index, False, None

    def _label_index(self, chunk_id: str) -> int | None:
        if self._label_pos is None:
            self._label_pos = {it.key: i for i, it in enumerate(self._labels.items)}
        return self._label_pos.get(chunk_id)

    @property
    def cases(self) -> tuple[Case, ...]:
        if self._cases_tuple is None:
            self._cases_tuple = tuple(it.model for it in self._cases.items)
        return self._cases_tuple

    def cases_now(self) -> tuple[Case, ...]:
        """:attr:`cases` without filling its cache, for a worker (built in C: no edit midway)."""
        return self._cases_tuple or tuple(map(attrgetter("model"), self._cases.items))

    def __len__(self) -> int:
        return len(self._cases.items)

    def case(self, case_id: str) -> Case:
        model: Case = self._cases.items[self._index[case_id]].model
        return model

    def index_of(self, case_id: str) -> int:
        return self._index[case_id]

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._index

    @property
    def labels(self) -> dict[str, Label]:
        if self._labels_dict is None:
            self._labels_dict = {it.key: it.model for it in self._labels.items}
        return self._labels_dict

    @property
    def corpus_path(self) -> Path | None:
        c = self.settings.corpus
        if not c:
            return None
        p = Path(c)
        if p.is_absolute():
            return p
        base = Path(os.path.realpath(self.path)).parent if self.path.is_symlink() else self.path.parent
        return base / p  # beside the real file when the test set is opened through a link

    def _join(self) -> str:
        return _regions.join(self._regions)

    @property
    def text(self) -> str:
        return self._join()

    @property
    def dirty(self) -> bool:
        """Unsaved changes? (Undoing back to the saved state makes it clean again.)"""
        if self._orig_text is None:
            return True
        if self._version == self._saved_version:
            return False
        if self._dirty_memo[0] != self._version:  # edits that cancel out (add, then delete) leave it clean
            self._dirty_memo = (self._version, self._join() != self._orig_text)
        return self._dirty_memo[1]

    @property
    def content_hash(self) -> str:
        """Hash of the test set's content as it is now (12 hex digits)."""
        # not dirty: the text is the one loaded/saved
        text = self._orig_text if not self.dirty and self._orig_text is not None else self._join()
        return hashlib.blake2b(text.encode("utf-8"), digest_size=6).hexdigest()

    def case_line(self, case_id: str) -> int:
        """1-based line where the case's entry (its first own line) starts in the current text."""
        return _regions.case_line(self._regions, self._cases, self._index[case_id])

    def case_lines(self) -> dict[str, int]:
        """Every case's line (as :meth:`case_line`) in one pass over the text."""
        return _regions.case_lines(self._regions, self._cases)

    # ------------------------------------------------------------ editing: settings

    def update_settings(self, **values: Any) -> Settings:
        """Change top-level scalar settings (``corpus``, ``language``, ``k``) in place:
        the value on its line is replaced (its comment kept), or a new line is added
        before ``cases:``."""
        for key in values:
            if key not in SETTABLE:
                raise self._problem(f"cannot set {key!r} here (one of: {', '.join(SETTABLE)})", field=key)
        bad = surrogate_problems(str(self.path), values.items())
        if bad:
            raise UnwritableText(bad)
        raw = dict(self._raw_settings)
        raw.update({k: v for k, v in values.items() if v is not None})
        for k, v in values.items():
            if v is None:
                raw.pop(k, None)
        try:
            settings = Settings.model_validate(raw)
        except ValidationError as e:
            raise TestSetError(
                [
                    Problem(str(self.path), None, error_message(err), field=str(err["loc"][0]))
                    for err in e.errors()
                ]
            ) from None
        regions = list(self._regions)
        for key, value in values.items():
            _regions.splice_setting(regions, key, value)
        self._push_undo()
        self._regions = regions
        self._raw_settings = raw
        self.settings = settings
        return settings

    # ------------------------------------------------------------ undo

    def _snapshot(self) -> _history.Snapshot:
        self._index_shared = True  # an undo gives the index back as it was: no rebuild of 100k ids
        return _history.take(
            self._regions,
            (self._cases, self._labels),
            self._expected_changed,
            self._version,
            self._raw_settings,
            self.settings,
            self._index,
        )

    def _restore(self, snap: _history.Snapshot) -> None:
        self._regions = snap.regions
        if _history.restore_colls(snap):  # the labels changed: their lookups are built again
            self._label_pos = self._labels_dict = None
        self._expected_changed = snap.expected_changed
        self._version = snap.version
        self._raw_settings, self.settings = snap.raw_settings, snap.settings
        self._index, self._index_shared = snap.case_index, True
        self._cases_tuple = None

    @contextmanager
    def batch(self) -> Iterator[TestSetDocument]:
        """Many edits as one: a single undo step, and no cyclic GC while they run
        (imports and ``stale --fix`` add thousands of entries; the GC would dominate)."""
        if self._in_batch:
            yield self
            return
        self._push_undo()
        self._in_batch = True
        was = gc.isenabled()
        gc.disable()
        try:
            yield self
        finally:
            self._in_batch = False
            if was:
                gc.enable()

    def _push_undo(self) -> None:
        if not self._in_batch:
            self._history.record(self._snapshot())
        self._version = _history.next_version()

    def undo(self) -> bool:
        if not self._history.undo:
            return False
        snap = self._history.back(self._snapshot())
        if snap is None:
            return False
        self._restore(snap)
        return True

    def redo(self) -> bool:
        if not self._history.redo:
            return False
        snap = self._history.forward(self._snapshot())
        if snap is None:
            return False
        self._restore(snap)
        return True

    @property
    def can_undo(self) -> bool:
        return bool(self._history.undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._history.redo)

    # ------------------------------------------------------------ editing: cases

    def _problem(
        self, message: str, case: str | None = None, field: str | None = None, line: int | None = None
    ) -> TestSetError:
        return TestSetError(Problem(str(self.path), line, message, case=case, field=field))

    def _check_fields(self, fields: Mapping[str, Any], case_id: str | None = None) -> None:
        for key in fields:
            if key not in CASE_FIELDS:
                raise self._problem("unknown field" + suggest(key, CASE_FIELDS), case=case_id, field=key)

    def _validated(self, data: dict[str, Any], case_id: str | None = None, line: int | None = None) -> Case:
        bad = surrogate_problems(str(self.path), data.items(), case=case_id, line=line)
        if bad:
            raise UnwritableText(bad)
        try:
            return Case.model_validate(data)
        except ValidationError as e:
            probs = []
            for err in e.errors():
                field = (
                    str(err["loc"][0])
                    if err["loc"]
                    else ("unanswerable" if "unanswerable" in err["msg"] else None)
                )
                probs.append(Problem(str(self.path), line, error_message(err), case=case_id, field=field))
            raise TestSetError(probs) from None

    @staticmethod
    def _normal(data: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for k, v in data.items():
            if v is None:
                continue
            if k in LIST_FIELDS:
                if isinstance(v, str):
                    v = (v,)
                v = tuple(v)
            out[k] = v
        return out

    def validate_case(self, case_id: str | None, **fields: Any) -> list[Problem]:
        """Problems the edit would cause, without applying it (for the editor's as-you-type errors)."""
        try:
            self._check_fields(fields, case_id)
            base = dict(self._cases.items[self._index[case_id]].data) if case_id in self._index else {}
            base.update(fields)
            data = self._normal(base)
            self._validated(data, case_id)
            new_id = data.get("id")
            if new_id != case_id and new_id in self._index:
                return [
                    Problem(str(self.path), None, f"id {new_id!r} is already used", case=case_id, field="id")
                ]
        except TestSetError as e:
            return e.problems
        return []

    def update_case(self, case_id: str, **fields: Any) -> Case:
        """Change fields of a case; ``None`` removes a key (the field takes its default)."""
        if case_id not in self._index:
            raise self._problem("no such case", case=case_id)
        self._check_fields(fields, case_id)
        idx = self._index[case_id]
        item = self._cases.items[idx]
        data = dict(item.data)
        for k, v in fields.items():
            if v is None:
                data.pop(k, None)
            else:
                data[k] = v
        data = self._normal(data)
        model = self._validated(data, case_id)
        new_id = data["id"]
        if new_id != case_id and new_id in self._index:
            raise self._problem(f"id {new_id!r} is already used", case=case_id, field="id")
        changed = [k for k in CASE_FIELDS if data.get(k) != item.data.get(k)]
        if not changed:
            old: Case = item.model
            return old
        text = edit_entry(item.text, data, changed, self._cases, self._list_style, str(self.path))
        new_item = Item(text, new_id, data, model, item.line)
        check_entry(new_item, True, str(self.path))
        self._push_undo()
        self._cases.items[idx] = new_item
        if "expected" in changed:
            self._expected_changed = True
        if new_id != case_id:
            self._reindex()
        else:  # same id, same place: only the cached tuple of models is out of date
            self._cases_tuple = None
        return model

    def add_case(self, index: int | None = None, **fields: Any) -> Case:
        self._check_fields(fields)
        data = self._normal(fields)
        cid = data.get("id")
        if isinstance(cid, str) and cid in self._index:
            raise self._problem(f"id {cid!r} is already used", case=cid, field="id")
        model = self._validated(data, cid)
        cid = model.id
        coll = self._cases
        text = render_case(data, coll, self._list_style)
        item = Item(text, cid, data, model)
        check_entry(item, True, str(self.path))
        self._push_undo()
        at = len(coll.items) if index is None else max(0, min(index, len(coll.items)))
        _regions.insert(self._regions, coll, item, at)
        self._expected_changed = self._expected_changed or bool(data.get("expected"))
        self._reindex(at)  # the cases before it did not move (appends in bulk imports stay linear)
        return model

    def remove_case(self, case_id: str) -> None:
        if case_id not in self._index:
            raise self._problem("no such case", case=case_id)
        self._push_undo()
        idx = self._index[case_id]
        _regions.remove(self._regions, self._cases, idx)
        self._reindex(idx, gone=case_id)

    def move_case(self, case_id: str, new_index: int) -> None:
        if case_id not in self._index:
            raise self._problem("no such case", case=case_id)
        old = self._index[case_id]
        items = self._cases.items
        new_index = max(0, min(new_index, len(items) - 1))
        if new_index == old:
            return
        self._push_undo()
        _regions.ensure_entry_ends_with_newline(self._cases)  # before the last entry moves
        it = items.pop(old)
        items.insert(new_index, it)
        self._reindex()

    def duplicate_case(self, case_id: str, new_id: str) -> Case:
        data = dict(self._cases.items[self._index[case_id]].data)
        data["id"] = new_id
        return self.add_case(self._index[case_id] + 1, **data)

    # ------------------------------------------------------------ editing: labels

    def set_label(self, chunk_id: str, label: Label | Mapping[str, Any] | None) -> None:
        """Record (or with None, forget) what chunk ``chunk_id`` said when labelled."""
        coll = self._labels
        idx = self._label_index(chunk_id)
        if label is None:
            if idx is not None:
                self._push_undo()
                _regions.remove(self._regions, coll, idx)
                self._label_pos = self._labels_dict = None  # the cases did not move
            return
        if isinstance(label, Label):
            data = {k: v for k, v in label.model_dump().items() if v is not None}
        else:
            data = {k: v for k, v in dict(label).items() if v is not None}
        bad = surrogate_problems(str(self.path), (("chunk id", chunk_id), *data.items()), label=chunk_id)
        if bad:
            raise UnwritableText(bad)
        model = Label.model_validate(data)
        ordered = {k: data[k] for k in LABEL_FIELDS if k in data}
        ordered.update({k: v for k, v in data.items() if k not in ordered})
        lead = ""
        if idx is not None:
            old = coll.items[idx]
            if old.data == ordered:
                return
            lines = old.text.split("\n")
            n = 0
            while n < len(lines) and lines[n].strip() and _regions.is_comment_line(lines[n]):
                n += 1
            lead = "\n".join(lines[:n]) + ("\n" if n else "")
        text = lead + render_label(chunk_id, ordered, coll)
        item = Item(text, chunk_id, ordered, model)
        check_entry(item, False, str(self.path))
        self._push_undo()
        if idx is None:
            _regions.insert(self._regions, coll, item, len(coll.items))
            if self._label_pos is not None:
                self._label_pos[chunk_id] = len(coll.items) - 1
        else:
            coll.items[idx] = item
        self._labels_dict = None

    def record_labels(self, corpus: Any = None, *, now: str | None = None, prune: bool = True) -> list[str]:
        """Record labels for expected chunk ids that have none, from ``corpus`` (a Corpus or
        mapping id -> Chunk) or, if None, from the test set's chunks file (streamed; only the
        needed ids are kept). With ``prune``, labels no case expects any more are dropped.
        Returns the ids recorded."""
        return self.apply_labels(self.label_plan(corpus, now=now, prune=prune))

    def label_plan(
        self, corpus: Any = None, *, now: str | None = None, prune: bool = True
    ) -> dict[str, dict[str, Any] | None]:
        """What :meth:`record_labels` would do, changing nothing: chunk id -> the label to
        record, or None to drop it. Only reads the document, so it can run in another thread
        on a copy (:func:`~.savecopy.copy_for_save`) while this one is edited."""
        return _labels.plan(self, corpus, now or utc_now(), prune)

    def apply_labels(self, plan: Mapping[str, dict[str, Any] | None]) -> list[str]:
        """Set each label of ``plan`` (from :meth:`label_plan`; None drops it) as one undo
        step. Returns the ids recorded."""
        if not plan:
            return []
        with self.batch():
            for cid, label in plan.items():
                self.set_label(cid, label)
        return [cid for cid, label in plan.items() if label is not None]

    # ------------------------------------------------------------ saving

    def render(self) -> bytes:
        return self._encode(self._join())

    def _encode(self, text: str) -> bytes:
        if self._crlf:
            text = text.replace("\n", "\r\n")
        if self._bom:
            text = "\ufeff" + text
        return text.encode("utf-8")

    def save(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        force: bool = False,
        corpus: Any = None,
        record_labels: bool = True,
        write_cache: bool | None = None,
        allow_read_only: bool = False,
    ) -> bool:
        """Write the test set atomically. Returns False when nothing needed writing.

        Labels are recorded for newly expected chunks (from ``corpus`` or the test
        set's chunks file) before writing. Raises :class:`ConflictError` if the file
        changed on disk since it was loaded (``force=True`` overwrites).

        The reopen cache is refreshed at once for test sets under 20,000 cases; for
        bigger ones (where it takes about a second) only when asked
        (``write_cache=True``) or later through :meth:`flush_cache`, so a save stays
        fast while someone is typing.

        A read-only file is not replaced unless ``allow_read_only``; a symlink is
        saved through (its target is written, the link stays)."""
        if record_labels and self._expected_changed:
            try:
                self.record_labels(corpus)
            except UnwritableText:  # not silently left unrecorded: the save is refused, nothing written
                raise
            except Exception:  # an unreadable corpus must not stop a save; validate reports it
                pass
            self._expected_changed = False
        target = Path(path) if path is not None else self.path
        same = target == self.path
        text = self._join()
        if same and self._orig_text is not None and text == self._orig_text:
            if not force:
                _saving.check(self.path, self._stat, self._loaded_hash)
            self._saved_version = self._version
            return False
        fp, digest = _saving.write(
            self.path,
            target,
            self._encode(text),
            known=self._stat,
            known_digest=self._loaded_hash,
            check_first=same and not force,
            new=not force and not os.path.lexists(target),  # never on disk: made exclusively
            allow_read_only=allow_read_only,
        )
        if same:
            self._stat = fp
            self._orig_text = text
            self._saved_version = self._version
            self._loaded_hash = digest
            self._cache_pending = digest
            if write_cache or (write_cache is None and len(self._cases.items) < BIG):
                self.flush_cache()
            else:
                _cache.PENDING.add(self)
        return True

    def flush_cache(self) -> None:
        """Write the reopen cache for the content last loaded or saved, if not written yet
        (big test sets defer it; it also runs at interpreter exit)."""
        digest = self._cache_pending
        self._cache_pending = None
        _cache.PENDING.discard(self)
        if digest and self._orig_text is not None and self._join() == self._orig_text:
            self._write_cache(digest)

    def changed_on_disk(self) -> bool:
        return _ondisk.changed(self.path, self._stat, self._loaded_hash)

    def reload(self) -> TestSetDocument:
        """A fresh document from disk (the current one is left as it is)."""
        return type(self).load(self.path)
