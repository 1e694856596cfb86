"""Clipping and norms: clip_by_value, clip_by_norm, norm.

``ClipByValue`` is one primitive whose bounds are inputs (so they broadcast
and can be tensors). TensorFlow's convention at the bounds: the gradient
passes to ``t`` where ``lo <= t <= hi``, bounds included; ``lo`` collects it
where ``t < lo`` and ``hi`` where ``t > hi``.

``clip_by_norm`` and ``norm`` are compositions of primitives, written the
way TensorFlow writes them, so they reproduce its gradients exactly,
including the special points:

- ``norm`` of an all-zero vector has gradient NaN (TensorFlow's too):
  sqrt'(0) is infinite, and inf * 0 = NaN.
- ``clip_by_norm`` of zeros has gradient ``1`` (not NaN): it hides the zero
  from sqrt with the two-``where`` trick.
"""

import math

from ..broadcast import unbroadcast
from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["clip_by_value", "clip_by_norm", "norm"]

BOUNDED = ((-2.0, 2.0), (-1.0, -0.5), (0.5, 1.0))  # t, then lo < hi


def _passes(g, mask):
    return where(mask, g, zeros_like(g))


CLIP_BY_VALUE = Primitive(
    "ClipByValue", lambda xp, t, lo, hi: xp.maximum(xp.minimum(t, hi), lo),
    (lambda g, ans, t, lo, hi: unbroadcast(_passes(g, (t >= lo) & (t <= hi)), t, ans),
     lambda g, ans, t, lo, hi: unbroadcast(_passes(g, t < lo), lo, ans),
     lambda g, ans, t, lo, hi: unbroadcast(_passes(g, t > hi), hi, ans)),
    saves="inputs", domain=BOUNDED, label="clip({0}, {1}, {2})",
    cases=[(((), (), ()), {}), (((5,), (), ()), {}), (((2, 3), (3,), (2, 1)), {})],
    doc="g flows to t where lo <= t <= hi (bounds included), to lo below it, to hi above it")


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clamps ``t`` to ``[clip_value_min, clip_value_max]`` elementwise.

    The gradient passes where ``t`` lies within the bounds, bounds included.

    >>> ad.clip_by_value(ad.constant([-2.0, 0.5, 3.0]), -1.0, 1.0).numpy()
    array([-1. ,  0.5,  1. ], dtype=float32)
    """
    t = convert_to_tensor(t)
    lo = convert_to_tensor(clip_value_min, dtype_hint=t.dtype)
    hi = convert_to_tensor(clip_value_max, dtype_hint=t.dtype)
    shape = t._value.shape
    for bound in (lo, hi):
        if len(bound.shape) > len(shape) or any(
                b not in (1, d) for b, d in zip(bound.shape[::-1], shape[::-1])):
            raise InvalidArgumentError(
                f"ClipByValue: a clip value of shape {tuple(bound.shape)} would broadcast "
                f"t of shape {tuple(shape)} to another shape")
    return CLIP_BY_VALUE(t, lo, hi)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Rescales ``t`` so that its L2 norm (over ``axes``) is at most ``clip_norm``.

    ``t * clip_norm / max(norm(t), clip_norm)``: unchanged when already short
    enough. The gradient at ``t = 0`` is finite (TensorFlow's safe-sqrt trick).

    >>> ad.clip_by_norm(ad.constant([3.0, 4.0]), 1.0).numpy()
    array([0.6, 0.8], dtype=float32)
    """
    values = convert_to_tensor(t)
    clip_norm = convert_to_tensor(clip_norm, dtype_hint=values.dtype)
    l2sum = reduce_sum(values * values, axes, keepdims=True)
    nonzero = l2sum > 0
    # Two wheres: sqrt never sees 0, so its infinite slope never meets a zero (NaN).
    l2norm = where(nonzero, sqrt(where(nonzero, l2sum, ones_like(l2sum))), l2sum)
    intermediate = values * clip_norm
    if intermediate._value.shape != values._value.shape:
        raise InvalidArgumentError(
            f"clip_by_norm: clip_norm of shape {tuple(clip_norm.shape)} would broadcast t "
            f"of shape {tuple(values.shape)} to {tuple(intermediate.shape)}")
    return identity(intermediate / maximum(l2norm, clip_norm))


def _norm_axis(axis):
    """``axis`` as None, a 1-tuple (vector norm) or a 2-tuple (matrix norm)."""
    if axis is None:
        return None
    if isinstance(axis, int):
        return (axis,)
    if isinstance(axis, (tuple, list)) and len(axis) == 2 and \
            all(isinstance(a, int) for a in axis) and axis[0] != axis[1]:
        return tuple(axis)
    raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                     f"got {axis}")


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """Vector norms (``'euclidean'``, 1, 2, ``np.inf``, any p > 0) and matrix norms.

    Args:
        tensor: a float tensor.
        ord: the norm's order. With a 2-tuple ``axis`` (matrices):
            ``'euclidean'``/``'fro'`` (Frobenius), 1 (max column sum) or
            ``np.inf`` (max row sum).
        axis: None (the whole tensor as one vector), an int, or a 2-tuple.
        keepdims: keep the reduced axes with size 1.

    Returns:
        The norm; its gradient at 0 is NaN for the euclidean norm, as in
        TensorFlow (use ``clip_by_norm``'s safe form where that matters).

    >>> float(ad.norm(ad.constant([3.0, 4.0])))
    5.0
    """
    axes = _norm_axis(axis)
    is_matrix = axes is not None and len(axes) == 2
    if is_matrix and ord not in ("euclidean", "fro", 1, math.inf):
        raise ValueError(f"'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, inf]"
                         f" (the matrix 2-norm needs an SVD, not available), got {ord}")
    if not is_matrix and ord != "euclidean" and (isinstance(ord, str) or not ord > 0):
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    x = convert_to_tensor(tensor)
    if ord in ("euclidean", "fro", 2):
        result = sqrt(reduce_sum(x * conj(x), axes, keepdims=True))  # |x|^2, as complex too
    elif ord == 1:
        result = reduce_sum(abs(x), None if axes is None else axes[0], keepdims=True)
        if is_matrix:
            result = reduce_max(result, axes[1], keepdims=True)
    elif ord == math.inf:
        result = abs(x)
        if is_matrix:
            result = reduce_sum(result, axes[1], keepdims=True)
        result = reduce_max(result, None if axes is None else axes[0], keepdims=True)
    else:
        result = pow(reduce_sum(pow(abs(x), float(ord)), axes, keepdims=True), 1.0 / ord)
    if keepdims:
        return result
    return squeeze(result, axes)


from .creation import ones_like, zeros_like  # noqa: E402
from .elementwise import abs, maximum, pow, sqrt  # noqa: E402,A004
from .matmul import conj  # noqa: E402
from .predicates import where  # noqa: E402
from .reduce import reduce_max, reduce_sum  # noqa: E402
from .shape import identity, squeeze  # noqa: E402
