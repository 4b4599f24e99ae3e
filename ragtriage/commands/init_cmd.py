"""``ragtriage init TESTSET --corpus CHUNKS [--language xx] [--k N]``: a new, commented,
empty test set over your own chunks file, ready for ``ragtriage edit``.

The file is made new or not at all: an existing one (or one another process creates at
the same moment) is never replaced, and a crash never leaves half a file."""

from __future__ import annotations

import errno
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

from ..cli import Exit
from ..core import yamltext as yt
from ..core.corpus import load_corpus
from ..core.errors import InputError, Problem
from ..core.options import _check_k

#: the languages whose decline phrases and number words ragtriage knows (grounding.md)
KNOWN = ("en", "es", "de", "nl")
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})?$")
SAMPLE = 2000  # chunks read to guess the language


def _check_path(path: Path) -> None:
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(Problem(str(path), None, "a test set is YAML: name it .yaml"))
    if path.exists() or path.is_symlink():
        what = "a folder" if path.is_dir() else "a file"
        raise InputError(
            Problem(
                str(path),
                None,
                f"already exists ({what}); not overwritten (init makes a new test set: choose another "
                f"name, or open this one with `ragtriage edit {path}`)",
            )
        )
    parent = path.parent if str(path.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise InputError(Problem(str(path), None, f"{parent} is not a folder"))


def guess(texts: list[str]) -> str | None:
    """The language most chunk texts are written in (common words), or None when unclear."""
    from ..core.exchange import guess_language

    return guess_language(texts)


def _language(given: str | None, texts: list[str]) -> tuple[str, str]:
    """The language to write and the note that says where it came from."""
    if given is not None:
        if not _LANGUAGE.match(given):
            raise InputError(
                Problem("--language", None, f"{given!r}: give a language code such as en, es, de, nl")
            )
        note = f"language: {given} (from --language)"
    else:
        found = guess(texts)
        if found is None:
            return "en", (
                "language: en (the chunks' language is unclear): set `language:` if they are in "
                "another language (it picks the decline phrases and number words)"
            )
        given = found
        note = (
            f"language: {found}, guessed from the chunks' text (it picks the decline phrases and "
            "number words): check it, or pass --language"
        )
    base = given.lower().replace("_", "-").split("-")[0]
    if base not in KNOWN:
        note += (
            f"; ragtriage knows no decline phrases for {base!r} (it knows {', '.join(KNOWN)}): add "
            "`decline: [...]`, the phrases your system declines with"
        )
    return given, note


def skeleton(
    *, name: str, corpus_ref: str, corpus_name: str, n: int, docs: int, language: str, k: int, example: str
) -> str:
    """The new test set's text: a commented header, the settings, an empty ``cases:`` and a
    commented example case that names a real chunk."""
    name_line = f"{n} chunks" + (f" from {docs} documents" if docs else "")
    lines = [
        "# A ragtriage test set: the questions your users ask, each with the chunks that answer it.",
        f"# Made by `ragtriage init` over {corpus_name} ({name_line}).",
        "#",
        f"#   ragtriage edit {name}        write and label cases in the app (n: new case, p: pick chunks)",
        f"#   ragtriage validate {name}    check it: file:line: message per problem",
        f"#   ragtriage run {name} --system python:my_rag:answer    every case through your system",
        "#",
        "# Comments like these survive every save, by the app and by every command.",
        "version: 1",
        f"corpus: {yt.render_scalar(corpus_ref)}   # chunks file"
        + ("" if corpus_ref.startswith("/") else ", relative to this file"),
        f"language: {yt.render_scalar(language)}   # picks the decline phrases and number words",
        f"k: {k}   # cut-off: the top {k} chunks a system retrieves are scored (`run --k` overrides it)",
        "# gates:          # bars for `ragtriage check`, e.g.",
        f"#   hit@{k}: 0.85   # the right chunk is in the top {k} for 85 % of the questions",
        "#",
        "# A case (the app writes them for you; by hand, replace `[]` and drop the `# `):",
        "#   - id: first-question          # unique, stable, any Unicode without spaces",
        "#     question: The question, as a user would type it",
        f"#     expected: {yt.render_flow_list([example])}       # the chunk ids that answer it",
        '#     must_contain: ["3 €"]        # optional: text a correct answer contains',
        "#   - id: not-in-the-documents",
        "#     question: A question the documents do not answer",
        "#     unanswerable: true           # the right answer is to decline",
        "cases: []",
    ]
    return "\n".join(lines) + "\n"


def create_new(path: Path, text: str) -> None:
    """Write ``path`` whole, only if it does not exist: a temp file linked into place
    (``FileExistsError`` if the name was taken meanwhile); where the file system has no
    hard links, the name is reserved with ``O_EXCL`` first."""
    parent = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        try:
            os.link(tmp, path)
        except OSError as e:
            if isinstance(e, FileExistsError) or e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _reference(corpus: Path, testset: Path) -> str:
    """``corpus`` as the test set names it: relative to the test set's folder, unless the
    two share no folder but the root (then the absolute path, which says more)."""
    target, folder = corpus.resolve(), testset.resolve().parent
    if os.path.commonpath([target, folder]) == target.anchor:
        return target.as_posix()
    return Path(os.path.relpath(target, folder)).as_posix()


def create(
    path: Path, corpus_path: Path, *, language: str | None = None, k: int | None = None
) -> tuple[int, str]:
    """Make the new test set ``path`` over ``corpus_path`` (refused when it exists); returns
    the number of chunks and the note on its language. Used by ``init`` and ``edit``."""
    _check_path(path)
    k = _check_k(k if k is not None else 3)
    if not corpus_path.exists():
        raise InputError(Problem(str(corpus_path), None, "chunks file not found", field="--corpus"))
    corpus = load_corpus(corpus_path)  # bad lines: exit 2 with their locations
    if not len(corpus):
        raise InputError(
            Problem(str(corpus_path), None, "holds no chunk: nothing to label", field="--corpus")
        )
    texts = [c.text for _, c in zip(range(SAMPLE), corpus.values())]
    language, note = _language(language, texts)
    docs = len({c.doc for c in corpus.values() if c.doc is not None})
    text = skeleton(
        name=shlex.quote(path.name),
        corpus_ref=_reference(corpus_path, path),
        corpus_name=corpus_path.name,
        n=len(corpus),
        docs=docs,
        language=language,
        k=k,
        example=next(iter(corpus)),
    )
    from ..core.document import TestSetDocument

    TestSetDocument.from_text(text, path)  # what validate reads: a skeleton it would refuse is a bug here
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # a new set in a new folder: nothing to overwrite
    except OSError as e:
        raise InputError(Problem(str(path), None, f"cannot create its folder ({e.strerror or e})")) from None
    try:
        create_new(path, text)
    except FileExistsError:
        raise InputError(
            Problem(str(path), None, "was created by someone else meanwhile; not overwritten")
        ) from None
    return len(corpus), note


def main(args) -> int:
    import gc

    path, corpus_path = Path(args.testset), Path(args.corpus)
    was = gc.isenabled()
    gc.disable()  # a million chunks held while the skeleton is made: a collection would walk them all
    try:
        n, note = create(path, corpus_path, language=args.language, k=args.k)
    finally:
        if was:
            gc.enable()
    print(f"{path}: a new test set over {corpus_path} ({n} chunks), k {args.k or 3}")
    print(f"  {note}", file=sys.stderr)
    print(
        f"next: ragtriage edit {shlex.quote(str(path))}   (n: a new case, p: pick the chunks that answer it, "
        "ctrl+s: save)"
    )
    return Exit.OK
