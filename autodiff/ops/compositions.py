"""TensorFlow functions that are compositions of other ops: written the same way here.

TensorFlow builds these in Python from ops it already has, so their
gradients (of every order, and in forward mode) are the gradients of those
ops; writing them the same way makes the tape record the same ops:

- ``tensordot(a, b, axes)``: one ``einsum`` over the paired axes;
- ``l2_normalize(x, axis, epsilon)``: ``x * rsqrt(maximum(sum(x^2), epsilon))``;
- ``bias_add(value, bias)``: ``value + bias`` along the last axis (checked);
- ``global_norm`` and ``clip_by_global_norm``: the norm of a list of tensors,
  ``sqrt(2 * sum(l2_loss(t)))``, and the list rescaled by
  ``clip_norm * min(1 / norm, 1 / clip_norm)`` (NaN everywhere if the norm is
  not finite, as in TensorFlow);
- ``linalg.matvec`` and ``linalg.adjoint``; ``reduce_any``/``reduce_all``
  (bool reductions, no gradient); ``rank``;
- ``slice(input_, begin, size)``: ``input_[b0:b0 + s0, ...]``, a ``StridedSlice``
  (TensorFlow's ``Slice`` op is its own type; the selection and gradient agree);
  with bounds computed in a trace, a checked ``StridedSliceOf`` (``traced_slice.py``).

    >>> ad.tensordot(ad.ones([2, 3]), ad.ones([3, 4]), axes=1).shape
    TensorShape([2, 4])
"""

import builtins
import string

from .. import dtypes
from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor
from .reduce import REDUCE_CASES

# top level, as in tf; l2_normalize, bias_add, matvec, adjoint and global_norm live in
# ad.math / ad.nn / ad.linalg only (``autodiff/math.py``, ``nn.py``, ``linalg.py``)
__all__ = ["tensordot", "reduce_any", "reduce_all", "rank", "clip_by_global_norm", "slice"]


