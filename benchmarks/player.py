"""How the tape player's cost grows with the tape: replay, layout, export, and the page in Chromium.

    python -m benchmarks.player [--max-records 10000] [--repeats 3] [--model gru,rnn]
                                [--browser] [--rounds 5] [--projector] [--markdown]
                                [--profile 20]

Tapes of real models (``benchmarks/model_tapes.py``), unrolled to about 10,
100, 1,000, 5,000 and 10,000 records:

- ``gru``: an ``ad.keras.layers.GRU`` (8 units, 23 records a step, all in
  the scope ``gru/gru_cell``) under a ``Dense`` head and a mean squared loss;
- ``rnn``: a hand-written cell ``h = tanh(h @ W + x_t @ U + b)`` (five records
  a step, each step in its scope ``rnn/step_<t>``: 2,001 groups at 10,000
  records, so it measures the health panel too) and a ``reduce_sum``;
- ``transformer``: a stack of pre-norm transformer blocks with real tensor
  sizes (``benchmarks/transformer_tapes.py``: batch 16, 8 tokens, width 32,
  MLP 64; about 55 records and 9 groups a block), the tapes of issue 35
  (the page opened in the browser has the NaN and None bugs planted).

Python stages, the median of ``--repeats`` runs and their range, CPU time
of this process (``time.process_time``: on a shared machine other processes'
load moves wall time far more):

- **replay**: ``widgets.player.replay.replay`` with ``geometry=False`` and
  ``words=False``, as an export from the tape runs it (backward trace ->
  nodes, edges, frames without the records' and steps' words, scope tree,
  health);
- **layout**: ``widgets.player.layout.graph_layout.graph_layout`` alone, with
  every node placed and every edge routed (what ``replay`` does by default);
- **export**: ``widgets.player.page.html_export.export_html`` of the finished Replay, and
  the page's size (bytes and bytes per record);
- **from tape**: replay and export together, as ``export_html(tape, ...)`` runs them.

With ``--browser``, each page of 1,000 records or more (a NaN planted
half-way) is opened ``--rounds`` times in Chromium at 1280x720
(``benchmarks/chromium.py``) and every interaction is timed in the page:
the table gives each one's median over the rounds and its range. With
``--projector``, the page in classroom mode at 1280x720 and 1920x1080: the
on-screen size of node names, values and box names, toolbar rows, and what
lies below the fold, for the largest GRU page and lesson 14's MLP. With
``--profile N``, one more export from the tape of each model's largest size
runs under cProfile, and the N functions that took the most time (their own
and with what they called) are listed: where the next second is. Speed is
reported, never asserted.
"""

import argparse
import cProfile
import io
import pstats
import statistics
import tempfile
import time
from pathlib import Path

from widgets.player.layout.graph_layout import graph_layout
from widgets.player.page.html_export import export_html
from widgets.player.replay import gc_paused, replay

from .model_tapes import HIDDEN, gru_tape, lesson14_mlp, planted_mlp, rnn_tape  # noqa: F401
from .transformer_tapes import transformer_tape


def transformer(n_records, nan_at=None):
    """``transformer_tape`` as the other models: ``(tape, loss, variables)``; with
    ``nan_at`` (any value) the NaN and None bugs planted."""
    bugs = ("nan", "none") if nan_at is not None else ()
    tape, loss, model, _ = transformer_tape(n_records, bugs=bugs)
    return tape, loss, model.trainable_variables


SIZES = (10, 100, 1000, 5000, 10000)
MODELS = {"gru": gru_tape, "rnn": rnn_tape, "transformer": transformer}
SCREENS = ((1280, 720), (1920, 1080))


