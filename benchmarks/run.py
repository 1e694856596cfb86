"""Command line of the speed suite: run the registered workloads, print a table.

    python -m benchmarks.run [--only W1,W2,W7] [--skip W8] [--repeats N] [--threads 1]
                             [--json PATH] [--smoke] [--blas-warmup on|off]

This module owns the command line, the order of events (pin threads before
NumPy loads, then build and check each workload, then measure it) and the
presentation: one plain-text row per workload, and optionally a JSON file
with every figure. What is measured lives in `workloads.py`, how it is
measured in `harness.py`; a new workload needs no change here.

The exit status is 1 when a workload failed (an implementation disagreed
with NumPy, or crashed), so that a broken engine is never reported as fast.
A missed target is shown in the table but is not a failure: speed on a
shared machine is evidence to read, not a test to pass.
"""

import argparse
import json
import os
import platform
import sys
import traceback

from benchmarks import harness  # imports no NumPy: threads can still be pinned

PEERS = ("jit", "autograd", "torch", "tf", "xla", "jax")
# Which figure of a measurement heads the table and makes the ratios.
HEADLINE = {"time": "median", "memory": "held"}


def parse_args(argv):
    """argv (without the program name) -> argparse.Namespace."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description="Time autodiff against hand-written NumPy (and peers).")
    parser.add_argument("--only", metavar="KEYS",
                        help="comma-separated workloads, e.g. W1,W2 (default: all)")
    parser.add_argument("--repeats", type=int, default=50, metavar="N",
                        help="timed runs per implementation (default: 50)")
    parser.add_argument("--warmup", type=int, default=3, metavar="N",
                        help="untimed runs per implementation first (default: 3)")
    parser.add_argument("--threads", type=int, metavar="N",
                        help="pin BLAS/OpenMP (and torch) to N threads")
    parser.add_argument("--json", metavar="PATH", help="also write the figures here")
    parser.add_argument("--skip", metavar="KEYS", default="",
                        help="comma-separated workloads to leave out")
    parser.add_argument("--smoke", action="store_true",
                        help="small sizes where a workload has them, one round, no warm-up "
                             "(CI: proves every implementation runs and agrees)")
    parser.add_argument("--blas-warmup", choices=("on", "off"), default=None,
                        help="on: the engine's once-per-process BLAS warm-up "
                             "(autodiff/compiler/blas_warmup.py) is made before the first "
                             "workload, so every NumPy-based column runs after it; off: "
                             "TAPESCHOOL_WITHOUT_BLAS_WARMUP=1, none is made (default: on, "
                             "or off when that variable is set)")
    args = parser.parse_args(argv)
    if args.blas_warmup is None:
        args.blas_warmup = "off" if os.environ.get("TAPESCHOOL_WITHOUT_BLAS_WARMUP", "") not in (
            "", "0") else "on"
    if args.smoke:
        args.repeats, args.warmup = 1, 0
    if args.repeats < 1 or args.warmup < 0 or (args.threads is not None
                                               and args.threads < 1):
        parser.error("--repeats and --threads must be >= 1, --warmup >= 0")
    return args


def measure_time(workload, impls, args):
    """{name: {"median", "min", "repeats"}} in the workload's unit."""
    timings = harness.compare(impls, repeats=args.repeats, warmup=args.warmup)
    return {name: {"median": t.median * workload.scale,
                   "min": t.min * workload.scale,
                   "max": t.max * workload.scale,
                   "cpu_median": t.cpu_median * workload.scale,
                   "repeats": len(t.samples)}
            for name, t in timings.items()}


def measure_memory(workload, impls, args):
    """{name: {"held", "peak"}} in the workload's unit (MiB)."""
    figures = {}
    for name, make in impls.items():
        held, peak = harness.held_bytes(make)
        figures[name] = {"held": held * workload.scale, "peak": peak * workload.scale}
    return figures


MEASURES = {"time": measure_time, "memory": measure_memory}


def run_workload(workload, args):
    """Build (which checks correctness), measure, and summarise one workload."""
    figures = MEASURES[workload.measure](workload, workload.build(), args)
    headline = HEADLINE[workload.measure]
    baseline = workload.baseline
    if baseline not in figures:   # a peer baseline that is not installed: nothing to divide by
        return {"title": workload.title, "error": f"{baseline} is not installed"}
    base = figures[baseline][headline]
    row = {"title": workload.title, "unit": workload.unit, "baseline": baseline,
           "target": workload.target, "headline": headline, "figures": figures,
           "ratios": {name: fig[headline] / base
                      for name, fig in figures.items() if name != baseline}}
    if workload.measure == "time":
        # The least disturbed runs: steadier than medians when the machine is busy.
        row["ratios_min"] = {name: fig["min"] / figures[baseline]["min"]
                             for name, fig in figures.items() if name != baseline}
        if "tf" in figures:   # issue 37's yardstick: tf.function
            row["ratios_tf"] = {name: fig[headline] / figures["tf"][headline]
                                for name, fig in figures.items()}
    versus = workload.versus or baseline
    if workload.judged in figures and versus in figures:
        row["meets_target"] = bool(workload.meets_target(
            figures[versus][headline], figures[workload.judged][headline]))
    return row


