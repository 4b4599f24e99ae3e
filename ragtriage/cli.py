"""The ``ragtriage`` command line.

Each subcommand lives in ``ragtriage.commands.<name>`` and is imported only when
it runs, so ``ragtriage validate`` never pays for Textual. Exit codes are
:class:`Exit`; bad input is printed as ``file:line: message`` on stderr, exit 2,
never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from enum import IntEnum

from . import __version__
from .core.exchange import FORMATS  # light: the package loads its format modules only when used


class Exit(IntEnum):
    OK = 0
    FAILED = 1  # ran fine, but a bar was missed / stale labels remain / a regression
    BAD_INPUT = 2
    INTERRUPTED = 130  # 128 + SIGINT (ctrl-c)
    TERMINATED = 143  # 128 + SIGTERM (what a CI cancel sends): stopped as cleanly as by ctrl-c


EXAMPLES = {
    "edit": (
        "  ragtriage edit testsets/shop-es.yaml\n"
        "  ragtriage edit testsets/shop-es.yaml --run runs/shop-es.jsonl\n"
        "  ragtriage edit testsets/shop-es.yaml --system http://127.0.0.1:8000/ask   # the picker shows its top chunks"
    ),
    "triage": "  ragtriage run testsets/shop-es.yaml --out runs/shop-es.jsonl\n  ragtriage triage runs/shop-es.jsonl",
    "validate": "  ragtriage validate testsets/shop-es.yaml\n  ragtriage validate testsets/shop-de.yaml --json problems.json",
    "run": (
        "  ragtriage run testsets/shop-es.yaml\n"
        "  ragtriage run testsets/shop-es.yaml --system results:answers.jsonl --k 5 --out run.jsonl\n"
        "  ragtriage run testsets/shop-es.yaml --system http://127.0.0.1:8000/ask --concurrency 16\n"
        "  ragtriage run testsets/shop-es.yaml --by tag --repeat 3\n"
        "  OPENAI_API_KEY=... ragtriage run testsets/shop-es.yaml --system openai:http://127.0.0.1:8080/v1#llama3"
    ),
    "check": (
        "  ragtriage check testsets/shop-es.yaml --min hit@3=0.8 --min accuracy=0.7\n"
        "  ragtriage check testsets/shop-es.yaml --run run.jsonl --junit report.xml --markdown $GITHUB_STEP_SUMMARY\n"
        "  ragtriage check testsets/shop-es.yaml --min hit@3=0.85 --on lower --baseline base.jsonl --html report.html"
    ),
    "merge": (
        "  for i in 1 2 3 4; do ragtriage run ts.yaml --shard $i/4 --out shard-$i.jsonl; done\n"
        "  ragtriage merge shard-*.jsonl -o run.jsonl"
    ),
    "stale": "  ragtriage stale testsets/docs.yaml --corpus new.chunks.jsonl\n  ragtriage stale testsets/docs.yaml --corpus new.chunks.jsonl --fix",
    "sweep": "  ragtriage sweep testsets/shop-es.yaml --k 1-4\n  ragtriage sweep testsets/shop-es.yaml --system results:r.jsonl --k 1,3,5 --threshold 0.2,0.5",
    "diff": (
        "  ragtriage diff runs/before.jsonl runs/after.jsonl\n"
        "  ragtriage diff runs/before.jsonl runs/after.jsonl --fail-on-regression --markdown diff.md\n"
        "  ragtriage diff runs/before.jsonl runs/after.jsonl --metric pass --metric hit@5 --margin 0.02"
    ),
    "export": "  ragtriage export testsets/shop-es.yaml --format ragas -o shop.ragas.jsonl\n  ragtriage export testsets/shop-es.yaml --format trec > shop.qrels\n  ragtriage export testsets/folien-de/folien-de.yaml --format trec --level doc -o folien.qrels",
    "import": "  ragtriage import goldens.json --format deepeval -o testsets/imported.yaml",
    "init": (
        "  ragtriage init testsets/mine.yaml --corpus testsets/mine.chunks.jsonl\n"
        "  ragtriage init faq.yaml --corpus faq.chunks.jsonl --language de --k 5"
    ),
    "corpus": (
        "  ragtriage corpus --from llamaindex ./storage -o docs.chunks.jsonl\n"
        "  ragtriage init docs.yaml --corpus docs.chunks.jsonl"
    ),
    "report": (
        "  ragtriage report runs/after.jsonl -o report.html\n"
        "  ragtriage report runs/after.jsonl --baseline runs/before.jsonl --margin 0.02 -o report.html"
    ),
    "judge": (
        "  ragtriage run testsets/shop-es.yaml --judge openai:http://127.0.0.1:8080/v1#qwen2.5 --out run.jsonl\n"
        "  ragtriage judge testsets/shop-es.yaml --run run.jsonl --json calibration.json"
    ),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors: exit 2 with one clear line
        self.print_usage(sys.stderr)
        self.exit(Exit.BAD_INPUT, f"{self.prog}: error: {message}\n")


SYSTEMS = """systems (--system SPEC, formats.md §3):
  builtin              offline BM25 over the test set's corpus + an extractive answerer
  results:PATH         answers produced elsewhere: one JSON line per case (id, ranking, answer, ...)
  python:MODULE:ATTR   calls ATTR(question, k) for every case: question a str, k the cut-off
                       (an int: how many ranked chunks are scored; the system may ignore it),
                       both positional; sync or async (async def). It returns a dict with
                       ranking, answer, scores, prompt_ids, ... A callable that cannot take
                       (question, k) is refused before the run. MODULE is imported from the
                       current directory and PYTHONPATH.
  http://HOST/PATH     POSTs {"id", "question", "k"}; the answer is that dict as JSON
  openai:URL#MODEL     retrieval (--retriever, default builtin) + a chat endpoint; the key is
                       read from $OPENAI_API_KEY (--api-key-env), and none is needed for a
                       local server that asks for none"""


def _sub(subs, name: str, help: str, description: str | None = None) -> argparse.ArgumentParser:
    return subs.add_parser(
        name,
        help=help,
        description=description or help,
        epilog="examples:\n" + EXAMPLES[name],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_run_options(
    p: argparse.ArgumentParser, *, k_help: str = "cut-off (default: the test set's k)", k_type=int
) -> None:
    p.add_argument(
        "--system",
        default="builtin",
        metavar="SPEC",
        help="builtin (default), results:PATH, python:MODULE:ATTR, http://HOST/PATH, openai:BASE_URL#MODEL "
        "(see 'systems' below)",
    )
    p.add_argument("--k", type=k_type, default=None, metavar="K", help=k_help)
    p.add_argument(
        "--concurrency", type=int, default=8, metavar="N", help="calls in flight at once (default 8)"
    )
    p.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="per-case timeout (default 60)"
    )
    p.add_argument(
        "--retries", type=int, default=2, metavar="N", help="retries with back-off on failure (default 2)"
    )
    p.add_argument(
        "--retriever",
        default=None,
        metavar="SPEC",
        help="the retrieval of an openai: system, any SPEC as for --system that returns a ranking "
        "(default builtin BM25 over the test set's corpus); other systems retrieve on their own",
    )
    p.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key for openai: (default OPENAI_API_KEY)",
    )
    p.add_argument(
        "--max-response-mb",
        type=float,
        default=16.0,
        metavar="MB",
        help="largest answer read from an http: or openai: server; a larger one is that case's error (default 16)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="say how many calls and about how many prompt tokens, and stop"
    )
    p.add_argument(
        "--cite",
        choices=("inline", "prompt", "field"),
        default=None,
        help="where the grounding check's cited chunks come from: inline [chunk-id] citations in the "
        "answer, the prompt's chunks (a system that does not cite), or the result's `cited` field "
        "(default: the test set's cite:, else inline)",
    )
    p.add_argument(
        "--judge",
        default=None,
        metavar="SPEC",
        help="openai:BASE_URL#MODEL: a second model judges every answer (default: the test set's judge:)",
    )
    p.add_argument(
        "--judge-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the judge's API key (default OPENAI_API_KEY)",
    )


def add_selection_options(p: argparse.ArgumentParser) -> None:
    """``--ids``, ``--tag`` and ``--shard``: which cases a run or a check covers."""
    p.add_argument(
        "--ids",
        action="append",
        default=[],
        metavar="ID[,ID...]",
        help="only these cases (comma-separated, repeatable)",
    )
    p.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only cases with this tag (repeatable: any of them), e.g. --tag smoke",
    )
    p.add_argument(
        "--shard",
        default=None,
        metavar="I/N",
        help="only shard I of N (stable by case id: N jobs with 1/N … N/N cover the test set once)",
    )


def add_executor_options(p: argparse.ArgumentParser) -> None:
    """Where a ``python:`` system's calls run."""
    p.add_argument(
        "--executor",
        choices=("process", "thread", "ray"),
        default="process",
        help="python: systems: 'process' (default) calls them in a worker process, so one that "
        "exits or crashes is an error, not the end of the run; 'thread' in this process; "
        "'ray' as Ray tasks (pip install 'ragtriage[ray]')",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="with --executor ray: the cluster to join (default: start a local Ray; 'auto' joins a running one)",
    )


