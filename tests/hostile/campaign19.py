"""Issue 19's classes of the standing campaign: people's files as outputs, report
structure, hostile text on every CLI path, cache forgery, special files the tool opens
by itself, keys with whitespace, signals on the CLI and concurrent writers.

Like ``campaign.py`` it imports nothing from ``ragtriage`` at module level and only the
public CLI (``cli.main``) and ``TestSetDocument`` from the tree under test, so the same
inputs reach the old code and the new. Each row says what held: a traceback, a hang, a
wrong exit code, an input or a person's file modified or a save lost, a leaked secret,
a wrong number (a verdict or a gate that a cache changed), markup or a terminal escape
that acted (a report whose structure changed, a raw ESC on the terminal).
"""

from __future__ import annotations

import csv
import io
import json
import marshal
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from .campaign import ESCAPES, HANG, KEY, TESTSETS, Campaign, _digest, call

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "cita [<img/src=https://e.vil/x.png>]",
    "`code` ``more``",
    "# all checks passed",
    "\n## ✅ all checks passed\n",
    "[click](https://e.vil)",
    "\x1b]0;owned\x07\x1b]52;c;ZXZpbA==\x07",
    "\x1b[2J\x9b31m\u202eevil",
    "\x01\x08\x0b\x1f\ufffe",
    "=HYPERLINK(\"https://e.vil\")",
    "@SUM(A1)",
    "+1",
    "-1+2",
]
IDS = ["a|b", "x`y", "<i>", "]]>", "e\x1b[2J", "=1+1"]


def _ts_text(texts: list[str], ids: list[str], gates: str = "") -> str:
    """A test set whose free text (question, topic, notes, must-contain) is ``texts``."""
    lines = ["version: 1", "corpus: shop-es.chunks.jsonl", "language: es", "k: 3"]
    if gates:
        lines.append(gates)
    lines.append("cases:")
    for i, t in enumerate(texts):
        q = json.dumps(t)
        lines += [f"  - id: {json.dumps(ids[i % len(ids)] + f'-{i}')}", f"    question: {q}", f"    topic: {q}",
                  f"    notes: {q}", "    expected: [entrega-1]", f"    must_contain: [{q}]"]  # fmt: skip
    return "\n".join(lines) + "\n"


def _structure_broken(md: str) -> bool:
    """Markup that acted: HTML, a link or image, or a heading, list or quote that the
    renderer did not write (its own headings start with ## / ### / ####, fixed texts)."""
    from markdown_it import MarkdownIt

    toks = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(md)
    for t in toks:
        if t.type in ("html_block",) or (t.type == "heading_open" and t.tag == "h1"):
            return True
        for c in t.children or ():
            if c.type in ("html_inline", "link_open", "image", "s_open", "em_open"):
                return True
    heads = [toks[i + 1].content for i, t in enumerate(toks) if t.type == "heading_open"]
    return any("all checks passed" in h for h in heads)


def _junit_broken(xml: str, ids: list[str]) -> bool:
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return True
    names = [
        tc.get("name") for tc in root.iter("testcase") if not (tc.get("classname") or "").endswith(".gate")
    ]
    return len(names) != len(ids)


def _csv_broken(text: str) -> bool:
    return any(c[:1] in ("=", "+", "-", "@") for row in list(csv.reader(io.StringIO(text)))[1:] for c in row)


def _record(c: Campaign, group: str, name: str, argv, allowed, d: Path, env=None, markup=None, wrong=None):
    row = c.record(group, name, argv, allowed, d, env)
    row["markup"] = bool(markup and markup())
    row["wrong"] = bool(wrong and wrong())
    return row


# ------------------------------------------------------------------ the classes


