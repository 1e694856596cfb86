"""Tensors made from shapes and values: zeros, ones, fill, eye, ranges, and the ``*_like`` ops.

``zeros``, ``ones`` and ``eye`` read no tensor, so no tape records them. The
``*_like`` ops read their input, so a tape watching it records them (their
outputs are then watched too, as in TensorFlow) but no gradient flows
through them: ``ZerosLike`` and ``OnesLike`` are not differentiable.
``fill`` and ``linspace`` are differentiable in their values (``Fill``,
``LinSpace``), as in TensorFlow.
"""

import numbers as _numbers

from .. import backend, dtypes
from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..validate import check_shape
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor

REALS = (-2.0, 2.0)  # where the op table test draws the *_like ops' inputs

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "eye", "linspace", "range"]

_builtin_range = range


def static_shape(shape, op_type="shape", min_size=0):
    """A shape argument (int, list, tuple or int Tensor) as a tuple of ints.

    ``min_size`` is the smallest size allowed (-1 for reshape's inferred size,
    None for no bound, as for a permutation).

    Raises:
        TypeError: naming ``op_type`` when a size is not an int (``[1.5]``, ``'a'``).
        InvalidArgumentError: when a size is below ``min_size``.
    """
    if type(shape) is tuple and all(type(d) is int for d in shape):   # the common case, fast
        return check_shape(op_type, shape, allow_minus_one=min_size == -1) \
            if min_size is not None else shape
    if isinstance(shape, Tensor):
        shape = _validate.host_value(shape, op_type, "shape").tolist()
    elif isinstance(shape, (list, tuple)):  # sizes may be scalar int tensors (TF packs them)
        shape = [_validate.host_value(d, op_type, "shape").item()
                 if isinstance(d, Tensor) and d.dtype.is_integer and d.ndim == 0
                 else d for d in shape]
    if isinstance(shape, _numbers.Integral) and not isinstance(shape, bool):
        dims = (int(shape),)
    elif isinstance(shape, (list, tuple)) and all(
            isinstance(d, _numbers.Integral) and not isinstance(d, bool) for d in shape):
        dims = tuple(int(d) for d in shape)
    elif hasattr(shape, "tolist") and getattr(shape, "dtype", None) is not None \
            and str(shape.dtype).startswith(("int", "uint")):
        dims = tuple(int(d) for d in shape.reshape(-1).tolist())
    else:
        raise TypeError(f"{op_type}: shape must be an int or a list of ints, got {shape!r}")
    if min_size is not None:
        check_shape(op_type, dims, allow_minus_one=min_size == -1)
    return dims


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros. ``ad.zeros([2, 3])`` is float32 of shape (2, 3)."""
    if _dynamic.is_dynamic(shape):   # sizes computed in the trace stay an input
        return _dynamic.fill_to(shape, Tensor(backend.xp.zeros((), dtypes.as_dtype(dtype)._np)))
    return Tensor(backend.xp.zeros(static_shape(shape, "zeros"), dtype=dtypes.as_dtype(dtype)._np))


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones. ``ad.ones([2])`` -> ``[1., 1.]``."""
    if _dynamic.is_dynamic(shape):
        return _dynamic.fill_to(shape, Tensor(backend.xp.ones((), dtypes.as_dtype(dtype)._np)))
    return Tensor(backend.xp.ones(static_shape(shape, "ones"), dtype=dtypes.as_dtype(dtype)._np))


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


def _fill_grad(g, ans, value, dims):
    # every output element is a copy of value: sum g over the output's axes
    # (negative axes, so leading batch axes of g stay)
    return reduce_sum(g, axis=[-1 - i for i in _builtin_range(len(dims))]) if dims else g


