"""Rearranging elements: ``roll`` (an op whose gradient rolls back) and ``meshgrid``.

``roll(x, shift, axis)`` moves elements along axes, wrapping around; its VJP
rolls the cotangent by ``-shift``, which is a roll again, so every order of
derivative works. ``meshgrid`` is TensorFlow's composition: each input
reshaped to its own axis, then stretched over the grid, so its gradient sums
the cotangent back over the other axes.

    >>> ad.roll(ad.constant([1.0, 2.0, 3.0]), shift=1, axis=0).numpy()
    array([3., 1., 2.], dtype=float32)
"""

from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["roll", "meshgrid"]


def _roll_forward(xp, x, shift, axis):
    return xp.roll(x, shift, axis)


# ``axis`` is stored negative, so the rule also holds for a cotangent with
# leading batch axes (the vectorized jacobian's).
ROLL = Primitive(
    "Roll", _roll_forward,
    (lambda g, ans, x, shift, axis: ROLL(g, shift=tuple(-s for s in shift), axis=axis),),
    saves="shapes", domain=(-2.0, 2.0),
    cases=[(((5,),), {"shift": (2,), "axis": (-1,)}),
           (((3, 4),), {"shift": (-1, 3), "axis": (-2, -1)}),
           (((2, 3),), {"shift": (1, 1), "axis": (-1, -1)})],
    label="roll({0})", doc="d roll(x, s) = roll(dx, s): the cotangent rolls back by -s")


def roll(input, shift, axis, name=None):  # noqa: A002 - TensorFlow's name
    """Rolls ``input`` by ``shift`` places along ``axis`` (ints, or lists of the same length).

    Elements that leave one end come back at the other; a repeated axis rolls
    by the sum of its shifts.
    """
    x = convert_to_tensor(input)
    shifts = shift if isinstance(shift, (list, tuple)) else [shift]
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    if len(shifts) != len(axes):
        raise InvalidArgumentError(f"Roll: shift {list(shifts)} and axis {list(axes)} must have "
                                   f"the same length")
    ndim = x._value.ndim
    normalized = []
    for a in axes:
        a = _validate.as_int("Roll", "axis", a)
        if not -ndim <= a < ndim:
            raise InvalidArgumentError(f"Roll: axis {a} is out of range for input of shape "
                                       f"{tuple(x.shape)}")
        normalized.append(a - ndim if a >= 0 else a)
    shifts = tuple(_validate.as_int("Roll", "shift", s) for s in shifts)
    return ROLL(x, shift=shifts, axis=tuple(normalized))


def meshgrid(*args, indexing="xy", name=None):
    """Coordinate grids from 1-D tensors: one output per input, each of the grid's shape.

    With ``indexing='xy'`` (the default, as in NumPy and TensorFlow) the first
    two axes are swapped: for inputs of lengths (m, n) the grids are (n, m).
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    values = [reshape(convert_to_tensor(a), [-1]) for a in args]
    if not values:
        return []
    ndim = len(values)
    lengths = [int(v._value.shape[0]) for v in values]
    outputs = []
    for i, v in enumerate(values):
        shape = [1] * ndim
        shape[i] = -1
        outputs.append(reshape(v, shape))
    if indexing == "xy" and ndim > 1:
        outputs[0] = reshape(outputs[0], [1, -1] + [1] * (ndim - 2))
        outputs[1] = reshape(outputs[1], [-1, 1] + [1] * (ndim - 2))
        lengths[0], lengths[1] = lengths[1], lengths[0]
    return [broadcast_to(o, lengths) for o in outputs]


from .shape import broadcast_to, reshape  # noqa: E402