def persons_files(c: Campaign) -> None:
    """Every output option aimed at a grades file, a sidecar, a recovery file, another
    test set, a corpus, a run being triaged, an earlier run: refused, untouched."""
    targets = ["ts.grades.jsonl", "good.run.triage.json", ".ragtriage-recovery-ts.yaml.json", "other.yaml",
               "shop-es.chunks.jsonl", "good.run.jsonl", "prev.run.jsonl"]  # fmt: skip
    commands = [
        ["validate", "{ts}", "--json", "{o}"], ["run", "{ts}", "--quiet", "--out", "{o}"],
        ["check", "{ts}", "--run", "{run}", "--junit", "{o}"], ["check", "{ts}", "--run", "{run}", "--markdown", "{o}"],
        ["check", "{ts}", "--run", "{run}", "--json", "{o}"], ["check", "{ts}", "--out", "{o}"],
        ["stale", "{ts}", "--json", "{o}"], ["sweep", "{ts}", "--k", "1-2", "--json", "{o}"],
        ["judge", "{ts}", "--run", "{run}", "--json", "{o}"], ["diff", "{run}", "{prev}", "--markdown", "{o}"],
        ["diff", "{run}", "{prev}", "--json", "{o}"], ["export", "{ts}", "--format", "csv", "-o", "{o}"],
    ]  # fmt: skip
    for target in targets:
        for argv in commands:
            d = c.folder()
            call(["run", "ts.yaml", "--quiet", "--out", "good.run.jsonl"], d, {})
            call(["run", "ts.yaml", "--quiet", "--out", "prev.run.jsonl"], d, {})
            shutil.copy(TESTSETS / "shop-de.yaml", d / "other.yaml")
            (d / "good.run.triage.json").write_text(
                '{"version": 1, "run": "good.run.jsonl", "cases": {"a": {"note": "n"}}}'
            )
            (d / "ts.grades.jsonl").write_text(
                '{"case": "a", "answer_sha": "0123456789ab", "supported": true}\n'
            )
            (d / ".ragtriage-recovery-ts.yaml.json").write_text(
                '{"version": 1, "testset": "ts.yaml", "ops": []}'
            )
            paths = {
                "ts": d / "ts.yaml",
                "run": d / "good.run.jsonl",
                "prev": d / "prev.run.jsonl",
                "o": d / target,
            }
            filled = [a.format(**{k: str(v) for k, v in paths.items()}) for a in argv]
            c.record("people's files as outputs", f"{argv[0]} {argv[-2]} over {target}", filled, {2}, d)


