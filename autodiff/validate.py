"""Argument checks shared by the public op wrappers, with messages in one voice.

Every check names the op (TensorFlow's op type, e.g. ``Sum``), the argument
and what was wrong with it. The wrappers call these before an op runs, or
only after it fails, so a valid call pays little or nothing: the primitive
call path in ``registry.py`` stays free of checks.

Which error family: TensorFlow raises ``TypeError`` when a Python value cannot
be converted to the integer tensor an argument needs (``axis=1.5``, a shape of
``[1.5]``), and ``InvalidArgumentError`` (here also a ValueError) when the
value converts but is out of range (``axis=5`` on a matrix, a negative size).

>>> from autodiff.validate import normalize_axes
>>> normalize_axes("Sum", 1.5, 2)
Traceback (most recent call last):
TypeError: Sum: axis must be an int or a list of ints, got 1.5 (float)
"""

import math
import numbers

from .errors import InvalidArgumentError

__all__ = ["as_int", "normalize_axes", "check_shape", "check_dtype"]


def as_int(op, arg, value):
    """``value`` as a Python int, or TypeError naming ``op`` and ``arg`` (bools and floats refused)."""
    if hasattr(value, "numpy") and hasattr(value, "dtype"):
        if getattr(value.dtype, "is_integer", False) and value.shape == ():
            return int(value.numpy())
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    raise TypeError(f"{op}: {arg} must be an int, got {value!r} ({type(value).__name__})")


def normalize_axes(op, axis, ndim):
    """``axis`` (int, list of ints or int tensor; negatives count from the end) as a tuple.

    Raises:
        TypeError: an axis is not an integer (``1.5``, ``'a'``, ``None`` in a list).
        InvalidArgumentError: an axis is outside ``[-ndim, ndim)``.
    """
    if type(axis) is int and -ndim <= axis < max(ndim, 1):     # the common cases, fast
        return (axis,)
    if (type(axis) is tuple or type(axis) is list) and all(
            type(a) is int and -ndim <= a < max(ndim, 1) for a in axis):
        return tuple(axis)
    if hasattr(axis, "numpy"):
        axis = axis.numpy().tolist()
    items = axis if isinstance(axis, (list, tuple)) else [axis]
    axes = []
    for a in items:
        if isinstance(a, (list, tuple)) and len(a) == 1:
            a = a[0]  # TensorFlow accepts [[0]]
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise TypeError(f"{op}: axis must be an int or a list of ints, got {axis!r} "
                            f"({type(axis).__name__})")
        if not -ndim <= a < max(ndim, 1):
            raise InvalidArgumentError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
        axes.append(int(a))
    return tuple(axes)


_MAX_SIZE = 2 ** 63   # NumPy and CuPy index with signed 64-bit ints


def check_shape(op, shape, arg="shape", allow_minus_one=False):
    """Raises when a tuple of ints ``shape`` has a negative size (or -1 used twice)."""
    if not shape or (min(shape) > 0 and math.prod(shape) < _MAX_SIZE):    # the common case
        return shape
    for d in shape:
        if d < 0 and not (allow_minus_one and d == -1):
            raise InvalidArgumentError(f"{op}: {arg} {list(shape)} has a negative size {d}; "
                                       f"sizes must be >= 0")
    if any(d >= _MAX_SIZE for d in shape) or math.prod(max(d, 1) for d in shape) >= _MAX_SIZE:
        raise InvalidArgumentError(f"{op}: {arg} {list(shape)} has {math.prod(shape)} elements; "
                                   f"an array holds fewer than 2**63")
    if allow_minus_one and sum(d == -1 for d in shape) > 1:
        raise InvalidArgumentError(f"{op}: {arg} {list(shape)} has more than one -1; "
                                   f"only one size can be inferred")
    return shape


def check_dtype(op, x, allowed, what):
    """Raises InvalidArgumentError when tensor ``x``'s dtype fails ``allowed(dtype)``.

    ``what`` names the accepted kinds for the message, e.g. ``"floating or complex"``.
    """
    if not allowed(x.dtype):
        raise InvalidArgumentError(f"{op}: x has dtype {x.dtype.name}, but {op} takes only "
                                   f"{what} tensors (cast it first, e.g. ad.cast(x, ad.float32))")
    return x


def traced(tensor):
    """Whether ``ad.function`` is tracing in this thread and ``tensor`` depends on the traced
    function's arguments (so its value changes from call to call)."""
    from . import tape   # (tape imports the ops' modules that import this one)
    for recorder in tape.thread_state.active:
        follows = getattr(recorder, "follows", None)
        if follows is not None and follows(tensor):
            return True
    return False


def open_sized(tensor):
    """Whether ``tensor`` is traced by an ``ad.function`` whose ``input_signature`` leaves a
    size open (None): its sizes must then be read in the graph (a ``Shape`` node), never
    written into it as numbers."""
    for recorder in _thread_state().active:
        if getattr(recorder, "open_sizes", False) and recorder.follows(tensor):
            return True
    return False


def host_value(tensor, op, arg):
    """``tensor``'s value as a NumPy array, for an op that needs it on the host (a shape,
    indices, a mask).

    Inside ``ad.function`` such a value would be frozen into the trace at the first call,
    and later calls would silently reuse it; a tensor computed from the traced function's
    arguments is therefore refused, with what to do instead.

    Raises:
        TypeError: while tracing, when ``tensor`` depends on the function's arguments.
    """
    if traced(tensor):
        raise TypeError(
            f"{op}: {arg} is computed from the arguments of the ad.function being traced "
            f"(or is a Variable, or computed from one), "
            f"but {op} needs its value while tracing; the trace would keep the first call's "
            f"{arg} for every later call. Pass {arg} as a Python value (or a tensor made "
            f"outside the function), or call the function without ad.function")
    return tensor.numpy()


def _thread_state():
    """The tape module's per-thread state (tape imports the ops' modules that import this
    one, so it is looked up on first use, then kept)."""
    global _THREAD_STATE
    if _THREAD_STATE is None:
        from .tape import thread_state
        _THREAD_STATE = thread_state
    return _THREAD_STATE


_THREAD_STATE = None
