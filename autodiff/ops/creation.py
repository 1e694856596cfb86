"""Tensors made from shapes and values: zeros, ones, fill, eye, ranges, and the ``*_like`` ops.

``zeros``, ``ones`` and ``eye`` read no tensor, so no tape records them. The
``*_like`` ops read their input, so a tape watching it records them (their
outputs are then watched too, as in TensorFlow) but no gradient flows
through them: ``ZerosLike`` and ``OnesLike`` are not differentiable.
"""

from .. import backend, dtypes
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor

REALS = (-2.0, 2.0)  # where the op table test draws the *_like ops' inputs

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "eye", "linspace", "range"]

_builtin_range = range


def static_shape(shape, op_type="shape"):
    """A shape argument (int, list, tuple or int Tensor) as a tuple of ints.

    Raises:
        InvalidArgumentError: naming ``op_type`` when ``shape`` is not a list of ints.
    """
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, int):
        return (shape,)
    try:
        return tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{op_type}: shape must be a list of ints, not {shape!r}") from None


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros. ``ad.zeros([2, 3])`` is float32 of shape (2, 3)."""
    return Tensor(backend.xp.zeros(static_shape(shape), dtype=dtypes.as_dtype(dtype)._np))


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones. ``ad.ones([2])`` -> ``[1., 1.]``."""
    return Tensor(backend.xp.ones(static_shape(shape), dtype=dtypes.as_dtype(dtype)._np))


def _filled_like(fill_value):
    def forward(xp, x, dtype=None):
        return xp.full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtypes.as_dtype(dtype)._np)
    return forward


ZEROS_LIKE = Primitive("ZerosLike", _filled_like(0), NotDifferentiable, saves="shapes", domain=REALS,
                       label="zeros_like({0})", doc="not differentiable (the gradient is None)")
ONES_LIKE = Primitive("OnesLike", _filled_like(1), NotDifferentiable, saves="shapes", domain=REALS,
                      label="ones_like({0})", doc="not differentiable (the gradient is None)")


def _like(primitive, input, dtype):  # noqa: A002
    x = convert_to_tensor(input)
    if dtype is None:
        return primitive(x)
    return primitive(x, dtype=dtypes.as_dtype(dtype).name)


def zeros_like(input, dtype=None, name=None):  # noqa: A002 - TensorFlow's argument name
    """Zeros with the shape (and by default the dtype) of ``input``.

    >>> ad.zeros_like(ad.constant([1.5, 2.5])).numpy()
    array([0., 0.], dtype=float32)
    """
    return _like(ZEROS_LIKE, input, dtype)


def ones_like(input, dtype=None, name=None):  # noqa: A002
    """Ones with the shape (and by default the dtype) of ``input``.

    >>> ad.ones_like(ad.constant([1.5, 2.5]), dtype=ad.int32).numpy()
    array([1, 1], dtype=int32)
    """
    return _like(ONES_LIKE, input, dtype)


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with ``value`` (its dtype is value's)."""
    v = convert_to_tensor(value)._value
    return Tensor(backend.xp.full(static_shape(dims), v, dtype=v.dtype))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The identity matrix, optionally repeated over ``batch_shape``.

    >>> ad.eye(2).numpy()
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    xp = backend.xp
    matrix = xp.eye(int(num_rows), None if num_columns is None else int(num_columns),
                    dtype=dtypes.as_dtype(dtype)._np)
    if batch_shape is not None:
        shape = static_shape(batch_shape) + matrix.shape
        matrix = xp.array(xp.broadcast_to(matrix, shape))
    return Tensor(matrix)


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (float32 for floats).

    >>> ad.linspace(0.0, 1.0, 3).numpy()
    array([0. , 0.5, 1. ], dtype=float32)
    """
    start = convert_to_tensor(start)
    stop = convert_to_tensor(stop, dtype_hint=start.dtype)
    if start.dtype != stop.dtype:
        raise ValueError(f"linspace: start is {start.dtype.name} but stop is {stop.dtype.name}")
    dt = start._value.dtype
    values = backend.xp.linspace(start._value, stop._value, int(num), axis=axis)
    return Tensor(values.astype(dt))


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """Like Python's range, as a tensor: ``ad.range(5)`` -> ``[0 1 2 3 4]`` (int32).

    The dtype follows the arguments (int32 for ints, float32 if any is a float).
    """
    if limit is None:
        start, limit = 0, start
    args = [a.numpy().item() if isinstance(a, Tensor) else a for a in (start, limit, delta)]
    inferred = dtypes.infer_dtype(args) if dtype is None else dtypes.as_dtype(dtype)
    return Tensor(backend.xp.arange(*args, dtype=inferred._np))
