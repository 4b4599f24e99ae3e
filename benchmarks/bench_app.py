"""How fast the app feels on big files, beside Textual's DataTable showing the same rows.

    /work/venv/bin/python benchmarks/bench_app.py            # 10k cases / 100k chunks, 100k cases, 1M-chunk picker
    /work/venv/bin/python benchmarks/bench_app.py --quick    # smaller, for a smoke run

Drives the app headless (``App.run_test``) at 120x40 and times, from the moment
the app starts:

* first paint with rows — the first frame that shows case rows (the cold open
  reads the YAML; the warm open reads the document cache);
* key → frame while scrolling (``j``) and filtering (typing in ``/``): the time
  from a key event to the next frame the compositor produces, p50 / p95 / max;
* chunk-picker search on a big corpus once the index is built: the index's own
  ``search`` and the app's keystroke → results frame;
* edits on the Cases screen of the 100,000-case set with its labels recorded
  (``--only edits``): ``u`` (unanswerable), ``ctrl+z``, ``d`` (duplicate, then
  ``escape`` back to the list) — key → the first frame that shows the change —
  the CPU the app spends after an edit until it is idle again (the stale check
  of the labels the edit touched), and a ``j`` typed right after ``ctrl+s`` → the
  frame that shows it (a save that blocks the interface delays it), and → saved.

The peer is Textual's built-in ``DataTable`` fed the same rows with ``add_rows``
in ``on_mount`` (the straightforward way to show a table in Textual).
A "frame" is a call of ``App._display`` with a compositor update, which is where
Textual hands a rendered screen to the terminal; the timing includes rendering
the update to terminal bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.gen_data import write_corpus, write_labels, write_testset  # noqa: E402

SIZE = (120, 40)


class Frames(list):
    """Times of the frames an app produced; ``event`` is set on each new frame."""

    def __init__(self):
        super().__init__()
        self.event = asyncio.Event()
        self.until = None  # a condition: the first frame drawn while it holds is kept in .seen
        self.seen: float | None = None
        self.seen_cpu = 0.0  # the interface thread's CPU clock at that frame (time.thread_time)


def _instrument(app) -> Frames:
    """Record the time of every frame the app produces (and render it to bytes, as a terminal would)."""
    frames = Frames()
    original = app._display

    def display(screen, renderable):
        if renderable is not None:
            try:
                renderable.render_segments(app.console)
            except Exception:
                pass
            frames.append(time.perf_counter())
            if frames.until is not None and frames.seen is None and frames.until():
                frames.seen, frames.seen_cpu = frames[-1], time.thread_time()
            frames.event.set()
        return original(screen, renderable)

    app._display = display
    return frames


async def _frame_after(frames: Frames, t: float, timeout: float = 10.0) -> float:
    """The time of the first frame after ``t`` (waits for it without spinning)."""
    while True:
        if frames and frames[-1] > t:
            return next(f for f in frames if f > t)
        frames.event.clear()
        await asyncio.wait_for(frames.event.wait(), timeout)


async def first_paint(make, has_rows, size=SIZE) -> float:
    """Seconds from starting the app to the first frame that shows rows."""
    gc.collect()
    t0 = time.perf_counter()
    app = make()
    frames = _instrument(app)
    async with app.run_test(size=size) as pilot:
        while not has_rows(app):
            await asyncio.sleep(0.002)
        t_rows = time.perf_counter()
        f = await _frame_after(frames, t_rows - 1e-9)
        await pilot.pause()
    return f - t0


async def keys_to_frames(app, frames, keys) -> list[float]:
    """Milliseconds from each key event to the next frame."""
    from textual import events

    out = []
    driver = app._driver
    for key in keys:
        char = key if len(key) == 1 else None
        t = time.perf_counter()
        driver.send_message(events.Key(key, char))
        f = await _frame_after(frames, t)
        out.append((f - t) * 1000)
        await asyncio.sleep(0.002)  # let the frame settle (a person types slower than this)
    return out


async def idle(app, pilot) -> None:
    """Wait for every worker (a cancelled, superseded search counts as done) and a refresh."""
    from textual.worker import WorkerCancelled

    while True:
        try:
            await app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    await pilot.pause()


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(p / 100 * (len(values) - 1))))
    return values[k]


def fmt_ms(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values):6.1f} ms  p95 {pct(values, 95):6.1f} ms  max {max(values):6.1f} ms"
    )


# ---------------------------------------------------------------- the peer


def datatable_app(rows):
    from textual.app import App
    from textual.widgets import DataTable

    class Peer(App):
        def compose(self):
            yield DataTable(cursor_type="row")

        def on_mount(self):
            t = self.query_one(DataTable)
            t.add_columns("id", "topic", "question", "expected", "flags")
            t.add_rows(rows)
            t.focus()
            self.populated = True

    app = Peer()
    app.populated = False
    return app


def row_tuples(path) -> list[tuple]:
    from ragtriage.core.document import TestSetDocument
    from ragtriage.tui.rows import make_row

    doc = TestSetDocument.load(path)
    return [(r.id, r.topic, r.question, r.expected, r.flags_text) for r in map(make_row, doc.cases)]


# ---------------------------------------------------------------- our app


def ours(path, **kw):
    from ragtriage.tui import make_app

    return make_app(path, recovery=False, **kw)


def _has_rows(app) -> bool:
    screen = app.screen
    rows = getattr(screen, "rows", None)
    return rows is not None and len(rows) > 0


async def interaction(path, n_keys: int) -> tuple[list[float], list[float], float]:
    """Scroll and filter latencies on a loaded app; and the time until it was fully loaded."""
    app = ours(path)
    frames = _instrument(app)
    t0 = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        while not app.loaded or app.corpus is None:
            await asyncio.sleep(0.005)
        loaded = time.perf_counter() - t0
        await idle(app, pilot)
        scroll = await keys_to_frames(app, frames, ["j"] * n_keys + ["pagedown"] * 20 + ["G", "g"])
        query = "caso-00 envío"
        typing = ["slash"] + list(query) + ["backspace"] * len(query)
        filt = await keys_to_frames(app, frames, typing)
    return scroll, filt[1:], loaded


async def picker(path, queries: list[str]) -> tuple[float, list[float], list[float], int]:
    """Index build time, index.search ms, and in-app keystroke -> results frame ms."""
    app = ours(path)
    frames = _instrument(app)
    async with app.run_test(size=SIZE) as pilot:
        while not app.loaded or app.corpus is None:
            if app.corpus_error:
                raise SystemExit(f"corpus not loaded: {app.corpus_error}")
            await asyncio.sleep(0.01)
        t = time.perf_counter()
        while app.index is None:
            if app.index_error or app.corpus_error:
                raise SystemExit(f"index not built: {app.index_error or app.corpus_error}")
            await asyncio.sleep(0.05)
        build = time.perf_counter() - t
        n = len(app.corpus)
        await app.workers.wait_for_complete()
        search = []
        for q in queries:
            t = time.perf_counter()
            app.index.search(q, 30)
            search.append((time.perf_counter() - t) * 1000)
        await pilot.press("p")
        await idle(app, pilot)
        screen = app.screen
        box = screen.query_one("#query")
        box.focus()
        await pilot.pause()
        in_app = []
        from textual import events

        for q in queries:
            box.value = ""
            await idle(app, pilot)
            word = q.split()[0]
            box.value = q[: -len(word)]
            await idle(app, pilot)
            # type the last character of the query and wait for the results of the full query
            box.value = q[:-1]
            box.cursor_position = len(box.value)
            await idle(app, pilot)
            t = time.perf_counter()
            app._driver.send_message(events.Key(q[-1], q[-1]))
            while getattr(screen, "_searched", None) != q:
                if time.perf_counter() - t > 30:
                    raise SystemExit(f"no results for {q!r}; the box says {box.value!r}")
                await asyncio.sleep(0.0005)
            f = await _frame_after(frames, time.perf_counter() - 1e-9)
            in_app.append((f - t) * 1000)
    return build, search, in_app, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--big-cases", type=int, default=100_000)
    ap.add_argument("--picker-chunks", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=300, help="j presses while scrolling")
    ap.add_argument("--no-peer-big", action="store_true", help="skip DataTable at --big-cases rows (slow)")
    ap.add_argument("--only", choices=("paint", "keys", "picker", "edits"), help="run one section")
    ap.add_argument("--rounds", type=int, default=20, help="edit rounds (u, ctrl+z, d, escape, ctrl+z)")
    a = ap.parse_args()
    if a.quick:
        a.cases, a.chunks, a.big_cases, a.picker_chunks, a.keys = 2000, 20_000, 20_000, 100_000, 100

    tmp = Path(tempfile.mkdtemp(prefix="ragtriage-bench-"))
    os.environ.setdefault("RAGTRIAGE_CACHE_DIR", str(tmp / "cache"))
    print(f"data in {tmp}")
    t = time.perf_counter()
    write_corpus(tmp / "corpus.jsonl", a.chunks)
    write_testset(tmp / "cases.yaml", a.cases, "corpus.jsonl", a.chunks)
    write_testset(tmp / "big.yaml", a.big_cases, "corpus.jsonl", a.chunks, seed=3)
    print(
        f"generated {a.cases:,} + {a.big_cases:,} cases, {a.chunks:,} chunks in {time.perf_counter() - t:.1f} s\n"
    )

    if a.only in (None, "paint"):
        section_paint(a, tmp)
    if a.only in (None, "keys"):
        section_keys(a, tmp)
    if a.only in (None, "picker"):
        section_picker(a, tmp)
    if a.only in (None, "edits"):
        section_edits(a, tmp)


def paint_cold_warm(path, tmp, repeat: int = 3) -> tuple[float, float]:
    """Median first paint with no document cache (cold) and with it (warm)."""
    cold, warm = [], []
    for i in range(repeat):
        os.environ["RAGTRIAGE_CACHE_DIR"] = str(tmp / f"cache-{path.stem}-{i}")
        cold.append(asyncio.run(first_paint(lambda: ours(path), _has_rows)))
        warm.append(asyncio.run(first_paint(lambda: ours(path), _has_rows)))
    return statistics.median(cold), statistics.median(warm)


def section_paint(a, tmp) -> None:
    run = asyncio.run
    import ragtriage.tui.app  # noqa: F401  # imports and the first App start are paid once, by neither side

    run(first_paint(lambda: datatable_app([("a", "", "q", "", "")]), lambda app: app.populated))
    print(
        f"== first paint with rows, {SIZE[0]}x{SIZE[1]}, median of 3 (target < 0.5 s at {a.cases:,}, < 2 s at {a.big_cases:,})"
    )
    cold, warm = paint_cold_warm(tmp / "cases.yaml", tmp)
    rows = row_tuples(tmp / "cases.yaml")
    peer = run(first_paint(lambda: datatable_app(rows), lambda app: app.populated))
    print(f"  {a.cases:>7,} cases  ragtriage  cold {cold:6.2f} s   warm (cache) {warm:6.2f} s")
    print(f"  {a.cases:>7,} rows   DataTable  {peer:6.2f} s  (rows already in memory)")
    cold, warm = paint_cold_warm(tmp / "big.yaml", tmp)
    print(
        f"  {a.big_cases:>7,} cases  ragtriage  cold {cold:6.2f} s   warm (cache) {warm:6.2f} s"
        "   (first rows from the file's head while the rest loads)"
    )
    if not a.no_peer_big:
        rows = row_tuples(tmp / "big.yaml")
        peer = run(first_paint(lambda: datatable_app(rows), lambda app: app.populated))
        print(f"  {a.big_cases:>7,} rows   DataTable  {peer:6.2f} s  (rows already in memory)")
        del rows
    gc.collect()


def section_keys(a, tmp) -> None:
    run = asyncio.run
    print(f"\n== key -> frame, {a.cases:,} cases loaded (target p95 < 50 ms)")
    scroll, filt, loaded = run(interaction(tmp / "cases.yaml", a.keys))
    print(f"  scrolling ({len(scroll)} keys)  {fmt_ms(scroll)}")
    print(f"  filtering ({len(filt)} keys)   {fmt_ms(filt)}")
    scroll, filt, loaded = run(interaction(tmp / "big.yaml", a.keys))
    print(f"  {a.big_cases:,} cases: scrolling {fmt_ms(scroll)}")
    print(f"  {a.big_cases:,} cases: filtering {fmt_ms(filt)}   (fully loaded after {loaded:.1f} s)")


def section_picker(a, tmp) -> None:
    run = asyncio.run
    print(f"\n== chunk picker on {a.picker_chunks:,} chunks (target < 100 ms after the index is built)")
    t = time.perf_counter()
    write_corpus(tmp / "picker.jsonl", a.picker_chunks, seed=5)
    write_testset(tmp / "picker.yaml", 200, "picker.jsonl", a.picker_chunks, seed=6)
    print(f"  generated in {time.perf_counter() - t:.1f} s")
    queries = [
        "entrega oficina precio",
        "devolución reembolso días",
        "garantía batidora avería",
        "tarjeta pago rechazada",
        "cuenta contraseña correo",
        "montaje instalación técnico",
        "descuento cupón rebajas",
        "pedido almacén stock",
        "islas canarias aduana impuestos",
        "pantalla batería cargador",
    ]
    build, search, in_app, n = run(picker(tmp / "picker.yaml", queries))
    print(f"  index built in a worker in {build:.1f} s over {n:,} chunks")
    print(f"  LexicalIndex.search (top 30)        {fmt_ms(search)}")
    print(f"  keystroke -> results frame in app   {fmt_ms(in_app)}")


CPU: dict[str, list[float]] = {}  # key -> the interface thread's CPU ms from the key to its frame


async def _key_until(app, frames, key: str, done, timeout: float = 30.0) -> float:
    """Milliseconds from sending ``key`` to the first frame drawn while ``done()`` holds: the
    frame that shows the change. (Polling ``done`` and then waiting for a frame would count a
    later frame whenever the one with the change went out before the poll ran.) The CPU the
    interface thread spent meanwhile goes to ``CPU[key]``: unlike the wall time, it does not
    grow when other processes share the cores (it includes this loop's own polling)."""
    from textual import events

    frames.until, frames.seen = done, None  # checked as each frame is drawn
    c = time.thread_time()
    t = time.perf_counter()
    app._driver.send_message(events.Key(key, key if len(key) == 1 else None))
    try:
        while frames.seen is None:
            if time.perf_counter() - t > timeout:
                raise SystemExit(f"{key}: the change never showed")
            frames.event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(frames.event.wait(), 0.05)
        CPU.setdefault(key, []).append((frames.seen_cpu - c) * 1000)
        return (frames.seen - t) * 1000
    finally:
        frames.until = None


async def edits(path, rounds: int) -> dict[str, list[float]]:
    """u / ctrl+z / d / escape / ctrl+z on the Cases screen, key -> frame showing the change;
    the CPU spent after each edit until the app is idle again; a j typed right after ctrl+s
    -> the frame with the cursor moved (does the save block the interface?) and -> saved."""
    from textual import events

    app = ours(path)
    frames = _instrument(app)
    out: dict[str, list[float]] = {
        k: [] for k in ("u", "ctrl+z", "d", "escape", "cpu", "save_frame", "saved")
    }
    async with app.run_test(size=SIZE) as pilot:
        while not app.loaded or app.corpus is None:
            await asyncio.sleep(0.01)
        await idle(app, pilot)
        screen = app.screen
        table = screen.table

        def flags() -> tuple:
            return screen.rows.visible(table.cursor).flags

        for _ in range(rounds):
            for _ in range(3):
                await pilot.press("j")
            await idle(app, pilot)
            before, n = flags(), len(screen.rows.rows)
            out["u"].append(await _key_until(app, frames, "u", lambda: flags() != before))
            c = time.process_time()
            await idle(app, pilot)  # the stale check after the edit, the toast
            out["cpu"].append((time.process_time() - c) * 1000)
            out["ctrl+z"].append(await _key_until(app, frames, "ctrl+z", lambda: flags() == before))
            await idle(app, pilot)
            out["d"].append(
                await _key_until(app, frames, "d", lambda: type(app.screen).__name__ == "EditorScreen")
            )
            await idle(app, pilot)
            out["escape"].append(
                await _key_until(
                    app, frames, "escape", lambda: app.screen is screen and len(screen.rows.rows) == n + 1
                )
            )
            await idle(app, pilot)
            out["ctrl+z"].append(await _key_until(app, frames, "ctrl+z", lambda: len(screen.rows.rows) == n))
            await idle(app, pilot)
        for _ in range(5):
            await pilot.press("u")
            await idle(app, pilot)
            # a key typed right after ctrl+s: is the interface still answering while it saves?
            t = time.perf_counter()
            app._driver.send_message(events.Key("ctrl+s", None))
            at = table.cursor
            out["save_frame"].append(await _key_until(app, frames, "j", lambda: table.cursor != at))
            while app.session.dirty:
                await asyncio.sleep(0.001)
            out["saved"].append((time.perf_counter() - t) * 1000)
            await idle(app, pilot)
    return out


def section_edits(a, tmp) -> None:
    """Edits on the big set, with its labels recorded (so the stale check has work to do)."""
    import shutil

    path = tmp / "edits.yaml"
    shutil.copy(tmp / "big.yaml", path)
    write_labels(path, tmp / "corpus.jsonl")
    print(f"\n== edits on Cases, {a.big_cases:,} cases with labels, {a.chunks:,} chunks (target p95 < 50 ms)")
    CPU.clear()
    res = asyncio.run(edits(path, a.rounds))
    for key, what in (
        ("u", "u (unanswerable) -> frame"),
        ("ctrl+z", "ctrl+z (undo) -> frame"),
        ("d", "d (duplicate) -> editor frame"),
        ("escape", "escape (editor -> list) -> frame"),
    ):
        print(f"  {what:<34} {fmt_ms(res[key])}  ({len(res[key])} keys)")
        cpu = CPU.get(key, [0.0])
        print(
            f"  {'  its interface-thread CPU':<34} p50 {statistics.median(cpu):6.1f} ms  p95 {pct(cpu, 95):6.1f} ms"
        )
    cpu = res["cpu"]
    print(
        f"  CPU after an edit until idle (stale check)  median {statistics.median(cpu):7.1f} ms  max {max(cpu):7.1f} ms"
    )
    print(f"  j right after ctrl+s -> frame       {fmt_ms(res['save_frame'])}")
    cpu = CPU.get("j", [0.0])  # ctrl+s is sent just before: its handler counts here
    print(
        f"  {'  ctrl+s + j interface-thread CPU':<34} p50 {statistics.median(cpu):6.1f} ms  p95 {pct(cpu, 95):6.1f} ms"
    )
    print(f"  ctrl+s -> saved                     {fmt_ms(res['saved'])}")


if __name__ == "__main__":
    main()