def add_comparison_options(p: argparse.ArgumentParser) -> None:
    """How two runs are compared (evaluation.md, "Comparing two runs")."""
    p.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        metavar="A",
        help="one-sided level of the regression test, after Holm across the measures (default 0.05)",
    )
    p.add_argument(
        "--margin",
        type=float,
        default=None,
        metavar="δ",
        help="a regression must be worse than this (a rate, 0.02 = 2 points) to count; "
        "also the non-inferiority margin (default 0)",
    )
    p.add_argument(
        "--conservative",
        action="store_true",
        help="exact binomial McNemar instead of the mid-p (never more false alarms than α)",
    )
    p.add_argument(
        "--cluster",
        choices=("doc", "topic", "none"),
        default="doc",
        help="resample cases that share the gold's source document (default), their topic, or none",
    )
    p.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="M",
        help="a measure to compare: pass (default), hit, hit@5, recall, mrr, precision, supported, "
        "accuracy, coverage, unknown_abstention (repeatable; Holm across them)",
    )


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="ragtriage",
        description=(
            "Find out why a RAG answer fails: retrieval, grounding or correctness — one reason per case.\n"
            "Exit status: 0 done, 1 a bar was missed / stale labels / regression, 2 bad input."
        ),
        epilog="examples:\n  ragtriage validate testsets/shop-es.yaml\n  ragtriage run testsets/shop-es.yaml\n"
        "  ragtriage edit testsets/shop-es.yaml\n\n'ragtriage COMMAND --help' shows each command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"ragtriage {__version__}")
    subs = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = _sub(subs, "edit", "open the app on a test set: author, label and fix cases")
    s.add_argument("testset", metavar="TESTSET")
    s.add_argument("--run", metavar="RUN", help="a run file whose reasons are shown beside the cases")
    s.add_argument("--corpus", metavar="CHUNKS", help="chunks file (default: the test set's corpus)")
    s.add_argument(
        "--system",
        metavar="SPEC",
        help="your RAG system (as for run): the chunk picker also shows what it retrieves for the "
        "case's question, and ctrl+r runs it",
    )

    s = _sub(subs, "triage", "open the app on a run's failures, grouped by reason")
    s.add_argument("run", metavar="RUN")
    s.add_argument("--testset", metavar="TESTSET", help="test set (default: the one named in the run)")

    s = _sub(
        subs,
        "init",
        "start a new test set over your own chunks file",
        "Write a new, commented test set with no cases yet: version, corpus (relative to the new file),\n"
        "language (guessed from the chunks' text unless --language) and k. Never overwrites a file.\n"
        "Then `ragtriage edit TESTSET` writes and labels the cases.",
    )
    s.add_argument("testset", metavar="TESTSET", help="the new test set (.yaml)")
    s.add_argument(
        "--corpus", required=True, metavar="CHUNKS", help="your chunks file (JSONL: id, text, ...)"
    )
    s.add_argument(
        "--language", metavar="xx", help="the questions' language (default: guessed from the chunks)"
    )
    s.add_argument("--k", type=int, default=None, metavar="N", help="cut-off for run and check (default 3)")

    s = _sub(subs, "validate", "check a test set's schema and labels; print file:line: message per problem")
    s.add_argument("testset", metavar="TESTSET")
    s.add_argument("--corpus", metavar="CHUNKS", help="chunks file (default: the test set's corpus)")
    s.add_argument("--json", metavar="PATH", help="also write the problems as JSON")

    s = _sub(
        subs,
        "run",
        "run every case through a system; write the run file; print the summary",
        "Run every case through a system; write the run file; print the summary. Exit 1 when\n"
        "every case failed (the first error is printed, also with --quiet).\n\n" + SYSTEMS,
    )
    s.add_argument("testset", metavar="TESTSET")
    add_run_options(s)
    add_selection_options(s)
    add_executor_options(s)
    s.add_argument("--out", metavar="RUN.jsonl", help="run file (default: runs/<testset>-<time>.jsonl)")
    s.add_argument("--json", metavar="SUMMARY.json", help="write the summary as JSON")
    s.add_argument("--resume", action="store_true", help="continue an interrupted --out run file")
    s.add_argument("--force", action="store_true", help="replace an existing --out run file")
    s.add_argument("--quiet", action="store_true", help="no per-case table")
    s.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="ask every case N times (for systems that are not deterministic): pass share, flaky cases, noise floor",
    )
    s.add_argument(
        "--by", choices=("tag", "topic"), default=None, help="also the summary per tag or per topic"
    )
    s.add_argument(
        "--cluster",
        choices=("doc", "topic", "none"),
        default="doc",
        help="intervals resample cases that share the gold's document (default), their topic, or none",
    )

    s = _sub(
        subs,
        "check",
        "the CI gate: fail (exit 1) when a bar is missed or labels are stale",
        "The CI gate: fail (exit 1) when a bar is missed or labels are stale.\n\n" + SYSTEMS,
    )
    s.add_argument("testset", metavar="TESTSET")
    s.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="RUN",
        help="score this run file instead of running the system (repeatable: the shards of one run)",
    )
    add_run_options(s)
    add_selection_options(s)
    add_executor_options(s)
    s.add_argument(
        "--run-anyway",
        action="store_true",
        help="run the system even when labels are stale (by default the check stops there, without calls)",
    )
    s.add_argument(
        "--min",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="a bar, e.g. hit@5=0.8 or accuracy=0.7 (repeatable; adds to the test set's gates)",
    )
    s.add_argument("--junit", metavar="PATH", help="JUnit XML, one testcase per case")
    s.add_argument("--markdown", metavar="PATH", help="markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    s.add_argument(
        "--markdown-max-chars",
        type=int,
        default=None,
        metavar="N",
        help="cut the markdown to N characters, keeping the summary, the bars and the worst cases "
        "(default 60000 when writing to $GITHUB_STEP_SUMMARY, else no limit)",
    )
    s.add_argument("--json", metavar="PATH", help="summary and bars as JSON")
    s.add_argument("--out", metavar="RUN.jsonl", help="keep the run file made for the check")
    s.add_argument("--force", action="store_true", help="replace an existing --out run file")
    s.add_argument(
        "--github",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print a GitHub Actions ::error annotation per failing case and bar "
        "(default: on when GITHUB_ACTIONS=true)",
    )
    s.add_argument("--html", metavar="PATH", help="the self-contained HTML report (as `ragtriage report`)")
    s.add_argument(
        "--on",
        choices=("value", "lower"),
        default="value",
        help="hold each bar to the measured value (default) or to the lower bound of its 95 %% interval",
    )
    s.add_argument(
        "--baseline",
        metavar="RUN",
        help="compare with this run case by case; a real regression fails the check (exit 1)",
    )
    add_comparison_options(s)

    s = _sub(subs, "stale", "find labels made stale by re-chunking; --fix applies the safe fixes")
    s.add_argument("testset", metavar="TESTSET")
    s.add_argument("--corpus", metavar="CHUNKS", help="the new chunks file (default: the test set's corpus)")
    s.add_argument("--fix", action="store_true", help="apply automatic fixes and save the test set")
    s.add_argument("--json", metavar="PATH", help="write the report as JSON")

    s = _sub(
        subs,
        "sweep",
        "one row per k (and score threshold): hit, supported, correct, tokens",
        "One row per k (and score threshold): hit, supported, correct, tokens.\n\n" + SYSTEMS,
    )
    s.add_argument("testset", metavar="TESTSET")
    add_run_options(s, k_help="values of k: 1-4 or 1,3,5 (a single K means 1 to K)", k_type=str)
    s.add_argument("--threshold", default=None, metavar="T[,T...]", help="score thresholds to try")
    s.add_argument("--json", metavar="PATH", help="write the rows as JSON")

    s = _sub(subs, "merge", "join the shards of one run into one run file")
    s.add_argument("runs", nargs="+", metavar="RUN")
    s.add_argument("-o", "--output", required=True, metavar="RUN.jsonl", help="the merged run file")
    s.add_argument("--testset", metavar="TESTSET", help="test set (default: the one named in the runs)")
    s.add_argument("--force", action="store_true", help="replace an existing output file")

    s = _sub(subs, "judge", "how far the run's judge agrees with your grades: n, agreement, Cohen's kappa")
    s.add_argument("testset", metavar="TESTSET")
    s.add_argument("--run", required=True, metavar="RUN", help="a run made with --judge")
    s.add_argument(
        "--grades",
        action="append",
        default=[],
        metavar="PATH",
        help="more grades files, merged with <testset stem>.grades.jsonl (repeatable)",
    )
    s.add_argument("--json", metavar="PATH", help="write the report as JSON")

    s = _sub(subs, "diff", "compare two runs: fixed, regressed and changed cases, metric deltas")
    s.add_argument("run_a", metavar="RUN_A")
    s.add_argument("run_b", metavar="RUN_B")
    s.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 on a real regression (a paired test, not noise); with --any-flip, when any case regressed",
    )
    s.add_argument(
        "--any-flip",
        action="store_true",
        help="with --fail-on-regression: the old rule, exit 1 when a single case went from good to failing",
    )
    s.add_argument("--markdown", metavar="PATH", help="write the diff as markdown")
    s.add_argument("--json", metavar="PATH", help="write the diff as JSON")
    s.add_argument("--testset", metavar="TESTSET", help="test set for tags and documents (default: run B's)")
    add_comparison_options(s)

    s = _sub(subs, "report", "one self-contained HTML report of a run (and its comparison with a baseline)")
    s.add_argument("run", metavar="RUN")
    s.add_argument("--baseline", metavar="RUN", help="compare with this run: flips, intervals, the verdict")
    s.add_argument("--testset", metavar="TESTSET", help="test set (default: the one named in the run)")
    s.add_argument("-o", "--output", required=True, metavar="PATH", help="the HTML file to write")
    add_comparison_options(s)

    s = _sub(subs, "export", "write a test set in another tool's format")
    s.add_argument("testset", metavar="TESTSET")
    s.add_argument("--format", required=True, choices=FORMATS)
    s.add_argument("-o", "--output", metavar="PATH", help="output file (default: stdout)")
    s.add_argument(
        "--run",
        metavar="RUN",
        help="with --format trec: also write the run's rankings; with ragas: what the system retrieved and answered",
    )
    s.add_argument(
        "--k",
        type=int,
        default=None,
        metavar="K",
        help="with --format ragas --run: how much of each ranking is retrieved_contexts (default: the run's k)",
    )
    s.add_argument(
        "--level",
        choices=("chunk", "doc"),
        default="chunk",
        help="with --format trec: qrels of the expected chunks (default) or of the expected documents "
        "(expected_docs; with --run, the run's document rankings)",
    )
    s.add_argument(
        "--csv-raw",
        action="store_true",
        help="with --format csv: write cells starting with = + - @ as they are (default: a leading ' "
        "keeps a spreadsheet from running them as formulas; import reads either back)",
    )

    s = _sub(subs, "import", "make a commented test set from another tool's file")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--format", required=True, choices=FORMATS)
    s.add_argument("-o", "--output", required=True, metavar="TESTSET.yaml")
    s.add_argument("--corpus", metavar="CHUNKS", help="chunks file the new test set refers to")
    s.add_argument("--force", action="store_true", help="overwrite an existing output file")
    s.add_argument(
        "--level",
        choices=("chunk", "doc"),
        default="chunk",
        help="with --format trec: the qrels judge chunks (expected, the default) or documents (expected_docs)",
    )

    s = _sub(
        subs,
        "corpus",
        "write the chunks file of a persisted LlamaIndex index (stable chunk ids)",
        "Write the chunks file (formats.md §2) of an index persisted with\n"
        "index.storage_context.persist(PERSIST_DIR): one line per node with id, text, doc, start, end.\n"
        "Ids stay the same for the same chunking in every process (see ragtriage.adapters.llamaindex).\n"
        'Needs the extra: pip install "ragtriage[llamaindex]".',
    )
    s.add_argument("--from", dest="source", required=True, choices=["llamaindex"], help="the framework")
    s.add_argument("persist_dir", metavar="PERSIST_DIR", help="the folder holding docstore.json")
    s.add_argument("-o", "--output", required=True, metavar="CHUNKS", help="the chunks file to write")
    s.add_argument("--force", action="store_true", help="replace an existing chunks file")
    return p


