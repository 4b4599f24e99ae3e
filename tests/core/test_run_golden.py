"""Every byte of a run stays the same: generated test sets in es, de, en and nl with
a results file that hits every scoring path (number words, separators, units,
citations, abstentions, verdicts, errors, missing and unknown cases, short and
duplicated rankings, ``expect: all``, unanswerable and unlabelled cases) are run
at several k and compared with golden files made before the speed work on ``run``.

The golden file keeps a short digest of every line (the lines themselves can be
regenerated with :func:`generate`). A change that means to change results
regenerates it: ``python tests/core/test_run_golden.py --write``."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "run-digests.json"
LANGS = {
    "es": dict(
        words=["cinco", "catorce", "veinte", "dos", "cien", "mil"],
        units=["€", "días", "días hábiles", "%", "por ciento", "semanas", "kg", "horas"],
        decline="No lo sé",
        thousands="1.000",
        decimal="1,5",
    ),
    "de": dict(
        words=["fünf", "zwölf", "einundzwanzig", "drei", "hundert"],
        units=["€", "Tage", "Werktage", "%", "Prozent", "Wochen", "kg", "Stunden"],
        decline="Ich weiß es nicht",
        thousands="2.500",
        decimal="2,75",
    ),
    "en": dict(
        words=["five", "twelve", "twenty-one", "three", "hundred"],
        units=["$", "days", "business days", "%", "percent", "weeks", "kg", "hours"],
        decline="I don't know",
        thousands="1,000",
        decimal="1.5",
    ),
    "nl": dict(
        words=["vijf", "twaalf", "eenentwintig", "drie", "honderd"],
        units=["€", "dagen", "werkdagen", "%", "procent", "weken", "kg", "uur"],
        decline="Ik weet het niet",
        thousands="3.000",
        decimal="0,5",
    ),
}
N_CASES = 160
N_CHUNKS = 120
KS = (1, 3, 5)


def _num(r: random.Random, lang: str) -> str:
    spec = LANGS[lang]
    roll = r.random()
    if roll < 0.15:
        return r.choice(spec["words"])
    if roll < 0.25:
        return spec["thousands"]
    if roll < 0.35:
        return spec["decimal"]
    return str(r.randrange(0, 60))


def _phrase(r: random.Random, lang: str) -> str:
    n = _num(r, lang)
    unit = r.choice(LANGS[lang]["units"] + [""])
    if unit in ("€", "$") and r.random() < 0.3:
        return f"{unit}{n}" if r.random() < 0.5 else f"{unit} {n}"
    return f"{n} {unit}".strip() if unit not in ("%",) or r.random() < 0.5 else f"{n}{unit}"


def generate(dir: Path, lang: str, seed: int = 7) -> tuple[Path, Path]:
    """A test set, its chunks and a results file in ``dir``; returns (test set, results)."""
    r = random.Random(f"{lang}-{seed}")
    dir.mkdir(parents=True, exist_ok=True)
    chunks = []
    for i in range(N_CHUNKS):
        cid = f"{lang}-chunk-{i}" if i % 9 else f"{lang}-trozo-ü{i}"
        text = " ".join(f"Satz {j}: {_phrase(r, lang)} ." for j in range(r.randrange(1, 4)))
        chunks.append({"id": cid, "text": text})
    with open(dir / "c.chunks.jsonl", "w", encoding="utf-8") as f:
        for c in chunks[:-10]:  # the last ten are known only from the test set's labels
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    ids = [c["id"] for c in chunks]
    lines = ["# generated\n", "version: 1\n", "corpus: c.chunks.jsonl\n", f"language: {lang}\n", "k: 3\n"]
    if lang == "nl":
        lines.append('decline: ["Geen idee", "Dat weet ik niet"]\n')
    lines.append("cases:\n")
    cases = []
    for i in range(N_CASES):
        cid = f"{lang}-case-{i}"
        kind = r.random()
        expected = [] if kind < 0.08 else r.sample(ids, r.choice((1, 1, 1, 2, 3)))
        unans = kind < 0.04
        case = {"id": cid, "expected": expected, "unanswerable": unans}
        lines.append(f"  - id: {cid}\n    question: pregunta {i}?\n")
        if r.random() < 0.7:
            lines.append(f"    topic: tema {i % 7}\n")
        if expected:
            lines.append(f"    expected: [{', '.join(expected)}]\n")
            if len(expected) > 1 and r.random() < 0.5:
                lines.append("    expect: all\n")
        if unans:
            lines.append("    unanswerable: true\n")
        if not unans:
            if r.random() < 0.3:
                case["answer"] = f"{_phrase(r, lang)} total"
                lines.append(f"    answer: \"{case['answer']}\"\n")
            elif r.random() < 0.8:
                case["must"] = _phrase(r, lang)
                lines.append(f"    must_contain: [\"{case['must']}\"]\n")
        cases.append(case)
    lines.append("labels:\n")
    for c in chunks[-10:]:
        lines.append(f"  {c['id']}:\n    text: {json.dumps(c['text'], ensure_ascii=False)}\n")
    ts = dir / "t.yaml"
    ts.write_text("".join(lines), encoding="utf-8")
    decline = "Geen idee" if lang == "nl" else LANGS[lang]["decline"]
    with open(dir / "results.jsonl", "w", encoding="utf-8") as f:
        for case in cases:
            if r.random() < 0.03:
                continue  # no line: the case becomes an error
            res: dict = {"id": case["id"]}
            ranking = [r.choice(ids) for _ in range(r.randrange(0, 8))]
            if case["expected"] and r.random() < 0.7:
                for g in case["expected"]:
                    if r.random() < 0.8:
                        ranking.insert(min(r.randrange(0, 5), len(ranking)), g)
            if ranking and r.random() < 0.2:
                ranking.append(ranking[0])  # a duplicate
            res["ranking"] = ranking
            if r.random() < 0.5:
                res["scores"] = [round(1 - j / 20, 3) for j in range(len(ranking))]
            if r.random() < 0.1 and ranking:
                res["prompt_ids"] = ranking[1:4]
            if r.random() < 0.2:
                res["tokens"] = r.randrange(10, 900)
            if r.random() < 0.2:
                res["latency_ms"] = round(r.random() * 100, 2)
            roll = r.random()
            cite_pool = ranking[:5] or ids[:3]
            if roll < 0.1:
                res["answer"] = r.choice(
                    [
                        f"{decline}.",
                        f"¿{decline.lower()}?",
                        f'"{decline.upper()}"',
                        "",
                        None,
                        f"  {decline} [x]",
                    ]
                )
            elif roll < 0.15:
                res["error"] = r.choice(["timeout", "HTTP 500: boom"])
            else:
                body = " ".join(_phrase(r, lang) for _ in range(r.randrange(0, 3)))
                if case.get("must") and r.random() < 0.5:
                    body += " " + case["must"]
                if case.get("answer") and r.random() < 0.3:
                    body = case["answer"]
                cites = r.sample(cite_pool, min(len(cite_pool), r.choice((0, 1, 1, 1, 2))))
                if r.random() < 0.1:
                    cites.append(r.choice(ids))  # maybe outside the prompt
                sep = r.choice([", ", "; ", "]["])
                res["answer"] = f"{body} [{sep.join(cites)}]." if cites else f"{body}."
            if r.random() < 0.1:
                res["supported"] = r.choice([True, False, None])
            if r.random() < 0.1:
                res["model"] = "m-1"
                res["trace"] = {"n": r.randrange(5)}
            f.write(json.dumps(res, ensure_ascii=False) + "\n")
        f.write(json.dumps({"id": f"{lang}-unknown", "ranking": [], "answer": "x"}) + "\n")
    return ts, dir / "results.jsonl"


def run_lines(tmp: Path, lang: str, k: int) -> list[bytes]:
    """The run file's case and summary lines (the meta line holds paths and the time),
    with the temporary folder's path replaced by ``TMP``."""
    from ragtriage.core.evaluate import evaluate

    ts, res = generate(tmp / lang, lang)
    out = tmp / f"{lang}-{k}.jsonl"
    evaluate(str(ts), f"results:{res}", k, out=out)
    lines = out.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[0])["type"] == "meta"
    where = json.dumps(str(tmp))[1:-1].encode()
    return [x.replace(where, b"TMP") for x in lines[1:]]


def digest(line: bytes) -> str:
    return hashlib.blake2b(line, digest_size=8).hexdigest()


def _check(tmp: Path, lang: str, k: int, golden: dict) -> None:
    lines = run_lines(tmp, lang, k)
    got = [digest(x) for x in lines]
    want = golden[f"{lang}-k{k}"]
    for i, (a, b) in enumerate(zip(got, want)):
        assert a == b, f"{lang} at k={k}: run-file line {i + 2} differs from the golden one:\n{lines[i]!r}"
    assert len(got) == len(want)


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_run_file_bytes_unchanged(tmp_path, lang):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for k in KS:
        _check(tmp_path, lang, k, golden)


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, str(ROOT))
    if "--write" in sys.argv:
        out = {}
        with tempfile.TemporaryDirectory() as d:
            for lang in LANGS:
                for k in KS:
                    out[f"{lang}-k{k}"] = [digest(x) for x in run_lines(Path(d), lang, k)]
        GOLDEN.write_text(json.dumps(out, indent=0) + "\n", encoding="utf-8")