# ---- tensordot --------------------------------------------------------------------------
def _tensordot_axes(axes, a_ndim, b_ndim):
    """``(a_axes, b_axes)``: TensorFlow's ``axes`` (an int N or a pair of lists) made explicit."""
    if isinstance(axes, (list, tuple)) and len(axes) == 2:
        a_axes, b_axes = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                          [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    else:
        n = _validate.as_int("tensordot", "axes", axes)
        if not 0 <= n <= min(a_ndim, b_ndim):
            raise InvalidArgumentError(f"tensordot: axes={n} must be in [0, {min(a_ndim, b_ndim)}] "
                                       f"for operands of rank {a_ndim} and {b_ndim}")
        a_axes, b_axes = list(range(a_ndim - n, a_ndim)), list(range(n))
    if len(a_axes) != len(b_axes):
        raise InvalidArgumentError(f"tensordot: axes {a_axes} and {b_axes} must pair up one to one")
    return ([_validate.as_int("tensordot", "axes", a) % max(a_ndim, 1) for a in a_axes],
            [_validate.as_int("tensordot", "axes", b) % max(b_ndim, 1) for b in b_axes])


def tensordot(a, b, axes, name=None):
    """Sums the products of ``a`` and ``b`` over paired axes (as ``np.tensordot``).

    Args:
        a, b: tensors of the same dtype.
        axes: an int N (the last N axes of ``a`` with the first N of ``b``) or a
            pair of lists ``[a_axes, b_axes]``.

    Returns:
        The free axes of ``a`` followed by the free axes of ``b``.
    """
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    a_axes, b_axes = _tensordot_axes(axes, a._value.ndim, b._value.ndim)
    letters = iter(string.ascii_letters)
    a_sub = [next(letters) for _ in range(a._value.ndim)]
    b_sub = [next(letters) for _ in range(b._value.ndim)]
    for i, j in zip(a_axes, b_axes):
        if a._value.shape[i] != b._value.shape[j]:
            raise InvalidArgumentError(
                f"tensordot: axis {i} of a (size {a._value.shape[i]}, shape {tuple(a.shape)}) and "
                f"axis {j} of b (size {b._value.shape[j]}, shape {tuple(b.shape)}) differ")
        b_sub[j] = a_sub[i]
    out = [s for k, s in enumerate(a_sub) if k not in a_axes] + \
        [s for k, s in enumerate(b_sub) if k not in b_axes]
    return einsum(f"{''.join(a_sub)},{''.join(b_sub)}->{''.join(out)}", a, b)


# ---- bool reductions ------------------------------------------------------------------------
def _bool_reduction(name, fn):
    return Primitive(name, lambda xp, x, axis, keepdims=False: getattr(xp, fn)(x, axis=axis,
                                                                                keepdims=keepdims),
                     NotDifferentiable, saves="shapes", domain=(-1.0, 1.0), cases=REDUCE_CASES,
                     doc="a boolean result: not differentiable")


ANY = _bool_reduction("Any", "any")
ALL = _bool_reduction("All", "all")
ANY.make_inputs = ALL.make_inputs = lambda rng, shapes: [rng.uniform(size=s) > 0.5 for s in shapes]


def _reduce_bool(primitive, input_tensor, axis, keepdims):
    x = convert_to_tensor(input_tensor)
    if x.dtype != dtypes.bool:
        raise InvalidArgumentError(f"{primitive.name}: input_tensor must be bool, got "
                                   f"{x.dtype.name} of shape {tuple(x.shape)}")
    axes = normalize_axes(axis, x._value.ndim, primitive.name)
    return primitive(x, axis=axes, keepdims=bool(keepdims))


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """Logical or over ``axis`` (all axes by default) of a bool tensor."""
    return _reduce_bool(ANY, input_tensor, axis, keepdims)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """Logical and over ``axis`` (all axes by default) of a bool tensor."""
    return _reduce_bool(ALL, input_tensor, axis, keepdims)


def rank(input, name=None):  # noqa: A002 - TensorFlow's name
    """The number of axes, as an int32 scalar tensor."""
    return Tensor(dtypes.int32._np.type(convert_to_tensor(input)._value.ndim))


# ---- norms of lists -------------------------------------------------------------------------
def global_norm(t_list, name=None):
    """The L2 norm of all the tensors of ``t_list`` together (None entries are skipped)."""
    values = [convert_to_tensor(t) for t in t_list if t is not None]
    if not values:
        raise ValueError("global_norm: t_list has no tensors (only None)")
    half_squared = reduce_sum(stack([l2_loss(v) for v in values]))
    return sqrt(half_squared * constant_like(2.0, half_squared))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Rescales a list of tensors so that their global norm is at most ``clip_norm``.

    Returns:
        ``(list_clipped, global_norm)``: each tensor times
        ``clip_norm * min(1 / global_norm, 1 / clip_norm)`` (None entries stay
        None); every value is NaN when the global norm is not finite.
    """
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError("clip_by_global_norm: t_list must be a list or tuple of tensors, got "
                        f"{type(t_list).__name__}")
    use_norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    clip_norm = convert_to_tensor(clip_norm, dtype_hint=use_norm.dtype)
    one = constant_like(1.0, use_norm)
    scale = clip_norm * minimum(one / use_norm, one / clip_norm)
    scale = scale + (use_norm - use_norm)   # NaN if the norm is NaN or inf
    clipped = [None if t is None else identity(convert_to_tensor(t) * scale) for t in t_list]
    return clipped, use_norm


# ---- nn and linalg compositions ---------------------------------------------------------------
def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / ||x||`` over ``axis``, as ``x * rsqrt(maximum(sum(x^2), epsilon))`` (TensorFlow's);
    also ``ad.math.l2_normalize`` and ``ad.linalg.l2_normalize``.

    Args:
        x: a float tensor.
        axis: the axis (or axes) to normalize over; all of them by default.
        epsilon: the smallest squared norm divided by (a zero vector stays zero).
        dim: the old name of ``axis``.

    >>> ad.linalg.l2_normalize(ad.constant([3.0, 4.0])).numpy()
    array([0.6, 0.8], dtype=float32)
    """
    x = convert_to_tensor(x)
    axis = dim if axis is None else axis
    square_sum = reduce_sum(square(x), axis, keepdims=True)
    return x * rsqrt(maximum(square_sum, constant_like(epsilon, square_sum)))


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias``, ``bias`` a vector as long as ``value``'s last axis (channels last)."""
    value, bias = convert_to_tensor(value), convert_to_tensor(bias)
    if data_format not in (None, "NHWC", "NWC", "NDHWC", "N...C"):
        raise ValueError(f"bias_add: only channels-last data_format is supported, got "
                         f"{data_format!r}")
    if value._value.ndim < 2 or bias._value.ndim != 1 \
            or bias._value.shape[0] != value._value.shape[-1]:
        raise InvalidArgumentError(
            f"BiasAdd: bias must be a vector as long as the last axis of value (rank >= 2); "
            f"got value of shape {tuple(value.shape)} and bias of shape {tuple(bias.shape)}")
    return value + bias


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """The matrix (or stack of matrices) ``a`` times the vector(s) ``b``."""
    b = convert_to_tensor(b)
    return squeeze(matmul(a, expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a),
                   axis=-1)


def adjoint(matrix, name=None):
    """The conjugate transpose of the last two axes."""
    return conj(matrix_transpose(matrix))


def constant_like(value, like):
    """A scalar of ``like``'s dtype."""
    return convert_to_tensor(value, dtype=like.dtype)


# ---- slice: a box given by its corner and its size ----------------------------------------
def _slice_vector(values, n, what):
    """``begin`` or ``size`` as n Python ints (tensors made outside the trace, read on the host)."""
    if isinstance(values, Tensor):
        values = values.numpy().tolist()
    values = [int(v.numpy()) if isinstance(v, Tensor) else int(v)
              for v in (values if isinstance(values, (list, tuple)) else [values])]
    if len(values) != n:
        raise InvalidArgumentError(f"Slice: Expected begin and size arguments to be 1-D tensors "
                                   f"of size {n}, but got {what} of length {len(values)}")
    return values


def slice(input_, begin, size, name=None):  # noqa: A001  (TensorFlow's name)
    """The box of ``input_`` starting at ``begin`` with ``size`` elements per axis.

    A size of -1 takes everything from ``begin`` to the end of that axis. A box that does
    not fit the input raises InvalidArgumentError (NumPy's slicing would cut it short).
    Inside ``ad.function`` begin and size may be computed in the trace (a loop counter,
    ``ad.shape(x)[1] - 2``), as in TensorFlow: one trace then serves every value, and the
    box is checked each time it runs, in the compiled program and a saved model too
    (``traced_slice.py``).

    Args:
        input_: a tensor.
        begin, size: int vectors as long as ``input_``'s rank (lists of ints and scalar int
            tensors, or int32/int64 tensors).

    Returns:
        The box, a ``StridedSlice`` of ``input_`` (``StridedSliceOf`` when its bounds are
        read when it runs); gradients of every order and forward mode are the slice's.

    >>> ad.slice(ad.constant([[1, 2, 3], [4, 5, 6]]), [0, 1], [2, -1]).numpy()
    array([[2, 3],
           [5, 6]], dtype=int32)
    >>> column = ad.function(lambda x, i: ad.slice(x, [0, i], [-1, 1]))
    >>> column(ad.constant([[1, 2, 3], [4, 5, 6]]), ad.constant(2)).numpy()
    array([[3],
           [6]], dtype=int32)
    """
    x = convert_to_tensor(input_)
    if _dynamic.is_dynamic(begin) or _dynamic.is_dynamic(size) or _validate.open_sized(x):
        return traced_slice(x, begin, size)
    shape = tuple(x._value.shape)
    begin = _slice_vector(begin, len(shape), "begin")
    size = _slice_vector(size, len(shape), "size")
    stops = box_stops(begin, size, shape)
    return x[tuple(builtins.slice(b, stop) for b, stop in zip(begin, stops))]


from . import dynamic_shape as _dynamic  # noqa: E402
from .einsum import einsum  # noqa: E402
from .elementwise import maximum, minimum, rsqrt, sqrt, square  # noqa: E402
from .join import stack  # noqa: E402
from .matmul import conj, matmul  # noqa: E402
from .nn import l2_loss  # noqa: E402
from .reduce import normalize_axes, reduce_sum  # noqa: E402
from .shape import expand_dims, identity, matrix_transpose, squeeze  # noqa: E402
from .traced_slice import box_stops, traced_slice  # noqa: E402
