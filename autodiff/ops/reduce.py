"""Reductions: sum, mean, max, min, prod, logsumexp over axes; cumulative sums; argmax.

The wrappers turn ``axis`` into a sorted tuple of non-negative axes before
the op runs, so the rules never see None or negative axes in params. Every
reduction's VJP first puts the reduced axes back as size-1 axes
(``_keep_dims``) and then broadcasts, which works unchanged when ``g``
carries leading batch axes.

``reduce_logsumexp`` is a composition rather than a primitive (shift by the
max, a constant for the gradient), so its gradients of every order come from
the ops it is built of. The running sums and products (``cumsum``,
``cumprod``, which ``reduce_prod``'s VJP uses) live in ``scan.py``.
"""

import math as _math

import numpy as _np

from .. import dtypes
from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import NotDifferentiable, Primitive
from ..tensor import convert_to_tensor
from . import short_rows

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
           "reduce_logsumexp", "cumsum", "cumprod", "argmax", "argmin"]

REALS = (-2.0, 2.0)
REDUCE_CASES = [(((),), {"axis": ()}), (((4,),), {"axis": (0,)}),
                (((2, 3),), {"axis": (0, 1)}), (((2, 3),), {"axis": (1,)}),
                (((2, 3, 2),), {"axis": (0, 2), "keepdims": True})]


def normalize_axes(axis, ndim, op_type):
    """``axis`` (None, int or list, negatives allowed) as a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = _validate.normalize_axes(op_type, axis, ndim)
    return tuple(sorted({a % ndim if ndim else 0 for a in axes}))


def normalize_axis(axis, ndim, op_type):
    """One axis in ``[-ndim, ndim)`` as a non-negative int."""
    axis = _validate.as_int(op_type, "axis", axis)
    if not -ndim <= axis < ndim:
        raise InvalidArgumentError(f"{op_type}: axis {axis} is out of range [{-ndim}, {ndim}) "
                                   f"for a tensor of rank {ndim}")
    return axis % ndim


def _keep_dims(g, x, ans, axis):
    """Reshapes ``g`` (batch + reduced shape) to batch + x's shape with 1s on ``axis``."""
    n_batch = g._value.ndim - ans._value.ndim
    if not n_batch and _open.open_sized(x):
        return _open.keep_dims(g, x, axis)
    kept = g._value.shape[:n_batch] + tuple(1 if i in axis else d
                                            for i, d in enumerate(x._value.shape))
    # keepdims=True left g in that shape already: no Reshape (as sum_to makes none)
    return g if g._value.shape == kept else reshape(g, kept)


def _spread(g, x, ans, axis):
    """``g`` copied back over the reduced axes: batch + x's shape."""
    g = _keep_dims(g, x, ans, axis)
    if g._value.ndim == x._value.ndim and _open.open_sized(x):
        return _open.spread_like(g, x)
    return broadcast_gradient_to(g, g._value.shape[:g._value.ndim - x._value.ndim] + x._value.shape)


def _size(x, axis):
    n = 1
    for a in axis:
        n *= x._value.shape[a]
    return n


