"""``ragtriage sweep TESTSET --k 1-4 [--threshold T,...]``: one row per setting with
hit, supported, correct and prompt tokens; retrieval numbers for every k come
from one stored ranking."""

from __future__ import annotations

from pathlib import Path

import orjson

from ..cli import Exit
from ..core.errors import InputError, Problem
from ..core.reports import write_report
from .outputs import guard_outputs, system_file, testset_inputs
from .run_cmd import dry_run_judge, num, run_options, table


def main(args) -> int:
    import gc

    # a short-lived process holding a run per k: the cyclic GC frees nothing here and its
    # passes over every record grew faster than the cases (bench_check: 3.1x run at 10k, 4.2x at 50k)
    gc.disable()
    from ..core.evaluate import load_testset
    from ..core.options import parse_ks, parse_thresholds
    from ..core.plan import plan
    from ..core.sweep import sweep

    doc = load_testset(args.testset)
    spec = None if args.k is None else str(args.k).strip()
    if spec is None:
        ks = list(range(1, doc.settings.k + 1))  # default: every k up to the test set's
    elif spec.isdigit():
        ks = parse_ks(f"1-{spec}", doc.settings.k)  # one K in a sweep: every k from 1 to K
    else:
        ks = parse_ks(spec, doc.settings.k)
    thresholds = parse_thresholds(args.threshold)
    if args.json:
        jp = Path(args.json)
        if jp.parent and not jp.parent.exists():
            raise InputError(Problem(str(jp), None, "folder does not exist", field="--json"))
    guard_outputs({"--json": args.json}, [*testset_inputs(doc), system_file(args.system)])
    if args.dry_run:
        p = plan(doc, args.system, ks, **run_options(args))
        print(
            f"dry run: {p['cases']} cases through {p['system']} at k={','.join(map(str, ks))}: "
            f"at most {p['calls']} calls, about {p['tokens']} prompt tokens (characters / 4); nothing was spent"
            + dry_run_judge(p)
        )
        print(
            table(
                ["k", "calls", "≈ tokens"],
                [[str(r["k"]), str(r["calls"]), str(r["tokens"])] for r in p["rows"]],
                right={0, 1, 2},
            )
        )
        return Exit.OK
    res = sweep(doc, args.system, ks, thresholds, progress=True, **run_options(args))
    show_t = any(t is not None for t in thresholds)
    judged = any("judge_supported" in r for r in res["rows"])
    docs = any("doc_hit" in r for r in res["rows"])
    rows = []
    prev: dict = {}  # threshold -> tokens of the previous k, to show what one more chunk costs
    for r in res["rows"]:
        tok = "—" if r["tokens"] is None else str(r["tokens"])
        before = prev.get(r["threshold"])
        if r["tokens"] is not None and before:
            tok += f" ({(r['tokens'] / before - 1) * 100:+.0f} %)"
        prev[r["threshold"]] = r["tokens"]
        cells = [str(r["k"])]
        if show_t:
            cells.append("—" if r["threshold"] is None else f"{r['threshold']:g}")
        cells += [num(r["hit"]), num(r["recall"]), num(r["mrr"])]
        cells += [num(r.get("doc_hit"))] if docs else []
        cells += [num(r["supported"]), num(r["correct"]), tok]
        if judged:
            cells += [num(r.get("judge_supported")), num(r.get("judge_correct"))]
        rows.append(cells)
    headers = (
        ["k"]
        + (["threshold"] if show_t else [])
        + ["hit", "recall", "mrr"]
        + (["doc_hit"] if docs else [])
        + ["supported", "correct", "prompt tokens"]
        + (["judge supported", "judge correct"] if judged else [])
    )
    print(f"{res['testset']} · {res['system']} · {res['n']} cases · {res['calls']} calls")
    print()
    print(table(headers, rows, right=set(range(len(headers)))))
    if args.json:
        write_report(
            args.json, orjson.dumps(res, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()
        )
    if getattr(args, "exiting", False):  # the process ends now: what it read need not be freed one by one
        from .run_cmd import leave_allocated

        leave_allocated(doc, res)
    return Exit.OK
