"""How the tape player's cost grows with the tape: layout, replay, export.

    python -m benchmarks.player [--max-records 2000] [--repeats 3]

Builds an unrolled RNN with ``ad`` ops, ``h = tanh(h @ W + x_t @ U + b)``
(five records per step, each step in its name scope, one ``reduce_sum`` at
the end), for about 10, 100,
1,000 and 2,000 records, and times the three stages of showing it:

- **replay**: ``widgets.replay.replay`` (backward trace -> nodes, edges,
  frames), minus the layout it computes;
- **layout**: ``widgets.layout`` via ``replay._graph_layout`` alone;
- **export**: ``widgets.html_export.export_html`` of the finished Replay
  (JSON, the static SVG fallback, the inlined player), and the page's size.

The last line compares the cost per record at 1,000 records with the cost
at 10: near 1 means linear. Speed is reported, never asserted.
"""

import argparse
import time

import numpy as np

import autodiff as ad
from widgets.replay import _graph_layout, replay
from widgets.html_export import export_html

SIZES = (10, 100, 1000, 2000)
HIDDEN = 4


def rnn_tape(n_records, hidden=HIDDEN, seed=0, scoped=True, nan_at=None):
    """A persistent tape of an unrolled RNN with about ``n_records`` records.

    Args:
        scoped: each step in name scope ``rnn/step_<t>``, the loss in ``loss``.
        nan_at: plant a NaN in the input of that step (for the debugging views).

    Returns:
        ``(tape, loss, [W, U, b])``.
    """
    rng = np.random.default_rng(seed)
    steps = max(1, round((n_records - 1) / 5))
    W = ad.Variable(rng.normal(size=(hidden, hidden)) * 0.5, name="W")
    U = ad.Variable(rng.normal(size=(2, hidden)) * 0.5, name="U")
    b = ad.Variable(np.zeros((1, hidden)), name="b")
    xs = [ad.constant(rng.normal(size=(1, 2))) for _ in range(steps)]
    if nan_at is not None:
        xs[nan_at] = ad.constant(np.array([[np.nan, 0.0]]))
    with ad.GradientTape(persistent=True) as tape:
        h = ad.constant(np.zeros((1, hidden)))
        for t, x in enumerate(xs):
            with ad.name_scope(f"rnn/step_{t}" if scoped else ""):
                h = ad.tanh(ad.matmul(h, W) + ad.matmul(x, U) + b)
        with ad.name_scope("loss" if scoped else ""):
            loss = ad.reduce_sum(h)
    return tape, loss, [W, U, b]


def measure(n_records, repeats):
    """Best-of-``repeats`` seconds for each stage, and the page's size."""
    best = {"layout": float("inf"), "replay": float("inf"), "export": float("inf")}
    size = records = 0
    for _ in range(repeats):
        tape, loss, sources = rnn_tape(n_records)
        records = len(tape.records)
        t0 = time.perf_counter()
        rep = replay(tape, loss, sources)
        t1 = time.perf_counter()
        _graph_layout(rep.nodes, rep.edges)
        t2 = time.perf_counter()
        page = export_html(rep)
        t3 = time.perf_counter()
        best["layout"] = min(best["layout"], t2 - t1)
        best["replay"] = min(best["replay"], max((t1 - t0) - (t2 - t1), 0.0))
        best["export"] = min(best["export"], t3 - t2)
        size = len(page.encode("utf-8"))
    return records, best, size


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.player",
                                     description="Tape player cost vs tape length.")
    parser.add_argument("--max-records", type=int, default=max(SIZES),
                        help="skip sizes above this (default: 2000)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (best kept)")
    args = parser.parse_args(argv)
    sizes = [n for n in SIZES if n <= args.max_records]
    print(f"{'records':>8} {'layout s':>9} {'replay s':>9} {'export s':>9} {'total s':>8} "
          f"{'page bytes':>11} {'bytes/rec':>10}")
    per_record = {}
    for n in sizes:
        records, t, size = measure(n, max(1, args.repeats))
        total = t["layout"] + t["replay"] + t["export"]
        per_record[n] = total / records
        print(f"{records:>8} {t['layout']:>9.3f} {t['replay']:>9.3f} {t['export']:>9.3f} "
              f"{total:>8.3f} {size:>11,} {size // records:>10,}")
    if 10 in per_record and 1000 in per_record:
        print(f"per-record cost, 1000 vs 10 records: {per_record[1000] / per_record[10]:.2f}x "
              "(near 1 or below: linear)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
