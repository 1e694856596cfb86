"""The array backend: the one module that knows NumPy from CuPy.

Every op's forward is written against an *array module* ``xp`` that this
module hands out. Nothing else in the engine calls NumPy's array functions
on tensor data, so switching the backend switches every op at once:

    >>> import autodiff as ad
    >>> with ad.use_backend("strict"):
    ...     print(ad.get_backend())
    ...     ad.constant([1.0, 2.0]).numpy()
    strict
    array([1., 2.], dtype=float32)

The backends:

- ``"numpy"``: the default, and the engine's only hard dependency.
- ``"cupy"``: CuPy on an NVIDIA GPU (``pip install -e ".[gpu]"``). It is
  chosen only when ``cupy.is_available()``: importing CuPy succeeds on a
  machine with no GPU, and then fails at first use.
- ``"strict"``: for testing. NumPy behind a wall (``autodiff/_strict.py``):
  its arrays refuse every implicit conversion to NumPy, as CuPy's do, so a
  stray ``np.`` call or a hidden copy to the host fails a test on a machine
  with no GPU. The whole engine test suite runs on it.

A tensor lives on the backend that made it and stays there: ops never copy
to the host behind your back. ``Tensor.numpy()`` (and printing) copy to the
host explicitly; ``ad.to_backend(t, "numpy")`` moves a tensor. An op whose
inputs live on two backends raises InvalidArgumentError naming both.
"""

import contextlib

import numpy

from . import _strict

__all__ = ["xp", "host_scalar", "get_backend", "set_backend", "use_backend", "available_backends",
           "check_name", "namespace", "backend_of", "to_numpy", "move", "erf"]

# The active array module. Ops read ``backend.xp`` at call time.
xp = numpy
_name = "numpy"
_NAMES = ("numpy", "strict", "cupy")


_loaded = {}   # name -> array module, once it has been checked


def _load(name):
    module = _loaded.get(name)
    if module is None:
        module = _loaded[name] = _import(name)
    return module


def _import(name):
    if name == "numpy":
        return numpy
    if name == "strict":
        return _strict
    if name == "cupy":
        try:
            import cupy
        except ImportError as err:
            raise ValueError(
                "backend 'cupy' needs CuPy: pip install -e \".[gpu]\" (CUDA 12 wheels)") from err
        if not cupy.is_available():
            raise ValueError("backend 'cupy': CuPy is installed but no GPU is available")
        import cupyx
        # NumPy (and TensorFlow) raise on a singular matrix or a failed
        # Cholesky; CuPy returns NaNs unless asked to check, which syncs.
        cupyx.seterr(linalg="raise")
        return cupy
    raise ValueError(f"unknown backend {name!r}; choose one of {list(_NAMES)}")


def check_name(name):
    """``name`` if it is a backend that works here, else ValueError saying why."""
    _load(name)
    return name


def namespace(name):
    """The array module of backend ``name`` (``numpy``, ``cupy`` or the strict one)."""
    return _load(name)


def get_backend():
    """Returns the name of the active backend: ``'numpy'``, ``'cupy'`` or ``'strict'``."""
    return _name


def set_backend(name):
    """Makes ``name`` the backend for all new tensors.

    Args:
        name: ``"numpy"`` (default), ``"cupy"`` (needs a GPU) or ``"strict"``
            (testing: NumPy arrays that refuse implicit conversion).

    Raises:
        ValueError: an unknown name, or CuPy missing or without a GPU.

    Tensors made before the switch stay where they are; move them with
    ``ad.to_backend``.

    Example:
        >>> previous = ad.get_backend()
        >>> ad.set_backend("strict")
        >>> ad.constant([1.0, 2.0]).numpy()      # made on the strict backend
        array([1., 2.], dtype=float32)
        >>> ad.set_backend(previous)
    """
    global xp, _name
    xp = _load(name)
    _name = name


@contextlib.contextmanager
def use_backend(name):
    """Context manager: run the block on backend ``name``, then restore the old one.

    The old backend comes back even when the block raises.

    >>> with ad.use_backend("strict"):
    ...     y = ad.sin(ad.constant([1.0, 2.0]))     # a strict tensor
    """
    previous = _name
    set_backend(name)
    try:
        yield xp
    finally:
        set_backend(previous)


def available_backends():
    """The backends that work on this machine: numpy and strict, cupy with a GPU."""
    names = ["numpy", "strict"]
    try:
        import cupy
        if cupy.is_available():
            names.append("cupy")
    except ImportError:
        pass
    return names


def backend_of(array):
    """The name of the backend an array belongs to (None for anything else).

    >>> from autodiff.backend import backend_of
    >>> backend_of(np.ones(2))
    'numpy'
    """
    kind = type(array)
    if kind is numpy.ndarray or isinstance(array, numpy.generic):
        return "numpy"
    if kind is _strict.StrictArray:
        return "strict"
    if kind.__module__.startswith("cupy"):
        return "cupy"
    return None


def host_scalar(array):
    """A one-element array's value on the host, as a NumPy scalar: one explicit copy from a
    device (a branch's test, ``float(t)``), where ``bool(array)`` would be a hidden one.

    >>> from autodiff.backend import host_scalar
    >>> float(host_scalar(np.array([[2.5]])))
    2.5
    """
    return to_numpy(array).reshape(())[()]


def to_numpy(array, copy=False, implicit=False):
    """Copies a backend array to the host, as a NumPy array (the explicit exit).

    Args:
        array: an array of any backend (or a Python number).
        copy: also copy a NumPy array (device arrays are always copied).
        implicit: the caller is NumPy reading a tensor (``np.asarray(t)``):
            allowed on NumPy and CuPy, refused (TypeError) on the strict
            backend, whose job is to find implicit host copies.

    The widgets call this at their boundary.
    """
    if isinstance(array, (numpy.ndarray, numpy.generic)):
        return numpy.array(array, copy=copy) if copy else numpy.asarray(array)
    if implicit and type(array) is _strict.StrictArray:
        raise TypeError(_strict.IMPLICIT.replace("`.get()`", "`.numpy()`"))
    get = getattr(array, "get", None)   # CuPy and strict arrays copy to the host with .get()
    if get is None:
        return numpy.array(array)       # Python numbers and lists
    return get()


def move(array, name):
    """``array`` on backend ``name``: the same array if it is already there, else a copy."""
    if backend_of(array) == name:
        return array
    host = to_numpy(array)
    return host if name == "numpy" else _load(name).asarray(host)


def erf(array):
    """The error function on an array of any backend (NumPy has none of its own).

    Floating-point arrays only, as TensorFlow's kernel: each library would
    answer an integer array differently (in its dtype, or in float64).
    """
    if array.dtype.kind not in "fc":
        raise TypeError(f"erf takes floating-point values, not {array.dtype}")
    name = backend_of(array)
    if name == "cupy":
        from cupyx.scipy.special import erf as cupy_erf
        return cupy_erf(array)
    if name == "strict":
        return _strict.erf(array)
    return numpy_erf(array)


def numpy_erf(array):
    """The error function on a NumPy array.

    Uses SciPy when installed, else Python's ``math.erf`` elementwise: exact
    to double precision, slower on large arrays.
    """
    try:
        from scipy.special import erf as scipy_erf
    except ImportError:
        import math
        return numpy.vectorize(math.erf, otypes=[array.dtype])(array)
    return scipy_erf(array).astype(array.dtype, copy=False)