def format_table(rows):
    """Plain text, one line per workload; '-' where there is nothing to show."""
    header = ("workload", "baseline", "autodiff", "ratio", "target", "met", *PEERS)
    widths = (34, 14, 14, 8, 15, 4, 9, 9, 9, 9, 9, 9)
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for key, row in rows.items():
        name = f"{key} {row['title']}"
        if "error" in row:
            lines.append(f"{name.ljust(widths[0])}  ERROR: {row['error']}")
            continue
        value = {impl: f"{fig[row['headline']]:.3g} {row['unit']}"
                 for impl, fig in row["figures"].items()}
        ratio = {impl: f"{r:.2f}x" for impl, r in row["ratios"].items()}
        met = {True: "yes", False: "NO"}.get(row.get("meets_target"), "-")
        baseline = row.get("baseline", "numpy")
        cells = (name, f"{value[baseline]} {baseline if baseline != 'numpy' else ''}".strip(),
                 value.get("autodiff", "-"),
                 ratio.get("autodiff", "-"), row["target"], met,
                 *(ratio.get(peer, "-") for peer in PEERS))
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
    return "\n".join(lines)


def format_ranges(rows):
    """One line per implementation of each timed row: median, range of the rounds, CPU
    time, and the ratio to tf.function where TensorFlow ran (issue 37's yardstick)."""
    lines = []
    for key, row in rows.items():
        if "error" in row or row.get("headline") != "median":
            continue
        lines.append(f"{key} {row['title']} ({row['unit']}; median [min, max] cpu)")
        for impl, fig in row["figures"].items():
            vs_tf = row.get("ratios_tf", {}).get(impl)
            lines.append(f"  {impl:<10} {fig['median']:8.3g} [{fig['min']:.3g}, {fig['max']:.3g}]"
                         f"  cpu {fig['cpu_median']:.3g}"
                         + (f"  {vs_tf:.2f}x tf" if vs_tf is not None else ""))
    return "\n".join(lines)


WARMUP_STATES = {
    "on": "on: one 384x384 float32 product before the first workload (the engine's "
          "compiled programs make it on their first run), so every NumPy-based column, "
          "the hand-written one included, runs after it",
    "off": "off (TAPESCHOOL_WITHOUT_BLAS_WARMUP=1): no warm-up product; a workload's own "
           "larger products may still warm OpenBLAS during its row",
}


def set_blas_warmup(state):
    """Before autodiff loads: 'off' turns the engine's warm-up off for this process."""
    if state == "off":
        os.environ["TAPESCHOOL_WITHOUT_BLAS_WARMUP"] = "1"
    else:
        os.environ.pop("TAPESCHOOL_WITHOUT_BLAS_WARMUP", None)


def warm_blas(state):
    """'on': the engine's warm-up now, before any column is timed (fair to all of them)."""
    from autodiff.compiler import blas_warmup
    if state == "on":
        blas_warmup.warm()
    return blas_warmup.state()


def describe_run(args):
    """The facts needed to compare two reports: versions, threads, repeats."""
    versions = {name: getattr(sys.modules.get(name), "__version__", None)
                for name in ("numpy", "autodiff", *PEERS)}
    return {"python": platform.python_version(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "versions": versions, "threads": harness.pinned_threads(),
            "blas": harness.blas_info(), "repeats": args.repeats,
            "warmup": args.warmup, "blas_warmup": args.blas_warmup}


def main(argv=None):
    """Run the suite; returns the exit status. `--threads` may re-exec."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    set_blas_warmup(args.blas_warmup)   # inherited by the re-exec below
    if args.threads:
        # Before anything loads NumPy: BLAS libraries read these only once.
        harness.pin_threads(args.threads,
                            [sys.executable, "-m", "benchmarks.run", *sys.argv[1:]])
    from benchmarks import registry
    registry.SMOKE = args.smoke
    from benchmarks.workloads import REGISTRY  # loads NumPy, after pinning
    blas_state = warm_blas(args.blas_warmup)
    print(f"BLAS warm-up {WARMUP_STATES[args.blas_warmup]} (state: {blas_state})",
          file=sys.stderr, flush=True)

    skip = {key.strip().upper() for key in args.skip.split(",") if key.strip()}
    keys = [key for key in REGISTRY if key not in skip] if not args.only else [
        key.strip().upper() for key in args.only.split(",") if key.strip()]
    unknown = [key for key in keys if key not in REGISTRY]
    if unknown:
        sys.exit(f"unknown workload(s) {', '.join(unknown)}; "
                 f"known: {', '.join(REGISTRY)}")

    rows, failed = {}, False
    for key in keys:
        print(f"running {key} {REGISTRY[key].title} ...", file=sys.stderr, flush=True)
        try:
            rows[key] = run_workload(REGISTRY[key], args)
        except Exception as exc:  # report every workload, then fail at the end
            failed = True
            traceback.print_exc()
            rows[key] = {"title": REGISTRY[key].title,
                         "error": f"{type(exc).__name__}: {exc}"}

    print(f"\ntimes: median of {args.repeats} interleaved runs; memory: held by"
          " the recorded forward; ratio = autodiff / baseline (numpy, or tf where no "
          "hand-written NumPy exists); peer columns: peer / baseline")
    print(f"BLAS warm-up {WARMUP_STATES[args.blas_warmup]}")
    print(format_table(rows))
    print("\n" + format_ranges(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"run": describe_run(args), "workloads": rows}, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