def spread(values, digits=2):
    """``'median (min-max)'`` of a list of numbers."""
    values = list(values)
    med = statistics.median(values)
    return f"{med:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def measure(model, n_records, repeats, keep=None):
    """Seconds for each Python stage (a list per stage, one per run), and the page's size.

    ``keep``: a folder to write the page to (for the browser), a NaN planted half-way.
    """
    times = {"replay": [], "layout": [], "export": [], "from tape": []}
    size = records = 0
    path = None
    for _ in range(repeats):
        tape, loss, sources = MODELS[model](n_records)
        records = len(tape.records)
        t0 = time.process_time()
        rep = replay(tape, loss, sources, geometry=False, words=False)   # as export_html(tape) does
        t1 = time.process_time()
        with gc_paused():                # as replay runs it
            graph_layout(rep.nodes, rep.edges)
        t2 = time.process_time()
        page = export_html(rep)
        t3 = time.process_time()
        for stage, seconds in (("replay", t1 - t0), ("layout", t2 - t1), ("export", t3 - t2),
                               ("from tape", (t1 - t0) + (t3 - t2))):
            times[stage].append(seconds)
        size = len(page.encode("utf-8"))
    if keep is not None:
        steps = max(1, records // (23 if model == "gru" else 5))   # transformer: any value
        tape, loss, sources = MODELS[model](n_records, nan_at=steps // 2)
        path = Path(keep) / f"{model}_{records}.html"
        export_html(tape, path, target=loss, sources=sources, names={"loss": loss})
    return records, times, size, path


def profile(model, n_records, top):
    """cProfile of one export from the tape (replay and page): the ``top`` functions by
    their own time and by time with their callees, as pstats prints them."""
    tape, loss, sources = MODELS[model](n_records)
    runner = cProfile.Profile()
    runner.enable()
    export_html(tape, target=loss, sources=sources)
    runner.disable()
    out = io.StringIO()
    stats = pstats.Stats(runner, stream=out)
    for order in ("tottime", "cumulative"):
        stats.sort_stats(order).print_stats(top)
    print(f"cProfile of one export from the tape, {model}, {len(tape.records):,} records "
          f"(profiling slows small functions most):")
    print(out.getvalue(), flush=True)


def _table(header, rows, markdown):
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            print("| " + " | ".join(str(c) for c in row) + " |")
    else:
        widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
        for row in [header] + rows:
            print("  ".join(str(c).rjust(w) for c, w in zip(row, widths)))
    print(flush=True)


def browser_tables(pages, rounds, markdown):
    """Interaction timings (median and range over ``rounds``) for each page."""
    from .chromium import ACTIONS, chromium, interaction_rounds

    with chromium() as browser:
        results = {path: interaction_rounds(browser, path, rounds) for path in pages}
    header = ["page", "records", "load s", "elements", "panel"] + [a.replace("_", " ") for a in ACTIONS]
    rows = []
    for path, runs in results.items():
        stem = Path(path).stem
        row = [stem.split("_")[0], f"{int(stem.split('_')[1]):,}", spread(r["load"] for r in runs),
               f"{runs[0]['page']:,}", f"{runs[0]['panel']:,}"]
        for action in ACTIONS:
            values = [r[action] for r in runs if r.get(action) is not None]
            row.append(spread(values, 0) if values else "-")
        rows.append(row)
    print(f"in Chromium, 1280x720: milliseconds, median (range) of {rounds} rounds; load in "
          "seconds (navigation to the first frame drawn); elements: the page's, panel: the "
          "health panel's")
    _table(header, rows, markdown)
    return results


def projector_table(pages, markdown):
    """Classroom-mode sizes at 1280x720 and 1920x1080 for ``{name: (path, box to open)}``."""
    from .chromium import chromium, projector

    px = (lambda v: "-" if v is None else f"{v:.1f}")
    rows = []
    with chromium() as browser:
        for name, (path, box) in pages.items():
            for width, height in SCREENS:
                p = projector(browser, path, width, height, open_box=box)
                rows.append([name, f"{width}x{height}", px(p["name"]), px(p["value"]), px(p["box"]),
                             p["toolbar_rows"], ", ".join(p["below"]) or "nothing"])
    print("projector (classroom mode): smallest on-screen px over the first, a backward and "
          "the last frame")
    _table(["page", "window", "node name px", "value px", "box name px", "toolbar rows",
            "below the fold"], rows, markdown)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.player",
                                     description="Tape player cost vs tape length.")
    parser.add_argument("--max-records", type=int, default=max(SIZES),
                        help="skip sizes above this (default: 10000)")
    parser.add_argument("--min-records", type=int, default=0, help="skip sizes below this")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (median kept)")
    parser.add_argument("--model", default="gru,rnn",
                        help="gru, rnn, transformer, comma-separated (default: gru,rnn)")
    parser.add_argument("--browser", action="store_true",
                        help="also open each page of 1,000+ records in Chromium and time it")
    parser.add_argument("--rounds", type=int, default=5, help="browser rounds per page")
    parser.add_argument("--projector", action="store_true",
                        help="classroom-mode sizes at 1280x720 and 1920x1080")
    parser.add_argument("--markdown", action="store_true", help="tables in Markdown")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="list the N costliest functions of one export at the largest size")
    args = parser.parse_args(argv)
    sizes = [n for n in SIZES if args.min_records <= n <= args.max_records]
    keep = tempfile.mkdtemp(prefix="tp-bench-") if (args.browser or args.projector) else None
    pages, per_record, rows = [], {}, []
    for model in args.model.split(","):
        for n in sizes:
            records, t, size, path = measure(model, n, max(1, args.repeats),
                                             keep if n >= 1000 else None)
            per_record[model, n] = statistics.median(
                (r + e) / records for r, e in zip(t["replay"], t["export"]))
            rows.append([model, f"{records:,}", spread(t["replay"]), spread(t["layout"]),
                         spread(t["export"]), spread(t["from tape"]), f"{size:,}",
                         f"{size // records:,}"])
            print(*rows[-1], flush=True)
            if path:
                pages.append(path)
    print(f"\nPython stages, CPU seconds, median (range) of {max(1, args.repeats)} runs")
    _table(["model", "records", "replay s", "layout s", "export s", "from tape s", "page bytes",
            "bytes/record"], rows, args.markdown)
    for model in args.model.split(","):
        if (model, 1000) in per_record and (model, max(sizes)) in per_record and max(sizes) > 1000:
            print(f"{model}: cost per record, {max(sizes):,} vs 1,000 records: "
                  f"{per_record[model, max(sizes)] / per_record[model, 1000]:.2f}x (near 1: linear)")
    if args.profile:
        for model in args.model.split(","):
            profile(model, max(sizes), args.profile)
    if args.browser and pages:
        print()
        browser_tables(pages, max(1, args.rounds), args.markdown)
    if args.projector and keep:
        tape, loss, variables = lesson14_mlp()
        mlp = Path(keep) / "mlp14.html"
        export_html(tape, mlp, target=loss, sources=variables, names={"loss": loss})
        gru = [p for p in pages if Path(p).stem.startswith("gru")]
        targets = {"lesson-14 MLP": (mlp, "hidden1")}
        if gru:
            targets[f"GRU {Path(gru[-1]).stem.split('_')[1]}"] = (gru[-1], None)
        projector_table(targets, args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
