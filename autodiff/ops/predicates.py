"""Comparisons, logic and ``where``: ops about predicates.

Comparisons and logical ops return bools, which carry no gradient: they are
declared ``NotDifferentiable`` (and a tape never records a bool result).
``where(c, x, y)`` is differentiable in ``x`` and ``y``: the cotangent goes
to ``x`` where the condition held and to ``y`` elsewhere.
"""

from .. import backend, dtypes
from ..broadcast import unbroadcast
from ..registry import NotDifferentiable, Primitive
from ..tensor import Tensor, convert_to_tensor
from .elementwise import BINARY_CASES, REALS
from .operands import binary, convert_expecting, operands

__all__ = ["where", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_not"]


# ---- comparisons and logic (never differentiable) -------------------------------
def _predicate(name, forward, label):
    return Primitive(name, forward, NotDifferentiable, saves="shapes", label=label, domain=REALS,
                     cases=BINARY_CASES if "{1}" in label else None,
                     doc="a boolean result: not differentiable")


EQUAL = _predicate("Equal", lambda xp, x, y: xp.equal(x, y), "{0} == {1}")
NOT_EQUAL = _predicate("NotEqual", lambda xp, x, y: xp.not_equal(x, y), "{0} != {1}")
LESS = _predicate("Less", lambda xp, x, y: xp.less(x, y), "{0} < {1}")
LESS_EQUAL = _predicate("LessEqual", lambda xp, x, y: xp.less_equal(x, y), "{0} <= {1}")
GREATER = _predicate("Greater", lambda xp, x, y: xp.greater(x, y), "{0} > {1}")
GREATER_EQUAL = _predicate("GreaterEqual", lambda xp, x, y: xp.greater_equal(x, y), "{0} >= {1}")
LOGICAL_AND = _predicate("LogicalAnd", lambda xp, x, y: xp.logical_and(x, y), "{0} & {1}")
LOGICAL_OR = _predicate("LogicalOr", lambda xp, x, y: xp.logical_or(x, y), "{0} | {1}")
LOGICAL_NOT = _predicate("LogicalNot", lambda xp, x: xp.logical_not(x), "~{0}")


# ---- where: choose elementwise ------------------------------------------------
def _where_forward(xp, condition, x, y):
    return xp.where(condition, x, y)


WHERE = Primitive(
    "SelectV2", _where_forward,
    (lambda g, ans, c, x, y: None,  # the condition is not differentiable
     lambda g, ans, c, x, y: unbroadcast(where(c, g, zeros_like(g)), x, ans),
     lambda g, ans, c, x, y: unbroadcast(where(c, zeros_like(g), g), y, ans)),
    dtype_args=(1, 2), label="where({0}, {1}, {2})", domain=REALS,
    cases=[(((3,), (3,), (3,)), {}), (((2, 3), (3,), (2, 3)), {}), (((2, 3), (2, 3), ()), {})],
    doc="g flows to x where the condition holds, to y elsewhere")


def _where_inputs(rng, shapes):
    """A random boolean condition, then two float inputs (for the op table test)."""
    return [rng.uniform(size=shapes[0]) > 0.5] + [rng.uniform(-2.0, 2.0, size=s) for s in shapes[1:]]


WHERE.make_inputs = _where_inputs


def where(condition, x=None, y=None, name=None):
    """Elementwise choice: ``x`` where ``condition`` is true, else ``y`` (broadcasting).

    With only ``condition``, returns the coordinates of its true elements (int64).
    A Python number beside a tensor branch takes its dtype; an empty literal
    condition (``[[], []]``) is an empty bool tensor, as in TensorFlow.

    >>> ad.where([True, False], ad.constant([1.0, 2.0], dtype=ad.float64), 0.5).numpy()
    array([1. , 0.5])
    """
    condition = convert_expecting(condition, dtypes.bool)
    if x is None and y is None:
        coords = backend.xp.argwhere(condition._value).astype("int64")
        return Tensor(coords)
    if x is None or y is None:
        raise ValueError("where: x and y must both be given, or neither")
    if not condition.dtype.is_bool:
        raise TypeError(f"SelectV2: condition must be bool, not {condition.dtype.name} (shape "
                        f"{tuple(condition.shape)})")
    return WHERE(condition, *operands(x, y))


def equal(x, y, name=None):
    return binary(EQUAL, x, y)


def not_equal(x, y, name=None):
    return binary(NOT_EQUAL, x, y)


def less(x, y, name=None):
    return binary(LESS, x, y)


def less_equal(x, y, name=None):
    return binary(LESS_EQUAL, x, y)


def greater(x, y, name=None):
    return binary(GREATER, x, y)


def greater_equal(x, y, name=None):
    return binary(GREATER_EQUAL, x, y)


def logical_and(x, y, name=None):
    return binary(LOGICAL_AND, x, y)


def logical_or(x, y, name=None):
    return binary(LOGICAL_OR, x, y)


def logical_not(x, name=None):
    return LOGICAL_NOT(x)


from .creation import zeros_like  # noqa: E402
