"""Op overhead of a compiled chain, with and without the fused program (issue 37, item 3).

    python -m benchmarks.fused [--steps 500] [--repeats 30] [--back-to-back 10] [--json PATH]

W1's chain (``y = sin(y) * 1.0001 + 0.1``, ``steps`` times on a float32
vector of 8, ``loss = sum(y)``, the gradient with respect to ``x``: 3 ops per
step) runs three ways, interleaved (``harness.compare``): hand-written NumPy
(``workloads.w1_numpy``), ``ad.function(jit_compile=True)`` (the NumPy
program) and ``ad.function(jit_compile=True, experimental_fuse=True)`` (its
elementwise chains as numba loops, ``autodiff/compiler/fused/``). The
table gives each one's median and range in microseconds per op
(time / (3 * steps)), timed two ways:

- one call, right after the others' (``numpy``, ``jit``, ``fused``): its code
  and data start cold in the caches; on this VM that costs the fused program
  about 45-50 us a call (benchmarks/README.md says where it goes);
- ``K`` calls in a row (``numpy xK``, ...; ``--back-to-back K``, 0 for none),
  per call: caches warm, as in a training loop that does little else.

Then the fused form's first call (wall and CPU time: compiling), its chains,
the kernels it compiled and the numba calls one run makes (the kernels in a
row run as one, ``compiler/fused/runs.py``). Without numba the fused rows are
skipped and the table says so. Results are checked first: the fused loss and
gradient against the NumPy program's (rtol 1e-4; they differ only in sin's
and cos's last bits).
"""

import argparse
import json
import sys
import time

from benchmarks import harness


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fused")
    parser.add_argument("--steps", type=int, default=500, help="chain length (3 ops each)")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--back-to-back", type=int, default=10, metavar="K",
                        help="also time K calls in a row (warm caches); 0: not")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)

    import numpy as np

    import autodiff as ad
    from autodiff.compiler import fused
    from benchmarks import workloads

    steps, n_ops = args.steps, 3 * args.steps
    x = np.linspace(-1.0, 1.0, 8).astype(np.float32)
    tx = ad.constant(x)

    def chain(x):
        return workloads.w1_autodiff(ad, x, steps)

    impls = {"numpy": lambda: workloads.w1_numpy(x, steps),
             "jit": lambda: jit(tx)}
    jit = ad.function(chain, jit_compile=True)
    jit(tx)
    figures = {"steps": steps, "ops": n_ops, "numba": fused.available()}
    if fused.available():
        fuse = ad.function(chain, jit_compile=True, experimental_fuse=True)
        start, cpu = time.perf_counter(), time.process_time()
        got = fuse(tx)
        figures["fused_first_call_s"] = time.perf_counter() - start
        figures["fused_first_call_cpu_s"] = time.process_time() - cpu
        form = fused.for_program(fuse.get_concrete_function(tx).program())
        figures["fused_chains"], figures["fused_kernels"] = len(form.kernels), form.compiled
        figures["fused_compile_s"] = form.compile_seconds
        figures["fused_numba_calls"] = len(getattr(form, "drivers", {})) + sum(
            1 for name in form.kernels if f"{name}(" in form.source)
        for a, b in zip(got, jit(tx)):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-30)
        impls["fused"] = lambda: fuse(tx)
    calls = {name: 1 for name in impls}
    if args.back_to_back > 0:
        k = args.back_to_back
        for name, fn in list(impls.items()):
            impls[f"{name} x{k}"] = lambda fn=fn: [fn() for _ in range(k)]
            calls[f"{name} x{k}"] = k
    timings = harness.compare(impls, repeats=args.repeats, warmup=args.warmup)
    print(f"chain of {n_ops} ops (W1, {steps} steps), us per op: median [min - max]")
    for name, t in timings.items():
        row = {k: getattr(t, k) / n_ops / calls[name] * 1e6 for k in ("median", "min", "max")}
        figures[name] = row
        print(f"  {name:9s} {row['median']:8.3f}  [{row['min']:.3f} - {row['max']:.3f}]")
    if fused.available():
        print(f"  fused: first call {figures['fused_first_call_s']:.1f} s "
              f"({figures['fused_first_call_cpu_s']:.1f} s CPU; "
              f"{figures['fused_chains']} chains, {figures['fused_kernels']} kernels "
              f"compiled, the others reused; numba calls per run: "
              f"{figures['fused_numba_calls']})")
    else:
        print("  fused: skipped, numba is not installed (pip install 'tapeschool[fast]')")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
