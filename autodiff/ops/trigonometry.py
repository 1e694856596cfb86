"""Inverse and hyperbolic trigonometry, and ``atan2``, with TensorFlow's gradients.

Each rule is TensorFlow's formula, op for op, because the order decides
where a derivative meets ``0 * inf`` (at the ends of ``asin``'s domain, at
the origin for ``atan2``):

    asin   g * rsqrt(1 - x^2)          sinh   g * cosh(x)
    acos  -g * rsqrt(1 - x^2)          cosh   g * sinh(x)
    atan   g * reciprocal(1 + x^2)     asinh  g / cosh(asinh x)
    atanh  g * reciprocal(1 - x^2)     acosh  g / sinh(acosh x)
    atan2(y, x):  g / (x^2 + y^2) times (x, -y)

    >>> round(float(ad.math.atan2(ad.constant(1.0), ad.constant(1.0))), 6)   # pi / 4
    0.785398
"""

from ..broadcast import unbroadcast
from ..registry import Primitive
from .elementwise import AWAY_FROM_ZERO, BINARY_CASES, REALS, _floating

__all__ = ["asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh"]

INSIDE_ONE = (-0.9, 0.9)      # asin, acos, atanh: |x| < 1
ABOVE_ONE = (1.2, 3.0)        # acosh: x > 1


def _unary(name, forward, rule, *, saves="inputs", domain=REALS, doc=None):
    return Primitive(name, forward, (rule,), saves=saves, domain=domain,
                     label=name + "({0})", doc=doc)


def _one_minus_square(x):
    return 1 - square(x)


ASIN = _unary("Asin", lambda xp, x: xp.arcsin(x),
              lambda g, ans, x: g * rsqrt(_one_minus_square(x)), domain=INSIDE_ONE,
              doc="d/dx asin x = 1 / sqrt(1 - x^2)")
ACOS = _unary("Acos", lambda xp, x: xp.arccos(x),
              lambda g, ans, x: -g * rsqrt(_one_minus_square(x)), domain=INSIDE_ONE,
              doc="d/dx acos x = -1 / sqrt(1 - x^2)")
ATAN = _unary("Atan", lambda xp, x: xp.arctan(x),
              lambda g, ans, x: g * reciprocal(1 + square(x)),
              doc="d/dx atan x = 1 / (1 + x^2)")
SINH = _unary("Sinh", lambda xp, x: xp.sinh(x), lambda g, ans, x: g * cosh(x),
              doc="d/dx sinh x = cosh x")
COSH = _unary("Cosh", lambda xp, x: xp.cosh(x), lambda g, ans, x: g * sinh(x),
              doc="d/dx cosh x = sinh x")
ASINH = _unary("Asinh", lambda xp, x: xp.arcsinh(x), lambda g, ans, x: g / cosh(ans),
               saves="ans", doc="d/dx asinh x = 1 / cosh(asinh x) = 1 / sqrt(1 + x^2)")
ACOSH = _unary("Acosh", lambda xp, x: xp.arccosh(x), lambda g, ans, x: g / sinh(ans),
               saves="ans", domain=ABOVE_ONE,
               doc="d/dx acosh x = 1 / sinh(acosh x) = 1 / sqrt(x^2 - 1)")
ATANH = _unary("Atanh", lambda xp, x: xp.arctanh(x),
               lambda g, ans, x: g * reciprocal(_one_minus_square(x)), domain=INSIDE_ONE,
               doc="d/dx atanh x = 1 / (1 - x^2)")


def _atan2_rules():
    def scaled(g, y, x):
        return g / (square(x) + square(y))

    return (lambda g, ans, y, x: unbroadcast(x * scaled(g, y, x), y, ans),
            lambda g, ans, y, x: unbroadcast(-y * scaled(g, y, x), x, ans))


ATAN2 = Primitive("Atan2", lambda xp, y, x: xp.arctan2(y, x), _atan2_rules(),
                  domain=(AWAY_FROM_ZERO, AWAY_FROM_ZERO), cases=BINARY_CASES, label="atan2({0}, {1})",
                  doc="d atan2(y, x) = (x dy - y dx) / (x^2 + y^2); NaN at the origin")


def asin(x, name=None):
    """Inverse sine elementwise, in [-pi/2, pi/2]; NaN outside [-1, 1]."""
    return ASIN(_floating(ASIN, x))


def acos(x, name=None):
    """Inverse cosine elementwise, in [0, pi]; NaN outside [-1, 1]."""
    return ACOS(_floating(ACOS, x))


def atan(x, name=None):
    """Inverse tangent elementwise, in (-pi/2, pi/2)."""
    return ATAN(_floating(ATAN, x))


def atan2(y, x, name=None):
    """The angle of the point (x, y) elementwise, in [-pi, pi] (note: y first, as in tf.math).

    Both arguments must have the same floating dtype (a Python number takes its
    partner's); the gradient at the origin is NaN.

    >>> ad.math.atan2(1.0, ad.constant([-1.0], dtype=ad.float64)).numpy()   # 3 pi / 4
    array([2.35619449])
    """
    return binary(ATAN2, y, x, _floating)


def sinh(x, name=None):
    """Hyperbolic sine elementwise."""
    return SINH(_floating(SINH, x))


def cosh(x, name=None):
    """Hyperbolic cosine elementwise."""
    return COSH(_floating(COSH, x))


def asinh(x, name=None):
    """Inverse hyperbolic sine elementwise."""
    return ASINH(_floating(ASINH, x))


def acosh(x, name=None):
    """Inverse hyperbolic cosine elementwise; NaN below 1."""
    return ACOSH(_floating(ACOSH, x))


def atanh(x, name=None):
    """Inverse hyperbolic tangent elementwise; +-inf at +-1, NaN beyond."""
    return ATANH(_floating(ATANH, x))


from .elementwise import reciprocal, rsqrt, square  # noqa: E402
from .operands import binary  # noqa: E402