FILL = Primitive("Fill", lambda xp, value, dims: xp.full(dims, value, dtype=value.dtype),
                 (_fill_grad,), jvp=lambda t, ans, value, dims: FILL(t[0], dims=dims),
                 saves="shapes", domain=REALS, label="fill({0})",
                 cases=[(((),), {"dims": (3,)}), (((),), {"dims": (2, 3)}), (((),), {"dims": ()})],
                 doc="d fill(dims, v) = fill(dims, dv): the VJP sums g")


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with ``value`` (its dtype is value's).

    Differentiable in ``value``: ``d/ds sum(fill([2, 3], s)) = 6``.
    """
    v = convert_to_tensor(value)
    if v._value.ndim != 0:
        raise InvalidArgumentError(f"Fill: value must be a scalar, got shape {tuple(v.shape)}")
    if _dynamic.is_dynamic(dims):
        return _dynamic.fill_to(dims, v)
    return FILL(v, dims=static_shape(dims, "Fill"))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The identity matrix, optionally repeated over ``batch_shape``.

    >>> ad.eye(2).numpy()
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    xp = backend.xp
    num_rows = _validate.as_int("eye", "num_rows", num_rows)
    if num_columns is not None:
        num_columns = _validate.as_int("eye", "num_columns", num_columns)
    check_shape("eye", (num_rows, num_rows if num_columns is None else num_columns),
                "[num_rows, num_columns]")
    matrix = xp.eye(num_rows, num_columns,
                    dtype=dtypes.as_dtype(dtype)._np)
    if batch_shape is not None:
        shape = static_shape(batch_shape) + matrix.shape
        matrix = xp.array(xp.broadcast_to(matrix, shape))
    return Tensor(matrix)


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (float32 for floats;
    integer ends give float64, as in TensorFlow).

    >>> ad.linspace(0.0, 1.0, 3).numpy()
    array([0. , 0.5, 1. ], dtype=float32)
    """
    start = convert_to_tensor(start)
    stop = convert_to_tensor(stop, dtype_hint=start.dtype)
    if start.dtype != stop.dtype:
        raise ValueError(f"linspace: start is {start.dtype.name} but stop is {stop.dtype.name}")
    if start.dtype.is_integer:   # TensorFlow casts integer ends to float64
        from .elementwise import cast
        start, stop = cast(start, dtypes.float64), cast(stop, dtypes.float64)
    num = _validate.as_int("LinSpace", "num", num)
    if num < 0:
        raise InvalidArgumentError(f"LinSpace: num must be >= 0, got num={num}")
    return LINSPACE(start, stop, num=num, axis=_validate.as_int("LinSpace", "axis", axis))


def _linspace_weights(xp, num, axis, ndim, dtype):
    """w_i = i / (num - 1) (just 0 when num is 1), shaped to run along ``axis``."""
    w = xp.arange(num, dtype=dtype) / max(num - 1, 1)
    return w.reshape((num,) + (1,) * (ndim - 1 - axis))


def _linspace_forward(xp, start, stop, num, axis):
    a = axis if axis >= 0 else axis + start.ndim + 1
    # start + i * step, as TensorFlow computes it (not start + (i / (num - 1)) * (stop - start))
    with_axis = start.shape[:a] + (1,) + start.shape[a:]
    step = ((stop - start) / max(num - 1, 1)).reshape(with_axis)
    i = xp.arange(num, dtype=start.dtype).reshape((num,) + (1,) * (start.ndim - a))
    out = start.reshape(with_axis) + i * step
    if num > 1:  # the last value is stop itself, as in TensorFlow (not start + (n-1) step)
        out = xp.where(i == num - 1, stop.reshape(with_axis), out)
    return out.astype(start.dtype)


def _linspace_grads(g, ans, start, stop, num, axis):
    # out = start + w (stop - start): g (1 - w) to start, g w to stop, summed along axis
    # (counted from the end, so leading batch axes of g stay)
    nd = ans._value.ndim
    a = axis if axis >= 0 else axis + nd
    w = Tensor(_linspace_weights(backend.xp, num, a, nd, ans._value.dtype))
    gw = g * w
    return [reduce_sum(g - gw, axis=a - nd), reduce_sum(gw, axis=a - nd)]


LINSPACE = Primitive("LinSpace", _linspace_forward, _linspace_grads,
                     jvp=lambda t, ans, start, stop, num, axis: LINSPACE(
                         zeros_like(start) if t[0] is None else t[0],
                         zeros_like(stop) if t[1] is None else t[1], num=num, axis=axis),
                     saves="shapes", domain=REALS, label="linspace({0}, {1})",
                     cases=[(((), ()), {"num": 4, "axis": 0}), (((), ()), {"num": 1, "axis": 0}),
                            (((3,), (3,)), {"num": 2, "axis": 1}),
                            (((2,), (2,)), {"num": 3, "axis": 0})],
                     doc="d linspace(a, b) = (1 - w) da + w db, w_i = i / (num - 1)")


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """Like Python's range, as a tensor: ``ad.range(5)`` -> ``[0 1 2 3 4]`` (int32).

    The dtype follows the arguments (int32 for ints, float32 if any is a float).
    """
    if limit is None:
        start, limit = 0, start
    if any(_dynamic.is_dynamic(a) for a in (start, limit, delta)):   # bounds read per call
        return _dynamic.range_of(start, limit, delta, dtype)
    args = [_validate.host_value(a, "Range", "start, limit and delta").item()
            if isinstance(a, Tensor) else a for a in (start, limit, delta)]
    for arg, a in zip(("start", "limit", "delta"), args):
        if isinstance(a, bool) or not isinstance(a, (_numbers.Real)):
            raise TypeError(f"Range: {arg} must be a number, got {a!r} ({type(a).__name__})")
    if args[2] == 0:
        raise InvalidArgumentError(f"Range: delta must not be 0 (start={args[0]}, limit={args[1]})")
    inferred = dtypes.infer_dtype(args) if dtype is None else dtypes.as_dtype(dtype)
    return Tensor(backend.xp.arange(*args, dtype=inferred._np))


from .reduce import reduce_sum  # noqa: E402  (reduce imports this module's shape helpers)
from . import dynamic_shape as _dynamic  # noqa: E402  (its ops take shape tensors)
