"""`ragtriage check` and every other command at 10k, 50k and 100k cases, beside `run`.

    python benchmarks/bench_check.py                      # 10,000, 50,000 and 100,000 cases
    python benchmarks/bench_check.py --sizes 10000 20000  # other sizes
    python benchmarks/bench_check.py --only check         # only the commands whose name has "check"
    python benchmarks/bench_check.py --only JUnit --only sweep --only diff   # several

For each size one folder is generated: a test set with its labels recorded (fresh,
so the gate's stale check passes), its corpus and a system-results file with
rankings 10 deep (``--depth``). Every command then runs as a user runs it, in a
subprocess (``python -m ragtriage …``: interpreter start, imports, test-set open
and exit included), after one ``validate`` has written the test set's reopen
cache. Each figure is the median of ``--repeat`` runs (default 3) of wall and
CPU seconds (user + system of the child).

The peer is ``run`` over the same data in the same minutes: each line prints a
command's CPU time and its ratio to ``run``'s, and the last table the CPU time
per 10,000 cases at every size, so a step that is quadratic in the number of
cases shows as a ratio that grows with the size. Targets (issue 21):
``check --run`` with JUnit and markdown ≤ 1.5× ``run`` at every size, and that
ratio flat from 10k to 100k (the largest ratio at most 1.25× the smallest).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_run import write_files  # noqa: E402


def commands(d: Path) -> dict[str, list[str]]:
    """Every command over the folder's data (the run files made by ``run`` first)."""
    ts, res = str(d / "bench.yaml"), "results:" + str(d / "answers.jsonl")
    run, run2 = str(d / "run.jsonl"), str(d / "run2.jsonl")
    out = d / "out"  # emptied before every command: no option is needed to replace a file
    return {
        "run": ["run", ts, "--system", res, "--quiet", "--out", str(out / "run.jsonl")],
        "check --run": ["check", ts, "--run", run],
        "check --run, JUnit + markdown + JSON": [
            "check",
            ts,
            "--run",
            run,
            "--junit",
            str(out / "r.xml"),
            "--markdown",
            str(out / "r.md"),
            "--json",
            str(out / "r.json"),
        ],
        "check --system results:, JUnit + markdown": [
            "check",
            ts,
            "--system",
            res,
            "--out",
            str(out / "check-run.jsonl"),
            "--junit",
            str(out / "c.xml"),
            "--markdown",
            str(out / "c.md"),
        ],
        "check --run 4 shards": [
            "check",
            ts,
            *[a for i in range(4) for a in ("--run", str(d / f"s{i}.jsonl"))],
        ],
        "merge 4 shards": ["merge", *[str(d / f"s{i}.jsonl") for i in range(4)], "-o", str(out / "m.jsonl")],
        "validate": ["validate", ts],
        "stale": ["stale", ts],
        "sweep --k 1-5": ["sweep", ts, "--system", res, "--k", "1-5"],
        "diff, markdown + JSON": [
            "diff",
            run,
            run2,
            "--markdown",
            str(out / "d.md"),
            "--json",
            str(out / "d.json"),
        ],
        "export jsonl": ["export", ts, "--format", "jsonl", "-o", str(out / "e.jsonl")],
        "export csv": ["export", ts, "--format", "csv", "-o", str(out / "e.csv")],
        "export trec --run": ["export", ts, "--format", "trec", "--run", run, "-o", str(out / "e.qrels")],
        "import jsonl": ["import", str(d / "e.jsonl"), "--format", "jsonl", "-o", str(out / "i.yaml")],
    }


def timed(argv: list[str], env: dict, ok=(0, 1), empty: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child) of one ``python -m ragtriage`` run
    (the folder ``empty`` emptied first, untimed)."""
    import resource

    for f in empty.iterdir() if empty is not None else ():
        f.unlink()

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "ragtriage", *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in ok:
        raise SystemExit(f"`ragtriage {' '.join(argv)}` exited {p.returncode}:\n{p.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def prepare(d: Path, n: int, depth: int, env: dict) -> None:
    t = time.perf_counter()
    write_files(d, n, depth=depth, labels=True)
    (d / "out").mkdir()
    ts, res = str(d / "bench.yaml"), "results:" + str(d / "answers.jsonl")
    timed(["validate", ts], env)  # writes the reopen cache, as any first command would
    for name in ("run.jsonl", "run2.jsonl"):
        timed(["run", ts, "--system", res, "--quiet", "--out", str(d / name)], env)
    for i in range(4):
        timed(
            ["run", ts, "--system", res, "--quiet", "--shard", f"{i + 1}/4", "--out", str(d / f"s{i}.jsonl")],
            env,
        )
    timed(["export", ts, "--format", "jsonl", "-o", str(d / "e.jsonl")], env)
    print(f"{n:,} cases: data generated in {time.perf_counter() - t:.1f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--only", action="append", default=None, help="only commands whose name contains this (repeatable)"
    )
    a = ap.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    table: dict[str, dict[int, float]] = {}
    for n in a.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            env = dict(os.environ, PYTHONPATH=str(ROOT), RAGTRIAGE_CACHE_DIR=str(d / "cache"))
            prepare(d, n, a.depth, env)
            cmds = commands(d)
            names = [k for k in cmds if a.only is None or any(o in k for o in a.only)]
            if "run" not in names:
                names.insert(0, "run")
            # alternate the commands, so a change of the machine's load touches them all alike
            samples: dict[str, list[tuple[float, float]]] = {k: [] for k in names}
            for _ in range(a.repeat):
                for k in names:
                    samples[k].append(timed(cmds[k], env, empty=d / "out"))
            base = statistics.median(c for _, c in samples["run"])
            for k in names:
                wall = statistics.median(w for w, _ in samples[k])
                cpu = statistics.median(c for _, c in samples[k])
                table.setdefault(k, {})[n] = cpu / base
                print(
                    f"{n:>7,}  {k:<42} {wall:6.2f} s wall {cpu:6.2f} s CPU  {cpu / base:5.2f}× run",
                    flush=True,
                )
    print("\nCPU time as a multiple of `run` on the same data (a quadratic step grows along a row):")
    print(f"{'command':<42}" + "".join(f"{n:>10,}" for n in a.sizes) + "   largest/smallest")
    for k, row in table.items():
        vals = [row.get(n) for n in a.sizes]
        got = [v for v in vals if v is not None]
        spread = max(got) / min(got) if got and min(got) > 0 else float("nan")
        print(f"{k:<42}" + "".join(f"{v:>10.2f}" for v in vals) + f"   {spread:8.2f}")
    key = "check --run, JUnit + markdown + JSON"
    if key in table:
        row = [table[key][n] for n in a.sizes]
        spread = max(row) / min(row)
        met = max(row) <= 1.5 and spread <= 1.25
        print(
            f"\ntarget: {key} ≤ 1.5× run at every size and flat (largest/smallest ≤ 1.25): "
            f"{' / '.join(f'{v:.2f}×' for v in row)}, spread {spread:.2f} — {'met' if met else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
