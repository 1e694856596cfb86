"""What a workload is, the registry of them, and the checks they share.

A workload is a row of the table: a name, how it is measured ("time" or
"memory"), its unit and target, and a `build()` that returns one callable
per implementation ("numpy", "autodiff", and the peers "autograd" and
"torch" when they are installed). `workloads.py` fills REGISTRY with
`@register`; `run.py` only iterates over it, so a new workload (W3
jacobian, W4 batch_jacobian, ...) never touches `run.py`.

This module owns the shared rules: every implementation must agree with
the NumPy baseline before anything is measured, a missing peer is a note
and not an error, and a missing engine leaves the baselines running.
"""

import importlib
import os
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from benchmarks import harness

_noted = set()


def note(message):
    """Print a remark once (a skipped peer, a missing engine) above the table."""
    if message not in _noted:
        _noted.add(message)
        print(f"note: {message}", flush=True)


def import_peer(name):
    """Import a peer library ("autograd", "torch"), or None with a note."""
    threads = harness.pinned_threads()
    if name == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if name == "jax" and threads == 1 and "jax" not in sys.modules:
        # XLA's CPU client reads its thread pool's size once, when it starts.
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_"
                                   "eigen=false intra_op_parallelism_threads=1").strip()
    try:
        module = importlib.import_module(name)
    except ImportError:
        note(f"{name} is not installed; its column is skipped")
        return None
    if name == "torch" and threads:
        # PyTorch sizes its own pool; --threads must reach it as well.
        module.set_num_threads(threads)
    if name == "tensorflow" and threads:
        _pin_tensorflow(module, threads)
    return module


def _pin_tensorflow(tf, threads):
    """TensorFlow's own pools: possible only before its runtime starts (then a note)."""
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    except RuntimeError as exc:
        note(f"tensorflow's thread pools were already started: {exc}")


@dataclass(frozen=True)
class Workload:
    """One row of the table.

    `build()` returns {implementation name: callable}; a "time" workload's
    callables are timed, a "memory" workload's build the object whose held
    bytes are measured. Figures are seconds or bytes times `scale`, in `unit`.
    `meets_target(numpy, autodiff)` takes both figures in that unit.
    """

    key: str
    title: str
    measure: str
    unit: str
    scale: float
    target: str
    meets_target: Callable[[float, float], bool]
    build: Callable[[], dict]
    baseline: str = "numpy"   # the column ratios divide by ("tf" where no NumPy exists)
    judged: str = "autodiff"  # the column `meets_target` judges
    versus: str = ""          # ... against this column's figure (default: the baseline)


REGISTRY = {}
# Set by ``run.py --smoke``: workloads that have a small size build that one (CI's
# smoke run, which only proves that every implementation still runs and agrees).
SMOKE = False


def register(key, title, measure, unit, scale, target, meets_target, baseline="numpy",
             judged="autodiff", versus=""):
    """Decorator adding a build function to REGISTRY under `key`."""

    def decorator(build):
        REGISTRY[key] = Workload(key, title, measure, unit, scale, target,
                                 meets_target, build, baseline, judged, versus)
        return build

    return decorator


class GradientMismatch(AssertionError):
    """An implementation disagrees with the NumPy baseline: figures are void."""


def as_array(value):
    """ad.Tensor, torch.Tensor or array -> np.ndarray, for comparisons."""
    if hasattr(value, "detach"):  # a torch tensor that requires grad
        value = value.detach().cpu()   # .cpu(): it may live on a GPU
    if hasattr(value, "numpy"):
        value = value.numpy()
    return np.asarray(value)


def check_against_numpy(key, impls, rtol=1e-4, atol_scale=1e-6):
    """Call each implementation once; its (loss, grads) must match NumPy's.

    The absolute tolerance follows the size of the reference (``atol_scale``
    times its largest entry): an entry that cancels to nearly zero carries
    rounding error of the array's scale, not its own.
    """
    want_loss, want_grads = impls["numpy"]()
    want = [np.asarray(want_loss)] + [np.asarray(g) for g in _as_list(want_grads)]
    for name, fn in impls.items():
        got_loss, got_grads = fn()
        got = [as_array(got_loss)] + [as_array(g) for g in _as_list(got_grads)]
        for index, (g, w) in enumerate(zip(got, want, strict=True)):
            what = "loss" if index == 0 else f"gradient {index - 1}"
            # A float64 result would also make the timing unfair: compare dtypes.
            if (g.shape, g.dtype) != (w.shape, w.dtype):
                raise GradientMismatch(
                    f"{key}: {name}'s {what} has shape {g.shape} and dtype "
                    f"{g.dtype}; NumPy's has {w.shape} and {w.dtype}")
            # Subnormal numbers carry no relative precision: below the
            # smallest normal number, any two values count as equal.
            atol = max(atol_scale * float(np.abs(w).max(initial=0.0)),
                       float(np.finfo(w.dtype).tiny) if w.dtype.kind == "f" else 0.0)
            if not np.allclose(g, w, rtol=rtol, atol=atol):
                raise GradientMismatch(
                    f"{key}: {name}'s {what} differs from NumPy's by up to "
                    f"{np.abs(g - w).max():.3g} (rtol {rtol}, atol {atol:.3g})")


def _as_list(grads):
    return list(grads) if isinstance(grads, (list, tuple)) else [grads]


def load_autodiff():
    """The engine, or None (with a note) while it cannot be imported."""
    try:
        ad = importlib.import_module("autodiff")
    except ImportError as exc:
        note(f"autodiff is not importable ({exc}); only baselines and peers run")
        return None
    # A half-written package (no __init__.py yet) imports as an empty
    # namespace; a name missing later on is a real error and is not hidden.
    if not hasattr(ad, "GradientTape"):
        note("autodiff has no GradientTape yet; only baselines and peers run")
        return None
    return ad


def add_jit(impls, ad, fn, *tensors):
    """The workload compiled: ``ad.function(fn, jit_compile=True)(*tensors)`` (the "jit" column).

    ``fn`` takes the workload's tensors (Variables stay captured by
    reference); it is traced on the first call, which the warm-up absorbs.
    """
    compiled = ad.function(fn, jit_compile=True)
    impls["jit"] = lambda: compiled(*tensors)


def add_engine(impls, ad, step, params, *arrays):
    """The engine's columns: "autodiff" runs ``step(ad, variables, *tensors)`` eagerly,
    "jit" compiled (``add_jit``); ``params`` become ``ad.Variable``s, ``arrays`` constants."""
    variables = [ad.Variable(p) for p in params]
    tensors = [ad.constant(a) for a in arrays]
    impls["autodiff"] = lambda: step(ad, variables, *tensors)
    add_jit(impls, ad, lambda *ts: step(ad, variables, *ts), *tensors)


def add_peers(impls, peer_builders, *args):
    """Add each installed peer's callable; a peer that fails is only noted.

    peer_builders maps a peer's name to make(module, *args) -> callable.
    """
    for name, make in peer_builders.items():
        module = import_peer(name)
        if module is None:
            continue
        try:
            impls[name] = make(module, *args)
        except Exception as exc:  # a peer's breakage must not hide our figures
            note(f"{name} skipped: {type(exc).__name__}: {exc}")