def _accumulated(reduce, xp, x, axis, keepdims):
    """A sum-like reduction; float16 accumulates in float32 (PyTorch does; TF doesn't).

    TensorFlow sums float16 in float16: 4,096 float16 0.1s (exactly 409.6) sum
    to 408.5 there, 409.5 here, and their mean is 0.09973 there, 0.1 here. A
    deliberate difference (README, "Where this project differs from TensorFlow
    on purpose").
    """
    if x.dtype.kind == "f" and x.dtype.itemsize == 2:
        return reduce(x, axis=axis, keepdims=keepdims, dtype="float32").astype(x.dtype)
    if (reduce is _np.sum or reduce is _np.mean) and short_rows.last_axis_only(x, axis):
        total = short_rows.row_sum(x, keepdims, mean=reduce is _np.mean)
        if total is not None:   # many short rows: one product with ones (short_rows.py)
            return total
    blocks = _leading_blocks(x, axis) if reduce in (_np.sum, _np.mean) else 0
    if blocks:
        return _blocked_sum(x, axis, keepdims, blocks, mean=reduce is _np.mean)
    if reduce is _np.sum and type(x) is _np.ndarray:
        # what np.sum calls for an ndarray, without its Python wrapper (9 us a call)
        return _np.add.reduce(x, axis=axis, dtype=x.dtype, keepdims=keepdims)
    return reduce(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _leading_blocks(x, axis):
    """In how many partial sums a NumPy float array is summed over its leading axes when
    what remains is narrow (0: NumPy's own reduction runs).

    NumPy sums ``x`` (32, 16, 16, 16) over axes (0, 1, 2), a batch norm's or a
    conv bias's reduction, as 8,192 adds of 16-wide rows: 0.27 ms, eleven
    times an elementwise multiply of it. Seen as (256, 32 * 16) rows it sums
    512-wide rows, then adds the 32 partial sums: 0.04 ms, and closer to the
    exact sum (each partial sum is 32 times shorter). Only where that helps:
    rows of at most 64 values, at least 1,024 of them.
    """
    if type(axis) is not tuple:   # None or an int: a graph's node as written, not normalized
        return 0
    m = len(axis)
    if type(x) is not _np.ndarray or x.dtype.kind != "f" or not 0 < m < x.ndim \
            or axis != tuple(range(m)) or not x.flags.c_contiguous:
        return 0
    rows = x.size // max(_math.prod(x.shape[m:]), 1)   # (NumPy's prod: 5-10 us a call)
    if x.size // max(rows, 1) > 64 or rows < 1024:
        return 0
    blocks = 32
    while rows % blocks:
        blocks //= 2
    return blocks if blocks > 1 else 0


def _blocked_sum(x, axis, keepdims, blocks, mean):
    rows = x.size // _math.prod(x.shape[len(axis):])
    inner = x.shape[len(axis):]
    total = x.reshape(rows // blocks, -1).sum(axis=0).reshape((blocks,) + inner).sum(axis=0)
    if mean:
        total = _np.true_divide(total, rows, out=total)
    return total.reshape((1,) * len(axis) + inner if keepdims else inner)


SUM = Primitive("Sum", lambda xp, x, axis, keepdims=False: _accumulated(xp.sum, xp, x, axis,
                                                                         keepdims),
                (lambda g, ans, x, axis, keepdims=False: _spread(g, x, ans, axis),),
                saves="shapes", domain=REALS, cases=REDUCE_CASES,
                doc="d/dx_i sum(x) = 1: g is copied to every summed element")
def _mean_grad(g, x, ans, axis):
    n = _size(x, axis)
    if g._value.ndim == ans._value.ndim and g.dtype.name != "float16" and _open.open_sized(x):
        return _spread(g, x, ans, axis) / _open.count(x, axis, g.dtype)
    if n > 65504 and g.dtype.name == "float16":  # n itself is inf in float16: scale by 1/n
        return _spread(g, x, ans, axis) * (1.0 / n)
    # RealDiv itself: ``/``'s operand checks (true division of integers) cannot apply to a
    # float cotangent, and n takes its dtype either way
    return DIV(_spread(g, x, ans, axis), n)


def _mean_forward(xp, x, axis, keepdims=False):
    if x.dtype.kind in "fc" and any(x.shape[a] == 0 for a in axis):
        # a mean over no elements is NaN, quietly (as TensorFlow; NumPy would warn)
        out = xp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
        return xp.full(out.shape, float("nan"), dtype=x.dtype)
    return _accumulated(xp.mean, xp, x, axis, keepdims)


MEAN = Primitive("Mean", _mean_forward,
                 (lambda g, ans, x, axis, keepdims=False: _mean_grad(g, x, ans, axis),),
                 saves="shapes", domain=REALS, cases=REDUCE_CASES,
                 doc="d/dx_i mean(x) = 1/n")


def _mean_jvp(t, ans, x, axis, keepdims=False):
    if _size(x, axis) == 0:  # a mean over nothing is NaN; TensorFlow's tangent there is 0
        return zeros(ans._value.shape, dtype=ans.dtype)
    return MEAN(t[0], axis=axis, keepdims=keepdims)


MEAN.jvp = _mean_jvp


def _max_min_grad(g, ans, x, axis, keepdims=False):
    # g is shared evenly between all elements equal to the extreme (TensorFlow)
    extreme = _keep_dims(ans, x, ans, axis)
    hits = cast(equal(x, extreme), g.dtype)
    share = hits / reduce_sum(hits, axis=axis, keepdims=True)
    return _spread(g, x, ans, axis) * share


def _extreme(reduce, empty_value):
    """A max/min forward; over no elements it gives ``empty_value(dtype)``, as TensorFlow
    does (-inf for max of floats, the lowest int for max of ints), where NumPy raises."""
    def forward(xp, x, axis, keepdims=False):
        if x.size == 0 and any(x.shape[a] == 0 for a in axis):
            shape = tuple(1 if i in axis else d for i, d in enumerate(x.shape)
                          if keepdims or i not in axis)
            return xp.full(shape, empty_value(x.dtype), dtype=x.dtype)
        return reduce(xp, x, axis=axis, keepdims=keepdims)
    return forward


def _lowest(dtype):
    if dtype.kind in "iu":
        return _np.iinfo(dtype).min
    return -float("inf") if dtype.kind in "fc" else False


def _highest(dtype):
    if dtype.kind in "iu":
        return _np.iinfo(dtype).max
    return float("inf") if dtype.kind in "fc" else True


MAX = Primitive("Max", _extreme(lambda xp, x, **kw: xp.max(x, **kw), _lowest),
                (_max_min_grad,), saves="both", domain=REALS, cases=REDUCE_CASES,
                doc="g goes to the maximum; ties share it evenly")
MIN = Primitive("Min", _extreme(lambda xp, x, **kw: xp.min(x, **kw), _highest),
                (_max_min_grad,), saves="both", domain=REALS, cases=REDUCE_CASES,
                doc="g goes to the minimum; ties share it evenly")


def _reduce(primitive, input_tensor, axis, keepdims):
    x = convert_to_tensor(input_tensor)
    if x.dtype._np.kind == "b":  # as TensorFlow: reduce_any / reduce_all are for bools
        _validate.check_dtype(primitive.name, x, lambda d: False, "numeric (not bool)")
    return primitive(x, axis=normalize_axes(axis, x._value.ndim, primitive.name),
                     keepdims=bool(keepdims))


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum over ``axis`` (all axes by default).

    >>> ad.reduce_sum(ad.constant([[1., 2.], [3., 4.]]), axis=0).numpy()
    array([4., 6.], dtype=float32)
    """
    return _reduce(SUM, input_tensor, axis, keepdims)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean over ``axis`` (all axes by default)."""
    return _reduce(MEAN, input_tensor, axis, keepdims)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    """Maximum over ``axis``; ties share the gradient evenly."""
    return _reduce(MAX, input_tensor, axis, keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    """Minimum over ``axis``; ties share the gradient evenly."""
    return _reduce(MIN, input_tensor, axis, keepdims)


# ---- product: the VJP multiplies the products of all *other* elements -------------
def _product_of_others(x, axis):
    """For each element, the product of the other elements on ``axis``, exactly.

    ``prod / x_i`` fails where ``x_i = 0``. Instead the reduced axes go last,
    flattened into one, and the running products from the left and from the
    right (each excluding the element itself) are multiplied, as TensorFlow's
    ``_ProdGrad`` does.
    """
    shape = x._value.shape
    kept = [i for i in range(len(shape)) if i not in axis]
    perm = kept + list(axis)
    t = transpose(x, perm)
    t = reshape(t, tuple(shape[i] for i in kept) + (_size(x, axis),))
    others = cumprod(t, axis=-1, exclusive=True) * cumprod(t, axis=-1, exclusive=True, reverse=True)
    others = reshape(others, tuple(shape[i] for i in perm))
    inverse = [perm.index(i) for i in range(len(perm))]
    return transpose(others, inverse)


PROD = Primitive("Prod", lambda xp, x, axis, keepdims=False:
                 xp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype),
                 (lambda g, ans, x, axis, keepdims=False:
                  _spread(g, x, ans, axis) * _product_of_others(x, axis),),
                 saves="inputs", domain=REALS, cases=REDUCE_CASES,
                 doc="d/dx_i prod(x) = the product of the other elements (exact at zeros)")


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """Product over ``axis`` (all axes by default); its gradient is exact even at zeros.

    >>> ad.reduce_prod(ad.constant([[1., 2.], [3., 4.]]), axis=1).numpy()
    array([ 2., 12.], dtype=float32)
    """
    return _reduce(PROD, input_tensor, axis, keepdims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) over ``axis``, without overflow; its gradient is softmax(x).

    >>> float(ad.reduce_logsumexp(ad.constant([1000.0, 1000.0])))   # 1000 + log 2
    1000.6931762695312
    """
    x = convert_to_tensor(input_tensor)
    axes = normalize_axes(axis, x._value.ndim, "reduce_logsumexp")
    # Subtracting the max keeps exp from overflowing. The shift cancels out of
    # the result, so it is held constant (and replaced by 0 where infinite).
    raw_max = reduce_max(x, axes, keepdims=True)
    shift = STOP_GRADIENT(where(abs(raw_max) < float("inf"), raw_max, zeros_like(raw_max)))
    result = log(reduce_sum(exp(x - shift), axes, keepdims=keepdims))
    return result + (shift if keepdims else reshape(shift, result._value.shape))


# ---- argmax and argmin: integer results, never differentiable ------------------------
ARG_CASES = [(((4,),), {"axis": 0, "output_type": "int64"}),
             (((2, 3),), {"axis": 1, "output_type": "int32"})]
def _arg_forward(op_type, pick):
    def forward(xp, x, axis, output_type):
        if x.shape[axis] == 0:   # TensorFlow's error; NumPy raises, CuPy would answer
            raise InvalidArgumentError(f"{op_type}: reduction axis {axis} is empty in shape "
                                       f"{list(x.shape)}")
        return getattr(xp, pick)(x, axis=axis).astype(output_type)
    return forward


ARGMAX = Primitive("ArgMax", _arg_forward("ArgMax", "argmax"),
                   NotDifferentiable, saves="shapes", domain=REALS, cases=ARG_CASES,
                   doc="an integer index: not differentiable (the gradient is None)")
ARGMIN = Primitive("ArgMin", _arg_forward("ArgMin", "argmin"),
                   NotDifferentiable, saves="shapes", domain=REALS, cases=ARG_CASES,
                   doc="an integer index: not differentiable (the gradient is None)")


def _arg(primitive, input, axis, output_type):  # noqa: A002
    x = convert_to_tensor(input)
    output_type = dtypes.as_dtype(output_type)
    if output_type.name not in ("int32", "int64"):
        raise TypeError(f"{primitive.name}: output_type must be int32 or int64, "
                        f"not {output_type.name}")
    axis = normalize_axis(0 if axis is None else axis, x._value.ndim, primitive.name)
    return primitive(x, axis=axis, output_type=output_type.name)


def argmax(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the largest value along ``axis`` (default 0); the first one on ties.

    >>> ad.argmax(ad.constant([[1., 5.], [7., 2.]]), axis=1).numpy()
    array([1, 0])
    """
    return _arg(ARGMAX, input, axis, output_type)


def argmin(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the smallest value along ``axis`` (default 0); the first one on ties."""
    return _arg(ARGMIN, input, axis, output_type)


from .elementwise import DIV, abs, cast, exp, log  # noqa: E402,A004
from .predicates import equal, where  # noqa: E402
from .creation import zeros, zeros_like  # noqa: E402
from .shape import STOP_GRADIENT, broadcast_gradient_to, reshape, transpose  # noqa: E402
from . import open_sizes as _open  # noqa: E402
from .scan import CUMSUM, cumprod, cumsum  # noqa: E402,F401  (exported from here too)
