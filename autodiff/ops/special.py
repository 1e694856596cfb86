"""More of ``tf.math`` and ``tf.nn``: zero-safe products and quotients, erfc, log_sigmoid,
softsign, and the float predicates, each with TensorFlow's gradient.

The zero-safe ops answer 0 where the plain formula would be NaN or inf:

    xlogy(x, y)           x * log(y), and 0 where x == 0 (even for y == 0)
    xdivy(x, y)           x / y,      and 0 where x == 0
    divide_no_nan(x, y)   x / y,      and 0 where y == 0
    multiply_no_nan(x, y) x * y,      and 0 where y == 0 (even for x NaN or inf)

Their gradients are TensorFlow's formulas, written with the same zero-safe
ops, so they stay finite where TensorFlow's do:

    xlogy:          dx = xlogy(x != 0, y) g      dy = xdivy(x, y) g
    xdivy:          dx = xdivy(x != 0, y) g      dy = xdivy(-x, y^2) g
    divide_no_nan:  dx = divide_no_nan(g, y)     dy = g divide_no_nan(divide_no_nan(-x, y), y)
    multiply_no_nan: dx = multiply_no_nan(g, y)  dy = multiply_no_nan(x, g)

``log_sigmoid`` is ``-softplus(-x)`` and ``softsign`` is ``x / (1 + |x|)``,
compositions as in TensorFlow for the first (for the second TensorFlow has a
kernel whose own gradient is not registered: see the README's differences).

    >>> float(ad.math.xlogy(ad.constant(0.0), ad.constant(0.0)))
    0.0
"""

import math as _math

import numpy as _np

from .. import backend
from ..broadcast import unbroadcast
from ..registry import NotDifferentiable, Primitive
from .elementwise import AWAY_FROM_ZERO, BINARY_CASES, POSITIVE, REALS, _floating

__all__ = ["xlogy", "xdivy", "divide_no_nan", "multiply_no_nan", "erfc", "log_sigmoid",
           "softsign", "is_nan", "is_inf", "is_finite"]


def _zero_where(xp, mask, value):
    """``value`` with 0 where ``mask``; NumPy's warnings about the masked elements (NaN,
    inf: replaced anyway) are not shown."""
    return xp.where(mask, value.dtype.type(0), value)


def _xlogy_forward(xp, x, y):
    with _np.errstate(all="ignore"):
        return _zero_where(xp, x == 0, x * xp.log(y))


def _xdivy_forward(xp, x, y):
    with _np.errstate(all="ignore"):
        return _zero_where(xp, x == 0, x / y)


def _div_no_nan_forward(xp, x, y):
    with _np.errstate(all="ignore"):
        return _zero_where(xp, y == 0, x / y)


def _mul_no_nan_forward(xp, x, y):
    with _np.errstate(all="ignore"):
        return _zero_where(xp, y == 0, x * y)


def _x_is_not_zero(x):
    return cast(not_equal(x, zeros_like(x)), x.dtype)


XLOGY = Primitive(
    "Xlogy", _xlogy_forward,
    (lambda g, ans, x, y: unbroadcast(XLOGY(_x_is_not_zero(x), y) * g, x, ans),
     lambda g, ans, x, y: unbroadcast(XDIVY(x, y) * g, y, ans)),
    domain=(REALS, POSITIVE), cases=BINARY_CASES, label="xlogy({0}, {1})",
    doc="d(x log y) = log y dx + x / y dy, with 0 where x == 0")
XDIVY = Primitive(
    "Xdivy", _xdivy_forward,
    (lambda g, ans, x, y: unbroadcast(XDIVY(_x_is_not_zero(x), y) * g, x, ans),
     lambda g, ans, x, y: unbroadcast(XDIVY(-x, square(y)) * g, y, ans)),
    domain=(REALS, AWAY_FROM_ZERO), cases=BINARY_CASES, label="xdivy({0}, {1})",
    doc="d(x / y) = dx / y - x / y^2 dy, with 0 where x == 0")
