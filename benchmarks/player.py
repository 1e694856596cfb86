"""How the tape player's cost grows with the tape: replay, layout, export, and the page in Chromium.

    python -m benchmarks.player [--max-records 10000] [--repeats 1] [--model gru,rnn]
                                [--browser] [--markdown]

Tapes of real models, unrolled to about 10, 100, 1,000, 5,000 and 10,000 records:

- ``gru``: an ``ad.keras.layers.GRU`` (8 units, 23 records a step, all in
  the scope ``gru/gru_cell``) under a ``Dense`` head and a mean squared loss;
- ``rnn``: a hand-written cell ``h = tanh(h @ W + x_t @ U + b)`` (five records
  a step, each step in its scope ``rnn/step_<t>``) and a ``reduce_sum``.

Python stages, best of ``--repeats``:

- **replay**: ``widgets.replay.replay`` (backward trace -> nodes, edges,
  frames, scope tree and layout);
- **layout**: ``widgets.graph_layout.graph_layout`` alone (part of replay);
- **export**: ``widgets.html_export.export_html`` of the finished Replay, and
  the page's size (bytes and bytes per record).

With ``--browser`` (Playwright driving Debian's Chromium, ``/usr/bin/chromium``
or ``$TAPESCHOOL_CHROMIUM``; never ``playwright install``), each page (a NaN
planted half-way) is opened offline at 1280x720 and timed in the page itself:
``performance.now()`` around the action, up to the frame after it was painted
(``requestAnimationFrame`` then a task): load (navigation to the first frame
drawn), zoom in, pan, fit, open one box, close it, expand all, collapse all,
step forward, step back (from the last frame), jump to the end, search, jump to
the first NaN. Also the page's element count. Speed is reported, never asserted.
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from widgets.graph_layout import graph_layout
from widgets.html_export import export_html
from widgets.replay import replay

from .model_tapes import HIDDEN, gru_tape, lesson14_mlp, planted_mlp, rnn_tape  # noqa: F401

SIZES = (10, 100, 1000, 5000, 10000)
CHROMIUM = os.environ.get("TAPESCHOOL_CHROMIUM", "/usr/bin/chromium")


MODELS = {"gru": gru_tape, "rnn": rnn_tape}


def measure(model, n_records, repeats, keep=None):
    """Best-of-``repeats`` seconds for each Python stage, and the page's size.

    ``keep``: a folder to write the page to (for the browser), a NaN planted half-way.
    """
    best = {"layout": float("inf"), "replay": float("inf"), "export": float("inf")}
    size = records = 0
    path = None
    for _ in range(repeats):
        tape, loss, sources = MODELS[model](n_records)
        records = len(tape.records)
        t0 = time.perf_counter()
        rep = replay(tape, loss, sources)
        t1 = time.perf_counter()
        graph_layout(rep.nodes, rep.edges)
        t2 = time.perf_counter()
        page = export_html(rep)
        t3 = time.perf_counter()
        best["replay"] = min(best["replay"], t1 - t0)
        best["layout"] = min(best["layout"], t2 - t1)
        best["export"] = min(best["export"], t3 - t2)
        size = len(page.encode("utf-8"))
    if keep is not None:
        steps = max(1, records // (23 if model == "gru" else 5))
        tape, loss, sources = MODELS[model](n_records, nan_at=steps // 2)
        path = Path(keep) / f"{model}_{records}.html"
        export_html(tape, path, target=loss, sources=sources)
    return records, best, size, path


# Each action runs in the page; the time is up to the next painted frame.
_TIMED = """async (action) => {
  const root = document.querySelector('.tp-root');
  const key = (k, shift) => root.dispatchEvent(new KeyboardEvent('keydown', {key: k, shiftKey: !!shift, bubbles: true}));
  const click = (sel) => root.querySelector(sel).dispatchEvent(new MouseEvent('click', {bubbles: true}));
  const actions = {
    zoom: () => click('.tp-zoom-in'),
    pan: () => key('ArrowRight', true),
    fit: () => click('.tp-fit'),
    open: () => click('.tp-group-cover'),
    close: () => root.querySelector('.tp-group-frame:last-of-type .tp-group-label')
      .dispatchEvent(new MouseEvent('click', {bubbles: true})),
    expand_all: () => click('.tp-expand-all'),
    collapse_all: () => click('.tp-collapse-all'),
    step_forward: () => key('ArrowRight'),
    end: () => key('End'),
    step_back: () => key('ArrowLeft'),
    search: () => { const s = root.querySelector('.tp-search'); s.value = 'tanh';
      s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true})); },
    nan: () => click('.tp-nan'),
  };
  const t0 = performance.now();
  actions[action]();
  await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  return performance.now() - t0;
}"""
ACTIONS = ("zoom", "pan", "fit", "open", "close", "expand_all", "collapse_all", "step_forward",
           "end", "step_back", "search", "nan")


def browser_timings(paths, width=1280, height=720):
    """``{path: {"load": ms, "elements": n, action: ms...}}`` in headless Chromium."""
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            for path in paths:
                context = browser.new_context(offline=True, viewport={"width": width, "height": height})
                page = context.new_page()
                page.set_default_timeout(120_000)
                t0 = time.perf_counter()
                page.goto(Path(path).as_uri())
                page.wait_for_selector(".tp-root[data-frame]")
                page.evaluate("() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))")
                row = {"load": (time.perf_counter() - t0) * 1000,
                       "elements": page.evaluate("document.getElementsByTagName('*').length")}
                for action in ACTIONS:
                    row[action] = page.evaluate(_TIMED, action)
                row["elements_after"] = page.evaluate("document.getElementsByTagName('*').length")
                out[path] = row
                context.close()
        finally:
            browser.close()
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.player",
                                     description="Tape player cost vs tape length.")
    parser.add_argument("--max-records", type=int, default=max(SIZES),
                        help="skip sizes above this (default: 10000)")
    parser.add_argument("--min-records", type=int, default=0, help="skip sizes below this")
    parser.add_argument("--repeats", type=int, default=1, help="runs per size (best kept)")
    parser.add_argument("--model", default="gru,rnn", help="gru, rnn or both (comma-separated)")
    parser.add_argument("--browser", action="store_true",
                        help="also open each page in headless Chromium and time it there")
    args = parser.parse_args(argv)
    sizes = [n for n in SIZES if args.min_records <= n <= args.max_records]
    keep = tempfile.mkdtemp(prefix="tp-bench-") if args.browser else None
    print(f"{'model':>5} {'records':>8} {'replay s':>9} {'layout s':>9} {'export s':>9} "
          f"{'page bytes':>11} {'bytes/rec':>10}")
    pages, per_record = [], {}
    for model in args.model.split(","):
        for n in sizes:
            records, t, size, path = measure(model, n, max(1, args.repeats),
                                             keep if n >= 1000 else None)
            per_record[model, n] = (t["replay"] + t["export"]) / records
            print(f"{model:>5} {records:>8} {t['replay']:>9.3f} {t['layout']:>9.3f} "
                  f"{t['export']:>9.3f} {size:>11,} {size // records:>10,}", flush=True)
            if path:
                pages.append(path)
        if (model, 10) in per_record and (model, 1000) in per_record:
            print(f"{model}: per-record cost, 1000 vs 10 records: "
                  f"{per_record[model, 1000] / per_record[model, 10]:.2f}x (near 1 or below: linear)")
    if pages:
        timings = browser_timings(pages)
        print("\nin Chromium, 1280x720, milliseconds (load: navigation to the first frame drawn)")
        cols = ("load",) + ACTIONS
        print(f"{'page':>16} {'elements':>8} " + " ".join(f"{c[:9]:>9}" for c in cols))
        for path, row in timings.items():
            print(f"{Path(path).stem:>16} {row['elements']:>8} " +
                  " ".join(f"{row[c]:>9.0f}" for c in cols), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
