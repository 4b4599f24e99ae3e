"""What every command does with the files it writes: check them before the work (a
located exit 2, not a traceback after a long run), and never write over an input."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..core.errors import InputError, Problem
from ..core.reports import (
    RUN,
    RUN_IN_USE,
    PathArg,
    check_writable,
    describe,
    refuse_input_as_output,
    what_it_is,
)


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


def guard_run_file(
    out: PathArg,
    option: str,
    inputs: Iterable[PathArg | None],
    *,
    force: bool = False,
    resume: bool = False,
    numbered: bool = False,
    can_resume: bool = True,
) -> None:
    """The run file a command writes: never an input or a person's file; an existing file
    only with ``--resume`` (continue it) or ``--force`` (replace it, unless it is being
    triaged: its notes would then describe other answers). ``numbered``: a default name,
    made new as ``NAME-2.jsonl`` when taken, so an existing one is no reason to stop."""
    if str(out) == "":
        raise InputError(Problem('""', None, "an empty path (give a file name)", field=option))
    if force and resume:
        raise InputError(
            Problem("--force", None, "give --resume (continue the run) or --force (replace it), not both")
        )
    refuse_input_as_output(out, option, *inputs, may_replace={RUN, RUN_IN_USE})
    if resume or not os.path.lexists(out):
        pass
    elif what_it_is(out) == RUN_IN_USE:
        again = "--resume continues it; " if can_resume else ""
        raise InputError(
            Problem(
                str(out),
                None,
                f"is {describe(RUN_IN_USE)}; not replaced: a new run would leave those notes on other "
                f"answers ({again}choose another {option}, or move its .triage.json away first)",
                field=option,
            )
        )
    elif not (force or numbered):
        how = "--resume continues it, --force replaces it" if can_resume else "--force replaces it"
        raise InputError(
            Problem(
                str(out),
                None,
                f"already exists; not replaced ({how}, or choose another {option})",
                field=option,
            )
        )
    check_writable(Path(out), option)
