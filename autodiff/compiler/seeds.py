"""One-hot seeds in compiled programs: a Jacobian's first product without the zeros.

``batch_jacobian`` pushes stacks of one-hot cotangents through the backward
pass, a chunk of output positions at a time: ``S[i, b, k] = 1 if k == start
+ i else 0``, one row ``i`` per output position ``j = start + i`` (below,
``start = 0`` and one chunk, to keep the formulas short). The first thing the backward pass of a dense layer does with it
is ``(S * g) @ M`` (``g`` the local derivative, ``M`` a weight matrix): a
matrix product in which all but one term of every sum is a zero. Row ``j``
of the product is just ``g[:, j]`` times row ``j`` of ``M``:

    (S * g) @ M  ==  g.T[:, :, None] * M[:, None, :]

which is one multiply per result element instead of ``m`` (W4: 4 million
multiplies instead of 537 million).

"The same" has to include what the zeros do when something is not finite:
``0 * inf`` and ``0 * nan`` are NaN, so in the full product a NaN or inf
anywhere in ``g[b, :]`` spoils all of example ``b``'s rows, and one in
column ``l`` of ``M`` spoils column ``l`` of every other row. ``one_hot_rows_matmul``
puts those NaNs in first (on the small ``g`` and ``M``), so the result
equals the full product wherever it is a number and is NaN wherever it is
NaN; only the sign of a zero may differ (``-0.0 + 0.0`` is ``+0.0``).

``rewrite(steps, constants, spec)`` finds the pattern in a plan's steps and
turns the ``MatMul`` into a ``one_hot_matmul`` step; the ``Mul`` that built
``S * g`` is then dead code unless something else reads it.
"""

import numpy as np

from .. import backend

__all__ = ["rewrite", "one_hot_rows_matmul"]


def one_hot_rows_matmul(xp, g, m, start, stop):
    """``(S * g) @ m`` for the one-hot stack ``S[i, b, k] = [k == start + i]``, ``i < stop - start``.

    See the module docstring.

    Args:
        xp: the array module.
        g: the local derivative, shape ``(batch, n)``.
        m: the matrix, shape ``(n, p)``.
        start, stop: the output positions (rows of ``m``, columns of ``g``) of this chunk.

    Returns:
        The product, shape ``(stop - start, batch, p)``.
    """
    nan = m.dtype.type(np.nan)
    bad_m = ~xp.isfinite(m)
    m = xp.where((xp.sum(bad_m, axis=0) - bad_m)[start:stop] > 0, nan, m[start:stop])
    bad_g = ~xp.isfinite(g)          # another row's inf or NaN in column l (above), in example b:
    g = xp.where((xp.sum(bad_g, axis=1, keepdims=True) - bad_g)[:, start:stop] > 0, nan,
                 g[:, start:stop])
    # g.T is small: made contiguous first, the result is laid out in C order
    return xp.ascontiguousarray(g.T)[:, :, None] * m[:, None, :]


def rewrite(steps, constants, spec):
    """Turns each ``MatMul(S * g, M)`` with a one-hot constant ``S`` into a ``one_hot_matmul`` step."""
    producer = {("node", step.index): step for step in steps if step.kind == "op"}
    for step in steps:
        node = step.node
        if step.kind != "op" or not node.runs_builtin("MatMul") or node.params.get("transpose_a"):
            continue
        product = producer.get(step.inputs[0][:2])
        if product is None or not product.node.runs_builtin("Mul"):
            continue
        matrix = spec(step.inputs[1])
        for seed, local in (product.inputs, product.inputs[::-1]):
            g = spec(local)
            rows = None if seed not in constants or g is None or matrix is None else \
                _seed_rows(constants[seed], g, matrix, node.params.get("transpose_b"))
            if rows is not None:
                step.kind = "one_hot_matmul"
                step.inputs = [local, step.inputs[1]]
                step.rows = rows
                break


def _seed_rows(seed, g_spec, m_spec, transpose_b):
    """``(start, stop)`` when ``seed`` is a one-hot chunk for ``g`` (and the matrix is a real
    2-D one of the right size), else None."""
    (g_shape, g_dtype), (m_shape, m_dtype) = g_spec, m_spec
    if len(g_shape) != 2 or len(m_shape) != 2 or g_dtype != m_dtype or g_dtype.kind != "f":
        return None
    batch, n = g_shape
    if (m_shape[1] if transpose_b else m_shape[0]) != n or seed.dtype != g_dtype \
            or seed.ndim != 3 or seed.shape[1:] != (batch, n) or not 0 < seed.shape[0] <= n:
        return None
    host = backend.to_numpy(seed)
    start = int(np.argmax(host[0, 0]))
    stop = start + seed.shape[0]
    if stop > n:
        return None
    expected = np.eye(n, dtype=seed.dtype)[start:stop, None, :]
    return (start, stop) if bool((host == expected).all()) else None
