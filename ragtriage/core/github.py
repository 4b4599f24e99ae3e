"""GitHub Actions workflow commands for the gate: an ``::error`` annotation per failing
case, bar, stale label and located input problem.

GitHub reads each ``::error file=F,line=L,title=T::MESSAGE`` line of a step's output and
shows it on the pull request's diff at that line. Its escaping rules (the runner's
``ActionCommand``): in the message ``%``, ``\\r`` and ``\\n`` become ``%25``, ``%0D``,
``%0A``; in a property value ``:`` and ``,`` also become ``%3A`` and ``%2C``. Text from
a test set or a system can therefore never end a line or start a command of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: case annotations printed at most (GitHub shows ten per step; the rest are in the log)
MAX_CASES = 50


def escape_data(s: object) -> str:
    return str(s).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: object) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(
    kind: str, message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    props = []
    if file is not None:
        props.append(f"file={escape_property(file)}")
    if line:
        props.append(f"line={int(line)}")
    if title is not None:
        props.append(f"title={escape_property(title)}")
    head = f"::{kind}" + (" " + ",".join(props) if props else "")
    return f"{head}::{escape_data(message)}"


def _gate_line(text: str, metric: str) -> int | None:
    """The line of ``metric:`` under the test set's ``gates:`` (None when not found)."""
    inside = False
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            inside = line.split(":", 1)[0].strip() == "gates"
            continue
        if inside:
            key = line.split(":", 1)[0].strip().strip("'\"")
            if key == metric:
                return n
    return None


def check_annotations(res: Any, testset_path: str, doc_text: str | None = None) -> list[str]:
    """The annotations of a :class:`~ragtriage.core.gate.CheckResult`."""
    from .gate import _fmt, _stale_fields, failure_message

    out = []
    for b in res.failed_bars:
        value = "nothing to measure" if b.value is None else _fmt(b.value)
        msg = f"{b.bar.metric} = {value}, below the bar {b.bar.minimum:g} (from {b.bar.source}; measured at k = {b.k})"
        line = (
            _gate_line(doc_text, b.bar.metric) if doc_text is not None and b.bar.source == "gates" else None
        )
        out.append(command("error", msg, file=testset_path, line=line, title=f"ragtriage bar {b.bar.metric}"))
    for e in res.stale:
        s = _stale_fields(e)
        against = f" in {res.stale_corpus}" if res.stale_corpus else ""
        out.append(
            command(
                "error",
                f"label {s['label']} is {s['status']}{against}: run `ragtriage stale` (fix with --fix)",
                file=testset_path,
                line=res.case_lines.get(s["case"]),
                title=f"ragtriage stale label ({s['case']})",
            )
        )
    if res.missing:
        out.append(
            command(
                "error",
                f"{len(res.missing)} case(s) have no result in the run: " + ", ".join(res.missing[:20]),
                file=testset_path,
                title="ragtriage run incomplete",
            )
        )
    failures = res.failures()  # worst first (triage order), errors among them
    for r in failures[:MAX_CASES]:
        out.append(
            command(
                "error",
                failure_message(r, res.details.get(r["id"], "")),
                file=testset_path,
                line=res.case_lines.get(r["id"]),
                title=f"ragtriage {r.get('reason')} ({r['id']})",
            )
        )
    left = len(failures) - MAX_CASES
    if left > 0:
        out.append(command("notice", f"{left} more failing case(s): see the JUnit report or the run file"))
    return out


def problem_annotations(problems: Iterable[Any]) -> list[str]:
    """One ``::error`` per located input problem (why the check could not run)."""
    out = []
    for p in list(problems)[:MAX_CASES]:
        msg = str(p)
        out.append(
            command("error", msg, file=p.file if p.line is not None else None, line=p.line, title="ragtriage")
        )
    return out
