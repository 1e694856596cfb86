"""Running sums and products along an axis: ``cumsum`` (an op) and ``cumprod``.

``cumprod`` is a composition, a log-depth scan of multiplies, so its
gradients of every order come from Mul, PadV2 and StridedSlice and stay
exact where the input has zeros; ``reduce_prod``'s VJP relies on that.
Both are exported from ``reduce.py`` too (``ad.math.cumsum``).
"""

from ..errors import InvalidArgumentError
from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["cumsum", "cumprod"]

REALS = (-2.0, 2.0)


def _cumsum_forward(xp, x, axis, exclusive=False, reverse=False):
    if not 0 <= axis < x.ndim:   # NumPy would flatten a scalar instead
        raise InvalidArgumentError(f"Cumsum: axis {axis} is out of range for shape {x.shape}")
    if reverse:
        x = xp.flip(x, axis)
    out = xp.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:   # shift by one place: each sum leaves out its own element
        before, after = [slice(None)] * x.ndim, [slice(None)] * x.ndim
        before[axis], after[axis] = slice(0, max(x.shape[axis] - 1, 0)), slice(1, None)
        shifted = xp.zeros_like(out)
        shifted[tuple(after)] = out[tuple(before)]
        out = shifted
    return xp.flip(out, axis) if reverse else out


CUMSUM = Primitive("Cumsum", _cumsum_forward,
                   (lambda g, ans, x, axis, exclusive=False, reverse=False:
                    cumsum(g, axis - x._value.ndim, exclusive=exclusive, reverse=not reverse),),
                   saves="shapes", domain=REALS,
                   cases=[(((4,),), {"axis": 0}), (((2, 3),), {"axis": 1, "exclusive": True}),
                          (((3, 2),), {"axis": 0, "reverse": True}),
                          (((2, 3),), {"axis": 1, "exclusive": True, "reverse": True})],
                   doc="d cumsum(x) = cumsum(dx): g is summed the other way along the axis")


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along ``axis``; ``exclusive`` leaves each element out of its own sum.

    >>> ad.cumsum(ad.constant([1, 2, 3]), exclusive=True).numpy()
    array([0, 1, 3], dtype=int32)
    """
    x = convert_to_tensor(x)
    return CUMSUM(x, axis=normalize_axis(axis, x._value.ndim, "Cumsum"),
                  exclusive=bool(exclusive), reverse=bool(reverse))


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along ``axis``, as a log-depth scan of multiplies.

    Step k multiplies each partial product by the one ``2**k`` places
    earlier (by 1 near the start), so ``ceil(log2 n)`` steps cover every
    prefix. Being made of Mul, PadV2 and StridedSlice, it has exact
    gradients of every order, also where ``x`` has zeros (no division).

    >>> ad.cumprod(ad.constant([1., 2., 3., 4.])).numpy()
    array([ 1.,  2.,  6., 24.], dtype=float32)
    """
    x = convert_to_tensor(x)
    axis = normalize_axis(axis, x._value.ndim, "Cumprod")
    n = x._value.shape[axis]
    if n == 0:
        return x
    if reverse:
        x = slice_along(x, axis, None, None, -1)
    if exclusive:
        x = _shift(x, axis, 1)
    step = 1
    while True:  # at least one step, so a length-1 axis is an op too: TensorFlow's
        x = x * _shift(x, axis, step)  # second derivative there is zeros, not None
        step *= 2
        if step >= n:
            break
    return slice_along(x, axis, None, None, -1) if reverse else x


def _shift(x, axis, k):
    """``x`` moved ``k`` places along ``axis``, ones filling in at the start."""
    n = x._value.shape[axis]
    widths = [(0, 0)] * x._value.ndim
    widths[axis] = (k, 0)
    return pad(slice_along(x, axis, 0, n - k), widths, constant_values=1)


from .join import pad  # noqa: E402
from .reduce import normalize_axis  # noqa: E402
from .slicing import slice_along  # noqa: E402