#: options whose value may be a list starting with a minus sign (``--threshold -0.2,0.5``),
#: which argparse would take for an option; joined as ``--threshold=-0.2,0.5`` so our own
#: parser reads (or refuses) the value
_NUMBER_LISTS = ("--threshold", "--k", "--min")


def _negative_values(argv: list[str]) -> list[str]:
    out: list[str] = []
    it = iter(range(len(argv)))
    for i in it:
        a = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if a in _NUMBER_LISTS and nxt[:1] == "-" and nxt[1:2] in tuple("0123456789."):
            out.append(f"{a}={nxt}")
            next(it, None)
        else:
            out.append(a)
    return out


def main(argv: list[str] | None = None) -> int:
    from .core.escape import visible
    from .core.secrets import redacting_streams

    parser = build_parser()
    with redacting_streams(show=visible):  # a usage error echoes what was typed: shown, not obeyed
        args = parser.parse_args(_negative_values(sys.argv[1:] if argv is None else argv))
    if not args.command:
        parser.print_help()
        return Exit.BAD_INPUT

    args.exiting = argv is None  # the process's own command line: it ends when this returns
    bad = next((a for a in (sys.argv[1:] if argv is None else argv) if "\x00" in a), None)
    if bad is not None:  # only reachable through main(argv): a shell cannot pass one
        print(f"{bad!r}: an argument with a NUL byte is not a usable path or value", file=sys.stderr)
        return Exit.BAD_INPUT
    module = importlib.import_module(f"ragtriage.commands.{args.command.replace('-', '_')}_cmd")
    if args.exiting and args.command in ("run", "check"):
        from .core.stop import stop_on_sigterm

        stop_on_sigterm()  # a CI cancel stops like ctrl-c: what finished is kept, resumable
    if args.command in (
        "edit",
        "triage",
    ):  # the app owns the terminal; its records are redacted at the source
        return _call(module, args)
    # no key or URL password reaches the terminal or a CI log, and no text from a file, a
    # system or a server drives the terminal: control and bidi characters are shown as \x1b
    with redacting_streams(show=visible):
        return _call(module, args)


def _interrupts_stop_cleanly() -> None:
    """From here on a Ctrl-C is a KeyboardInterrupt the command handles (it keeps what
    was finished); before, ragtriage/__init__ ended the process quietly."""
    import signal
    import threading

    from . import _quiet_interrupt

    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is _quiet_interrupt
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _call(module, args) -> int:
    from .core.errors import ConflictError, InputError

    try:
        _interrupts_stop_cleanly()
        return int(module.main(args))
    except InputError as e:
        for p in e.problems:
            print(str(p), file=sys.stderr)
        return Exit.BAD_INPUT
    except ConflictError as e:
        print(str(e), file=sys.stderr)
        return Exit.BAD_INPUT
    except KeyboardInterrupt:
        from .core.stop import stopped_by

        how = stopped_by()
        print(f"stopped ({how})" if how else "interrupted", file=sys.stderr)
        return Exit.TERMINATED if how == "SIGTERM" else Exit.INTERRUPTED
    except BrokenPipeError:
        return Exit.OK
    except OSError as e:  # a full disk, an unwritable folder, a name too long: located, no traceback
        print(f"{e.filename or 'ragtriage'}: {e.strerror or e}", file=sys.stderr)
        return Exit.BAD_INPUT
