"""Before/after figures for the hostile-server work: every mode of
``test_http_hostile.MODES`` (plus a credential-echoing server) against ``http:``
and ``openai:``, run through the real command line of a given source tree.

    python -m tests.hostile.measure [SOURCE_ROOT]   # default: this checkout

Prints one row per mode and system: exit code, traceback (yes/no), cases with
another case's answer, canaries leaked (files + streams), peak memory (MB).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from tests.conftest import ROOT, TESTSETS

from .server import HostileServer
from .test_http_hostile import MODES
from .test_secrets import KEY, PASSWORD, _echo

RSS = (
    "import atexit, resource, runpy, sys;"
    "atexit.register(lambda: sys.__stderr__.write('MAXRSS %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss));"
    "sys.argv = ['ragtriage'] + sys.argv[1:]; runpy.run_module('ragtriage', run_name='__main__', alter_sys=True)"
)


def one(src: Path, respond, system_of, folder: Path, env_extra: dict) -> dict:
    for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
        shutil.copy(TESTSETS / name, folder / name)
    with HostileServer(respond) as srv:
        system = system_of(srv)
        env = dict(os.environ, PYTHONPATH=str(src), RT_KEY=KEY, **env_extra)
        try:
            p = subprocess.run(
                [sys.executable, "-c", RSS, "run", str(folder / "shop-es.yaml"), "--system", system,
                 "--api-key-env", "RT_KEY", "--out", str(folder / "run.jsonl"), "--json", str(folder / "s.json"),
                 "--retries", "1", "--timeout", "1", "--concurrency", "3"],
                capture_output=True, text=True, timeout=120, env=env, cwd=folder,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return {"exit": "hang", "traceback": False, "wrong": 0, "leaks": 0, "rss": 0}
    wrong = 0
    run = folder / "run.jsonl"
    if run.exists():
        for line in run.read_bytes().splitlines():
            try:
                c = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if (
                c.get("type") == "case"
                and (c.get("answer") or "").startswith("A:")
                and c["answer"] != "A:" + c["question"]
            ):
                wrong += 1
    canaries = [KEY, PASSWORD]
    texts = [p.stdout, p.stderr] + [
        f.read_bytes().decode("utf-8", "replace") for f in folder.iterdir() if f.is_file()
    ]
    leaks = sum(t.count(c) for t in texts for c in canaries)
    rss = next((int(x.split()[1]) // 1024 for x in p.stderr.splitlines() if x.startswith("MAXRSS")), 0)
    return {
        "exit": p.returncode,
        "traceback": "Traceback" in p.stderr,
        "wrong": wrong,
        "leaks": leaks,
        "rss": rss,
    }


def main(src: Path) -> None:
    systems = {
        "http:": lambda s: s.url(),
        "openai:": lambda s: f"openai:{s.url('/v1')}#m",
    }
    modes = {name: respond for name, (respond, _) in MODES.items()}
    modes["echoes the credentials"] = _echo
    print("| mode | system | exit | traceback | wrong answers | secrets leaked | peak MB |")
    print("|---|---|---|---|---|---|---|")
    for name, respond in modes.items():
        for sname, system_of in systems.items():
            with tempfile.TemporaryDirectory() as d:
                url_of = system_of
                if sname == "http:" and name == "echoes the credentials":
                    url_of = lambda s: s.url(userinfo=f"alice:{PASSWORD}")  # noqa: E731
                r = one(src, respond, url_of, Path(d), {"GITHUB_STEP_SUMMARY": str(Path(d) / "step.md")})
            print(
                f"| {name} | {sname} | {r['exit']} | {'yes' if r['traceback'] else 'no'} | {r['wrong']} | "
                f"{r['leaks']} | {r['rss']} |",
                flush=True,
            )


def main_python(src: Path) -> None:
    """The ``python:`` systems of ``test_python_system``: exit, traceback, errors recorded, peak MB."""
    from .test_python_system import FAILING, MODULE

    print("| python: system | exit | traceback | cases recorded as errors | peak MB |")
    print("|---|---|---|---|---|")
    for attr in [a for a, _ in FAILING] + ["hangs", "blocks_async"]:
        with tempfile.TemporaryDirectory() as d:
            folder = Path(d)
            for name in ("shop-es.yaml", "shop-es.chunks.jsonl"):
                shutil.copy(TESTSETS / name, folder / name)
            (folder / "hostile_sys.py").write_text(MODULE)
            try:
                p = subprocess.run(
                    [sys.executable, "-c", RSS, "run", "shop-es.yaml", "--system", f"python:hostile_sys:{attr}",
                     "--out", "run.jsonl", "--retries", "0", "--timeout", "0.5"],
                    capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(src)), cwd=folder,
                )  # fmt: skip
            except subprocess.TimeoutExpired:
                print(f"| {attr} | hangs (killed after 60 s) | — | — | — |", flush=True)
                continue
            run = folder / "run.jsonl"
            errors = run.read_bytes().count(b'"error":"') if run.exists() else 0
            rss = next(
                (int(x.split()[1]) // 1024 for x in p.stderr.splitlines() if x.startswith("MAXRSS")), 0
            )
            tb = "yes" if "Traceback" in p.stderr else "no"
            print(f"| {attr} | {p.returncode} | {tb} | {errors} of 8 | {rss} |", flush=True)


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    main(source)
    main_python(source)
