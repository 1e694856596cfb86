"""Command line of the speed suite: run the registered workloads, print a table.

    python -m benchmarks.run [--only W1,W2,W7] [--repeats N] [--threads 1]
                             [--json PATH]

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
import platform
import sys
import traceback

from benchmarks import harness  # imports no NumPy: threads can still be pinned

PEERS = ("jit", "autograd", "torch")
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
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.warmup < 0 or (args.threads is not None
                                               and args.threads < 1):
        parser.error("--repeats and --threads must be >= 1, --warmup >= 0")
    return args


def measure_time(workload, impls, args):
    """{name: {"median", "min", "repeats"}} in the workload's unit."""
    timings = harness.compare(impls, repeats=args.repeats, warmup=args.warmup)
    return {name: {"median": t.median * workload.scale,
                   "min": t.min * workload.scale,
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
    base = figures["numpy"][headline]
    row = {"title": workload.title, "unit": workload.unit,
           "target": workload.target, "headline": headline, "figures": figures,
           "ratios": {name: fig[headline] / base
                      for name, fig in figures.items() if name != "numpy"}}
    if workload.measure == "time":
        # The least disturbed runs: steadier than medians when the machine is busy.
        row["ratios_min"] = {name: fig["min"] / figures["numpy"]["min"]
                             for name, fig in figures.items() if name != "numpy"}
    if "autodiff" in figures:
        row["meets_target"] = bool(
            workload.meets_target(base, figures["autodiff"][headline]))
    return row


def format_table(rows):
    """Plain text, one line per workload; '-' where there is nothing to show."""
    header = ("workload", "numpy", "autodiff", "ratio", "target", "met", *PEERS)
    widths = (20, 14, 14, 8, 15, 4, 9, 9)
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
        cells = (name, value["numpy"], value.get("autodiff", "-"),
                 ratio.get("autodiff", "-"), row["target"], met,
                 *(ratio.get(peer, "-") for peer in PEERS))
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
    return "\n".join(lines)


def describe_run(args):
    """The facts needed to compare two reports: versions, threads, repeats."""
    versions = {name: getattr(sys.modules.get(name), "__version__", None)
                for name in ("numpy", "autodiff", *PEERS)}
    return {"python": platform.python_version(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "versions": versions, "threads": harness.pinned_threads(),
            "blas": harness.blas_info(), "repeats": args.repeats,
            "warmup": args.warmup}


def main(argv=None):
    """Run the suite; returns the exit status. `--threads` may re-exec."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.threads:
        # Before anything loads NumPy: BLAS libraries read these only once.
        harness.pin_threads(args.threads,
                            [sys.executable, "-m", "benchmarks.run", *sys.argv[1:]])
    from benchmarks.workloads import REGISTRY  # loads NumPy, after pinning

    keys = list(REGISTRY) if not args.only else [
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
          " the recorded forward; ratio = autodiff / numpy; peer columns: "
          "peer / numpy")
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"run": describe_run(args), "workloads": rows}, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
