"""Measuring tools for the speed suite: interleaved timing, held memory, threads.

This module owns *how* things are measured; `workloads.py` owns *what* is
measured and `run.py` owns the command line and the table. It must not
import NumPy (or anything that loads a BLAS): `pin_threads` has to run
before the first BLAS library is loaded, and `run.py` imports this module
first.

Why interleave? On a shared machine the speed of the CPU drifts (turbo,
other jobs, thermal limits). Timing all of A and then all of B lets that
drift land on one side only. Running A, B, A, B, ... in one process lets
both sides see the same conditions, so their *ratio* stays meaningful
even when the absolute figures wander.

Example:
    >>> import time
    >>> timings = compare({"short": lambda: time.sleep(0.001),
    ...                    "long": lambda: time.sleep(0.002)}, repeats=5)
    >>> timings["long"].median > timings["short"].median
    True
"""

import gc
import os
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass

# The environment variables the common BLAS/OpenMP runtimes read once, when
# they are loaded. Setting them later has no effect, hence the re-exec below.
THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
# Set on the re-executed process so that it knows it is already pinned and
# does not re-exec forever; workloads read it to pin PyTorch too.
PINNED_MARKER = "AUTODIFF_BENCH_THREADS"


@dataclass(frozen=True)
class Timing:
    """Wall-clock samples of one callable, in seconds per call."""

    name: str
    samples: tuple
    cpu_samples: tuple = ()   # process CPU seconds per call (all threads), same rounds

    @property
    def median(self):
        return statistics.median(self.samples)

    @property
    def max(self):
        return max(self.samples)

    @property
    def cpu_median(self):
        """CPU time per call: above the wall time when several threads work, and
        steadier than it on a loaded machine (time spent waiting for a core is not
        counted)."""
        return statistics.median(self.cpu_samples) if self.cpu_samples else None

    @property
    def min(self):
        # The minimum is the run least disturbed by the machine; the median
        # is what a user typically sees. Both are reported.
        return min(self.samples)


def compare(callables, repeats=50, warmup=3):
    """Time several callables side by side, interleaved, in this process.

    Args:
        callables: dict mapping a name to a zero-argument callable.
        repeats: timed calls per callable.
        warmup: untimed calls per callable first (imports, caches, BLAS
            thread start-up, the allocator reaching its steady state).

    Returns:
        dict mapping each name to a `Timing`.

    Example:
        >>> compare({"noop": lambda: None}, repeats=3)["noop"].min >= 0
        True
    """
    names = list(callables)
    for _ in range(warmup):
        for name in names:
            callables[name]()
    samples = {name: [] for name in names}
    cpu = {name: [] for name in names}
    for round_index in range(repeats):
        order = _round_order(names, round_index)
        # Collect outside the timed region; during it the collector stays on,
        # because collecting the garbage an engine makes is part of its cost.
        gc.collect()
        for name in order:
            fn = callables[name]
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            samples[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return {name: Timing(name, tuple(samples[name]), tuple(cpu[name])) for name in names}


def _round_order(names, round_index):
    """The order of one round: every rotation of ``names``, then every rotation reversed.

    A callable that runs right after another pays for what that one left
    behind (polluted caches, an allocator full of freed blocks). Rotating
    alone keeps each callable's predecessor the same (in ``[a, b, c]``, ``c``
    always follows ``b``); the reversed rotations give it the other
    neighbour, so over ``2 * len(names)`` rounds of three each callable
    follows each other one equally often.

    >>> [_round_order(["a", "b", "c"], r) for r in range(6)]
    [['a', 'b', 'c'], ['b', 'c', 'a'], ['c', 'a', 'b'], ['c', 'b', 'a'], ['a', 'c', 'b'], ['b', 'a', 'c']]
    """
    shift = round_index % len(names)
    order = names[shift:] + names[:shift]
    return order[::-1] if (round_index // len(names)) % 2 else order


def held_bytes(make):
    """Bytes that the result of `make()` keeps allocated, seen by tracemalloc.

    Create the inputs *before* calling this: only what `make` allocates and
    is still alive while its result is held counts (temporaries freed inside
    `make` do not). NumPy reports its array buffers to tracemalloc, so arrays
    count; memory from allocators that do not report (PyTorch's) is invisible.

    Args:
        make: zero-argument callable returning the object to measure.

    Returns:
        (held, peak): bytes still allocated while the result is alive, and
        the peak above the starting point while `make` ran.

    Example:
        >>> held, peak = held_bytes(lambda: bytearray(10_000_000))
        >>> 9_000_000 < held <= peak
        True
    """
    # One untimed call first, so that one-off allocations (lazy imports,
    # caches an engine fills on its first use) are not charged to the object.
    make()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        gc.collect()
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = make()
        # Garbage that only a collection would free is not "held".
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return current - before, peak - before


def mib(n_bytes):
    """Bytes to MiB (2**20 bytes)."""
    return n_bytes / 2**20


def pin_threads(n_threads, argv):
    """Make NumPy's BLAS (and OpenMP) use `n_threads`, re-executing if needed.

    BLAS libraries read their thread count when they are loaded, so the
    robust way is to set the variables and start the interpreter again. If
    this process already carries the setting, return without re-executing.

    Args:
        n_threads: positive int.
        argv: the full command line to re-execute, starting with the
            interpreter, e.g. [sys.executable, "-m", "benchmarks.run", ...].

    Returns:
        None (when already pinned); otherwise it does not return.
    """
    wanted = str(n_threads)
    if os.environ.get(PINNED_MARKER) == wanted:
        return
    env = dict(os.environ)
    env.update({name: wanted for name in THREAD_ENV_VARS})
    env[PINNED_MARKER] = wanted
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(argv[0], argv, env)


def pinned_threads():
    """The thread count `pin_threads` set for this process, or None."""
    value = os.environ.get(PINNED_MARKER)
    return int(value) if value else None


def blas_info():
    """What threadpoolctl sees of the loaded BLAS/OpenMP pools, if installed.

    Returns:
        list of dicts (library, version, num_threads), or None when
        threadpoolctl is not installed. Used to confirm `--threads` worked.
    """
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return [
        {key: pool.get(key) for key in ("internal_api", "version", "num_threads")}
        for pool in threadpool_info()
    ]
