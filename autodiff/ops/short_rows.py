"""Sums and maxima over a short last axis, for the reductions and Softmax (no ops here).

NumPy reduces the last axis of a C-contiguous array one row at a time: for a
LayerNorm's mean over 32 features of a [32, 16, 32] activation, or a Softmax
over 16 keys of [32, 4, 16, 16] attention scores, that is 512 or 2,048 calls
of its inner loop on 32 or 16 numbers, and the call overhead is most of the
time (one thread, CPU: a sum over (32, 4, 16, 16)'s last axis 66 us, its max
127 us, while an exp of all of it costs 125 us). Here:

- ``row_sum``: the sum as one matrix-vector product with a vector of ones
  (``x.reshape(-1, n) @ ones(n)``: 16 us there). BLAS adds in its own order,
  so the result may differ from ``np.sum`` in the last bit; eager and
  compiled programs call the same function and agree bit for bit.
- ``row_max``: the maximum as ``n - 1`` elementwise ``maximum`` calls over the
  columns (exact: the same numbers as ``np.max``, up to the sign of a zero).

Each answers None where it does not apply: another backend than NumPy, a dtype other
than float32/float64, an array that is not C-contiguous, a last axis outside
2-64 (``row_max``: 2-16) or fewer than 256 rows; the caller then reduces as before.

    >>> from autodiff.ops.short_rows import row_max, row_sum
    >>> x = np.arange(512 * 4, dtype=np.float32).reshape(512, 4)
    >>> row_sum(x, keepdims=True)[:2], row_max(x)[:2]
    (array([[ 6.],
           [22.]], dtype=float32), array([3., 7.], dtype=float32))
"""

import numpy as np

__all__ = ["row_sum", "row_max", "last_axis_only"]

MIN_ROWS = 256
_ONES = {}   # (length, dtype) -> a read-only vector of ones


def last_axis_only(x, axis):
    """Whether ``axis`` (an int or a tuple of ints) names exactly the last axis of ``x``."""
    if type(axis) is int:
        return axis in (-1, x.ndim - 1)
    return type(axis) is tuple and len(axis) == 1 and axis[0] in (-1, x.ndim - 1)


def _rows(x, widest):
    if type(x) is not np.ndarray or x.dtype not in (np.float32, np.float64) or x.ndim < 1 \
            or not x.flags.c_contiguous:
        return 0
    n = x.shape[-1]
    if not 2 <= n <= widest:
        return 0
    rows = x.size // n
    return rows if rows >= MIN_ROWS else 0


def _ones(n, dtype):
    key = (n, dtype)
    ones = _ONES.get(key)
    if ones is None:
        ones = _ONES[key] = np.ones(n, dtype=dtype)
        ones.flags.writeable = False
    return ones


def row_sum(x, keepdims=False, mean=False):
    """``x.sum(-1)`` (``mean``: ``x.mean(-1)``, the sum divided by n) as one product, or
    None where that does not apply (see the module docstring)."""
    if not _rows(x, 64):
        return None
    n = x.shape[-1]
    total = np.matmul(x.reshape(-1, n), _ones(n, x.dtype))
    if mean:
        np.true_divide(total, n, out=total)
    return total.reshape(x.shape[:-1] + ((1,) if keepdims else ()))


def row_max(x, keepdims=False):
    """``x.max(-1)`` as ``n - 1`` elementwise maxima of its columns, or None where that
    does not apply (see the module docstring)."""
    if not _rows(x, 16):
        return None
    n = x.shape[-1]
    columns = x.reshape(-1, n)
    top = columns[:, 0].copy()
    for j in range(1, n):
        np.maximum(top, columns[:, j], out=top)
    return top.reshape(x.shape[:-1] + ((1,) if keepdims else ()))
