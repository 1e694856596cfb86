"""Gradient kernels that are ops of their own, as TensorFlow's SqrtGrad, RsqrtGrad
and ReciprocalGrad are.

``sqrt``'s VJP could be the expression ``g * 0.5 / y``, but TensorFlow computes
it with a kernel, ``SqrtGrad(y, dy)``, that answers 0 wherever the incoming
cotangent ``dy`` is 0, even where ``0.5 / y`` is inf (sqrt at 0) or NaN
(sqrt of a negative number). That is what keeps the classic ``where`` trap
harmless:

    >>> x = ad.constant([0.0, 4.0])
    >>> with ad.GradientTape() as t:
    ...     t.watch(x)
    ...     y = ad.where(x > 0, ad.sqrt(x), ad.zeros_like(x))
    >>> t.gradient(y, x).numpy()      # 0 * inf would be NaN; SqrtGrad says 0
    array([0.  , 0.25], dtype=float32)

Each kernel's own VJP uses TensorFlow's formulas (plain products and
quotients, no zero test), so second derivatives meet inf and NaN exactly
where TensorFlow's do. Forward mode (``forward.py``) transposes these VJPs,
as TensorFlow does. ``log`` and ``divide`` have no such kernel in
TensorFlow, so their gradients stay plain products (0 * inf = NaN).

Like TanhGrad, the kernels take ``y`` unconjugated: ``registry.conjugating_vjp``
hands the rules conjugated values for complex inputs.
"""

from ..broadcast import unbroadcast
from ..registry import Primitive

__all__ = []  # reached through sqrt_grad, rsqrt_grad, reciprocal_grad (the rules' helpers)

_GRAD_CASES = [(((3,), (3,)), {}), (((3,), (2, 3)), {}), (((2, 3), (2, 3)), {})]
_REALS = (-2.0, 2.0)
_POSITIVE = (0.2, 2.0)
_AWAY_FROM_ZERO = ((0.3, 2.0), "signs")


def _zero_where_dy_is_zero(xp, dy, value):
    """TensorFlow's kernels' first test: ``dy == 0`` gives 0, whatever ``value`` is."""
    return xp.where(dy == 0, xp.zeros_like(value), value)


# SqrtGrad(y, dy) = 0.5 dy / y; TensorFlow's SqrtGradGrad: ga = gg / y,
# d/dy = -ga * SqrtGrad(y, dy), d/d(dy) = 0.5 ga
def _sqrt_grad_vjp_y(gg, ans, y, dy):
    return unbroadcast(-(gg / y) * ans, y, ans)


SQRT_GRAD = Primitive(
    "SqrtGrad", lambda xp, y, dy: _zero_where_dy_is_zero(xp, dy, 0.5 * dy / y),
    (_sqrt_grad_vjp_y, lambda gg, ans, y, dy: unbroadcast(0.5 * (gg / y), dy, ans)),
    saves="both", domain=(_POSITIVE, _REALS), label="SqrtGrad({0}, {1})", cases=_GRAD_CASES,
    doc="SqrtGrad(y, dy) = 0.5 dy / y (0 where dy = 0): d/dy = -0.5 dy / y^2, d/d(dy) = 0.5 / y")

# RsqrtGrad(y, dy) = -0.5 dy y^3; TensorFlow's RsqrtGradGrad:
# d/dy = -1.5 gg dy y^2, d/d(dy) = RsqrtGrad(y, gg)
RSQRT_GRAD = Primitive(
    "RsqrtGrad", lambda xp, y, dy: _zero_where_dy_is_zero(xp, dy, -0.5 * (dy * y) * (y * y)),
    (lambda gg, ans, y, dy: unbroadcast(-1.5 * gg * dy * (y * y), y, ans),
     lambda gg, ans, y, dy: unbroadcast(rsqrt_grad(y, gg), dy, ans)),
    saves="inputs", domain=(_POSITIVE, _REALS), label="RsqrtGrad({0}, {1})", cases=_GRAD_CASES,
    doc="RsqrtGrad(y, dy) = -0.5 dy y^3 (0 where dy = 0): d/dy = -1.5 dy y^2, "
        "d/d(dy) = -0.5 y^3")

# ReciprocalGrad(y, dy) = -dy y^2; TensorFlow's ReciprocalGradGrad:
# d/dy = -2 gg dy y, d/d(dy) = ReciprocalGrad(y, gg)
RECIPROCAL_GRAD = Primitive(
    "ReciprocalGrad", lambda xp, y, dy: _zero_where_dy_is_zero(xp, dy, -dy * y * y),
    (lambda gg, ans, y, dy: unbroadcast(gg * -2.0 * dy * y, y, ans),
     lambda gg, ans, y, dy: unbroadcast(reciprocal_grad(y, gg), dy, ans)),
    saves="inputs", domain=(_AWAY_FROM_ZERO, _REALS), label="ReciprocalGrad({0}, {1})",
    cases=_GRAD_CASES,
    doc="ReciprocalGrad(y, dy) = -dy y^2 (0 where dy = 0): d/dy = -2 dy y, d/d(dy) = -y^2")


def sqrt_grad(y, dy):
    """``0.5 * dy / y``, and 0 where ``dy`` is 0: the VJP of sqrt given its output ``y``."""
    return SQRT_GRAD(y, dy)


def rsqrt_grad(y, dy):
    """``-0.5 * dy * y**3``, and 0 where ``dy`` is 0: the VJP of rsqrt given its output."""
    return RSQRT_GRAD(y, dy)


def reciprocal_grad(y, dy):
    """``-dy * y**2``, and 0 where ``dy`` is 0: the VJP of 1/x given its output ``y``."""
    return RECIPROCAL_GRAD(y, dy)
