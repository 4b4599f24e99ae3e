"""Stale-label detection at scale: 100k and 1M re-chunked chunks, 10k labels.

Generates a document collection (Zipf-distributed pseudo-words, paragraphs
wrapped at 72 columns), chunks it two ways:

* old: one chunk per paragraph (``d17-3``), with ``doc``/``start``/``end``;
* new: fixed windows of 400 characters with 80 of overlap, lines re-flowed,
  ids reused (``d17-3`` now names different text: the dangerous case), and 1 %
  of the paragraphs edited (a word in five replaced: their labels become
  ``changed``/``missing`` with the edited chunks as candidates),

labels 10,000 paragraphs of the old chunking, then times
``staleness.check_labels`` against the new chunks in a fresh process and prints
the time and peak memory beside the corpus size, and beside the naive way
(``load_corpus``: the whole corpus in RAM, before any comparison at all).

    /work/venv/bin/python benchmarks/bench_stale.py            # 100k and 1M
    /work/venv/bin/python benchmarks/bench_stale.py --sizes 100000 --spans
    /work/venv/bin/python benchmarks/bench_stale.py --splitters   # real splitters: recall, agreement
    /work/venv/bin/python benchmarks/bench_stale.py --sizes 1000000 --questions 10   # the second pass

Generated files are cached in ``$TMPDIR/ragtriage-bench-stale``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WINDOW, OVERLAP = 400, 80
N_LABELS = 10_000


def _vocab(rng, n=30_000):
    syl = [
        "ka",
        "lo",
        "mi",
        "ne",
        "su",
        "ta",
        "ri",
        "po",
        "de",
        "va",
        "gu",
        "che",
        "ström",
        "ño",
        "ze",
        "fa",
        "bi",
        "ol",
        "un",
        "es",
    ]
    words = set()
    while len(words) < n:
        k = int(rng.integers(1, 5))
        words.add("".join(syl[i] for i in rng.integers(0, len(syl), size=k)))
    words = sorted(words)
    rng.shuffle(words)  # Zipf rank independent of spelling (sorted, the top words were all "bi…")
    return words


def generate(n_paragraphs: int, out: Path, seed: int = 7) -> dict:
    """Write old.chunks.jsonl, new.chunks.jsonl, labels.json under ``out``."""
    import numpy as np
    import orjson

    rng = np.random.default_rng(seed)
    vocab = np.array(_vocab(rng), dtype=object)
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.05
    p /= p.sum()
    per_doc = 50
    n_docs = n_paragraphs // per_doc
    words_per_par = rng.integers(30, 62, size=n_docs * per_doc)
    all_words = vocab[rng.choice(len(vocab), size=int(words_per_par.sum()), p=p)]
    label_pick = set(
        rng.choice(n_docs * per_doc, size=min(N_LABELS, n_docs * per_doc), replace=False).tolist()
    )
    edited = rng.random(n_docs * per_doc) < 0.01
    out.mkdir(parents=True, exist_ok=True)
    old_f = open(out / "old.chunks.jsonl", "wb")
    new_f = open(out / "new.chunks.jsonl", "wb")
    labels, cases = {}, []
    text_bytes = n_old = n_new = 0
    pos = 0
    dumps = orjson.dumps

    def wrap(ws):
        lines, cur, width = [], [], 0
        for w in ws:
            if width + len(w) > 72 and cur:
                lines.append(" ".join(cur))
                cur, width = [], 0
            cur.append(w)
            width += len(w) + 1
        lines.append(" ".join(cur))
        return "\n".join(lines)

    for d in range(n_docs):
        doc = f"doc{d:06d}.md"
        old_pars, new_pars = [], []
        for i in range(per_doc):
            g = d * per_doc + i
            n = int(words_per_par[g])
            ws = all_words[pos : pos + n]
            pos += n
            ws = list(ws)
            ws[0] = ws[0].capitalize()
            par = wrap(ws) + "."
            old_pars.append(par)
            if edited[g]:  # an edit: about one word in five replaced
                ws2 = list(ws)
                for k in rng.choice(n, size=max(1, n // 5), replace=False):
                    ws2[k] = vocab[rng.integers(len(vocab))]
                new_pars.append(wrap(ws2) + ".")
            else:
                new_pars.append(par)
        # old chunking: by paragraph, with spans
        off = 0
        for i, par in enumerate(old_pars):
            cid = f"d{d}-{i}"
            old_f.write(
                dumps({"id": cid, "text": par, "doc": doc, "start": off, "end": off + len(par)}) + b"\n"
            )
            n_old += 1
            g = d * per_doc + i
            if g in label_pick:
                labels[cid] = {"text": par, "doc": doc, "start": off, "end": off + len(par)}
                cases.append({"id": f"q{g}", "question": " ".join(par.split()[3:9]), "expected": [cid]})
            off += len(par) + 2
        # new chunking: the edited document, re-flowed, fixed windows with overlap
        text = "\n\n".join(p.replace("\n", " ") for p in new_pars)
        j = s = 0
        while s < len(text):
            piece = text[s : s + WINDOW]
            new_f.write(
                dumps({"id": f"d{d}-{j}", "text": piece, "doc": doc, "start": s, "end": s + len(piece)})
                + b"\n"
            )
            text_bytes += len(piece.encode())
            n_new += 1
            j += 1
            if s + WINDOW >= len(text):
                break
            s += WINDOW - OVERLAP
    old_f.close()
    new_f.close()
    meta = {
        "old_chunks": n_old,
        "new_chunks": n_new,
        "labels": len(labels),
        "new_text_bytes": text_bytes,
        "new_file_bytes": (out / "new.chunks.jsonl").stat().st_size,
    }
    (out / "labels.json").write_bytes(orjson.dumps({"labels": labels, "cases": cases, "meta": meta}))
    return meta


def _rss_kb(field: str) -> int:
    """VmRSS / VmHWM of this process in kB (VmHWM: peak RSS since the last reset)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status (Linux only)")


