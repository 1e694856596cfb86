"""Run one piece of test code on ``autodiff`` and on TensorFlow; compare what comes out.

A conformance case is a function of a module ``m``: it builds tensors with
``m.constant``, records with ``m.GradientTape`` and returns whatever it wants
compared (tensors, None, Python values, nested lists/tuples/dicts). ``outcome``
runs it and turns the result into plain data: a tensor becomes
``Arr(dtype name, shape, numpy values)``; an exception becomes
``Raised(family)``. ``assert_same`` compares two outcomes.

Error families are defined once, in ``error_family``: TensorFlow raises
``tf.errors.InvalidArgumentError`` (not a ValueError) from kernels and plain
``ValueError`` from Python-side checks; this engine raises
``ad.errors.InvalidArgumentError``, which *is* a ValueError. All of those are
the family ``"InvalidArgument"``. ``TypeError``, ``RuntimeError`` and
``LookupError`` are their own families; anything else (an ``AttributeError``
from a bug, say) is named by its class, so it never matches by accident.
"""

import dataclasses
import functools

import numpy as np

import autodiff as ad


@dataclasses.dataclass
class Arr:
    dtype: str
    shape: tuple
    value: np.ndarray

    def __repr__(self):
        return f"Arr({self.dtype}, shape={self.shape}, {np.array2string(self.value, precision=6)})"


@dataclasses.dataclass
class Raised:
    family: str
    message: str

    def __repr__(self):
        return f"Raised({self.family}: {self.message[:200]})"


def error_family(exc):
    """The family an exception belongs to (see the module docstring)."""
    import tensorflow as tf  # only called once the ``tf`` fixture imported it

    if isinstance(exc, TypeError):
        return "TypeError"
    if isinstance(exc, (tf.errors.InvalidArgumentError, ValueError)):
        return "InvalidArgument"
    if isinstance(exc, RuntimeError):
        return "RuntimeError"
    if isinstance(exc, LookupError):
        return "LookupError"
    return type(exc).__name__


def _is_tensor(x):
    if isinstance(x, (ad.Tensor, ad.Variable)):
        return True
    mod = type(x).__module__
    return mod.startswith("tensorflow") and hasattr(x, "numpy") and hasattr(x, "dtype")


def normalize(x):
    """Tensors -> Arr, IndexedSlices -> dense Arr, containers recursively, rest as is."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(normalize(v) for v in x)
    if isinstance(x, dict):
        return {k: normalize(v) for k, v in x.items()}
    if type(x).__name__ == "IndexedSlices":  # TensorFlow's sparse gradient of gather
        import tensorflow as tf

        x = tf.convert_to_tensor(x)
    if type(x).__name__ == "TensorShape":
        return tuple(x)
    if _is_tensor(x):
        value = np.asarray(x.numpy())
        return Arr(x.dtype.name, tuple(value.shape), value)
    if isinstance(x, np.ndarray):
        return Arr(x.dtype.name, x.shape, x)
    return x


def outcome(case, m):
    """Runs ``case(m)``; returns its normalized result or a ``Raised``."""
    try:
        return normalize(case(m))
    except Exception as exc:  # noqa: BLE001 - every error is a result to compare
        return Raised(error_family(exc), f"{type(exc).__name__}: {exc}")


def attempt(thunk):
    """``thunk()``, or the ``Raised`` it raised: lets one case compare several
    independent results without the first error hiding the rest."""
    try:
        return thunk()
    except Exception as exc:  # noqa: BLE001
        return Raised(error_family(exc), f"{type(exc).__name__}: {exc}")


def tolerance(dtype):
    """(rtol, atol) per dtype; atol is scaled by the larger magnitude in the result.

    float64 is not held to 1e-12: TensorFlow's own float64 kernels are not
    (its float64 gelu is off by 3e-7 relative in the second derivative)."""
    return {"float16": (2e-3, 2e-3), "float32": (1e-5, 1e-6), "complex64": (1e-5, 1e-6)}.get(
        dtype, (1e-6, 1e-10))


def differences(a, b, path="result", tol=None):
    """A list of human-readable differences between two normalized outcomes."""
    if isinstance(a, Raised) or isinstance(b, Raised):
        if isinstance(a, Raised) and isinstance(b, Raised) and a.family == b.family:
            return []
        return [f"{path}: ad {a!r} vs tf {b!r}"]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [f"{path}: ad has {len(a)} items, tf {len(b)}"]
        return [d for i, (u, v) in enumerate(zip(a, b))
                for d in differences(u, v, f"{path}[{i}]", tol)]
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(a)} vs {sorted(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}[{k!r}]", tol)]
    if isinstance(a, Arr) and isinstance(b, Arr):
        if a.dtype != b.dtype or a.shape != b.shape:
            return [f"{path}: ad {a.dtype}{list(a.shape)} vs tf {b.dtype}{list(b.shape)}"]
        rtol, atol = tol or tolerance(a.dtype)
        if a.value.dtype.kind in "fc":
            scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isinf(b.value), 0, b.value)),
                                              initial=0.0)))
            ok = np.allclose(a.value, b.value, rtol=rtol, atol=atol * scale, equal_nan=True)
        else:
            ok = np.array_equal(a.value, b.value)
        return [] if ok else [f"{path}: values differ\n  ad {a!r}\n  tf {b!r}"]
    if isinstance(a, float) and isinstance(b, float):
        return [] if np.isclose(a, b, equal_nan=True) else [f"{path}: ad {a!r} vs tf {b!r}"]
    if a != b or type(a) is not type(b):
        return [f"{path}: ad {a!r} vs tf {b!r}"]
    return []


def compare(case, tf, tol=None):
    """(ad outcome, tf outcome, differences) for one case."""
    got, want = outcome(case, ad), outcome(case, tf)
    return got, want, differences(got, want, tol=tol)


def assert_same(case, tf, tol=None):
    got, want, diffs = compare(case, tf, tol)
    assert not diffs, f"{case.__name__}: ad and TensorFlow differ:\n" + "\n".join(diffs)
    return got


def value_and_two_derivatives(m, f, x):
    """[f(x), f'(x), f''(x)] through two nested tapes watching x (for ``m`` = ad or tf)."""
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    return [y, g, outer.gradient(g, x)]


def same_on_both(case):
    """Turns ``case(m)`` into a pytest test that runs it on ad and on tf and compares.

    The test also asserts TensorFlow ran the case without error unless it is
    named ``*_raises*`` (then TensorFlow must raise), so a broken case cannot
    pass vacuously.
    """

    def test(tf):
        got, want, diffs = compare(case, tf)
        assert not diffs, f"{case.__name__}: ad and TensorFlow differ:\n" + "\n".join(diffs)
        if "raises" in case.__name__:
            assert isinstance(want, Raised), f"{case.__name__}: TensorFlow raised nothing: {want!r}"
        else:
            assert not isinstance(want, Raised), f"{case.__name__}: TensorFlow raised {want!r}"

    test.__name__ = case.__name__
    test.__qualname__ = case.__name__
    test.__doc__ = case.__doc__
    test.case = case
    return test


@functools.lru_cache(maxsize=None)
def modules():
    """(ad, tf) for code that needs both outside a test."""
    from .conftest import _import_tensorflow

    return ad, _import_tensorflow()