DIV_NO_NAN = Primitive(
    "DivNoNan", _div_no_nan_forward,
    (lambda g, ans, x, y: unbroadcast(DIV_NO_NAN(g, y), x, ans),
     lambda g, ans, x, y: unbroadcast(g * DIV_NO_NAN(DIV_NO_NAN(-x, y), y), y, ans)),
    domain=(REALS, AWAY_FROM_ZERO), cases=BINARY_CASES, label="divide_no_nan({0}, {1})",
    doc="d(x / y) = dx / y - x / y^2 dy, with 0 where y == 0")
MUL_NO_NAN = Primitive(
    "MulNoNan", _mul_no_nan_forward,
    (lambda g, ans, x, y: unbroadcast(MUL_NO_NAN(g, y), x, ans),
     lambda g, ans, x, y: unbroadcast(MUL_NO_NAN(x, g), y, ans)),
    domain=(REALS, AWAY_FROM_ZERO), cases=BINARY_CASES, label="multiply_no_nan({0}, {1})",
    doc="d(x y) = y dx + x dy, with 0 where y == 0")

_MINUS_TWO_OVER_ROOT_PI = -2 / _math.sqrt(_math.pi)
ERFC = Primitive("Erfc", lambda xp, x: 1 - backend.erf(x),
                 (lambda g, ans, x: g * _MINUS_TWO_OVER_ROOT_PI * exp(-square(x)),),
                 domain=REALS, label="erfc({0})", doc="d/dx erfc x = -2/sqrt(pi) exp(-x^2)")


def _predicate(name, test, doc):
    return Primitive(name, test, NotDifferentiable, saves="shapes", domain=REALS,
                     label=name + "({0})", doc=doc)


IS_NAN = _predicate("IsNan", lambda xp, x: xp.isnan(x), "not differentiable (bool output)")
IS_INF = _predicate("IsInf", lambda xp, x: xp.isinf(x), "not differentiable (bool output)")
IS_FINITE = _predicate("IsFinite", lambda xp, x: xp.isfinite(x), "not differentiable (bool output)")


def xlogy(x, y, name=None):
    """x * log(y) elementwise, and 0 where x == 0 (even where y == 0)."""
    return binary(XLOGY, x, y, _floating)


def xdivy(x, y, name=None):
    """x / y elementwise, and 0 where x == 0 (even where y == 0)."""
    return binary(XDIVY, x, y, _floating)


def divide_no_nan(x, y, name=None):
    """x / y elementwise, and 0 where y == 0 (instead of inf or NaN); int32 and int64 inputs
    give float64, as in TensorFlow."""
    x, y = true_division_operands("DivNoNan", x, y)   # integers: float64, as in TensorFlow
    return binary(DIV_NO_NAN, x, y, _floating)


def multiply_no_nan(x, y, name=None):
    """x * y elementwise, and 0 where y == 0, even where x is NaN or inf."""
    return binary(MUL_NO_NAN, x, y, _floating)


def erfc(x, name=None):
    """The complementary error function 1 - erf(x) elementwise."""
    return ERFC(_floating(ERFC, x))


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) without overflow: -softplus(-x), as TensorFlow computes it."""
    x = _floating("LogSigmoid", x)
    return -softplus(-x)


def softsign(features, name=None):
    """x / (1 + |x|) elementwise."""
    x = _floating("Softsign", features)
    return x / (1 + abs(x))


def is_nan(x, name=None):
    """Where x is NaN (bool); not differentiable."""
    return IS_NAN(_floating(IS_NAN, x))


def is_inf(x, name=None):
    """Where x is +inf or -inf (bool); not differentiable."""
    return IS_INF(_floating(IS_INF, x))


def is_finite(x, name=None):
    """Where x is neither NaN nor inf (bool); not differentiable."""
    return IS_FINITE(_floating(IS_FINITE, x))


from .creation import zeros_like  # noqa: E402
from .elementwise import abs, cast, exp, softplus, square  # noqa: E402,A004
from .elementwise import true_division_operands  # noqa: E402
from .operands import binary  # noqa: E402
from .predicates import not_equal  # noqa: E402