def _reset_peak() -> None:
    """Reset VmHWM to the current RSS, so the peak measured is the check's own (Linux)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _measure(data: Path, spans: bool, naive: bool, questions: int = 0) -> None:
    """Runs in a fresh process: prints one JSON line of figures. ``questions``: that many
    cases whose labels are gone, nothing remembered (``unknown``): the second pass ranks
    chunks by their questions' rare words."""
    import orjson

    from ragtriage.core import staleness

    blob = orjson.loads((data / "labels.json").read_bytes())
    labels = blob["labels"]
    if not spans:
        labels = {k: {"text": v["text"], "doc": v["doc"]} for k, v in labels.items()}
    cases = [(c["id"], c["question"], tuple(c["expected"])) for c in blob["cases"]]
    if questions:
        cases = [(cid, q, tuple(f"gone-{x}" for x in exp)) for cid, q, exp in cases[:questions]]
    del blob
    _reset_peak()
    base = _rss_kb("VmRSS")
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    if naive:
        from ragtriage.core.corpus import load_corpus

        corpus = load_corpus(data / "new.chunks.jsonl")
        counts = {"ok": sum(1 for k, v in labels.items() if k in corpus)}
    else:
        report = staleness.check_labels(cases, labels, data / "new.chunks.jsonl")
        counts = report.counts
    dt = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    peak = _rss_kb("VmHWM")
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the probe's helper process, if one ran
    print(
        json.dumps(
            {
                "seconds": dt,
                "cpu": cpu,
                "peak_rss_mb": peak / 1024,
                "delta_rss_mb": (peak - base) / 1024,
                "helper_cpu": kids.ru_utime + kids.ru_stime,
                "helper_peak_mb": kids.ru_maxrss / 1024,
                "counts": counts,
            }
        )
    )


def _expected(sp, ed, new_by_id, new_chunks) -> str:
    """The status offsets say a label should have (its text unedited: where it lies now)."""
    from ragtriage.core.text import normalize_text

    norm = normalize_text(sp.text)
    own = new_by_id.get(sp.id)
    if own is not None and normalize_text(own.text) == norm:
        return "ok"
    lead, trail = len(sp.text) - len(sp.text.lstrip()), len(sp.text) - len(sp.text.rstrip())
    now = ed.moved(sp.doc, sp.start + lead, sp.end - trail)
    if now is None:
        status = "missing"
    else:
        cover = [c for c in new_chunks if c.doc == sp.doc and c.start <= now[0] and now[1] <= c.end]
        if any(normalize_text(c.text) == norm for c in cover):
            status = "moved"
        else:
            status = "merged" if cover else "split"
    return "changed" if own is not None else status


