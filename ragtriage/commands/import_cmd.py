"""``ragtriage import FILE --format F -o TESTSET.yaml``: a new commented test set from
another tool's file, written through the test-set document, with a report of what
could not be mapped."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..cli import Exit
from ..core.document import TestSetDocument
from ..core.errors import InputError, Problem
from ..core.exchange import (
    QUESTION_PLACEHOLDER,
    Imported,
    chunk_texts,
    clean_label,
    guess_language,
    import_comment,
    label_from_text,
    read_import,
)
from ..core.reports import TESTSET, refuse_input_as_output
from ..core.text import fingerprint


def _check_output(out: Path, force: bool) -> None:
    if out.exists() and not force:
        raise InputError(
            Problem(str(out), None, "already exists; not overwritten (choose another -o, or --force)")
        )
    if not out.parent.is_dir():
        raise InputError(Problem(str(out), None, f"folder {out.parent} does not exist", field="-o"))
    if out.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(Problem(str(out), None, "a test set is YAML: name it .yaml"))


def _language(imported: Imported, notes: list[str]) -> str:
    """The questions' language (it picks decline phrases and number words), with a note."""
    language = guess_language(c["question"] for c in imported.cases if c["question"] != QUESTION_PLACEHOLDER)
    if language is None:
        notes.append(
            "language: en (could not tell from the questions): set `language:` if they are in another "
            "language (it picks the decline phrases and the number words)"
        )
        return "en"
    if language != "en":
        notes.append(
            f"language: {language}, guessed from the questions (it picks the decline phrases and the "
            "number words): check `language:`"
        )
    return language


def _labels(doc: TestSetDocument, imported: Imported, corpus: Path | None) -> dict[str, dict]:
    """The imported labels of expected chunks; with a corpus, only those whose remembered
    text is not the corpus's own (those get the full label from record_labels)."""
    expected = {cid for c in doc.cases for cid in c.expected}
    labels = {
        cid: (label_from_text(v) if isinstance(v, str) else clean_label(v))
        for cid, v in imported.labels.items()
        if cid in expected
    }
    if corpus is None or not labels:
        return labels
    # a remembered text that is the corpus's own text gets the full label (doc, span,
    # when, corpus hash) from record_labels; a different one is kept, so `stale` flags it
    current, _ = chunk_texts(labels, {}, corpus)
    return {
        cid: lab
        for cid, lab in labels.items()
        if cid not in current or lab.get("sha") != fingerprint(current[cid])
    }


def main(args) -> int:
    out = Path(args.output)
    corpus = Path(args.corpus) if args.corpus else None
    # an input, a person's file (grades, notes, a corpus, a run): never, even with --force
    refuse_input_as_output(out, "-o", args.file, corpus, may_replace={TESTSET} if args.force else ())
    _check_output(out, args.force)
    if corpus is not None and not corpus.is_file():
        raise InputError(Problem(str(corpus), None, "chunks file not found", field="--corpus"))
    level = getattr(args, "level", "chunk")
    if level != "chunk" and args.format != "trec":
        raise InputError(Problem("--level", None, "only with --format trec (document qrels)"))
    imported = read_import(args.file, args.format, corpus_path=corpus, level=level)

    rel_corpus = None
    if corpus is not None:
        rel_corpus = os.path.relpath(corpus.resolve(), out.resolve().parent)
    notes = list(imported.notes)
    language = _language(imported, notes)
    doc = TestSetDocument.create(
        out, corpus=rel_corpus, language=language, comment=import_comment(args.file, args.format, notes)
    )
    with doc.batch():
        for fields in imported.cases:
            doc.add_case(**fields)
    labels = _labels(doc, imported, corpus)
    with doc.batch():
        for cid, data in labels.items():
            if data:
                doc.set_label(cid, data)
        recorded = doc.record_labels() if corpus is not None else []
    doc.save(force=args.force)
    kept = len(labels)

    drafts = sum(1 for c in doc.cases if c.unlabelled)
    unans = sum(1 for c in doc.cases if c.unanswerable)
    print(
        f"{out}: {len(doc.cases)} case(s) imported from {args.file} ({args.format}); "
        f"{drafts} draft(s), {unans} unanswerable, {kept + len(recorded)} label(s) recorded"
    )
    for n in notes:
        print(f"  not mapped / to check: {n}", file=sys.stderr)
    return Exit.OK
