"""``ragtriage corpus --from llamaindex PERSIST_DIR -o CHUNKS``: the chunks file of a
persisted LlamaIndex index (its ``docstore.json``), with ids that are the same in every
process for the same chunking (:mod:`ragtriage.adapters.llamaindex`).

The framework is imported only here, and only when the command runs: it is the optional
extra ``ragtriage[llamaindex]``."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from ..cli import Exit
from ..core.errors import InputError, Problem
from ..core.reports import CORPUS, check_writable, refuse_input_as_output

SOURCES = ("llamaindex",)


def _check_output(out: Path, force: bool) -> None:
    if out.is_dir():
        raise InputError(
            Problem(str(out), None, "is a folder; give a file name, e.g. docs.chunks.jsonl", field="-o")
        )
    if out.exists() and not force:
        raise InputError(
            Problem(
                str(out),
                None,
                "already exists; not overwritten (choose another -o, or --force to replace it: the test "
                "sets that name it will then be checked by `ragtriage stale`)",
                field="-o",
            )
        )
    check_writable(out, "-o")


def _docstore(folder: Path):
    if not folder.exists():
        raise InputError(Problem(str(folder), None, "folder not found", field="PERSIST_DIR"))
    store = folder / "docstore.json" if folder.is_dir() else folder
    if not store.is_file():
        raise InputError(
            Problem(
                str(folder),
                None,
                "has no docstore.json: give the folder of index.storage_context.persist(PERSIST_DIR)",
                field="PERSIST_DIR",
            )
        )
    try:
        from ..adapters import llamaindex
    except ImportError as e:  # pragma: no cover - the package itself always imports
        raise InputError(Problem("--from llamaindex", None, str(e))) from None
    try:
        import llama_index.core  # noqa: F401
    except ImportError:
        raise InputError(
            Problem("--from llamaindex", None, 'needs llama-index-core: pip install "ragtriage[llamaindex]"')
        ) from None
    try:
        from llama_index.core.storage.docstore import SimpleDocumentStore

        return llamaindex, SimpleDocumentStore.from_persist_path(str(store))
    except (ValueError, KeyError, TypeError) as e:  # not JSON, or not a docstore
        raise InputError(
            Problem(str(store), None, f"not a LlamaIndex docstore ({type(e).__name__}: {e})")
        ) from None


def main(args) -> int:
    source = getattr(args, "source", "llamaindex")
    out = Path(args.output)
    folder = Path(args.persist_dir)
    # grades, notes, a test set, a run: never; an existing chunks file only with --force (below)
    refuse_input_as_output(out, "-o", folder / "docstore.json", may_replace={CORPUS})
    _check_output(out, args.force)
    adapter, store = _docstore(folder)
    rows = adapter.rows(store)
    if not rows:
        raise InputError(Problem(str(folder), None, "its docstore holds no nodes", field="PERSIST_DIR"))
    random = sum(1 for n in adapter.nodes_of(store) if adapter.common.is_random_id(getattr(n, "id_", None)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ids = adapter.common.write_chunks(rows, out)
    except adapter.common.DuplicateChunkId as e:
        raise InputError(Problem(str(folder), None, str(e), field="PERSIST_DIR")) from None
    docs = len({r.doc for r in rows})
    print(f"{out}: {len(ids)} chunk(s) of {docs} document(s) from {folder} ({source})")
    if random:
        print(
            f"  ids: {random} node(s) had LlamaIndex's random ids; they are named FILE:START-END, the same for "
            "the same chunking in every process. ragtriage.adapters.llamaindex.system() maps your pipeline's "
            "nodes to these names; for the index itself to use them, call assign_ids(nodes) before indexing.",
            file=sys.stderr,
        )
    return Exit.OK
