"""unbroadcast: the one place that sums a gradient back to an input's shape.

When ``x`` of shape (3,) is added to ``y`` of shape (2, 3), NumPy broadcasts
``x`` along a new leading axis. Each element of ``x`` was used twice, so its
gradient is the *sum* of the two cotangent rows:

    >>> from autodiff.broadcast import unbroadcast
    >>> x, y = ad.constant([1.0, 2.0, 3.0]), ad.zeros((2, 3))
    >>> ans = x + y                      # shape (2, 3)
    >>> g = ad.ones((2, 3))              # the cotangent of ans
    >>> unbroadcast(g, x, ans).numpy()   # each element of x was used twice
    array([2., 2., 2.], dtype=float32)

During a vectorized Jacobian, ``g`` also carries leading *batch* axes:
shape ``B + ans.shape``. Those are never summed: the number of batch axes is
``g.ndim - ans.ndim``, and only the axes after them are reduced.
"""

__all__ = ["unbroadcast", "sum_to"]


def unbroadcast(g, x, ans):
    """Sums cotangent ``g`` (shape ``B + ans.shape``) to shape ``B + x.shape``.

    Args:
        g: the cotangent of an op's output, possibly with batch axes in front.
        x: the input whose gradient is wanted (a Tensor, used for its shape).
        ans: the op's output (used for its shape).
    """
    x_shape, out_shape = x._value.shape, ans._value.shape
    if x_shape == out_shape:
        return g
    return sum_to(g, x_shape, g._value.ndim - len(out_shape))


def sum_to(g, shape, n_batch):
    """Sums ``g`` (``n_batch`` batch axes, then a shape ``shape`` broadcasts to)
    down to ``batch + shape``.

    >>> from autodiff.broadcast import sum_to
    >>> sum_to(ad.ones((4, 2, 3)), (3,), n_batch=1).shape
    TensorShape([4, 3])
    """
    g_shape = g._value.shape
    inner = g_shape[n_batch:]
    if inner == tuple(shape):
        return g
    n_new = len(inner) - len(shape)  # axes broadcasting added in front
    axes = list(range(n_batch, n_batch + n_new))
    axes += [n_batch + n_new + i for i, d in enumerate(shape)
             if d == 1 and inner[n_new + i] != 1]
    if not axes:
        return g
    if not n_batch and open_sizes.open_sized(g):
        # no reshape to a size written as a number: the new axes are summed away, the
        # size-1 ones kept (a trace serving any size, ops/open_sizes.py)
        if n_new:
            g = ops.reduce_sum(g, axis=list(range(n_new)))
        axes = [a - n_new for a in axes[n_new:]]
        return ops.reduce_sum(g, axis=axes, keepdims=True) if axes else g
    # The Sum op itself: ``axes`` are sorted and non-negative already, as reduce_sum would
    # make them (its checks are for a user's axis argument; 9 us a call)
    if len(axes) == n_new:   # only new axes: summed away, nothing to reshape (a bias's case)
        return _SUM(g, axis=tuple(axes), keepdims=False)
    summed = _SUM(g, axis=tuple(axes), keepdims=True)
    return summed if not n_new else ops.reshape(summed, g_shape[:n_batch] + tuple(shape))


from . import ops  # noqa: E402
from .ops import open_sizes  # noqa: E402
from .ops.reduce import SUM as _SUM  # noqa: E402