def splitters() -> None:
    """The real-splitter scenarios of tests/core/test_stale_real_splitters.py, with figures:
    automatic fixes, wrong ones (offset ground truth), recall of the fixable labels (text
    unedited and held whole by a chunk), and agreement of statuses with the offsets."""
    from ragtriage.core.text import normalize_text
    from tests.core.stalekit import PAGES, SCENARIOS, chunk, run

    print(
        "| old chunking | new chunking | edit | spans | labels | auto fixes | wrong | fixable | recall | status agrees |"
    )
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    totals = [0, 0, 0, 0, 0, 0]
    for old_name, new_name, kind in SCENARIOS:
        for spans in (True, False):
            labelled, ed, new, report = run(old_name, new_name, kind, spans)
            new_chunks = chunk(new_name, ed.pages)
            by_id = {sp.id: sp for sp in labelled}
            auto = wrong = fixable = fixed = agree = 0
            for e in report.labels:
                sp = by_id[e.label]
                want = _expected(sp, ed, new, new_chunks)
                agree += e.status == want or (want == "changed" and e.status in ("changed", "merged"))
                text_now = ed.moved(sp.doc, sp.start, sp.end) is not None
                held = any(normalize_text(sp.text) in normalize_text(c.text) for c in new_chunks)
                if want != "ok" and text_now and held:
                    fixable += 1
                if e.fix == "auto":
                    auto += 1
                    target = new[e.candidates[0][0]]
                    ok = normalize_text(sp.text) in normalize_text(target.text)
                    wrong += not ok
                    fixed += ok and text_now and held and want != "ok"
            n = len(report.labels)
            for i, v in enumerate((n, auto, wrong, fixable, fixed, agree)):
                totals[i] += v
            print(
                f"| {old_name} | {new_name} | {kind} | {'yes' if spans else 'no'} | {n} | {auto} | {wrong} | "
                f"{fixable} | {fixed / max(fixable, 1):.0%} | {agree}/{n} |"
            )
    n, auto, wrong, fixable, fixed, agree = totals
    print(
        f"| **all** | | | | {n} | {auto} | **{wrong}** | {fixable} | {fixed / max(fixable, 1):.0%} | {agree}/{n} |"
    )
    print(f"\n(pages: {', '.join(PAGES)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000", help="new-chunk counts (approximate)")
    ap.add_argument("--spans", action="store_true", help="labels keep doc/start/end (span remapping)")
    ap.add_argument("--no-naive", action="store_true", help="skip the load_corpus comparison")
    ap.add_argument("--splitters", action="store_true", help="real splitters: recall and status agreement")
    ap.add_argument(
        "--questions",
        type=int,
        default=0,
        help="N cases whose labels are gone with nothing remembered: times the second pass (by question)",
    )
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    ap.add_argument("--naive", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        _measure(Path(args.measure), args.spans, args.naive, args.questions)
        return
    if args.splitters:
        splitters()
        return
    cache = Path(tempfile.gettempdir()) / "ragtriage-bench-stale"
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        data = cache / str(n)
        if not (data / "labels.json").exists():
            t0 = time.perf_counter()
            print(f"generating {n:,} paragraphs in {data} ...", file=sys.stderr, flush=True)
            generate(round(n * 0.77), data)  # ~1.3 windows per paragraph
            print(f"  {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        import orjson

        meta = orjson.loads((data / "labels.json").read_bytes())["meta"]
        for naive in [False] if args.no_naive else [False, True]:
            cmd = (
                [sys.executable, __file__, "--measure", str(data)]
                + (["--spans"] if args.spans else [])
                + (["--questions", str(args.questions)] if args.questions else [])
                + (["--naive"] if naive else [])
            )
            res = subprocess.run(
                cmd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}
            )
            if res.returncode:
                sys.exit(res.stderr)
            fig = json.loads(res.stdout.strip().splitlines()[-1])
            rows.append(
                (
                    n,
                    "naive: load_corpus (no comparison yet)"
                    if naive
                    else "ragtriage stale (streaming)"
                    + (f", {args.questions} unknown labels: second pass" if args.questions else ""),
                    meta,
                    fig,
                )
            )
    # text in RAM: one str per chunk, ~49 bytes of header + 1 byte per ASCII char (more for non-ASCII)
    print(
        f"\nlabels: {N_LABELS:,}; new chunking: windows of {WINDOW} chars, overlap {OVERLAP}; spans: {'yes' if args.spans else 'no (text remapping)'}\n"
    )
    print(
        "| new chunks | corpus file | corpus text in RAM | method | wall s | CPU s | peak RSS | RSS growth "
        "| helper: CPU s, peak RSS | counts |"
    )
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for _n, name, meta, fig in rows:
        ram = meta["new_text_bytes"] + 49 * meta["new_chunks"]
        counts = ", ".join(f"{k} {v}" for k, v in fig["counts"].items())
        print(
            f"| {meta['new_chunks']:,} | {meta['new_file_bytes'] / 1e6:.0f} MB | {ram / 1e6:.0f} MB | {name} | "
            f"{fig['seconds']:.1f} | {fig['cpu']:.1f} | {fig['peak_rss_mb']:.0f} MB | {fig['delta_rss_mb']:.0f} MB | "
            + (
                f"{fig['helper_cpu']:.1f} s, {fig['helper_peak_mb']:.0f} MB"
                if fig["helper_peak_mb"]
                else "none"
            )
            + f" | {counts} |"
        )


if __name__ == "__main__":
    main()
