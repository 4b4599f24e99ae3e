"""Issue 12's campaign, re-runnable against any source tree: bad test sets, chunk files,
run files, import files and options through every command, in one process per tree, by
``ragtriage.cli.main(argv)``.

    python tests/hostile/campaign.py [SOURCE_ROOT ...]    # default: this checkout
    python tests/hostile/campaign.py /work/wt/base .      # before / after, one table

Each input is one command line with what it must do: its exit code (2 for bad input), no
traceback, no hang (20 s), its inputs byte-identical afterwards, no canary secret in any
output stream or file, no raw terminal escape or bidi control on the terminal. The table
counts, per command: inputs tried, tracebacks, hangs, wrong exit codes, inputs modified,
secrets leaked, raw escapes. ``--list`` prints every failing input by name.

This file imports nothing from ``tests``: it is run as a script with ``PYTHONPATH`` set to
the tree under test, so the same inputs reach the old code and the new.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
TESTSETS = ROOT / "testsets"
KEY = "sk-canary-7f3a9d2e41b8c6"  # an API key a server echoes back
PASSWORD = "pw-canary-c0ffee99"  # a password in a URL's userinfo
ESCAPES = ("\x1b", "\u202e", "\x9b")
HANG = 20  # seconds one command line may take


class _Text(io.StringIO):
    def isatty(self) -> bool:
        return False


class _Echo(http.server.BaseHTTPRequestHandler):
    """A server that answers every request with a 500 whose body echoes the request's
    headers (the Authorization key) and path: what a careless proxy does."""

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        body = json.dumps({"error": {"message": f"bad request {self.path} {dict(self.headers)}"}}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a) -> None:
        pass


# ------------------------------------------------------------------ the inputs

M = '{"type": "meta", "testset": "ts.yaml", "system": "builtin", "k": 3}'
C = '{"type": "case", "id": "devolucion", "reason": "retrieval-miss"'
BAD_RUNS = {
    "empty": "",
    "not json": "hello\n",
    "json array": "[1, 2]\n",
    "no meta first": C + "}\n",
    "meta k zero": M.replace('"k": 3', '"k": 0') + "\n",
    "meta k true": M.replace('"k": 3', '"k": true') + "\n",
    "meta k 30 digits": M.replace('"k": 3', '"k": ' + "9" * 30) + "\n",
    "meta k 2^63": M.replace('"k": 3', f'"k": {2**63}') + "\n",
    "meta testset number": M.replace('"ts.yaml"', "5") + "\n",
    "two metas": M + "\n" + M + "\n",
    "case id number": M + '\n{"type": "case", "id": 5, "reason": "x"}\n',
    "case without reason": M + '\n{"type": "case", "id": "a"}\n',
    "ranking mixed": M + "\n" + C + ', "ranking": [1, null, {}]}\n',
    "expected number": M + "\n" + C + ', "expected": 5}\n',
    "reasons numbers": M + "\n" + C + ', "reasons": [1]}\n',
    "tokens 1e30": M + "\n" + C + ', "tokens": 1e30}\n',
    "answer object": M + "\n" + C + ', "answer": {}}\n',
    "deep nesting": M + "\n" + C + ', "x": ' + "[" * 100000 + "]" * 100000 + "}\n",
    "4301-digit integer": M + "\n" + C + ', "tokens": ' + "9" * 4301 + "}\n",
    "nul bytes": "\x00" * 100,
}


def _ts_edit(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


BAD_TESTSETS = {
    "anchor and alias": _ts_edit(
        "    topic: precio de entrega", "    topic: &t precio de entrega\n    notes: *t"
    ),
    "billion laughs": lambda t: (
        "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
        + "z: !!python/object:os.system [*i]\n"
    ),
    "k 4301 digits": _ts_edit("k: 3  ", "k: " + "9" * 4301 + "  "),
    "k 2^63": _ts_edit("k: 3  ", f"k: {2**63}  "),
    "k true": _ts_edit("k: 3  ", "k: true  "),
    "corpus 5000 chars": _ts_edit("corpus: shop-es.chunks.jsonl", "corpus: " + "c" * 5000 + ".jsonl"),
    "corpus /dev/zero": _ts_edit("corpus: shop-es.chunks.jsonl", "corpus: /dev/zero"),
    "corpus FIFO": _ts_edit("corpus: shop-es.chunks.jsonl", "corpus: fifo"),
    "cases a string": lambda t: t.split("cases:")[0] + "cases: hello\n",
    "case a list": lambda t: t.split("cases:")[0] + "cases:\n  - [1, 2]\n",
    "id with a space": _ts_edit("- id: precio-entrega", "- id: precio entrega"),
    "tab indentation": _ts_edit("    topic: precio de entrega", "\ttopic: precio de entrega"),
    "not utf-8": lambda t: t.replace("¿Cuánto", "\udcff\udcfeCuánto", 1),
    "nul byte": lambda t: t.replace("precio de entrega", "precio\x00", 1),
    "lone surrogate escape": _ts_edit("    topic: precio de entrega", '    topic: "x\\ud800"'),
    "empty file": lambda t: "",
    "only a comment": lambda t: "# nothing\n",
    "version 2": _ts_edit("version: 1", "version: 2"),
}

#: good test sets whose text must reach the terminal shown, not obeyed (item 16): exit 0/1
ESCAPE_TESTSETS = {
    "ESC and bidi in topic": _ts_edit("topic: precio de entrega", 'topic: "precio \\e[31mROJO\\u202e"'),
    "ESC in id, no topic": lambda t: t.replace(
        "- id: precio-entrega", '- id: "precio\\e[2J-entrega"', 1
    ).replace("    topic: precio de entrega", "", 1),
    "C1 CSI in question": _ts_edit(
        "question: ¿Cuánto me cobráis por mandarlo a una oficina de mensajería?",
        'question: "\\x9b2J ¿Cuánto me cobráis por mandarlo a una oficina de mensajería?"',
    ),
}


def _chunk_edit(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


BAD_CHUNKS = {
    'start "10"': _chunk_edit('"start": 10,', '"start": "10",'),
    "start true": _chunk_edit('"start": 10,', '"start": true,'),
    "start 1e3": _chunk_edit('"start": 10,', '"start": 1e3,'),
    "start 4301 digits": _chunk_edit('"start": 10,', '"start": ' + "9" * 4301 + ","),
    "id number": _chunk_edit('"id": "entrega-1"', '"id": 1'),
    "id empty": _chunk_edit('"id": "entrega-1"', '"id": " "'),
    "text missing": lambda t: t.replace('"text": ', '"txt": ', 1),
    "text list": _chunk_edit('"text": "Enviamos', '"text": ["Enviamos"], "x": "'),
    "not json": lambda t: "hello\n" + t,
    "json array line": lambda t: "[1, 2]\n" + t,
    "nul bytes": lambda t: "\x00" * 64 + "\n" + t,
    "deep nesting": lambda t: '{"id": "d", "text": "t", "x": ' + "[" * 100000 + "]" * 100000 + "}\n" + t,
    "lone surrogate escape": _chunk_edit('"text": "Enviamos', '"text": "\\ud800 Enviamos'),
}

#: (name, argv with {ts}/{tmp}/{run}/{fifo}, exit codes allowed)
OPTIONS = [
    ("--system http://", ["run", "{ts}", "--system", "http://"], {2}),
    ("--system http://[::1", ["run", "{ts}", "--system", "http://[::1"], {2}),
    ("--system port 70000", ["run", "{ts}", "--system", "http://127.0.0.1:70000/ask"], {2}),
    ("--system nonsense", ["run", "{ts}", "--system", "gopher:x"], {2}),
    ("--system python: missing", ["run", "{ts}", "--system", "python:no_such_module_x:f"], {2}),
    ("--timeout nan", ["run", "{ts}", "--timeout", "nan"], {2}),
    ("--timeout -1", ["run", "{ts}", "--timeout", "-1"], {2}),
    ("--k 2^63", ["run", "{ts}", "--k", str(2**63)], {2}),
    ("--k 0", ["run", "{ts}", "--k", "0"], {2}),
    ("--concurrency 0", ["run", "{ts}", "--concurrency", "0"], {2}),
    ("--concurrency 10^8", ["run", "{ts}", "--concurrency", "100000000"], {2}),
    ("--max-response-mb -1", ["run", "{ts}", "--max-response-mb", "-1"], {2}),
    ("--judge nonsense", ["run", "{ts}", "--judge", "gpt-4"], {2}),
    ("run --out the test set", ["run", "{ts}", "--out", "{ts}"], {2}),
    ("run --out the corpus", ["run", "{ts}", "--out", "{tmp}/shop-es.chunks.jsonl"], {2}),
    ("run --out a folder", ["run", "{ts}", "--out", "{tmp}"], {2}),
    ("run --out NUL", ["run", "{ts}", "--out", "a\x00b"], {2}),
    ("run --out 5000 chars", ["run", "{ts}", "--out", "{tmp}/" + "x" * 5000], {2}),
    ("run --resume another test set's run", ["run", "{ts}", "--resume", "--out", "{otherrun}"], {2}),
    ("validate --json the corpus", ["validate", "{ts}", "--json", "{tmp}/shop-es.chunks.jsonl"], {2}),
    ("validate --corpus /dev/zero", ["validate", "{ts}", "--corpus", "/dev/zero"], {2}),
    ("validate --corpus FIFO", ["validate", "{ts}", "--corpus", "{fifo}"], {2}),
    ("validate FIFO", ["validate", "{fifo}"], {2}),
    ("validate a folder", ["validate", "{tmp}"], {2}),
    ("validate missing", ["validate", "{tmp}/nope.yaml"], {2}),
    ("check --min hit@<20 digits>", ["check", "{ts}", "--min", "hit@99999999999999999999=0.5"], {2}),
    ("check --min hit@0", ["check", "{ts}", "--min", "hit@0=0.5"], {2}),
    ("check --min nonsense", ["check", "{ts}", "--min", "banana"], {2}),
    ("check --min nan", ["check", "{ts}", "--min", "hit@3=nan"], {2}),
    ("check --run FIFO", ["check", "{ts}", "--run", "{fifo}"], {2}),
    ("check --json the test set", ["check", "{ts}", "--json", "{ts}"], {2}),
    ("check --junit the test set", ["check", "{ts}", "--junit", "{ts}"], {2}),
    (
        "check --run RUN --judge SPEC",
        ["check", "{ts}", "--run", "{run}", "--judge", "openai:http://127.0.0.1:9/v1#m"],
        {2},
    ),
    ("sweep --k 1-100000", ["sweep", "{ts}", "--k", "1-100000"], {2}),
    ("sweep --k 99999999", ["sweep", "{ts}", "--k", "99999999"], {2}),
    ("sweep --k 3-1", ["sweep", "{ts}", "--k", "3-1"], {2}),
    ("sweep --threshold nan", ["sweep", "{ts}", "--k", "1-2", "--threshold", "nan"], {2}),
    ("export -o the test set", ["export", "{ts}", "--format", "jsonl", "-o", "{ts}"], {2}),
    (
        "export trec --run -o the run",
        ["export", "{ts}", "--format", "trec", "--run", "{run}", "-o", "{run}"],
        {2},
    ),
    ("export -o empty", ["export", "{ts}", "--format", "csv", "-o", ""], {2}),
    ("stale --corpus /dev/zero", ["stale", "{ts}", "--corpus", "/dev/zero"], {2}),
    ("stale --json the test set", ["stale", "{ts}", "--json", "{ts}"], {2}),
    (
        "stale --fix a read-only test set",
        ["stale", "{ro}", "--fix", "--corpus", "{tmp}/rechunked.jsonl"],
        {2},
    ),
    ("diff FIFO FIFO", ["diff", "{fifo}", "{fifo}"], {2}),
    ("diff a test set as a run", ["diff", "{ts}", "{run}"], {2}),
    ("judge without grades or verdicts", ["judge", "{ts}", "--run", "{run}"], {0, 2}),
    ("judge --run FIFO", ["judge", "{ts}", "--run", "{fifo}"], {2}),
    ("triage FIFO", ["triage", "{fifo}"], {2}),
    ("edit FIFO", ["edit", "{fifo}"], {2}),
    ("edit --corpus /dev/zero", ["edit", "{ts}", "--corpus", "/dev/zero"], {2}),
    (
        "import -o the input",
        ["import", "{tmp}/good.jsonl", "--format", "jsonl", "-o", "{tmp}/good.jsonl"],
        {2},
    ),
    ("import FIFO", ["import", "{fifo}", "--format", "jsonl", "-o", "{tmp}/new.yaml"], {2}),
    ("import /dev/zero", ["import", "/dev/zero", "--format", "csv", "-o", "{tmp}/new.yaml"], {2}),
]

BAD_IMPORTS = {
    "jsonl: not json": ("jsonl", "hello\n"),
    "jsonl: array line": ("jsonl", "[1]\n"),
    "jsonl: id number": ("jsonl", '{"id": 5, "question": "q"}\n'),
    "jsonl: question missing": ("jsonl", '{"id": "a"}\n'),
    "jsonl: 5000-digit integer": ("jsonl", '{"id": "a", "question": "q", "notes": ' + "9" * 5000 + "}\n"),
    "jsonl: deep nesting": (
        "jsonl",
        '{"id": "a", "question": "q", "x": ' + "[" * 100000 + "]" * 100000 + "}\n",
    ),
    "jsonl: lone surrogate": ("jsonl", '{"id": "a", "question": "q\\ud800", "expected": ["x"]}\n'),
    "jsonl: nul bytes": ("jsonl", "\x00" * 50),
    "csv: empty": ("csv", ""),
    "csv: no question column": ("csv", "a,b\n1,2\n"),
    "csv: nul bytes": ("csv", "id,question\n\x00,\x00\n"),
    "ragas: not a list": ("ragas", '{"a": 1}'),
    "ragas: deep nesting": ("ragas", "[" * 100000 + "]" * 100000),
    "ragas: item a number": ("ragas", "[1, 2]"),
    "deepeval: lone surrogate": ("deepeval", '[{"input": "q\\udc00 x"}]'),
    "deepeval: input a number": ("deepeval", '[{"input": 5}]'),
    "deepeval: 5000-digit integer": ("deepeval", '[{"input": "q", "x": ' + "9" * 5000 + "}]"),
    "trec: three columns": ("trec", "q1 0 d1\n"),
    "trec: relevance not a number": ("trec", "q1 0 d1 yes\n"),
}

#: good inputs the issue found refused or mangled (item 21): must work, exit 0
GOOD = [
    (
        "export ragas --run",
        ["export", "{ts}", "--format", "ragas", "--run", "{run}", "-o", "{tmp}/r.json"],
        {0},
    ),
    (
        "import deepeval JSONL",
        ["import", "{tmp}/golden.jsonl", "--format", "deepeval", "-o", "{tmp}/de.yaml"],
        {0},
    ),
]


# ------------------------------------------------------------------ running them


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def call(argv: list[str], cwd: Path, env: dict[str, str]) -> dict:
    """One command line in this process: exit code, outputs, traceback or hang."""
    from ragtriage import cli

    old_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    here = os.getcwd()
    os.chdir(cwd)
    out, err = _Text(), _Text()
    code: object = None
    tb = False
    hang = False
    stdin = sys.stdin
    sys.stdin = io.StringIO("")
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 2
    except _Hang:
        hang = True
    except BaseException:  # what would print a traceback
        tb = True
        err.write(traceback.format_exc())
    finally:
        signal.alarm(0)
        sys.stdin = stdin
        os.chdir(here)
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        with contextlib.suppress(Exception):
            from ragtriage.core import secrets

            secrets.forget_all()
    text = out.getvalue() + err.getvalue()
    return {
        "code": code,
        "traceback": tb or "Traceback (most recent call last)" in text,
        "hang": hang,
        "out": out.getvalue(),
        "err": err.getvalue(),
    }


def _digest(folder: Path) -> dict[str, str]:
    """Every regular file under ``folder``: its bytes and mode (a read-only mark included)."""
    seen = {}
    for p in sorted(folder.rglob("*")):
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode) and not {"runs", "out", "cache", "jcache"} & set(
            p.relative_to(folder).parts[:-1]
        ):
            seen[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest() + oct(st.st_mode)
        elif stat.S_ISLNK(st.st_mode):
            seen[str(p.relative_to(folder))] = "link->" + os.readlink(p)
    return seen


class Campaign:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.rows: list[dict] = []
        self.n = 0

    def folder(self) -> Path:
        self.n += 1
        d = self.base / f"c{self.n}"
        d.mkdir()
        ts = (
            (TESTSETS / "shop-es.yaml")
            .read_text(encoding="utf-8")
            .replace("shop-es.chunks.jsonl", "shop-es.chunks.jsonl")
        )
        (d / "ts.yaml").write_text(ts, encoding="utf-8")
        shutil.copy(TESTSETS / "shop-es.chunks.jsonl", d / "shop-es.chunks.jsonl")
        os.mkfifo(d / "fifo")
        (d / "out").mkdir()
        return d

    def record(
        self, group: str, name: str, argv: list[str], allowed: set[int], folder: Path, env=None
    ) -> dict:
        before = _digest(folder)
        r = call(argv, folder, {"COLUMNS": "120", "RT_KEY": KEY, **(env or {})})
        after = _digest(folder)
        modified = sorted(k for k in before if before[k] != after.get(k))
        texts = [r["out"], r["err"]] + [
            p.read_bytes().decode("utf-8", "replace")
            for p in folder.rglob("*")
            if p.is_file() and not p.is_symlink()
        ]
        leaks = sum(t.count(c) for t in texts for c in (KEY, PASSWORD))
        shown = r["out"] + r["err"]
        if r["traceback"]:
            shown = ""  # a traceback's own text is counted as the traceback
        escapes = sum(shown.count(e) for e in ESCAPES)
        row = {
            "group": group,
            "command": argv[0],
            "name": name,
            "code": r["code"],
            "traceback": r["traceback"],
            "hang": r["hang"],
            "wrong_exit": not r["traceback"] and not r["hang"] and r["code"] not in allowed,
            "modified": modified,
            "leaks": leaks,
            "escapes": escapes,
            "err": r["err"][-300:],
        }
        self.rows.append(row)
        return row


def _fill(argv: list[str], folder: Path, **extra: str) -> list[str]:
    paths = {
        "ts": str(folder / "ts.yaml"),
        "tmp": str(folder),
        "fifo": str(folder / "fifo"),
        "run": str(folder / "good.run.jsonl"),
        "otherrun": str(folder / "other.run.jsonl"),
        "ro": str(folder / "ro.yaml"),
        **extra,
    }
    return [a.format(**paths) if "{" in a and "}" in a and "\x00" not in a else a for a in argv]


def _good_run(c: Campaign, folder: Path) -> None:
    """A good run of ``ts.yaml`` (made by the tree under test) and one of another test set."""
    call(["run", "ts.yaml", "--quiet", "--out", "good.run.jsonl"], folder, {})
    other = folder / "other.yaml"
    shutil.copy(TESTSETS / "shop-de.yaml", other)
    shutil.copy(TESTSETS / "shop-de.chunks.jsonl", folder / "shop-de.chunks.jsonl")
    call(["run", "other.yaml", "--quiet", "--out", "other.run.jsonl"], folder, {})
    other.unlink()  # only the run file of another test set is left


TESTSET_COMMANDS = [
    ["validate", "{ts}"],
    ["run", "{ts}", "--quiet", "--out", "{tmp}/out/r.jsonl"],
    ["check", "{ts}"],
    ["stale", "{ts}"],
    ["stale", "{ts}", "--fix"],
    ["sweep", "{ts}", "--k", "1-3"],
    ["export", "{ts}", "--format", "jsonl", "-o", "{tmp}/out/e.jsonl"],
    ["edit", "{ts}"],
]


def _allowed(argv: list[str], corpus_only: bool) -> set[int]:
    """Exit 2, except that exporting a test set does not read its chunks file: a bad one
    may be refused or not read at all."""
    return {0, 2} if corpus_only and argv[0] == "export" else {2}


def campaign(base: Path) -> list[dict]:
    c = Campaign(base)
    for name, edit in BAD_TESTSETS.items():
        for argv in TESTSET_COMMANDS:
            d = c.folder()
            ts = d / "ts.yaml"
            text = edit(ts.read_text(encoding="utf-8"))
            ts.write_bytes(text.encode("utf-8", "surrogateescape"))
            c.record("bad test sets", name, _fill(argv, d), _allowed(argv, name.startswith("corpus")), d)
    for name, edit in ESCAPE_TESTSETS.items():
        for argv in TESTSET_COMMANDS[:3] + [["sweep", "{ts}", "--k", "1-3"]]:
            d = c.folder()
            ts = d / "ts.yaml"
            ts.write_text(edit(ts.read_text(encoding="utf-8")), encoding="utf-8")
            c.record("escapes in a test set", name, _fill(argv, d), {0, 1}, d)
    for name, edit in BAD_CHUNKS.items():
        for argv in TESTSET_COMMANDS:
            d = c.folder()
            ch = d / "shop-es.chunks.jsonl"
            ch.write_bytes(edit(ch.read_text(encoding="utf-8")).encode("utf-8", "surrogateescape"))
            c.record("bad chunk files", name, _fill(argv, d), _allowed(argv, True), d)
    run_commands = [
        ["check", "{ts}", "--run", "{bad}"],
        ["diff", "{bad}", "{run}"],
        ["export", "{ts}", "--format", "trec", "--run", "{bad}", "-o", "{tmp}/out/q.trec"],
        ["export", "{ts}", "--format", "ragas", "--run", "{bad}", "-o", "{tmp}/out/r.json"],
        ["judge", "{ts}", "--run", "{bad}"],
        ["triage", "{bad}"],
        ["run", "{ts}", "--resume", "--out", "{bad}"],
    ]
    for name, content in BAD_RUNS.items():
        for argv in run_commands:
            d = c.folder()
            _good_run(c, d)
            bad = d / "bad.run.jsonl"
            bad.write_text(content, encoding="utf-8")
            c.record("bad run files", name, _fill(argv, d, bad=str(bad)), {2}, d)
    for name, (fmt, content) in BAD_IMPORTS.items():
        d = c.folder()
        src = d / f"in.{'json' if fmt in ('ragas', 'deepeval') else fmt}"
        src.write_bytes(content.encode("utf-8", "surrogateescape"))
        c.record(
            "bad import files",
            name,
            ["import", str(src), "--format", fmt, "-o", str(d / "out" / "n.yaml")],
            {2},
            d,
        )
    for name, argv, allowed in OPTIONS + GOOD:
        d = c.folder()
        _good_run(c, d)
        (d / "good.jsonl").write_text('{"id": "a", "question": "q", "expected": ["x"]}\n')
        (d / "golden.jsonl").write_text(
            '{"input": "q1", "expected_output": "a", "source_file": "f.md", "comments": "c"}\n'
        )
        shutil.copy(d / "ts.yaml", d / "ro.yaml")
        (d / "rechunked.jsonl").write_text(
            (d / "shop-es.chunks.jsonl").read_text(encoding="utf-8").replace('"entrega-1"', '"envio-1"')
        )
        os.chmod(d / "ro.yaml", 0o444)
        c.record("options and paths", name, _fill(argv, d), allowed, d)
    # secrets: a server echoing the key and the URL's password in its error body
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    systems = {
        "openai: key echoed": f"openai:http://127.0.0.1:{port}/v1#m",
        "http: userinfo echoed": f"http://alice:{PASSWORD}@127.0.0.1:{port}/ask",
    }
    for name, system in systems.items():
        for extra in ([], ["--json", "{tmp}/out/s.json"]):
            d = c.folder()
            argv = ["run", "{ts}", "--system", system, "--api-key-env", "RT_KEY", "--retries", "0",
                    "--out", "{tmp}/out/r.jsonl", *extra]  # fmt: skip
            c.record(
                "secrets",
                name,
                _fill(argv, d),
                {0, 1},
                d,
                {"GITHUB_STEP_SUMMARY": str(d / "out" / "step.md")},
            )
            if (d / "out" / "r.jsonl").exists():
                for check in (["check", "{ts}", "--run", "{tmp}/out/r.jsonl", "--json", "{tmp}/out/c.json",
                               "--junit", "{tmp}/out/j.xml"], ["diff", "{tmp}/out/r.jsonl", "{tmp}/out/r.jsonl"]):  # fmt: skip
                    c.record("secrets", name + " (" + check[0] + ")", _fill(check, d), {0, 1}, d,
                             {"GITHUB_STEP_SUMMARY": str(d / "out" / "step.md")})  # fmt: skip
    srv.shutdown()
    return c.rows


# ------------------------------------------------------------------ the table

COLUMNS = ("tried", "traceback", "hang", "wrong_exit", "modified", "leaks", "wrong", "escapes")
HEADS = ("tracebacks", "hangs", "wrong exit", "inputs modified or lost", "secrets leaked", "wrong numbers",
         "markup or escapes executed")  # fmt: skip


def totals(rows: list[dict], key: str = "command") -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        t = out.setdefault(r[key], dict.fromkeys(COLUMNS, 0))
        t["tried"] += 1
        t["traceback"] += r["traceback"]
        t["hang"] += r["hang"]
        t["wrong_exit"] += r["wrong_exit"]
        t["modified"] += bool(r["modified"])
        t["leaks"] += r["leaks"] > 0
        t["wrong"] += bool(r.get("wrong"))
        t["escapes"] += r["escapes"] > 0 or bool(r.get("markup"))
    return out


def failing(rows: list[dict]) -> list[dict]:
    return [
        r
        for r in rows
        if r["traceback"]
        or r["hang"]
        or r["wrong_exit"]
        or r["modified"]
        or r["leaks"]
        or r["escapes"]
        or r.get("markup")
        or r.get("wrong")
    ]


def worker(out: str, which: str = "all", src: str = "") -> None:
    import resource

    # an input that grows memory without bound (the old /dev/zero corpus, a huge sweep)
    # becomes a MemoryError, i.e. a traceback in the table, instead of the OOM killer
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    rows = []
    with tempfile.TemporaryDirectory() as d:
        if which in ("all", "12"):
            Path(d, "12").mkdir()
            rows += campaign(Path(d) / "12")
        if which in ("all", "19"):
            sys.path.append(str(HERE.parents[2]))  # the tests; ragtriage stays the tree under test
            from tests.hostile.campaign19 import campaign19

            Path(d, "19").mkdir()
            rows += campaign19(Path(d) / "19", Path(src or ROOT))
    Path(out).write_text(json.dumps(rows))


def measure(src: Path, which: str = "all") -> list[dict]:
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        env = dict(os.environ, PYTHONPATH=str(src))
        subprocess.run(
            [sys.executable, str(HERE), "--worker", f.name, which, str(src)], env=env, check=True, cwd=src
        )
        return json.loads(Path(f.name).read_text())


def table(results: dict[str, list[dict]], key: str = "command") -> str:
    names = list(results)
    per = {n: totals(rows, key) for n, rows in results.items()}
    commands = sorted({c for t in per.values() for c in t})
    head = f"| {key} | inputs tried | " + " | ".join(f"{col} ({n})" for col in HEADS for n in names)
    lines = [head + " |", "|" + "---|" * (2 + len(HEADS) * len(names))]
    for cmd in commands + ["all"]:
        if cmd == "all":
            t = {n: {k: sum(v[k] for v in per[n].values()) for k in COLUMNS} for n in names}
        else:
            t = {n: per[n].get(cmd, dict.fromkeys(COLUMNS, 0)) for n in names}
        cells = [str(t[names[-1]]["tried"])]
        for col in COLUMNS[1:]:
            cells += [str(t[n][col]) for n in names]
        lines.append(f"| {cmd} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--worker"]:
        worker(*argv[1:])
        return
    show = "--list" in argv
    which = "19" if "--19" in argv else "12" if "--12" in argv else "all"
    srcs = [Path(a).resolve() for a in argv if not a.startswith("--")] or [ROOT]
    results = {}
    for src in srcs:
        label = "before" if len(srcs) > 1 and src != srcs[-1] else "after" if len(srcs) > 1 else src.name
        results[label] = measure(src, which)
    print(table(results, "group" if which == "19" else "command"))
    if show:
        for label, rows in results.items():
            for r in failing(rows):
                what = [k for k in ("traceback", "hang", "wrong_exit", "leaks", "escapes") if r[k]]
                what += ["modified " + ",".join(r["modified"])] if r["modified"] else []
                print(f"{label}: [{r['group']}] {r['name']}: {r['command']} -> {r['code']} {' '.join(what)}")
                print("    " + r["err"].strip().replace("\n", "\n    ")[-300:])


if __name__ == "__main__":
    main(sys.argv[1:])