def report_structure(c: Campaign) -> None:
    d = c.folder()
    (d / "ts.yaml").write_text(_ts_text(HOSTILE, IDS), encoding="utf-8")
    md, xml = d / "out" / "r.md", d / "out" / "r.xml"
    _record(c, "report structure", "check --markdown", ["check", str(d / "ts.yaml"), "--run-anyway", "--markdown", str(md)], {1}, d,
            markup=lambda: not md.exists() or _structure_broken(md.read_text("utf-8")))  # fmt: skip
    _record(c, "report structure", "check --junit, id and file name", ["check", str(d / "ts.yaml"), "--run-anyway", "--junit", str(xml)],
            {1}, d, markup=lambda: not xml.exists() or _junit_broken(xml.read_text("utf-8"), HOSTILE))  # fmt: skip
    d = c.folder()
    bad = d / "t\x1b[31m\x01.yaml"
    bad.write_text(_ts_text(HOSTILE[:3], IDS), encoding="utf-8")
    xml = d / "out" / "j.xml"
    _record(c, "report structure", "check --junit, control chars in the file name", ["check", str(bad), "--run-anyway", "--junit",
            str(xml)], {1}, d, markup=lambda: not xml.exists() or _junit_broken(xml.read_text("utf-8"), HOSTILE[:3]))  # fmt: skip
    d = c.folder()
    meta = {"type": "meta", "testset": "ts.yaml", "system": "builtin", "k": 3}
    for name, reason in (("a", lambda r: "supported-correct"), ("b", lambda r: r)):
        rows = [meta] + [{"type": "case", "id": f"c{i}", "reason": reason(r)} for i, r in enumerate(HOSTILE)]
        (d / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
    md = d / "out" / "d.md"
    _record(c, "report structure", "diff --markdown, reasons from the run files",
            ["diff", str(d / "a.jsonl"), str(d / "b.jsonl"), "--markdown", str(md)], {0}, d,
            markup=lambda: not md.exists() or _structure_broken(md.read_text("utf-8")))  # fmt: skip
    d = c.folder()
    (d / "ts.yaml").write_text(_ts_text(HOSTILE, IDS), encoding="utf-8")
    out = d / "out" / "e.csv"
    _record(c, "report structure", "export csv, formulas", ["export", str(d / "ts.yaml"), "--format", "csv", "-o",
            str(out)], {0}, d, markup=lambda: not out.exists() or _csv_broken(out.read_text("utf-8")))  # fmt: skip


def escapes_everywhere(c: Campaign) -> None:
    """Text from files on every CLI path: a file name, run-file reasons, ids, a system."""
    d = c.folder()
    name = "t\x1b]0;owned\x07\u202e.yaml"
    shutil.copy(d / "ts.yaml", d / name)
    for argv in (["run", name, "--quiet", "--out", "out/r.jsonl"], ["validate", name], ["check", name],
                 ["stale", name], ["sweep", name, "--k", "1-2"], ["export", name, "--format", "jsonl", "-o", "out/e.jsonl"]):  # fmt: skip
        c.record("escapes on the CLI", f"{argv[0]}: a test set named with ESC and U+202E", argv, {0, 1}, d)
    d = c.folder()
    meta = {"type": "meta", "testset": "ts\x1b[2J.yaml", "system": "sys\x1b]0;x\x07", "k": 3}
    for n, reason in (("a", "supported-correct"), ("b", "why\x1b[31m\u202e\x9b2J")):
        rows = [meta, {"type": "case", "id": "c\x1b[1m", "reason": reason}]
        (d / f"{n}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
    c.record(
        "escapes on the CLI",
        "diff: reasons, ids, system with ESC",
        ["diff", "a.jsonl", "b.jsonl"],
        {0, 1, 2},
        d,
    )
    c.record(
        "escapes on the CLI",
        "check --run: a run naming ESC",
        ["check", "ts.yaml", "--run", "b.jsonl"],
        {0, 1, 2},
        d,
    )
    c.record("escapes on the CLI", "usage error echoing ESC", ["run", "ts.yaml", "--bogus\x1b[2J"], {2}, d)


def _forge_entry(cache: Path, expected: bool) -> None:
    for entry in cache.glob("ts-*.bin"):
        data = entry.read_bytes()
        blob = data[36:] if data.startswith(b"RTC5") else data
        fmt, where, bom, crlf, raw_settings, style, regions = marshal.loads(blob)
        raw_settings.pop("gates", None)
        forged = [r if isinstance(r, str) or r[0] != "cases" or not expected else
                  (*r[:5], tuple((t, k, {**dd, "expected": ("forged-1",)}, ln) for t, k, dd, ln in r[5]))
                  for r in regions]  # fmt: skip
        new = marshal.dumps((fmt, where, bom, crlf, raw_settings, style, forged))
        entry.write_bytes(new if not data.startswith(b"RTC5") else b"RTC5" + b"\0" * 32 + new)


def cache_forgery(c: Campaign) -> None:
    from .server import HostileServer, answer, chat

    for how in ("check", "run"):
        d = c.folder()
        ts = d / "ts.yaml"
        ts.write_text(ts.read_text("utf-8").replace("  hit@3: 0.85 ", "  hit@3: 0.99 ", 1), encoding="utf-8")
        cache = d / "cache"
        env = {"RAGTRIAGE_CACHE_DIR": str(cache), "RAGTRIAGE_CACHE_KEY": str(d.parent / f"key{c.n}")}
        call(["validate", "ts.yaml"], d, env)  # writes the entry
        _forge_entry(cache, expected=how == "run")
        if how == "check":
            c.record(
                "cache forgery", "a forged reopen entry drops the gates", ["check", "ts.yaml"], {1}, d, env
            )
        else:
            _record(c, "cache forgery", "a forged reopen entry changes expected", ["run", "ts.yaml", "--quiet",
                    "--out", "out/r.jsonl"], {0}, d, env, wrong=lambda d=d: "forged-1" in (d / "out" / "r.jsonl").read_text())  # fmt: skip

    def judge(verdict):
        def respond(req):
            if req.json.get("model") == "j":
                return [answer(chat(json.dumps({"supported": verdict, "correct": verdict, "reason": "r"})))]
            return [answer(chat("La entrega cuesta 3 €. [entrega-1]"))]

        return respond

    d = c.folder()
    env = {"RAGTRIAGE_CACHE_DIR": str(d / "cache"), "RAGTRIAGE_CACHE_KEY": str(d.parent / f"key{c.n}")}
    outs = []
    for i, verdict in enumerate((True, False)):
        with HostileServer(judge(verdict)) as srv:
            out = d / "out" / f"r{i}.jsonl"
            outs.append(out)
            argv = ["run", "ts.yaml", "--quiet", "--system", f"openai:{srv.url('/v1')}#m", "--judge",
                    f"openai:{srv.url('/v1')}#j", "--retries", "0", "--out", str(out)]  # fmt: skip
            if i:
                _record(c, "cache forgery", "judge verdicts of another endpoint, same #MODEL", argv, {0}, d, env,
                        wrong=lambda: '"judge":{"supported":true' in outs[1].read_text())  # fmt: skip
            else:
                call(argv, d, env)


def special_files(c: Campaign) -> None:
    """Files the tool opens by itself, as a FIFO, a link to /dev/zero, a link loop."""

    def make(path: Path, kind: str) -> None:
        if kind == "FIFO":
            os.mkfifo(path)
        elif kind == "/dev/zero":
            path.symlink_to("/dev/zero")
        else:
            path.symlink_to(path.name)

    for kind in ("FIFO", "/dev/zero", "loop"):
        for what, name, argv in (
            ("triage sidecar", "good.run.triage.json", ["triage", "good.run.jsonl"]),
            ("recovery file", ".ragtriage-recovery-ts.yaml.json", ["edit", "ts.yaml"]),
            ("grades file", "ts.grades.jsonl", ["judge", "ts.yaml", "--run", "judged.jsonl"]),
        ):
            d = c.folder()
            call(["run", "ts.yaml", "--quiet", "--out", "good.run.jsonl"], d, {})
            lines = (d / "good.run.jsonl").read_text().splitlines()
            lines[1] = (
                lines[1][:-1] + ',"judge":{"supported":true,"correct":true,"reason":"x","cached":false}}'
            )
            (d / "judged.jsonl").write_text("\n".join(lines) + "\n")
            make(d / name, kind)
            row = c.record("special files", f"{what} as {kind}", argv, {2}, d)
            if row["code"] == 2 and name not in row["err"]:
                row["wrong_exit"] = True  # refused for another reason (no terminal): the file never checked
        d = c.folder()
        cache = d / "cache"
        cache.mkdir()
        make(cache / "judge.jsonl", kind)
        env = {"RAGTRIAGE_CACHE_DIR": str(cache)}
        c.record("special files", f"judge cache as {kind}", ["run", "ts.yaml", "--quiet", "--judge",
                 "openai:http://127.0.0.1:9/v1#j", "--retries", "0", "--timeout", "1", "--out", "out/r.jsonl"], {0, 1}, d, env)  # fmt: skip


def padded_keys(c: Campaign) -> None:
    from .server import HostileServer, answer, chat

    def echo(req):
        quoted = f"auth={req.headers.get('authorization')}"
        if req.json.get("model") == "j":
            return [answer(chat(json.dumps({"supported": True, "correct": True, "reason": quoted})))]
        return [answer(chat(f"Vale. {quoted}"))]

    for pad in ("\n", " ", "\t", "\r\n"):
        d = c.folder()
        with HostileServer(echo) as srv:
            env = {"RT_KEY": KEY + pad, "RAGTRIAGE_CACHE_DIR": str(d / "jcache"),
                   "GITHUB_STEP_SUMMARY": str(d / "out" / "step.md")}  # fmt: skip
            argv = ["check", "ts.yaml", "--system", f"openai:{srv.url('/v1')}#m", "--api-key-env", "RT_KEY", "--judge",
                    f"openai:{srv.url('/v1')}#j", "--judge-key-env", "RT_KEY", "--retries", "0", "--out", "out/r.jsonl",
                    "--junit", "out/j.xml", "--markdown", "out/step.md", "--json", "out/c.json"]  # fmt: skip
            c.record("keys with whitespace", f"key + {pad!r}", argv, {0, 1}, d, env)


# ------------------------------------------------------------------ processes


def _proc(src: Path, argv: list[str], cwd: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(src), COLUMNS="120")
    return subprocess.Popen([sys.executable, "-m", "ragtriage", *argv], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _opened(p: subprocess.Popen, path: Path, limit: float = 20.0) -> None:
    """Wait until the process has ``path`` open: the command itself is running, so a signal
    lands in ragtriage's code, not in the interpreter's own start-up (whose Ctrl-C
    traceback no program can prevent)."""
    end = time.monotonic() + limit
    fds = Path(f"/proc/{p.pid}/fd")
    while time.monotonic() < end and p.poll() is None:
        try:
            if any(os.readlink(f) == str(path) for f in fds.iterdir()):
                return
        except OSError:
            pass
        time.sleep(0.001)


def signals(c: Campaign, src: Path) -> None:
    """SIGINT and SIGTERM at several moments of a command that writes a person's file."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        for delay in (0.0, 0.2, 0.6):  # after the command opened its input (not mid interpreter start-up)
            for what, argv in (
                ("stale --fix", ["stale", "ts.yaml", "--fix", "--corpus", "new.jsonl"]),
                ("import", ["import", "in.jsonl", "--format", "jsonl", "-o", "new.yaml"]),
                ("run --out", ["run", "ts.yaml", "--quiet", "--out", "out/r.jsonl"]),
            ):
                d = c.folder()
                (d / "new.jsonl").write_text(
                    (d / "shop-es.chunks.jsonl").read_text("utf-8").replace('"entrega-1"', '"envio-1"')
                )
                (d / "in.jsonl").write_text(
                    "".join(json.dumps({"id": f"c{i}", "question": "q"}) + "\n" for i in range(3000))
                )
                before = (d / "ts.yaml").read_bytes()
                t0 = time.monotonic()
                p = _proc(src, argv, d)
                _opened(p, d / ("in.jsonl" if what == "import" else "ts.yaml"))
                time.sleep(delay)
                p.send_signal(sig)
                try:
                    out, err = p.communicate(timeout=HANG)
                    hang = False
                except subprocess.TimeoutExpired:
                    p.kill()
                    out, err = p.communicate()
                    hang = True
                ts_now = (d / "ts.yaml").read_bytes()
                broken = (
                    ts_now != before and b"envio-1" not in ts_now
                )  # neither the old file nor the fixed one
                new = d / "new.yaml"
                half = new.exists() and b"cases:" not in new.read_bytes()
                tmp_left = [x.name for x in d.glob(".*.tmp")]
                c.rows.append({
                    "group": "signals on the CLI", "command": argv[0], "name": f"{what}: {sig.name} after {delay:g} s",
                    "code": p.returncode, "traceback": "Traceback" in err, "hang": hang,
                    "wrong_exit": not hang and p.returncode not in (0, 1, 2, 130, -sig, 128 + sig),
                    "modified": (["ts.yaml"] if broken else []) + (["new.yaml half-written"] if half else []) + tmp_left,
                    "leaks": 0, "escapes": 0, "markup": False, "wrong": False, "err": err[-300:],
                    "took": time.monotonic() - t0,
                })  # fmt: skip


def writers(c: Campaign, src: Path, seconds: float = 3.0) -> None:
    from .writers import race

    d = c.folder()
    r = race(d / "ts.yaml", seconds, 2, src)
    c.rows.append({
        "group": "concurrent writers", "command": "save", "name": f"2 processes, {seconds:g} s: {r['saves']} saves",
        "code": 0, "traceback": bool(r["errors"]), "hang": False, "wrong_exit": False,
        "modified": [f"{r['lost']} saves lost"] if r["lost"] else [], "leaks": 0, "escapes": 0, "markup": False,
        "wrong": False, "err": json.dumps(r), "lost": r["lost"], "saves": r["saves"],
    })  # fmt: skip


def campaign19(base: Path, src: Path) -> list[dict]:
    c = Campaign(base)
    persons_files(c)
    report_structure(c)
    escapes_everywhere(c)
    cache_forgery(c)
    special_files(c)
    padded_keys(c)
    signals(c, src)
    writers(c, src)
    for r in c.rows:
        r.setdefault("markup", False)
        r.setdefault("wrong", False)
        r["escapes"] = r["escapes"] or 0
    return c.rows


__all__ = ["campaign19", "ESCAPES", "_digest", "threading"]
