"""What every command does with the files it writes: check them before the work (a
located exit 2, not a traceback after a long run), and never write over an input."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from ..core.errors import InputError, Problem
from ..core.reports import PathArg, check_writable, refuse_input_as_output


def system_file(spec: str | None) -> str | None:
    """The file a ``results:PATH`` system reads (an input like the test set)."""
    if spec and spec.startswith("results:"):
        return spec.removeprefix("results:")
    return None


def guard_outputs(outputs: Mapping[str, PathArg | None], inputs: Iterable[PathArg | None]) -> None:
    """Every given output (option -> path) writable and none of them one of ``inputs``."""
    ins = list(inputs)
    for option, path in outputs.items():
        if path is None:
            continue
        if str(path) == "":
            raise InputError(Problem('""', None, "an empty path (give a file name)", field=option))
        refuse_input_as_output(path, option, *ins)
        check_writable(Path(path), option)


def testset_inputs(doc) -> list[PathArg | None]:
    """A loaded test set's own files: the YAML and its corpus."""
    return [doc.path, doc.corpus_path]
