"""`check --baseline`, `--on lower` and `--html`; `run` with intervals, `--by` and
`--repeat`: the paired comparison and the intervals wired into the commands."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from ragtriage.core.text import fingerprint

N = 200


def big_set(dir: Path, docs: int = 200, gates: str = "") -> Path:
    """200 cases, each with its own chunk; ``docs`` source documents shared in turn."""
    dir.mkdir(parents=True, exist_ok=True)
    chunks = [{"id": f"c{i}", "text": f"La respuesta es x{i}.", "doc": f"d{i % docs}.md"} for i in range(N)]
    (dir / "big.chunks.jsonl").write_text("".join(json.dumps(c) + "\n" for c in chunks), encoding="utf-8")
    cases = "".join(
        f"  - id: q{i}\n    question: pregunta {i}\n    expected: [c{i}]\n    must_contain: [x{i}]\n"
        f"    tags: [{'par' if i % 2 == 0 else 'impar'}]\n"
        for i in range(N)
    )
    labels = "".join(
        f"  {c['id']}:\n    sha: {fingerprint(c['text'])}\n    text: {json.dumps(c['text'])}\n"
        for c in chunks
    )
    ts = dir / "big.yaml"
    ts.write_text(
        f"version: 1\ncorpus: big.chunks.jsonl\nlanguage: es\nk: 3\n{gates}cases:\n{cases}labels:\n{labels}",
        encoding="utf-8",
    )
    return ts


def results(dir: Path, name: str, passing: set[int]) -> Path:
    lines = []
    for i in range(N):
        answer = f"La respuesta es x{i}. [c{i}]" if i in passing else "No lo sé."
        lines.append(orjson.dumps({"id": f"q{i}", "ranking": [f"c{i}"], "answer": answer}).decode() + "\n")
    p = dir / name
    p.write_text("".join(lines), encoding="utf-8")
    return p


def runs(cli, tmp_path, worse: int, better: int, docs: int = 200, gates: str = ""):
    ts = big_set(tmp_path, docs, gates)
    base_pass = set(range(159))
    cand_pass = (base_pass - set(range(worse))) | set(range(159, 159 + better))
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    for out, passing in ((base, base_pass), (cand, cand_pass)):
        res = results(tmp_path, out.stem + ".results.jsonl", passing)
        r = cli("run", ts, "--system", f"results:{res}", "--out", out, "--quiet")
        assert r.returncode == 0, r.stderr
    return ts, base, cand


def test_check_baseline_fails_on_a_real_regression_only(cli, tmp_path):
    ts, base, cand = runs(cli, tmp_path, worse=9, better=2)
    js = tmp_path / "c.json"
    r = cli("check", ts, "--run", cand, "--baseline", base, "--json", js, "--junit", tmp_path / "j.xml")
    assert r.returncode == 1, r.stdout
    assert "verdict: a real regression — pass −3.5 pp [−7.1, −0.1], one-sided p 0.019 < α 0.05" in r.stdout
    assert "check FAILED: a real regression against the baseline" in r.stdout
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["passed"] is False and data["comparison"]["verdict"] == "a real regression"
    assert 'name="no real regression"' in (tmp_path / "j.xml").read_text(encoding="utf-8")
    # against itself: no flip at all; with a margin of 3 points that is "no regression beyond δ"
    r = cli("check", ts, "--run", base, "--baseline", base, "--margin", "0.03")
    assert r.returncode == 0, r.stdout
    assert "verdict: no regression beyond δ = 3.0 pp" in r.stdout and "A/A" in r.stdout


def test_check_baseline_compares_the_gated_metrics_with_holm(cli, tmp_path):
    ts, base, cand = runs(cli, tmp_path, worse=9, better=2, gates="gates:\n  accuracy: 0.5\n  hit@3: 0.5\n")
    r = cli("check", ts, "--run", cand, "--baseline", base)
    assert "accuracy" in r.stdout and "hit@3" in r.stdout and "Holm across 2 measures" in r.stdout
    assert r.returncode == 1  # accuracy: 9 ↓ / 2 ↑, p 0.019 × 2 < 0.05; hit@3 did not move


def test_clustered_flips_are_not_a_regression(cli, tmp_path):
    """The nine lost cases all come from one document: one piece of evidence, not nine."""
    ts, base, cand = runs(cli, tmp_path, worse=9, better=2, docs=20)  # d0 holds q0, q20, …: not the first 9
    r = cli("check", ts, "--run", cand, "--baseline", base)
    assert "20 clusters" in r.stdout
    r = cli("check", ts, "--run", cand, "--baseline", base, "--cluster", "none")
    assert r.returncode == 1


def test_on_lower_holds_the_bar_to_the_lower_bound(cli, tmp_path):
    ts, base, _ = runs(cli, tmp_path, worse=0, better=0)
    r = cli("check", ts, "--run", base, "--min", "accuracy=0.75")  # 159/200 = 0.795
    assert r.returncode == 0, r.stdout
    r = cli("check", ts, "--run", base, "--min", "accuracy=0.75", "--on", "lower")  # Wilson lo 0.734
    assert r.returncode == 1 and "on the lower bound" in r.stdout and "[0.734, 0.845]" in r.stdout


def test_check_html_writes_the_report(cli, tmp_path):
    ts, base, cand = runs(cli, tmp_path, worse=9, better=2)
    out = tmp_path / "r.html"
    r = cli("check", ts, "--run", cand, "--baseline", base, "--html", out)
    assert r.returncode == 1
    html = out.read_text(encoding="utf-8")
    assert (
        "verdict: a real regression" in html and "The gate" in html and html.count("<article") == 48
    )  # 200 − (159 − 9 + 2)


def test_run_prints_intervals_slices_and_repeats(cli, tmp_path):
    ts = big_set(tmp_path, docs=20)
    res = results(tmp_path, "r.jsonl", set(range(159)))
    out = tmp_path / "run.jsonl"
    r = cli("run", ts, "--system", f"results:{res}", "--out", out, "--quiet", "--by", "tag", "--repeat", "2")
    assert r.returncode == 0, r.stderr
    assert "95 % interval" in r.stdout and "20 clusters: 200 cases share 20 documents" in r.stdout
    assert "by tag" in r.stdout and "impar" in r.stdout and "par " in r.stdout
    assert "repeats: 2 answers per case · pass share 0.795 · 0 flaky case(s)" in r.stdout
    assert "noise floor (A/A, answers 1 against 2): 0 of 200 cases flip" in r.stdout
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    cases = [x for x in lines if x["type"] == "case"]
    assert len(cases) == N and len(cases[0]["repeats"]) == 1 and cases[0]["pass_share"] == 1.0
    assert lines[-1]["repeats"] == {"n": 2, "flaky": 0, "pass_share": 0.795}


def test_repeat_refuses_resume_and_nonsense(cli, tmp_path):
    ts = big_set(tmp_path)
    r = cli("run", ts, "--repeat", "0")
    assert r.returncode == 2 and "--repeat" in r.stderr
    r = cli("run", ts, "--repeat", "2", "--resume", "--out", tmp_path / "x.jsonl")
    assert r.returncode == 2 and "cannot resume a repeated run" in r.stderr


def test_flaky_cases_are_found_and_compared_within_the_case(cli, tmp_path, monkeypatch):
    """A python: system that answers one case right every other time."""
    ts = big_set(tmp_path)
    mod = tmp_path / "flaky_sys.py"
    mod.write_text(
        "import collections\n_n = collections.Counter()\n"
        "def answer(question, k):\n"
        "    i = int(question.split()[-1])\n"
        "    _n[i] += 1\n"
        "    ok = i < 150 or (i < 160 and _n[i] % 2 == 0)\n"
        "    return {'ranking': [f'c{i}'], 'answer': f'La respuesta es x{i}. [c{i}]' if ok else 'No lo sé.'}\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run.jsonl"
    # --executor thread: its flakiness is module state that must last across the repeats (the
    # default worker process is started afresh for each run, and each repeat is one)
    r = cli("run", ts, "--system", "python:flaky_sys:answer", "--out", out, "--quiet", "--repeat", "4",
            "--concurrency", "1", "--executor", "thread")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "10 flaky case(s)" in r.stdout
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines() if '"case"' in x]
    assert {rec["id"] for rec in recs if rec["flaky"]} == {f"q{i}" for i in range(150, 160)}
    assert all(rec["pass_share"] == 0.5 for rec in recs if rec["flaky"])
