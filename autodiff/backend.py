"""The array backend: the one module that knows NumPy from CuPy.

Every op's forward is written against an *array module* ``xp`` (NumPy or a
NumPy-compatible library such as CuPy) that this module hands out. Nothing
else in the engine imports NumPy for tensor data, so switching the backend
switches every op at once.

    >>> import autodiff as ad
    >>> ad.get_backend()
    'numpy'
    >>> with ad.use_backend("numpy"):
    ...     ad.constant([1.0, 2.0]).numpy()
    array([1., 2.], dtype=float32)
"""

import contextlib

import numpy

__all__ = ["xp", "get_backend", "set_backend", "use_backend", "to_numpy", "erf"]

# The active array module. Ops read ``backend.xp`` at call time.
xp = numpy
_name = "numpy"


def _load(name):
    if name == "numpy":
        return numpy
    if name == "cupy":
        try:
            import cupy
        except ImportError as err:
            raise ValueError(
                "backend 'cupy' needs CuPy: pip install 'autodiff-tape[gpu]'"
            ) from err
        if not cupy.is_available():
            raise ValueError("backend 'cupy': CuPy is installed but no GPU is available")
        return cupy
    raise ValueError(f"unknown backend {name!r}; choose 'numpy' or 'cupy'")


def get_backend():
    """Returns the name of the active backend, e.g. ``'numpy'``."""
    return _name


def set_backend(name):
    """Makes ``name`` ('numpy' or 'cupy') the backend for all new tensors.

    Example:
        >>> ad.set_backend("numpy")
    """
    global xp, _name
    xp = _load(name)
    _name = name


@contextlib.contextmanager
def use_backend(name):
    """Context manager: run the block on backend ``name``, then restore the old one."""
    previous = _name
    set_backend(name)
    try:
        yield xp
    finally:
        set_backend(previous)


def to_numpy(array):
    """Copies a backend array to a NumPy array (the widgets' boundary)."""
    if isinstance(array, numpy.ndarray) or numpy.isscalar(array):
        return numpy.asarray(array)
    get = getattr(array, "get", None)  # CuPy arrays copy to the host with .get()
    return numpy.asarray(get() if get is not None else array)


def erf(array):
    """The error function on a backend array (NumPy has none of its own).

    Uses SciPy (or CuPy's cupyx) when installed, else Python's ``math.erf``
    elementwise: exact to double precision, slower on large arrays.
    """
    if _name == "cupy":
        from cupyx.scipy.special import erf as cupy_erf
        return cupy_erf(array)
    try:
        from scipy.special import erf as scipy_erf
    except ImportError:
        import math
        return numpy.vectorize(math.erf, otypes=[array.dtype])(array)
    return scipy_erf(array).astype(array.dtype, copy=False)
